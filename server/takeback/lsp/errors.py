"""Engine errors to JSON-RPC errors, in one place.

Every handler runs inside ``rpc_errors``: a ``TakebackError`` becomes a JSON-RPC error with the
code its class carries (takeback.errors, listed in protocol.ERROR_CODES) and its one-line
message; bad params become -32602. Nothing else is caught here: pygls answers an unexpected
exception with -32603 and the server keeps running.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcRequestCancelled,
)

from ..errors import TakebackError
from .protocol import InvalidParams

log = logging.getLogger("takeback.lsp")

T = TypeVar("T")


class Cancelled(Exception):
    """The client cancelled the request before anything was written."""


def to_rpc(exc: BaseException) -> JsonRpcException | None:
    if isinstance(exc, TakebackError):
        return JsonRpcException(message=exc.message, code=exc.rpc_code, data={"kind": exc.code})
    if isinstance(exc, Cancelled):
        return JsonRpcRequestCancelled(message=str(exc) or "cancelled; nothing was written", data={"kind": "cancelled"})
    return None


def check_params(params: Any) -> None:
    if isinstance(params, InvalidParams):
        raise JsonRpcInvalidParams(message=params.message, data={"kind": "invalid-input"})


def rpc_errors(handler: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Wrap an async handler ``(server, params)`` so engine errors answer with their codes."""

    @functools.wraps(handler)
    async def wrapped(server: Any, params: Any = None, *args: Any) -> T:
        check_params(params)
        try:
            return await handler(server, params, *args)
        except Exception as exc:  # a JsonRpcException too: to_rpc leaves it as it is
            mapped = to_rpc(exc)
            if mapped is None:
                raise
            log.info("%s failed: %s", getattr(handler, "__name__", "request"), mapped.message)
            raise mapped from exc

    return wrapped
