"""``workspace/executeCommand`` commands: ``takeback.undoTurn``, ``takeback.redoTurn``,
``takeback.revertTurn``, ``takeback.restore`` (and ``takeback.save``, in ``unsaved.py``).

They exist for code actions and for editors whose users bind commands rather than custom
requests (Neovim). Each takes at most one argument, an object shaped like the matching
request's params (``takeback.revertTurn`` needs ``turnId``; ``takeback.restore`` needs
``checkpointId``), and answers what the request answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from .errors import rpc_errors
from .operations import operate
from .protocol import (
    CMD_REDO,
    CMD_RESTORE,
    CMD_REVERT,
    CMD_UNDO,
    COMMAND_ARGUMENTS,
    InvalidParams,
)

if TYPE_CHECKING:
    from .server import TakebackServer


def arguments(server: TakebackServer, command: str, args: tuple[Any, ...]) -> Any:
    if len(args) > 1:
        raise JsonRpcInvalidParams(message=f"{command} takes one argument (an object), not {len(args)}")
    raw = args[0] if args else {}
    if raw is None or raw == []:
        raw = {}  # Lua clients (Neovim) encode an empty table as []
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams(message=f"{command}'s argument must be an object")
    try:
        return server.protocol._converter.structure(raw, COMMAND_ARGUMENTS[command])
    except Exception as exc:  # noqa: BLE001 - bad arguments are the client's input
        return InvalidParams.of(exc)


def setup(server: TakebackServer) -> None:
    @server.command(CMD_UNDO)
    async def undo_turn(ls: Any, *args: Any) -> Any:  # Any: pygls evaluates these at run time
        return await _run(ls, arguments(ls, CMD_UNDO, args), "undo")

    @server.command(CMD_REDO)
    async def redo_turn(ls: Any, *args: Any) -> Any:  # Any: pygls evaluates these at run time
        return await _run(ls, arguments(ls, CMD_REDO, args), "redo")

    @server.command(CMD_REVERT)
    async def revert_turn(ls: Any, *args: Any) -> Any:  # Any: pygls evaluates these at run time
        return await _run(ls, arguments(ls, CMD_REVERT, args), "revert")

    @server.command(CMD_RESTORE)
    async def restore(ls: Any, *args: Any) -> Any:  # Any: pygls evaluates these at run time
        return await _run(ls, arguments(ls, CMD_RESTORE, args), "restore")


@rpc_errors
async def _run(server: TakebackServer, params: Any, kind: str) -> Any:
    if kind == "revert":
        return await operate(server, kind, params, spec=params.turn_id, uri=params.uri)
    if kind == "restore":
        return await operate(server, kind, params, spec=params.checkpoint_id)
    return await operate(server, kind, params)
