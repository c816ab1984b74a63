"""``takeback/applyEdit``: an agent's ``WorkspaceEdit`` recorded as a checkpoint, then applied.

The edit is first played on a virtual copy of the files it names, in order: the editor's text
for open documents (the person's unsaved edits included), the disk for the rest. Every form is
accepted: ``changes``, ``documentChanges`` with versioned text edits (a version that is not the
open document's is stale), and create / rename / delete file operations (folders too), with
text edits counted in the negotiated position encoding. That gives the batch (each path's
before and after). Open documents go to the client's ``workspace/applyEdit`` first, with the
store's lock let go (``Engine.apply_through``); then the batch is recorded and the other files
are written on disk (journaled). If the client refuses (``applied: false``, an error, no
answer), nothing is written and the timeline shows the checkpoint not applied; if the write
cannot complete after the client applied, what it applied is taken back (``EditorRound``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ..core.models import BatchChange
from ..errors import InvalidInput, StaleContent
from .documents import Snapshot, apply_text_edits, file_path, real_path
from .editor import EditorRound
from .errors import rpc_errors
from .protocol import APPLY_EDIT, ApplyEditParams, ApplyEditResult

if TYPE_CHECKING:
    from ..engine.engine import Engine
    from .folders import Folder
    from .server import TakebackServer

log = logging.getLogger("takeback.lsp.edits")

_MISSING = object()


@dataclass
class DocumentChange:
    """One change of a ``WorkspaceEdit``: text edits to a document, or a file created, renamed or
    deleted (LSP's ``documentChanges`` items, and each document of ``changes``)."""

    kind: str  # text, create, rename, delete
    path: str
    uri: str
    edits: list[Any] = field(default_factory=list)
    version: int | None = None
    new_path: str | None = None
    options: Any = None


def document_changes(edit: types.WorkspaceEdit) -> list[DocumentChange]:
    """The edit's changes in order, paths resolved (``documentChanges`` wins over ``changes``)."""

    def path_of(uri: str) -> str:
        return real_path(file_path(uri))

    ops: list[DocumentChange] = []
    if edit.document_changes:
        for change in edit.document_changes:
            if isinstance(change, types.TextDocumentEdit):
                uri = change.text_document.uri
                ops.append(DocumentChange("text", path_of(uri), uri, list(change.edits), change.text_document.version))
            elif isinstance(change, types.CreateFile):
                ops.append(DocumentChange("create", path_of(change.uri), change.uri, options=change.options))
            elif isinstance(change, types.RenameFile):
                ops.append(DocumentChange(
                    "rename", path_of(change.old_uri), change.old_uri, new_path=path_of(change.new_uri), options=change.options,
                ))
            else:  # DeleteFile: the converter makes nothing else of a documentChanges item
                ops.append(DocumentChange("delete", path_of(change.uri), change.uri, options=change.options))
    elif edit.changes:
        for uri, text_edits in edit.changes.items():
            ops.append(DocumentChange("text", path_of(uri), uri, list(text_edits)))
    if not ops:
        raise InvalidInput("malformed edit: it has neither changes nor documentChanges")
    return ops


class VirtualFiles:
    """Files as the edit sees them: open documents' text, else the disk; changes kept aside."""

    def __init__(self, folder: Folder, docs: dict[str, Snapshot]) -> None:
        self.folder = folder
        self.docs = docs
        self.state: dict[str, bytes | None] = {}
        self.initial: dict[str, bytes | None] = {}
        self.modes: dict[str, int | None] = {}
        self.renamed_from: dict[str, str] = {}

    def rel(self, path: str) -> str:
        return self.folder.require().workspace.rel(path)

    def read(self, path: str) -> bytes | None:
        if path not in self.state:
            rel = self.rel(path)
            if path in self.docs:
                content: bytes | None = self.docs[path].text.encode("utf-8")
                disk = self.folder.require().workspace.read(rel)
                self.modes[path] = disk.mode if disk else None
            else:
                disk = self.folder.require().workspace.read(rel)
                content = disk.content if disk else None
                self.modes[path] = disk.mode if disk else None
            self.state[path] = self.initial[path] = content
        return self.state[path]

    def write(self, path: str, content: bytes | None) -> None:
        self.read(path)
        self.state[path] = content

    def files_under(self, folder_path: str) -> list[str]:
        """Files inside a folder: on disk (outside .git) and as the edit made them so far."""
        prefix = folder_path.rstrip(os.sep) + os.sep
        found = {p for p, c in self.state.items() if p.startswith(prefix) and c is not None}
        found |= {p for p in self.docs if p.startswith(prefix)}
        if os.path.isdir(folder_path):
            for root, dirs, names in os.walk(folder_path):
                dirs[:] = [d for d in dirs if d != ".git"]
                found.update(os.path.join(root, n) for n in names)
        return sorted(p for p in found if self.read(p) is not None)

    def is_folder(self, path: str) -> bool:
        return path not in self.docs and self.state.get(path, _MISSING) in (_MISSING, None) and os.path.isdir(path)


def play(ops: list[DocumentChange], files: VirtualFiles, encoding: str) -> list[BatchChange]:
    """Play the operations on ``files``; answer the batch (explicit before-images)."""
    for op in ops:
        if op.kind == "text":
            _play_text(op, files, encoding)
        elif op.kind == "create":
            _play_create(op, files)
        elif op.kind == "delete":
            _play_delete(op, files)
        else:
            _play_rename(op, files)
    return _batch_of(files)


def _play_text(op: DocumentChange, files: VirtualFiles, encoding: str) -> None:
    current = files.read(op.path)
    if current is None:
        raise InvalidInput(f"malformed edit: {op.uri} does not exist (create it first)")
    try:
        text = current.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"cannot apply text edits to {op.uri}: it is not UTF-8 text") from None
    files.write(op.path, apply_text_edits(text, op.edits, encoding, op.uri).encode("utf-8"))


