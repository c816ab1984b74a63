"""The stdio stream: frames in, messages handed to pygls, and an answer for every request.

pygls's own read loop answers nothing for a message it cannot read (a body that is not JSON,
a request without ``params`` for a method it has no type for, params of the wrong type for a
standard method, a malformed answer to one of the server's requests), and skips header lines it
cannot parse, which can swallow the next message: the client then waits for ever on a server
that is alive. This loop replaces it:

- **Header**: lines up to an empty line; ``Content-Length`` (a decimal number, at most
  ``MAX_BODY`` bytes) is required, other headers are ignored. A header that cannot be read ends
  the server at once, exit 1, with one line on stderr saying why (the stream cannot be trusted
  to find the next frame; the editor restarts it), even while the client holds the pipe open.
- **Reading** is done by a thread of its own (``_read_frames``), a daemon reading the file
  descriptor with ``os.read``: a read that waits on the pipe never keeps the process alive once
  the loop has decided to stop (a worker of the server's thread pool would: the pool is joined at
  exit), and it holds no lock of ``sys.stdin`` that the interpreter would need at exit. It hands
  over one frame at a time (a queue of one), so it never reads far ahead of the server.
- **Body** that is not JSON, or nested deeper than Python reads: -32700 with id null. JSON
  that is not an object (a batch, a number…): -32600 with id null.
- **Request** that is not JSON-RPC 2.0 (bad ``jsonrpc``, ``id`` or ``method``): -32600 (with its
  id when that can be read); params that do not fit the method: -32602; any request after
  ``shutdown``: -32600. Everything else goes to pygls, which answers unknown methods with
  -32601 and failing handlers with an error.
- **Answer** to one of the server's own requests that cannot be read: the waiting request fails
  with an error (so e.g. ``workspace/applyEdit`` counts as refused) instead of waiting for ever.
- **Notification** that cannot be read: logged and dropped (there is nothing to answer).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types
from pygls.io_ import StdoutWriter

if TYPE_CHECKING:
    from .server import TakebackServer

log = logging.getLogger("takeback.lsp.stream")

MAX_BODY = 256 * 1024 * 1024
"""The largest message body accepted, in bytes."""
_MAX_HEADER_LINE = 1024
_MAX_HEADER_LINES = 16
_MISSING = object()

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class FrameError(Exception):
    """A frame header that cannot be read: the stream cannot be followed any further."""


def serve(server: TakebackServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Run the server on stdio until the client exits or the stream ends or breaks; answer the
    exit status: after ``exit``, 0 if ``shutdown`` came first and 1 otherwise (the LSP rule,
    pygls's ``lsp_exit`` decides it); 0 when the client closes the stream; 1 after a frame that
    could not be read or when the answers cannot be written any more. An interrupt (SIGINT) goes
    on to the command line, which ends with 130 as every command does."""
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    status = 0
    try:
        status = asyncio.run(_read_loop(server, stdin or sys.stdin.buffer))
    except BrokenPipeError:
        log.error("the connection to the client is lost (its end of stdout is closed); stopping")
        status = 1
    except SystemExit as exc:  # the client's ``exit`` notification
        status = exc.code if isinstance(exc.code, int) else 1
    finally:
        server.shutdown()
    return status


async def _read_loop(server: TakebackServer, stdin: BinaryIO) -> int:
    frames: asyncio.Queue[bytes | FrameError | None] = asyncio.Queue(maxsize=1)
    reader = threading.Thread(
        target=_read_frames, args=(stdin, asyncio.get_running_loop(), frames), name="takeback-lsp-reader", daemon=True
    )
    reader.start()
    try:
        while True:
            frame = await frames.get()
            if isinstance(frame, FrameError):
                log.error("unreadable message frame from the client (%s); stopping, the editor may restart the server", frame)
                return 1
            if frame is None:
                return 0  # the client closed the stream
            dispatch(server, frame)  # raises SystemExit on ``exit``
    finally:
        _quiet_cancellations()


def _quiet_cancellations() -> None:
    """Leaving: the requests still running are cancelled, which pygls's callbacks report as
    errors with a traceback; that is the intended end, so only the reason to stop is logged."""
    loop = asyncio.get_running_loop()

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if not isinstance(context.get("exception"), asyncio.CancelledError):
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)


def _read_frames(stdin: BinaryIO, loop: asyncio.AbstractEventLoop, frames: asyncio.Queue[bytes | FrameError | None]) -> None:
    """The reader thread: each frame's body into ``frames``, then None at the end of the stream
    or the ``FrameError`` that ends it; leaves when the loop is gone."""
    source = _Input(stdin)
    while True:
        frame: bytes | FrameError | None
        try:
            frame = _frame(source)
        except FrameError as exc:
            frame = exc
        except OSError as exc:
            frame = FrameError(f"the stream cannot be read: {exc.strerror or exc}")
        try:
            asyncio.run_coroutine_threadsafe(frames.put(frame), loop).result()
        except BaseException:  # noqa: BLE001 - the loop stopped or was closed: nobody reads on
            return
        if not isinstance(frame, bytes):
            return


