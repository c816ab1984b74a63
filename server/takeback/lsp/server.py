"""The Takeback language server: one ``LanguageServer`` subclass, its factory and ``run``.

``TakebackServer`` holds the open documents and the workspace folders (one engine each); every feature module registers its handlers on it
with ``setup(server)``. The engine is synchronous and takes a file lock, so handlers run its
calls in worker threads (``asyncio.to_thread``); when the engine asks the editor to change open
documents from such a thread (with the store's lock let go), ``editor.EditorRound`` hops back to
the event loop to send ``workspace/applyEdit`` and waits for the answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from . import (
    blame,
    code_actions,
    commands,
    documents,
    edits,
    folders,
    hunks,
    operations,
    stream,
    timeline,
    turns,
    unsaved,
)
from . import log as lsp_log
from .documents import Documents
from .editor import EDITOR_TIMEOUT
from .folders import Folder, Folders
from .protocol import HoverOptions, TakebackProtocol, converter

log = logging.getLogger("takeback.lsp")


class TakebackServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            name="takeback",
            version=__version__,
            protocol_cls=TakebackProtocol,
            converter_factory=converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.loop: asyncio.AbstractEventLoop | None = None
        self.documents = Documents()
        self.folders = Folders(self)
        self.editor_timeout = EDITOR_TIMEOUT
        """Seconds to wait for the client's answer to ``workspace/applyEdit``."""
        self.code_action_cache: dict[str, Any] = {}
        self.hover_options = HoverOptions()
        """``initializationOptions.hover`` and ``hoverCommandLinks`` (``blame.py``)."""
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ client capabilities

    @property
    def position_encoding(self) -> str:
        try:
            return self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        except RuntimeError:  # before initialize
            return types.PositionEncodingKind.Utf16

    def _capability(self, *names: str) -> Any:
        value: Any = self.client_capabilities
        for name in names:
            value = getattr(value, name, None) if value is not None else None
        return value

    @property
    def can_apply_edits(self) -> bool:
        return bool(self._capability("workspace", "apply_edit"))

    @property
    def resource_operations(self) -> set[str]:
        ops = self._capability("workspace", "workspace_edit", "resource_operations") or []
        return {str(getattr(op, "value", op)) for op in ops}

    @property
    def document_changes(self) -> bool:
        """Whether to send ``documentChanges`` (versioned). A client that takes resource
        operations must take ``documentChanges``, the only place they can be written."""
        return bool(self._capability("workspace", "workspace_edit", "document_changes")) or bool(self.resource_operations)

    @property
    def supports_progress(self) -> bool:
        return bool(self._capability("window", "work_done_progress"))

    # ------------------------------------------------------------------ plumbing

    def background(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run a task the server keeps a reference to; its failure is logged, not lost."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("background task %r failed", name, exc_info=t.exception())

        task.add_done_callback(done)
        return task

    def invalidate(self, folder: Folder) -> None:
        """Forget what was derived from a folder's timeline (it changed)."""
        self.code_action_cache.pop(folder.path, None)

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
        """Serve on stdio with this server's own read loop (``stream.py``): every request is
        answered, even one pygls could not read."""
        return stream.serve(self, stdin, stdout)


def create_server() -> TakebackServer:
    """A server with every feature registered."""
    server = TakebackServer()
    for feature in (folders, documents, turns, edits, operations, timeline, hunks, commands, unsaved, code_actions, blame):
        feature.setup(server)
    return server


def run(log_level: str = "INFO") -> int:
    """``takeback serve``: the language server on stdin / stdout until the client exits."""
    server = create_server()
    lsp_log.configure(server, log_level)
    log.info("takeback %s language server starting", __version__)
    return server.start_io()
