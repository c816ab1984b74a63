"""Turn lifecycle requests: ``takeback/beginTurn``, ``takeback/endTurn``, ``takeback/recordCheck``.

An agent brackets its turn with begin / end: edits it sends through ``takeback/applyEdit`` in
between join the turn, and whatever else changed on disk meanwhile (shell commands, formatters)
is recorded when the turn ends. Each answers the turn (models.Entry).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.models import Check, Entry
from .errors import rpc_errors
from .protocol import (
    BEGIN_TURN,
    END_TURN,
    RECORD_CHECK,
    BeginTurnParams,
    EndTurnParams,
    RecordCheckParams,
)

if TYPE_CHECKING:
    from .folders import Folder
    from .server import TakebackServer


async def _write(ls: TakebackServer, folder: Folder, fn: Callable[..., Entry], *args: Any, **kwargs: Any) -> Entry:
    """Run a recording call in the folder's write order (after every request sent before it),
    announce the change and answer the entry."""
    async with folder.writes:
        entry = await asyncio.to_thread(fn, *args, **kwargs)
    await ls.folders.changed(folder)
    return entry


def setup(server: TakebackServer) -> None:
    @server.feature(BEGIN_TURN)
    @rpc_errors
    async def begin_turn(ls: TakebackServer, params: BeginTurnParams) -> Entry:
        folder = await ls.folders.resolve(params.folder)
        engine = folder.require()
        return await _write(
            ls, folder, engine.begin_turn, label=params.label, session=params.session_id, agent=params.agent,
            source="lsp", bracket=params.bracket,
        )

    @server.feature(END_TURN)
    @rpc_errors
    async def end_turn(ls: TakebackServer, params: EndTurnParams) -> Entry:
        folder = await ls.folders.resolve(params.folder, turn=params.turn_id)
        engine = folder.require()
        checks = [Check(name=c.name, status=c.status, command=c.command, exit_code=c.exit_code) for c in params.checks]
        return await _write(ls, folder, engine.end_turn, turn=params.turn_id, commands=params.commands_run, checks=checks)

    @server.feature(RECORD_CHECK)
    @rpc_errors
    async def record_check(ls: TakebackServer, params: RecordCheckParams) -> Entry:
        folder = await ls.folders.resolve(params.folder, turn=params.turn_id)
        engine = folder.require()
        return await _write(
            ls, folder, engine.record_check, params.turn_id, params.name, params.status,
            command=params.command, exit_code=params.exit_code,
        )