def _play_create(op: DocumentChange, files: VirtualFiles) -> None:
    overwrite = bool(op.options and op.options.overwrite)
    ignore = bool(op.options and op.options.ignore_if_exists)
    if files.is_folder(op.path):
        raise InvalidInput(f"cannot create {op.uri}: a folder is in the way")
    if files.read(op.path) is not None:
        if overwrite:
            files.write(op.path, b"")
        elif not ignore:
            raise InvalidInput(f"cannot create {op.uri}: it exists (set overwrite or ignoreIfExists)")
    else:
        files.write(op.path, b"")


def _play_delete(op: DocumentChange, files: VirtualFiles) -> None:
    ignore = bool(op.options and op.options.ignore_if_not_exists)
    if files.is_folder(op.path):
        inside = files.files_under(op.path)
        if inside and not (op.options and op.options.recursive):
            raise InvalidInput(f"cannot delete the folder {op.uri}: it is not empty (set recursive)")
        for path in inside:
            files.write(path, None)
    elif files.read(op.path) is None:
        if not ignore:
            raise InvalidInput(f"cannot delete {op.uri}: it does not exist (set ignoreIfNotExists)")
    else:
        files.write(op.path, None)


def _play_rename(op: DocumentChange, files: VirtualFiles) -> None:
    where = op.uri
    assert op.new_path is not None
    overwrite = bool(op.options and op.options.overwrite)
    ignore = bool(op.options and op.options.ignore_if_exists)
    if files.is_folder(op.path):
        moves = [(p, op.new_path + p[len(op.path):]) for p in files.files_under(op.path)]
    elif files.read(op.path) is None:
        raise InvalidInput(f"cannot rename {where}: it does not exist")
    else:
        moves = [(op.path, op.new_path)]
    if moves and moves[0][0] == op.path and files.is_folder(op.new_path):
        raise InvalidInput(f"cannot rename {where}: a folder is in the way")
    if any(files.read(new) is not None for _old, new in moves):
        if ignore and not overwrite:
            return
        if not overwrite:
            raise InvalidInput(f"cannot rename {where}: the target exists (set overwrite or ignoreIfExists)")
    for old, new in moves:
        content = files.read(old)
        files.write(new, content)
        files.write(old, None)
        files.modes[new] = files.modes.get(old)
        files.renamed_from[new] = files.renamed_from.pop(old, old)


