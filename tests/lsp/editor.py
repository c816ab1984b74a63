"""A test client that behaves like an editor: it opens documents, types into them (incremental
sync, positions in the negotiated encoding), and answers ``workspace/applyEdit`` by really
applying the edit: to its open documents (checking their versions, then telling the server with
``didChange`` as an editor does) and on disk for the rest. It can also say no, in each way real
editors do (``answers``): ``applied: false``, a JSON-RPC error as Emacs's eglot sends, applying
the first document and then an error (eglot with a stale second document), or no answer.

Position handling here is written independently of the server's (lines split at "\\n" only,
which is all these tests use), so the two check each other.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCNotification, JsonRPCResponseMessage, default_converter
from pygls.uris import from_fs_path, to_fs_path
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

SERVER = [sys.executable, "-m", "takeback", "serve", "--log-level", "INFO"]


def _converter():
    converter = default_converter()
    # Keep custom results and notifications as plain dicts (pygls makes namedtuples of them).
    converter.register_structure_hook(JsonRPCResponseMessage, lambda obj, cls: cls(**obj))
    converter.register_structure_hook(JsonRPCNotification, lambda obj, cls: cls(**obj))
    # lsprotocol 2025.0.0 decodes a CodeAction that has a command as a plain Command.
    union = Union[types.Command, types.CodeAction]

    def command_or_action(obj: Any, _type: Any) -> Any:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(union, command_or_action)
    return converter


def code_units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def to_offset(text: str, line: int, character: int, encoding: str) -> int:
    lines = text.split("\n")
    if line >= len(lines):
        return len(text)
    offset = sum(len(l) + 1 for l in lines[:line])
    used = 0
    for ch in lines[line]:
        if used >= character:
            break
        used += code_units(ch, encoding)
        offset += 1
    return offset


def to_position(text: str, offset: int, encoding: str) -> types.Position:
    before = text[:offset]
    line = before.count("\n")
    start = before.rfind("\n") + 1
    return types.Position(line=line, character=code_units(text[start:offset], encoding))


def apply_edits(text: str, edits: list[Any], encoding: str) -> str:
    spans = sorted(
        (
            to_offset(text, e.range.start.line, e.range.start.character, encoding),
            to_offset(text, e.range.end.line, e.range.end.character, encoding),
            i,
            e.new_text,
        )
        for i, e in enumerate(edits)
    )
    out, cursor = [], 0
    for start, end, _i, new in spans:
        assert start >= cursor, "overlapping edits from the server"
        out += [text[cursor:start], new]
        cursor = end
    return "".join(out + [text[cursor:]])


@dataclass
class Doc:
    text: str
    version: int


@dataclass
class Editor:
    client: LanguageClient
    root: Path
    encoding: str = "utf-16"
    docs: dict[str, Doc] = field(default_factory=dict)
    refuse: bool = False
    apply_requests: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    notifications: list[dict] = field(default_factory=list)
    hold: asyncio.Event | None = None
    answers: list[str] = field(default_factory=list)
    """How to answer the next ``workspace/applyEdit`` requests, one word each (then: apply):
    ``false`` (applied: false), ``error`` (a JSON-RPC error), ``first-then-error`` (apply the first
    document change, then answer an error), ``apply-unreported`` (apply, answer applied, and keep
    the ``didChange`` in ``unreported`` until ``report()``, as eglot does until it is idle).
    ``hold`` delays every answer until it is set."""
    unreported: list[types.DidChangeTextDocumentParams] = field(default_factory=list)

    # ------------------------------------------------------------------ person

    def uri(self, rel: str, root: Path | None = None) -> str:
        return from_fs_path(str((root or self.root) / rel))

    def open(self, rel: str, root: Path | None = None) -> str:
        uri = self.uri(rel, root)
        text = Path(to_fs_path(uri)).read_text(encoding="utf-8")
        self.docs[uri] = Doc(text, 1)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
        )
        return uri

    def type(self, uri: str, find: str, replace: str) -> None:
        """Replace the first ``find`` in the buffer, sent as an incremental change."""
        doc = self.docs[uri]
        start = doc.text.index(find)
        end = start + len(find)
        rng = types.Range(start=to_position(doc.text, start, self.encoding), end=to_position(doc.text, end, self.encoding))
        doc.text = doc.text[:start] + replace + doc.text[end:]
        doc.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                content_changes=[types.TextDocumentContentChangePartial(range=rng, text=replace)],
            )
        )

    def save(self, uri: str) -> None:
        Path(to_fs_path(uri)).write_text(self.docs[uri].text, encoding="utf-8")

    def discard(self, uri: str) -> None:
        """Throw the buffer's unsaved changes away and read the file again (Neovim's ``:e!``,
        VS Code's "Revert File"), told to the server as a whole-document change."""
        doc = self.docs[uri]
        doc.text = Path(to_fs_path(uri)).read_text(encoding="utf-8")
        doc.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=doc.text)],
            )
        )

    def text(self, uri: str) -> str:
        return self.docs[uri].text

    # ------------------------------------------------------------------ workspace/applyEdit

    async def on_apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.apply_requests.append(params)
        if self.hold is not None:
            await self.hold.wait()
        answer = self.answers.pop(0) if self.answers else ("false" if self.refuse else "apply")
        if answer == "false":
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="refused by the test editor")
        if answer == "error":
            raise JsonRpcException(code=32603, message="User cancelled server edit")  # what eglot answers
        edit = params.edit
        changes: list[Any] = list(edit.document_changes or [])
        for uri, edits in (edit.changes or {}).items():
            changes.append(
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None), edits=edits
                )
            )
        for change in changes:  # check every version first: all or nothing
            if isinstance(change, types.TextDocumentEdit) and change.text_document.version is not None:
                doc = self.docs.get(change.text_document.uri)
                if doc is None or doc.version != change.text_document.version:
                    return types.ApplyWorkspaceEditResult(applied=False, failure_reason="version mismatch")
        if answer == "first-then-error":
            changes = changes[:1]
        for change in changes:
            if isinstance(change, types.TextDocumentEdit):
                uri = change.text_document.uri
                if uri in self.docs:
                    doc = self.docs[uri]
                    doc.text = apply_edits(doc.text, list(change.edits), self.encoding)
                    doc.version += 1
                    report = types.DidChangeTextDocumentParams(
                        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                        content_changes=[types.TextDocumentContentChangeWholeDocument(text=doc.text)],
                    )
                    if answer == "apply-unreported":
                        self.unreported.append(report)
                    else:
                        self.client.text_document_did_change(report)
                else:
                    path = Path(to_fs_path(uri))
                    path.write_text(apply_edits(path.read_text(encoding="utf-8"), list(change.edits), self.encoding), encoding="utf-8")
            elif isinstance(change, types.CreateFile):
                path = Path(to_fs_path(change.uri))
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
            elif isinstance(change, types.DeleteFile):
                path = Path(to_fs_path(change.uri))
                if path.exists():
                    path.unlink()
                if change.uri in self.docs:
                    del self.docs[change.uri]
                    self.client.text_document_did_close(
                        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=change.uri))
                    )
            elif isinstance(change, types.RenameFile):
                os.replace(to_fs_path(change.old_uri), to_fs_path(change.new_uri))
        if answer == "first-then-error":
            raise JsonRpcException(code=32603, message="Edits on the second document require another version")
        return types.ApplyWorkspaceEditResult(applied=True)

    def report(self) -> None:
        """Send the ``didChange`` notifications held back (``apply-unreported``)."""
        for params in self.unreported:
            self.client.text_document_did_change(params)
        self.unreported.clear()

    # ------------------------------------------------------------------ requests

    async def request(self, method: str, params: dict | list | None = None) -> Any:
        return await self.client.protocol.send_request_async(method, {} if params is None else params)

    async def command(self, command: str, *arguments: Any) -> Any:
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=list(arguments))
        )


async def start(
    capabilities: str, folders: list[Path], options: dict | None = None, tweak: Any = None
) -> tuple[Editor, types.InitializeResult]:
    """A real ``takeback serve`` process, initialised as the named client would (``tweak`` may
    change the capabilities first)."""
    client = LanguageClient(converter_factory=_converter)
    register_lsp_features(client)
    editor = Editor(client, folders[0])

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    async def apply_edit(params: types.ApplyWorkspaceEditParams):
        return await editor.on_apply_edit(params)

    @client.feature("takeback/timelineChanged")
    def timeline_changed(params: Any):
        editor.notifications.append(params)

    await client.start_io(*SERVER, env=dict(os.environ), cwd=str(folders[0]))
    caps = client_capabilities(capabilities)
    if tweak is not None:
        tweak(caps)
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=from_fs_path(str(folders[0])),
            workspace_folders=[types.WorkspaceFolder(uri=from_fs_path(str(f)), name=f.name) for f in folders],
            initialization_options={"pollInterval": 0.2, **(options or {})},
        )
    )
    encoding = result.capabilities.position_encoding or "utf-16"
    editor.encoding = str(getattr(encoding, "value", encoding))
    return editor, result
