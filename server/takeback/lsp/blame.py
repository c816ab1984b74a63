"""Line blame in the editor: ``textDocument/hover`` on any line, and ``takeback/blame``.

The hover says who wrote the line as the document stands now (the open buffer's text, unsaved
edits included; the file on disk where it is not open): an agent's turn and step with its
agent, time and prompt ("edited by you since" where the person changed that agent's line), the
person, or "before the timeline" with git blame's commit. With it, the ways to show the turn's
diff and to take back that line's hunk: ``command:`` links where the client opens them
(``initializationOptions.hoverCommandLinks``, VS Code), else the commands named in the text. The
hunk offered is the one "Take back these lines" offers there (``engine/hunks_here.py``'s rule).
A file no timeline entry changed, a file outside the folders or a line past the end: no hover
(null), never an error. ``initializationOptions.hover: false`` switches it off.

``takeback/blame`` answers the engine's ``Blame`` (``takeback blame --json``, camelCase) for a
file and an optional range of lines. Who wrote a line is ``core/blame.py``'s rule; this module
only reads it (``Reading.blame`` with the buffer's text) and words it in Markdown, quoting
everything that came from a payload or a prompt so it is shown as text, never read as
Markdown or HTML.
"""

from __future__ import annotations

import json
import re
import shlex
import urllib.parse
from dataclasses import dataclass
from datetime import UTC
from typing import TYPE_CHECKING

from lsprotocol import types

from ..core.models import Blame, BlameLine, BlameOrigin
from ..engine.hunks_here import HunkHere
from ..errors import InvalidInput, TakebackError
from .documents import file_path, real_path
from .errors import rpc_errors
from .folders import read
from .protocol import BLAME, CMD_REVERT, BlameParams

if TYPE_CHECKING:
    from ..engine.engine import Engine
    from .folders import Folder
    from .server import TakebackServer

SHOW_DIFF = "takeback.showTurnDiff"
"""The VS Code extension's command that opens a turn's diff (a hover link names it)."""
PROMPT_CHARS = 600
PROMPT_LINES = 12
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character CommonMark lets a backslash escape
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class LineFacts:
    """What the hover of one line shows: the line's blame, and the hunk that takes it back."""

    rel: str
    line: BlameLine
    hunk: HunkHere | None


# --------------------------------------------------------------------------- quoting


