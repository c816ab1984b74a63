"""Undo, redo, revert and restore: ``takeback/undo``, ``takeback/redo``, ``takeback/revertTurn``,
``takeback/restore`` (the executeCommand commands call the same function). A revert may be
narrowed to one step (``turnId`` ``#12.3``), one file (``uri``), patterns (``pathspec``) or one
hunk (``hunk``).

Open documents are the person's view: their text (unsaved edits included) is the "ours" side
of the three-way merge, and their new content goes back through ``workspace/applyEdit`` as
versioned edits (``editor.EditorRound``: a refusal, in any form, writes nothing; an editor edit
whose operation then fails is taken back); files that are not open are written on disk by the
engine, journaled. Each
operation first runs as a dry run (what would change, reported as progress; a cancel here
writes nothing), then for real. The answer is the engine's ``OperationResult`` (sent camelCase,
see ``protocol.to_wire``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..core.hunks import HunkAt
from ..core.merge import Version
from ..core.models import MODE_FILE, OperationResult
from ..errors import StateError, TakebackError
from .documents import Snapshot, file_path
from .editor import EditorRound
from .errors import Cancelled, rpc_errors
from .progress import WorkDone
from .protocol import (
    REDO,
    RESTORE,
    REVERT_TURN,
    UNDO,
    OperationParams,
    RestoreParams,
    RevertTurnParams,
)

if TYPE_CHECKING:
    from ..engine.engine import Engine
    from .folders import Folder
    from .server import TakebackServer

log = logging.getLogger("takeback.lsp.operations")


def overlay_of(folder: Folder, docs: dict[str, Snapshot]) -> dict[str, Version | None]:
    """Open documents as the engine's "ours": their text, with the file's mode on disk.
    Documents Takeback never touches (inside .git, say) are left out."""
    overlay: dict[str, Version | None] = {}
    workspace = folder.require().workspace
    for path, doc in docs.items():
        try:
            workspace.rel(path)
        except TakebackError:
            continue
        try:
            st = os.lstat(path)
            mode = 0o100755 if st.st_mode & 0o111 else MODE_FILE
        except OSError:
            mode = MODE_FILE
        overlay[path] = Version(doc.text.encode("utf-8"), mode)
    return overlay


async def _in_thread(cancel: threading.Event, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` in a worker thread; a cancelled request sets ``cancel`` and still waits for it
    (an operation that started writing completes, all or nothing)."""
    future = asyncio.ensure_future(asyncio.to_thread(fn, *args, **kwargs))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancel.set()
        return await future


def _matches(expect: str | None, result: OperationResult) -> bool:
    if not expect:
        return True
    text = expect.strip().upper()
    if result.target and text == result.target.upper():
        return True
    return text.lstrip("#").isdigit() and int(text.lstrip("#")) == result.target_number


async def operate(
    server: TakebackServer,
    kind: str,
    params: OperationParams | RevertTurnParams | RestoreParams,
    spec: str | None = None,
    uri: str | None = None,
) -> OperationResult:
    folder: Folder = await server.folders.resolve(getattr(params, "folder", None), uri=uri, turn=spec if kind == "revert" else None)
    engine = folder.require()
    if kind == "undo":
        call: Callable[..., OperationResult] = engine.undo
    elif kind == "redo":
        call = engine.redo
    elif kind == "revert":
        call = _revert_call(engine, cast(RevertTurnParams, params))
    else:
        checkpoint = cast(str, spec)
        call = lambda **kw: engine.restore(checkpoint, **kw)  # noqa: E731
    title = f"Takeback: {kind}" + (f" {spec}" if spec else "")
    async with folder.writes:  # after every edit batch or operation sent before it
        return await _operate_in_order(server, kind, params, folder, call, title)


def _revert_call(engine: Engine, params: RevertTurnParams) -> Callable[..., OperationResult]:
    """The engine's revert of what the params name: a turn or a step (``turnId``), narrowed to
    one file (``uri``), to patterns (``pathspec``) or to one hunk (``hunk``, its 0-based line
    made the engine's 1-based one)."""
    paths = [file_path(params.uri)] if params.uri else None
    hunk = None if params.hunk is None else HunkAt(file_path(params.hunk.uri), params.hunk.line + 1, params.hunk.of)
    return lambda **kw: engine.revert(params.turn_id, paths=paths, pathspec=params.pathspec, hunk=hunk, **kw)


async def _operate_in_order(
    server: TakebackServer,
    kind: str,
    params: OperationParams | RevertTurnParams | RestoreParams,
    folder: Folder,
    call: Callable[..., OperationResult],
    title: str,
) -> OperationResult:
    use_editor = server.can_apply_edits
    async with WorkDone(server, title, params.work_done_token) as progress:
        cancel = progress.cancel
        docs = server.documents.snapshot(under=folder.path) if use_editor else {}
        server.documents.require_synced(docs)
        overlay = await asyncio.to_thread(overlay_of, folder, docs)
        preview: OperationResult = await _in_thread(
            cancel, call, dry_run=True, on_conflict=params.on_conflict, overlay=overlay
        )
        expect = getattr(params, "expect_turn_id", None)
        if not _matches(expect, preview):
            raise StateError(
                f"the timeline moved: {kind} would now act on #{preview.target_number}, not {expect}; nothing was done"
            )
        if params.dry_run:
            return preview
        progress.report(f"{len(preview.restored)} file{'' if len(preview.restored) == 1 else 's'} to change", 30)
        if cancel.is_set():
            raise Cancelled(f"{kind} cancelled; nothing was written")
        docs = server.documents.snapshot(under=folder.path) if use_editor else {}
        server.documents.require_synced(docs)
        overlay = await asyncio.to_thread(overlay_of, folder, docs)
        editor = EditorRound(server, folder, docs, title, cancel)
        try:
            async with editor.taking_back():
                result: OperationResult = await _in_thread(
                    cancel, call, dry_run=False, on_conflict=params.on_conflict, overlay=overlay, editor=editor
                )
        except StateError as exc:
            if editor.reason:
                raise StateError(f"{kind} not done: the editor refused its edit ({editor.reason}); nothing was written") from exc
            raise
        finally:
            await server.folders.changed(folder)
    log.info("%s: %s", title, result.message)
    return result


def setup(server: TakebackServer) -> None:
    @server.feature(UNDO)
    @rpc_errors
    async def undo(ls: TakebackServer, params: OperationParams) -> OperationResult:
        return await operate(ls, "undo", params)

    @server.feature(REDO)
    @rpc_errors
    async def redo(ls: TakebackServer, params: OperationParams) -> OperationResult:
        return await operate(ls, "redo", params)

    @server.feature(REVERT_TURN)
    @rpc_errors
    async def revert_turn(ls: TakebackServer, params: RevertTurnParams) -> OperationResult:
        return await operate(ls, "revert", params, spec=params.turn_id, uri=params.uri or (params.hunk.uri if params.hunk else None))

    @server.feature(RESTORE)
    @rpc_errors
    async def restore(ls: TakebackServer, params: RestoreParams) -> OperationResult:
        return await operate(ls, "restore", params, spec=params.checkpoint_id)


