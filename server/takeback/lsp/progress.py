"""Work-done progress and cancellation for long operations.

``WorkDone`` reports begin / report / end on a token the client gave (``workDoneToken``) or one
the server creates (``window/workDoneProgress/create``, when the client supports it), and
turns a cancel from the client (the progress's cancel button, or ``$/cancelRequest``) into a
``threading.Event`` the worker thread looks at. Cancellation is honoured until the first file
is written; after that the operation completes (all or nothing) and says so.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from types import TracebackType
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from .server import TakebackServer

log = logging.getLogger("takeback.lsp.progress")


class WorkDone:
    def __init__(self, server: TakebackServer, title: str, token: Any = None) -> None:
        self.server = server
        self.title = title
        self.token = token
        self.cancel = threading.Event()
        self._created = False

    async def __aenter__(self) -> WorkDone:
        progress = self.server.work_done_progress
        if self.token is None and self.server.supports_progress:
            token = f"takeback-{uuid.uuid4()}"
            try:
                await asyncio.wait_for(progress.create_async(token), timeout=10)
                self.token = token
                self._created = True
            except Exception as exc:  # noqa: BLE001 - progress is a courtesy; the work goes on
                log.debug("no progress token: %s", exc)
        if self.token is not None:
            progress.begin(self.token, types.WorkDoneProgressBegin(title=self.title, cancellable=True))
            # begin registers the token (a future the client's cancel cancels)
            progress.tokens[self.token].add_done_callback(lambda f: self.cancel.set() if f.cancelled() else None)
        return self

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.token is not None:
            self.server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message, percentage=percentage, cancellable=True)
            )

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.token is None:
            return
        if exc is None:
            message = "done"
        elif self.cancel.is_set():
            message = "cancelled"
        else:
            message = "failed"
        try:
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        finally:
            self.server.work_done_progress.tokens.pop(self.token, None)