class _Input:
    """The client's stream, read with ``os.read`` on its descriptor and buffered here: lines of
    a header, bodies of a known length. Nothing reads on once it answered the end of the stream
    (``_frame`` answers None then, and the reader leaves)."""

    def __init__(self, stdin: BinaryIO) -> None:
        self._fd = stdin.fileno()
        self._buffer = bytearray()

    def _fill(self) -> bool:
        """Read what the client sent next; False at the end of the stream."""
        data = os.read(self._fd, 65536)
        self._buffer += data
        return bool(data)

    def _take(self, size: int) -> bytes:
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken

    def readline(self, limit: int) -> bytes:
        """A line with its ``\\n`` (at most ``limit`` bytes; less at the end of the stream)."""
        while True:
            end = self._buffer.find(b"\n", 0, limit)
            if end >= 0:
                return self._take(end + 1)
            if len(self._buffer) >= limit or not self._fill():
                return self._take(limit)

    def read(self, size: int) -> bytes:
        """``size`` bytes (fewer at the end of the stream)."""
        while len(self._buffer) < size and self._fill():
            pass
        return self._take(size)


def _frame(source: _Input) -> bytes | None:
    """The next frame's body; None at the end of the stream (also within a frame)."""
    length = _header(source)
    if length is None:
        return None
    body = source.read(length)
    return body if len(body) == length else None


def _header(source: _Input) -> int | None:
    """The body length a frame's header announces; None at the end of the stream."""
    length: int | None = None
    lines = 0
    while True:
        line = source.readline(_MAX_HEADER_LINE + 1)
        if len(line) > _MAX_HEADER_LINE:
            raise FrameError("a header that is too long")
        if not line.endswith(b"\n"):
            return None  # the stream ended (within a header too)
        if line.strip() == b"":
            if lines == 0:
                continue  # stray line breaks between frames
            if length is None:
                raise FrameError("a header without Content-Length")
            return length
        lines += 1
        if lines > _MAX_HEADER_LINES:
            raise FrameError("a header that is too long")
        name, colon, value = line.partition(b":")
        if not colon:
            raise FrameError(f"a header line that is not 'Name: value': {line[:80]!r}")
        if name.strip().lower() == b"content-length":
            text = value.strip()
            if not text.isdigit():
                raise FrameError(f"Content-Length is not a number: {text[:40]!r}")
            length = int(text)
            if length > MAX_BODY:
                raise FrameError(f"Content-Length {length} is over the limit of {MAX_BODY} bytes")


def dispatch(server: TakebackServer, body: bytes) -> None:
    """Hand one message body to pygls, or answer it with the error it deserves."""
    protocol = server.protocol
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        _reply_error(server, None, PARSE_ERROR, f"parse error: the message is not JSON that can be read ({type(exc).__name__})")
        return
    if not isinstance(data, dict):
        _reply_error(server, None, INVALID_REQUEST, "invalid request: a message must be a JSON object (batches are not supported)")
        return
    msg_id = data.get("id", _MISSING)
    method = data.get("method", _MISSING)
    id_ok = msg_id is _MISSING or (isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool))
    reply_to = msg_id if id_ok and msg_id is not _MISSING else None
    if method is _MISSING:
        _answer_from_client(server, data, reply_to)
        return
    is_request = msg_id is not _MISSING
    problem = None
    if data.get("jsonrpc") != "2.0":
        problem = 'invalid request: "jsonrpc" must be "2.0"'
    elif not id_ok:
        problem = "invalid request: an id must be a number or a string"
    elif not isinstance(method, str):
        problem = "invalid request: the method must be a string"
    elif is_request and protocol._shutdown:
        problem = "invalid request: the server is shutting down"
    elif data.get("params") is not None and not isinstance(data["params"], (dict, list)):
        problem = "invalid params: params must be an object or an array"
    if problem is not None:
        if is_request:
            code = INVALID_PARAMS if problem.startswith("invalid params") else INVALID_REQUEST
            _reply_error(server, reply_to, code, problem)
        else:
            log.warning("ignoring a notification that cannot be read: %s", problem)
        return
    data = {**data, "params": data.get("params")}  # a request may leave params out
    try:
        message = protocol.structure_message(data)
    except Exception as exc:  # noqa: BLE001 - any structuring failure is the client's input
        if is_request:
            _reply_error(server, reply_to, INVALID_PARAMS, f"invalid params for {method}: {_first_line(exc)}")
        else:
            log.warning("ignoring a %s notification whose params cannot be read: %s", method, _first_line(exc))
        return
    protocol.handle_message(message)


def _answer_from_client(server: TakebackServer, data: dict[str, Any], msg_id: Any) -> None:
    """A response to one of the server's requests: hand it over, or fail the waiting request."""
    protocol = server.protocol
    if msg_id is None:
        log.warning("ignoring a message with neither a method nor a usable id")
        return
    if msg_id not in protocol._result_types:  # what the server asked and still waits for
        log.warning("ignoring an answer to %r, which the server did not ask (or no longer waits for)", msg_id)
        return
    try:
        if data.get("jsonrpc") != "2.0" or ("result" in data) == ("error" in data):
            raise ValueError('it needs "jsonrpc": "2.0" and exactly one of result and error')
        message = protocol.structure_message(data)
    except Exception as exc:  # noqa: BLE001
        protocol._result_types.pop(msg_id, None)
        reason = f"the client's answer could not be read: {_first_line(exc)}"
        log.warning("%s", reason)
        protocol._handle_response(msg_id, None, types.ResponseError(code=INTERNAL_ERROR, message=reason))
        return
    protocol.handle_message(message)


def _reply_error(server: TakebackServer, msg_id: Any, code: int, message: str) -> None:
    log.warning("answering %s to %r: %s", code, msg_id, message)
    server.protocol._send_response(msg_id, error=types.ResponseError(code=code, message=message))


def _first_line(exc: BaseException) -> str:
    cause = exc.__cause__ or exc
    text = str(cause).strip() or type(cause).__name__
    return text.splitlines()[0][:300]
