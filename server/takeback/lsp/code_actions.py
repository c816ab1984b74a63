"""Code actions: on the last agent turn in the files it touched, and on lines a past turn wrote.

In a file the last applied turn (the one "undo" would take back) changed:
"Undo agent turn #N: <label> (k files)" and "Revert turn #N's changes to this file"; in a file
the last undo changed: "Redo agent turn #N" (the last revert or restore: "Redo: bring back what
#M took back (its label)"). Each carries the command
(``takeback.undoTurn`` …) with the entry it was offered for (``expectTurnId``), so a timeline
that moved in between is refused instead of acted on. Code actions are asked for often, so
what they need is computed once per timeline version and cached, except while a whole-disk
turn is open: what undo would take back then depends on the disk (its changes so far), so it
is asked of the engine each time, which is what the undo itself asks.

On the lines of any file (the cursor's line, or a selection): "Take back these lines from turn
#12: <label>", one for each hunk of a past turn or mark (up to three entries, newest first) that
those lines, as the document stands now (unsaved edits included), still hold as the turn wrote
them (the engine's rule: ``engine/hunks_here.py``). Each runs ``takeback.revertTurn`` with that
hunk named by a line of the document now. What the file's hunks are is kept per timeline version
and document version (for a file that is not open: its time stamp and size), so moving the
cursor only picks among them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ..core.models import Entry
from ..engine.hunks_here import HunkHere, covering
from ..errors import TakebackError
from .documents import file_path, real_path
from .folders import read, read_version
from .protocol import CMD_REDO, CMD_REVERT, CMD_UNDO

if TYPE_CHECKING:
    from ..engine.engine import Engine
    from .server import TakebackServer

KIND = types.CodeActionKind.QuickFix


@dataclass(frozen=True)
class Targets:
    undo: Entry | None
    redo: Entry | None
    redo_subject: Entry | None
    """The turn a redo would bring back (the undo's target)."""
    settled: bool = True
    """False while a whole-disk turn is open (``Operations.targets``): not cached then."""


@dataclass
class Cached:
    """What code actions keep of one folder at one timeline version: the undo and redo targets
    (None while not ``settled``: asked each time), and each file's hunks by document version."""

    version: str | None
    targets: Targets | None
    hunks: dict[str, tuple[Any, list[HunkHere]]] = field(default_factory=dict)


def find_targets(engine: Engine) -> Targets:
    """What undo and redo would act on (asked of the engine, which owns the rule)."""
    undo, redo, settled = engine.targets()
    subject = engine.entry(redo.target) if redo is not None and redo.target else None
    return Targets(undo, redo, subject, settled)


def _touches(entry: Entry | None, rel: str) -> bool:
    return entry is not None and any(rel in (f.path, f.old_path) for f in entry.files)


def _action(title: str, command: str, argument: dict) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=KIND,
        command=types.Command(title=title, command=command, arguments=[argument]),
    )


def _wanted(only: Sequence[str] | None) -> bool:
    if not only:
        return True
    return any(KIND == kind or KIND.startswith(f"{kind}.") or kind == "" for kind in only)


def setup(server: TakebackServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[KIND]))
    async def code_actions(ls: TakebackServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        if not _wanted(params.context.only):
            return None
        try:
            path = real_path(file_path(params.text_document.uri))
            folder = ls.folders.for_path(path)
            engine = folder.require()
            rel = engine.workspace.rel(path)
        except TakebackError:  # not a file, outside every folder, or no store there: no actions
            return None
        # Reading the version waits for an operation in progress (it holds the store's lock), so
        # the actions offered always match the timeline as it is once that is done.
        version = await asyncio.to_thread(read_version, engine)
        cached = ls.code_action_cache.get(folder.path)
        if not isinstance(cached, Cached) or cached.version != version:
            cached = ls.code_action_cache[folder.path] = Cached(version, None)
        targets = cached.targets
        if targets is None:
            targets = await read(engine, find_targets, engine)
            if targets.settled:  # an open whole-disk turn's changes on disk move no version
                cached.targets = targets
        actions = _turn_actions(targets, rel, params.text_document.uri, folder.uri)
        actions += await _line_actions(ls, engine, cached, path, params, folder.uri)
        return actions or None


def _turn_actions(targets: Targets, rel: str, uri: str, folder: str) -> list[types.CodeAction]:
    """Undo, revert this file, redo: on the entries undo and redo would act on."""
    actions = []
    undo = targets.undo
    if _touches(undo, rel):
        assert undo is not None
        label = f": {undo.label}" if undo.label else ""
        count = len(undo.files)
        actions.append(
            _action(
                f"Undo agent turn #{undo.number}{label} ({count} file{'s' if count != 1 else ''})",
                CMD_UNDO, {"expectTurnId": undo.id, "folder": folder},
            )
        )
        actions.append(
            _action(
                f"Revert turn #{undo.number}'s changes to this file",
                CMD_REVERT, {"turnId": undo.id, "uri": uri, "folder": folder},
            )
        )
    redo = targets.redo
    if redo is not None and _touches(redo, rel):
        subject = targets.redo_subject
        if redo.kind == "undo" and subject is not None:  # an undo took back that one turn as a whole
            title = f"Redo agent turn #{subject.number}"
        else:  # a revert or restore: what it took back, in its own words
            title = f"Redo: bring back what #{redo.number} took back ({redo.label or redo.kind})"
        actions.append(_action(title, CMD_REDO, {"expectTurnId": redo.id, "folder": folder}))
    return actions


async def _line_actions(
    ls: TakebackServer, engine: Engine, cached: Cached, path: str, params: types.CodeActionParams, folder: str,
) -> list[types.CodeAction]:
    """"Take back these lines from turn #N": the hunks of past entries the range's lines hold."""
    doc = ls.documents.get(path)
    if doc is not None and path in ls.documents.unsynced:
        return []  # its text here is older than the editor's: its lines would be counted wrong
    if doc is not None:
        key: Any = ("document", doc.version, doc.text)
        now: bytes | None = doc.text.encode("utf-8")
    else:
        try:
            st = os.stat(path)
        except OSError:
            return []
        key, now = ("disk", st.st_mtime_ns, st.st_size, st.st_ino), None
    known = cached.hunks.get(path)
    if known is not None and known[0] == key:
        found = known[1]
    else:
        found = await read(engine, engine.hunks_in, path, now)
        cached.hunks[path] = (key, found)
    start, end = params.range.start, params.range.end
    last = end.line if end.character or end.line == start.line else end.line - 1  # a selection of whole lines ends at the next line's start
    chosen = covering(found, start.line + 1, last + 1)
    actions = []
    for hunk in chosen:
        label = f": {hunk.label}" if hunk.label else ""
        several = sum(1 for h in chosen if h.entry == hunk.entry) > 1
        lines = f"line {hunk.first}" if hunk.first == hunk.last else f"lines {hunk.first}-{hunk.last}"
        where = f" ({lines})" if several else ""
        argument = {
            "turnId": hunk.entry, "hunk": {"uri": params.text_document.uri, "line": hunk.line - 1, "of": "now"},
            "expectTurnId": hunk.entry, "folder": folder,
        }
        actions.append(_action(f"Take back these lines from {hunk.kind} #{hunk.number}{label}{where}", CMD_REVERT, argument))
    return actions
