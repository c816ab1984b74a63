"""Code actions in files the last agent turn touched.

In a file the last applied turn (the one "undo" would take back) changed:
"Undo agent turn #N: <label> (k files)" and "Revert turn #N's changes to this file"; in a file
the last undo changed: "Redo agent turn #N" (the last revert or restore: "Redo: bring back what
#M took back (its label)"). Each carries the command
(``takeback.undoTurn`` …) with the entry it was offered for (``expectTurnId``), so a timeline
that moved in between is refused instead of acted on. Code actions are asked for often, so
what they need is computed once per timeline version and cached, except while a whole-disk
turn is open: what undo would take back then depends on the disk (its changes so far), so it
is asked of the engine each time, which is what the undo itself asks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

from ..core.models import Entry
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
        if cached is not None and cached[0] == version:
            targets = cached[1]
        else:
            targets = await read(engine, find_targets, engine)
            if targets.settled:  # an open whole-disk turn's changes on disk move no version
                ls.code_action_cache[folder.path] = (version, targets)
        actions = []
        undo = targets.undo
        if _touches(undo, rel):
            assert undo is not None
            label = f": {undo.label}" if undo.label else ""
            count = len(undo.files)
            actions.append(
                _action(
                    f"Undo agent turn #{undo.number}{label} ({count} file{'s' if count != 1 else ''})",
                    CMD_UNDO, {"expectTurnId": undo.id, "folder": folder.uri},
                )
            )
            actions.append(
                _action(
                    f"Revert turn #{undo.number}'s changes to this file",
                    CMD_REVERT, {"turnId": undo.id, "uri": params.text_document.uri, "folder": folder.uri},
                )
            )
        redo = targets.redo
        if redo is not None and _touches(redo, rel):
            subject = targets.redo_subject
            if redo.kind == "undo" and subject is not None:  # an undo took back that one turn as a whole
                title = f"Redo agent turn #{subject.number}"
            else:  # a revert or restore: what it took back, in its own words
                title = f"Redo: bring back what #{redo.number} took back ({redo.label or redo.kind})"
            actions.append(_action(title, CMD_REDO, {"expectTurnId": redo.id, "folder": folder.uri}))
        return actions or None
