"""``takeback/hunks``: the hunks of one file's change in a turn (or one step of it), in the lines
of the change's result, so an editor can offer "Revert This Change" on each hunk of a diff view's
right side. The hunks are core/hunks.py's, the very ones ``takeback/revertTurn`` takes back with
``hunk.of = "change"``: the rule lives there, this module only places it in the view's lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.hunks import Hunk, hunks, lines
from ..core.textdiff import is_binary
from .documents import file_path
from .errors import rpc_errors
from .folders import read
from .protocol import HUNKS, HunkRange, HunksParams, HunksResult

if TYPE_CHECKING:
    from .server import TakebackServer


def hunk_range(hunk: Hunk, result_lines: int) -> HunkRange:
    """A hunk in the change's result, with the 0-based line that names it: its first line, or for
    a hunk that only removed lines the line just after the place (the one before it at the end of
    the file), one ``Hunk.holds``."""
    line = hunk.new_start if hunk.new_end > hunk.new_start or hunk.new_start < result_lines else max(hunk.new_start - 1, 0)
    return HunkRange(start=hunk.new_start, end=hunk.new_end, removed=hunk.old_end - hunk.old_start, line=line)


def change_hunks(before: bytes | None, after: bytes | None) -> list[HunkRange]:
    """The hunks of ``before`` → ``after``; none when there are no lines to name (a file the
    change deleted, binary content)."""
    if after is None or is_binary(after) or is_binary(before):
        return []
    old = b"" if before is None else before
    return [hunk_range(h, len(lines(after))) for h in hunks(old, after, after)]


def setup(server: TakebackServer) -> None:
    @server.feature(HUNKS)
    @rpc_errors
    async def hunks_of(ls: TakebackServer, params: HunksParams) -> HunksResult:
        folder = await ls.folders.resolve(params.folder, uri=params.uri, turn=params.turn_id)
        engine, path = folder.require(), file_path(params.uri)
        before = await read(engine, engine.file_at, params.turn_id, path, "before", params.step)
        after = await read(engine, engine.file_at, params.turn_id, path, "after", params.step)
        return HunksResult(hunks=change_hunks(before, after), folder=folder.uri)