def plain(value: str, limit: int = 200) -> str:
    """One line of text from a payload, as Markdown shows it literally: control characters and
    line breaks as spaces, every punctuation character escaped (no link, emphasis or HTML)."""
    text = " ".join(_CONTROL.sub(" ", value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _PUNCTUATION.sub(r"\\\1", text)


def code(value: str) -> str:
    """An inline code span holding ``value`` as it is (on one line)."""
    text = " ".join(_CONTROL.sub(" ", value).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def quoted_block(value: str) -> str:
    """A prompt, in a fenced block no line of it can close (longer than any run of backticks
    in it): shown as written, never read as Markdown or HTML; at most ``PROMPT_LINES`` lines
    of ``PROMPT_CHARS`` characters."""
    text = _CONTROL.sub(" ", value.replace("\r\n", "\n").replace("\r", "\n")).strip("\n")
    lines = text.split("\n")
    cut = len(text) > PROMPT_CHARS or len(lines) > PROMPT_LINES
    text = "\n".join(lines[:PROMPT_LINES])[:PROMPT_CHARS] + ("…" if cut else "")
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}text\n{text}\n{fence}"


# --------------------------------------------------------------------------- the hover's words


def _when(origin: BlameOrigin) -> str:
    return origin.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if origin.at is not None else ""


def _turn(origin: BlameOrigin) -> list[str]:
    agent = f" ({plain(origin.agent)})" if origin.agent else ""
    step = f", step {origin.step}" if origin.step else ""
    step_label = f": {plain(origin.step_label)}" if origin.step_label else ""
    when = f" · {_when(origin)}" if origin.at else ""
    whose = f"{plain(_teammate(origin))}'s agent turn" if origin.remote else "Agent turn"
    lines = [f"**{whose} #{origin.number}{step}**{agent}{when}"]
    if origin.step_label and origin.step_label != origin.label:
        lines.append(f"Step{step_label}")
    if origin.label:
        lines.append(quoted_block(origin.label))
    return lines


def _person(origin: BlameOrigin) -> str:
    what = origin.label or "an operation"
    why = {
        "mark": f"in mark #{origin.number}: {plain(what)}",
        "operation": f"through #{origin.number} ({plain(what)})",
        "between": "between the timeline's versions (outside any agent turn)",
        "since": "since the timeline's newest version of this file",
    }.get(origin.why or "", "")
    when = f" · {_when(origin)}" if origin.at else ""
    return f"**Written by you**, {why}{when}" if why else f"**Written by you**{when}"


def _actions(facts: LineFacts, subject: BlameOrigin | None, doc_uri: str, folder: Folder, links: bool) -> list[str]:
    """The ways to see the turn's diff and to take back this line's hunk."""
    out = []
    hunk = facts.hunk
    if subject is not None and subject.remote is not None:  # a teammate's: named as the CLI takes it
        turn = shlex.quote(f"{_teammate(subject)}#{subject.number}")
        return [f"Its diff: {code(f'takeback show {turn} --patch')}; take it back in this clone: "
                f"{code(f'takeback revert {turn}')}"]
    if subject is not None and subject.number is not None:
        number = subject.number
        if links:
            out.append(f"[Show turn #{number}'s diff]({_link(SHOW_DIFF, {'turnId': subject.entry, 'folder': folder.uri})})")
        else:
            out.append(f"Its diff: {code(f'takeback show {number}')}, {code(f'takeback diff {number}')}")
    if hunk is not None:
        what = f"{hunk.kind} #{hunk.number}"
        argument = {"turnId": hunk.entry, "hunk": {"uri": doc_uri, "line": hunk.line - 1, "of": "now"},
                    "expectTurnId": hunk.entry, "folder": folder.uri}
        if links:
            out.append(f"[Take back this line's hunk from {what}]({_link(CMD_REVERT, argument)})")
        else:
            spec = shlex.quote(f"{facts.rel}:{hunk.line}")
            out.append(f"Take back this line's hunk from {what}: {code(f'takeback revert {hunk.number} --hunk {spec}')} "
                       f"(the server's command {code(CMD_REVERT)})")
    return out


def _teammate(origin: BlameOrigin) -> str:
    """``origin/alice@laptop``: the fetched timeline a teammate's turn is of."""
    return f"{origin.remote}/{origin.who}"


def _link(command: str, argument: dict) -> str:
    """A ``command:`` URI running ``command`` with ``argument`` (VS Code's form: the arguments,
    JSON, percent-encoded)."""
    return f"command:{command}?{urllib.parse.quote(json.dumps([argument]), safe='')}"


def hover_markdown(facts: LineFacts, doc_uri: str, folder: Folder, links: bool) -> str:
    """The hover of one line, in Markdown."""
    origin = facts.line.origin
    subject: BlameOrigin | None = None
    if origin.kind == "turn":
        subject = origin
        parts = _turn(origin)
    elif origin.kind == "person" and origin.edited_from is not None:
        subject = origin.edited_from
        parts = [*_turn(subject), f"*Edited by you since* ({_when(origin) or 'not saved as a version yet'})"]
    elif origin.kind == "person":
        parts = [_person(origin)]
    elif origin.kind == "before":
        commit = f" (commit {code(origin.commit[:12])})" if origin.commit else " (not in a commit at HEAD)"
        parts = [f"**Before the timeline**{commit}"]
    else:
        parts = ["**Not known**: a version of this file the timeline holds was not stored (withheld, binary, a symlink)"]
    parts += _actions(facts, subject, doc_uri, folder, links)
    return "Takeback · line " + str(facts.line.line) + "\n\n" + "\n\n".join(parts)


# --------------------------------------------------------------------------- reading


def line_facts(engine: Engine, path: str, line: int, now: bytes | None) -> LineFacts | None:
    """The blame of 1-based ``line`` and the hunk that takes it back; None when no timeline
    entry changed the file or the line is past its end."""
    blame = engine.blame(path, line, line, now)
    if not blame.lines or (blame.entries == 0 and blame.lines[0].origin.remote is None):
        return None  # (no entry of this timeline changed the file, and no teammate's turn wrote the line)
    answer = blame.lines[0]
    origin = answer.origin
    subject = origin.entry if origin.kind == "turn" else origin.edited_from.entry if origin.edited_from else None
    if origin.kind == "person" and origin.why == "mark":
        subject = origin.entry
    hunks = engine.hunks_at(path, line, line, now) if subject else []
    hunk = next((h for h in hunks if h.entry == subject), None)
    return LineFacts(rel=blame.path, line=answer, hunk=hunk)


def _buffer(ls: TakebackServer, path: str) -> tuple[bytes | None, bool]:
    """What the editor holds of ``path`` now (None: not open, the disk is now) and whether it
    is known (False: Takeback's last edit to it is not reported yet)."""
    doc = ls.documents.get(path)
    if doc is None:
        return None, True
    return doc.text.encode("utf-8"), path not in ls.documents.unsynced


def setup(server: TakebackServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: TakebackServer, params: types.HoverParams) -> types.Hover | None:
        options = ls.hover_options
        if not options.enabled:
            return None
        try:
            path = real_path(file_path(params.text_document.uri))
            folder = ls.folders.for_path(path)
            engine = folder.require()
            now, known = _buffer(ls, path)
            if not known:
                return None
            facts = await read(engine, line_facts, engine, path, params.position.line + 1, now)
        except TakebackError:  # not a file, outside every folder, no store, binary: no hover
            return None
        if facts is None:
            return None
        markdown = hover_markdown(facts, params.text_document.uri, folder, options.links)
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))

    @server.feature(BLAME)
    @rpc_errors
    async def blame(ls: TakebackServer, params: BlameParams) -> Blame:
        folder = await ls.folders.resolve(params.folder, uri=params.uri)
        engine, path = folder.require(), real_path(file_path(params.uri))
        if params.first is not None and params.first < 1 or params.last is not None and params.last < 1:
            raise InvalidInput("first and last are lines counted from 1")
        now, _known = _buffer(ls, path)
        ls.documents.require_synced([path])
        return await read(engine, engine.blame, path, params.first, params.last, now)
