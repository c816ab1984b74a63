"""Timeline queries: ``takeback/timeline`` (paged), ``takeback/turn``, ``takeback/diff``,
``takeback/fileAt`` and ``takeback/status`` (with what the newest operation applied in the
editor and the disk lacks, ``unsaved.py``). They read only; each runs in a worker thread
because opening the log takes the store's lock."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import TypeAdapter

from ..core.models import Entry, StoreStatus
from ..errors import InvalidInput
from .documents import file_path
from .errors import rpc_errors
from .folders import read
from .protocol import (
    DIFF,
    FILE_AT,
    STATUS,
    TIMELINE,
    TURN,
    DiffParams,
    DiffResult,
    FileAtParams,
    FileAtResult,
    FolderParams,
    SessionStart,
    TimelineParams,
    TimelineResult,
    TurnParams,
)
from .unsaved import unsaved_files

if TYPE_CHECKING:
    from .server import TakebackServer

DEFAULT_LIMIT = 50
_TIME: TypeAdapter[datetime] = TypeAdapter(datetime)


def _iso(at: datetime) -> str:
    """A time as an Entry's ``createdAt`` is sent (pydantic's JSON form)."""
    return str(_TIME.dump_python(at, mode="json"))


def setup(server: TakebackServer) -> None:
    @server.feature(TIMELINE)
    @rpc_errors
    async def timeline(ls: TakebackServer, params: TimelineParams) -> TimelineResult:
        folder = await ls.folders.resolve(params.folder)
        engine = folder.require()
        limit = params.limit if params.limit is not None else DEFAULT_LIMIT
        if limit < 1:
            raise InvalidInput("limit must be 1 or more")
        page = await read(engine, engine.page, session=params.session_id, limit=limit, before=params.before,
                          empty=params.include_empty)
        return TimelineResult(
            entries=page.entries,
            next_before=page.entries[-1].number if page.more and page.entries else None,
            folder=folder.uri,
            hidden_empty=page.hidden_empty,
            sessions=[
                SessionStart(session=s.session, label=s.label, number=s.number, created_at=_iso(s.created_at))
                for s in page.sessions
            ],
            unsaved=await unsaved_files(ls, folder),
        )

    @server.feature(TURN)
    @rpc_errors
    async def turn(ls: TakebackServer, params: TurnParams) -> Entry:
        folder = await ls.folders.resolve(params.folder, turn=params.turn_id)
        entry = await read(folder.require(), folder.require().entry, params.turn_id)
        return entry

    @server.feature(DIFF)
    @rpc_errors
    async def diff(ls: TakebackServer, params: DiffParams) -> DiffResult:
        folder = await ls.folders.resolve(params.folder, uri=params.uri, turn=params.turn_id)
        path = file_path(params.uri) if params.uri else None
        text = await read(folder.require(), folder.require().diff, params.turn_id, path)
        return DiffResult(diff=text, folder=folder.uri)

    @server.feature(FILE_AT)
    @rpc_errors
    async def file_at(ls: TakebackServer, params: FileAtParams) -> FileAtResult:
        folder = await ls.folders.resolve(params.folder, uri=params.uri, turn=params.turn_id)
        content = await read(
            folder.require(), folder.require().file_at, params.turn_id, file_path(params.uri), params.side, params.step,
        )
        if content is None:
            return FileAtResult(exists=False, content=None, encoding="utf-8", folder=folder.uri)
        try:
            return FileAtResult(exists=True, content=content.decode("utf-8"), encoding="utf-8", folder=folder.uri)
        except UnicodeDecodeError:
            return FileAtResult(exists=True, content=base64.b64encode(content).decode(), encoding="base64", folder=folder.uri)

    @server.feature(STATUS)
    @rpc_errors
    async def status(ls: TakebackServer, params: FolderParams) -> StoreStatus:
        folder = await ls.folders.resolve(params.folder)
        result = await read(folder.require(), folder.require().status)
        result.unsaved = await unsaved_files(ls, folder)  # with what the open buffers hold
        return result