def _batch_of(files: VirtualFiles) -> list[BatchChange]:
    """What the played operations changed, as a batch with explicit before-images."""
    changes = []
    for path, after in files.state.items():
        before = files.initial[path]
        source = files.renamed_from.get(path)
        if source is not None and (files.initial.get(source) is None or files.state.get(source) is not None):
            source = None  # not a real rename of an existing file that is now gone
        if before == after and source is None:
            continue
        mode = files.modes.get(source) if source else None
        changes.append(BatchChange(path=path, after=after, before=before, mode=mode, renamed_from=source))
    if not changes:
        raise InvalidInput("the edit changes nothing")
    return changes


def check_versions(ops: list[DocumentChange], docs: dict[str, Snapshot]) -> None:
    """A versioned text edit must be for the version the editor has now."""
    for op in ops:
        if op.kind == "text" and op.version is not None and op.path in docs and docs[op.path].version != op.version:
            raise StaleContent(
                f"stale document version: {op.uri} is at version {docs[op.path].version}, the edit was made for {op.version}"
            )


async def apply_edit(server: TakebackServer, params: ApplyEditParams) -> ApplyEditResult:
    ops = document_changes(params.edit)
    paths = {op.path for op in ops} | {op.new_path for op in ops if op.new_path}
    folders = {server.folders.for_path(p).path: server.folders.for_path(p) for p in paths}
    if len(folders) > 1:
        raise InvalidInput("an edit batch must stay inside one workspace folder; send one per folder")
    folder = next(iter(folders.values()))
    engine = folder.require()
    async with folder.writes:  # batches apply in the order they were sent
        return await _apply_in_order(server, params, ops, folder, engine)


async def _apply_in_order(
    server: TakebackServer, params: ApplyEditParams, ops: list[DocumentChange], folder: Folder, engine: Engine,
) -> ApplyEditResult:
    docs = server.documents.snapshot(under=folder.path) if server.can_apply_edits else {}
    server.documents.require_synced(docs)
    check_versions(ops, docs)
    label = params.label or "agent edit"
    editor = EditorRound(server, folder, docs, f"Takeback: {label}")
    encoding = server.position_encoding

    def work() -> tuple[Any, str, bool]:
        with engine.transaction():
            files = VirtualFiles(folder, docs)
            changes = play(ops, files, encoding)
            in_editor = [c.path for c in changes if c.path in docs]
            return engine.apply_through(
                changes, editor=editor, in_editor=in_editor, label=params.label, session=params.session_id,
                agent=params.agent, turn=params.turn_id, source="lsp",
            )

    try:
        async with editor.taking_back():
            entry, checkpoint, applied = await asyncio.to_thread(work)
    finally:
        await server.folders.changed(folder)  # a refusal is on the timeline too (not applied)
    reason = None if applied else (editor.reason or "the editor did not apply the edit")
    outcome = "applied" if applied else f"NOT applied ({reason})"
    log.info("applyEdit %s: checkpoint %s of turn #%d %s", label, checkpoint, entry.number, outcome)
    return ApplyEditResult(
        applied=applied, checkpoint_id=checkpoint, entry=entry,
        failure_reason=reason, folder=folder.uri,
    )


def setup(server: TakebackServer) -> None:
    @server.feature(APPLY_EDIT)
    @rpc_errors
    async def handle_apply_edit(ls: TakebackServer, params: ApplyEditParams) -> ApplyEditResult:
        return await apply_edit(ls, params)
