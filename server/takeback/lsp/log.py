"""Logging: the ``takeback`` loggers go to the client's ``window/logMessage`` (and warnings to stderr).

Only Takeback's own records are forwarded (pygls logs every message it sends; forwarding those
would loop). Records may come from worker threads, so they are handed to the event loop.
pygls's tracebacks for requests refused on purpose stay out of stderr (``Answered``).
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException

if TYPE_CHECKING:
    from .server import TakebackServer

_LEVELS = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
    logging.DEBUG: types.MessageType.Log,
}


class ClientLogHandler(logging.Handler):
    """Forwards records to the client as ``window/logMessage``."""

    def __init__(self, server: TakebackServer) -> None:
        super().__init__()
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        loop = self.server.loop
        if loop is None or loop.is_closed():
            return
        try:
            message = self.format(record)
            kind = next((v for level, v in sorted(_LEVELS.items(), reverse=True) if record.levelno >= level), types.MessageType.Log)
            params = types.LogMessageParams(type=kind, message=message)
            loop.call_soon_threadsafe(self._send, params)
        except Exception:  # noqa: BLE001 - logging must never raise
            self.handleError(record)

    def _send(self, params: types.LogMessageParams) -> None:
        self.server.window_log_message(params)


class Answered(logging.Filter):
    """Keeps out of stderr what pygls logs with a traceback and is no failure of the server: a
    request a handler refused (a ``JsonRpcException``: the client has the answer, e.g. "nothing
    to undo") and an answer that could not be written to a client gone away (``BrokenPipeError``:
    ``stream.serve`` says so in one line). An unexpected error keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, (JsonRpcException, BrokenPipeError))


def configure(server: TakebackServer, level: str) -> None:
    numeric = getattr(logging, str(level).upper(), logging.INFO)
    root = logging.getLogger("takeback")
    root.setLevel(numeric)
    stderr = logging.StreamHandler(sys.stderr)
    # The client shows the server's stderr too (VS Code as errors): send it only what is a
    # warning or worse, unless debugging; everything reaches the client as window/logMessage.
    stderr.setLevel(logging.DEBUG if numeric <= logging.DEBUG else logging.WARNING)
    stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    stderr.addFilter(Answered())
    client = ClientLogHandler(server)
    client.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.handlers[:] = [stderr, client]
    root.propagate = False
    # pygls logs every message body at INFO; keep it for DEBUG runs only.
    logging.getLogger("pygls").setLevel(logging.DEBUG if numeric <= logging.DEBUG else logging.WARNING)
    logging.getLogger().handlers[:] = [stderr]  # pygls's and asyncio's records
