"""The bridge that changes open documents through the client (``workspace/applyEdit``).

The engine calls ``editor(writes)`` from a worker thread, under its store lock, with the new
content of documents open in the editor. The bridge hops to the event loop, checks that each
document is still at the version the operation read (else nothing is written: stale), turns
the new content into the smallest line edits against the editor's text, sends them as
versioned ``TextDocumentEdit``s (deletions as ``DeleteFile``), and answers whether the client
applied them. Open documents' undo stacks and unsaved edits thus stay the editor's.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from ..errors import StaleContent, StateError
from ..merge import Version
from .documents import Snapshot, diff_edits
from .errors import Cancelled

if TYPE_CHECKING:
    from .folders import Folder
    from .server import TakebackServer

log = logging.getLogger("takeback.lsp.editor")

EDITOR_TIMEOUT = 120.0


class EditorBridge:
    def __init__(self, server: TakebackServer) -> None:
        self.server = server

    def callback(
        self,
        folder: Folder,
        snapshot: dict[str, Snapshot],
        label: str,
        cancel: threading.Event | None = None,
        refusal: dict[str, str] | None = None,
    ) -> Callable[[list[tuple[str, Version | None]]], bool]:
        """An ``editor`` for the engine, bound to the documents as ``snapshot`` saw them."""
        loop = self.server.loop
        assert loop is not None

        def apply(writes: list[tuple[str, Version | None]]) -> bool:
            if cancel is not None and cancel.is_set():
                raise Cancelled("cancelled before anything was written")
            future = asyncio.run_coroutine_threadsafe(self.apply(folder, writes, snapshot, label, refusal), loop)
            try:
                return future.result(timeout=EDITOR_TIMEOUT)
            except TimeoutError:
                future.cancel()
                if refusal is not None:
                    refusal["reason"] = f"the editor did not answer workspace/applyEdit within {EDITOR_TIMEOUT:.0f} s"
                return False

        return apply

    async def apply(
        self,
        folder: Folder,
        writes: list[tuple[str, Version | None]],
        snapshot: dict[str, Snapshot],
        label: str,
        refusal: dict[str, str] | None = None,
    ) -> bool:
        server = self.server
        encoding = server.position_encoding
        text_edits: list[types.TextDocumentEdit] = []
        deletes: list[types.DeleteFile] = []
        for rel, version in writes:
            path = os.path.join(folder.path, rel)
            seen = snapshot.get(path)
            doc = server.documents.get(path)
            if seen is None or doc is None:
                raise StaleContent(f"{rel} was closed in the editor while Takeback was working; nothing was written")
            if doc.version != seen.version:
                raise StaleContent(
                    f"{rel} changed in the editor (version {seen.version} -> {doc.version}) while Takeback "
                    "was working; nothing was written, try again"
                )
            if version is None:
                deletes.append(types.DeleteFile(uri=doc.uri, options=types.DeleteFileOptions(ignore_if_not_exists=True)))
                continue
            try:
                new_text = version.content.decode("utf-8")
            except UnicodeDecodeError:
                raise StateError(f"{rel} would get content that is not UTF-8 text; an open document cannot show it") from None
            edits = diff_edits(doc.text, new_text, encoding)
            if edits:
                identifier = types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version)
                text_edits.append(types.TextDocumentEdit(text_document=identifier, edits=edits))
        if deletes and "delete" not in server.resource_operations:
            # The client cannot delete files: delete on disk; its buffer stays until closed.
            for delete in deletes:
                path = os.path.join(folder.path, os.path.relpath(server.documents.by_uri[delete.uri].path, folder.path))
                await asyncio.to_thread(_unlink, path)
            deletes = []
        if not text_edits and not deletes:
            return True
        if server.document_changes:
            edit = types.WorkspaceEdit(document_changes=[*text_edits, *deletes])
        else:
            edit = types.WorkspaceEdit(changes={e.text_document.uri: list(e.edits) for e in text_edits})
        result = await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=label))
        if not result.applied:
            reason = result.failure_reason or "the editor refused the edit"
            log.warning("%s: %s", label, reason)
            if refusal is not None:
                refusal["reason"] = reason
            return False
        return True


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
