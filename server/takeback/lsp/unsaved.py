"""What an operation applied in the editor and the disk lacks: the buffers' side of the engine's
rule (``engine/unsaved.py``), for ``takeback/status`` and ``takeback/timeline``, and
``takeback/save`` (the ``takeback.save`` command), which writes those files on disk.

The engine compares the disk with the newest operation's record; only the server knows what
the open buffers hold, so it hands them over (as operations do): a buffer holding the
operation's content is "unsaved", otherwise the editor's change was "discarded".
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..core.models import SaveReport, UnsavedFile
from .commands import arguments
from .errors import rpc_errors
from .folders import read
from .operations import overlay_of
from .protocol import CMD_SAVE, SAVE, FolderParams

if TYPE_CHECKING:
    from .folders import Folder
    from .server import TakebackServer


async def unsaved_files(server: TakebackServer, folder: Folder) -> list[UnsavedFile]:
    """``Engine.unsaved`` with what the open buffers under ``folder`` hold."""
    engine = folder.require()
    docs = server.documents.snapshot(under=folder.path) if server.can_apply_edits else {}
    overlay = await asyncio.to_thread(overlay_of, folder, docs)
    return await read(engine, engine.unsaved, overlay)


async def save(server: TakebackServer, params: FolderParams) -> SaveReport:
    folder = await server.folders.resolve(params.folder)
    engine = folder.require()
    async with folder.writes:  # after every edit batch or operation sent before it
        return await asyncio.to_thread(engine.save)


def setup(server: TakebackServer) -> None:
    @server.feature(SAVE)
    @rpc_errors
    async def save_request(ls: TakebackServer, params: FolderParams) -> SaveReport:
        return await save(ls, params)

    @server.command(CMD_SAVE)
    async def save_command(ls: Any, *args: Any) -> Any:  # Any: pygls evaluates these at run time
        return await _save(ls, arguments(ls, CMD_SAVE, args))


@rpc_errors
async def _save(server: TakebackServer, params: Any) -> Any:
    return await save(server, params)
