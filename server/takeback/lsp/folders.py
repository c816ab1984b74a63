"""Workspace folders: one engine (one store, one timeline) per folder, and change detection.

Folders come from ``initialize`` (``workspaceFolders``, else ``rootUri``) and
``workspace/didChangeWorkspaceFolders``. A request names its folder with ``folder`` (a folder
URI), or through a document URI, or through a turn id that only one folder knows; otherwise
the first folder is meant. A poller reads each store's timeline version about once a second
(cheap: the log's ref and the open turn's file, see ``Engine.timeline_version``) and sends
``takeback/timelineChanged`` when another process, e.g. the CLI, changed it. It also looks at
each store's hook failure log (``failures.py``): when an agent's hook logged a failure, the
client gets ``takeback/timelineChanged`` with the reason ``hook-failure`` (its status has
changed) and, unless ``initializationOptions.hookFailureMessages`` is false, a
``window/showMessage`` warning, at most one per folder every ``MESSAGE_SECONDS``.
Each folder's settings are the person's (``config.py``) with ``initializationOptions.settings``
as explicit overrides; settings the folder's repository may not set are logged as warnings.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types

from ..config import load_config
from ..engine import failures
from ..engine.engine import Engine
from ..errors import InvalidInput, NotFound, OutsideWorkspace, StateError, TakebackError
from .documents import file_path, path_uri, real_path
from .protocol import TIMELINE_CHANGED, HoverOptions, TimelineChangedParams

if TYPE_CHECKING:
    from .server import TakebackServer

T = TypeVar("T")

log = logging.getLogger("takeback.lsp.folders")

POLL_SECONDS = 1.0
UPKEEP_AFTER = 0.05
"""Seconds between a writing request's answer and the engine's deferred upkeep (``upkeep_soon``):
the answer is written out first."""
MESSAGE_SECONDS = 600.0
_ULID_CHARS = set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")


@dataclass
class Folder:
    uri: str
    path: str
    """Real path of the folder."""
    engine: Engine | None = None
    error: str | None = None
    version: str | None = None
    """The timeline version last announced (``Engine.timeline_version``)."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    writes: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Serialises this server's writing requests for the folder in arrival order (FIFO)."""
    upkeep_due: bool = False
    """An upkeep is scheduled and has not started yet (``Folders.upkeep_soon``)."""
    upkeeping: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while the engine's upkeep runs: one at a time, apart from the writing requests."""
    failures: tuple[int, int] | None = None
    """The hook failure log's stamp last seen (``failures.stamp``)."""
    told: float | None = None
    """When (``time.monotonic``) the person was last warned of a hook failure here."""

    def require(self) -> Engine:
        if self.engine is None:
            raise StateError(f"the workspace folder {self.path} has no Takeback store: {self.error or 'not opened yet'}")
        return self.engine

    def contains(self, path: str) -> bool:
        return path == self.path or path.startswith(self.path.rstrip(os.sep) + os.sep)


def read_version(engine: Engine) -> str | None:
    return engine.timeline_version()


async def read(engine: Engine, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run an engine read in a worker thread under the store's lock, so an operation running
    in another thread (which holds the lock while it writes) is never seen half-way."""

    def locked() -> T:
        with engine.transaction():
            return fn(*args, **kwargs)

    return await asyncio.to_thread(locked)


class Folders:
    def __init__(self, server: TakebackServer) -> None:
        self.server = server
        self.items: list[Folder] = []
        self.poll_seconds = POLL_SECONDS
        self.settings: dict = {}  # initializationOptions.settings: the client's explicit overrides
        self.hook_failure_messages = True  # initializationOptions.hookFailureMessages

    # ------------------------------------------------------------------ membership

    async def add(self, uri: str) -> Folder | None:
        try:
            path = os.path.realpath(file_path(uri))
        except InvalidInput as exc:
            log.warning("ignoring workspace folder %s: %s", uri, exc.message)
            return None
        if any(f.path == path for f in self.items):
            return None
        folder = Folder(uri=uri, path=path)
        self.items.append(folder)
        try:
            config = await asyncio.to_thread(load_config, path, self.settings)
            for problem in config.problems:
                log.warning("workspace folder %s: settings: %s", path, problem)
            folder.engine = await asyncio.to_thread(Engine, path, config, True)  # long-lived: watches the tree
            folder.engine.defer_upkeep()  # the watch, pack merges and a big operation's cache: after answers
            self.upkeep_soon(folder)
            folder.version = await asyncio.to_thread(read_version, folder.engine)
            folder.failures = await asyncio.to_thread(failures.stamp, folder.engine.store.path)
            log.info("workspace folder %s: store %s", path, folder.engine.store.path)
            if folder.engine.last_recovery:
                log.warning(
                    "%s: recovered an interrupted %s (%s)",
                    path, folder.engine.last_recovery.operation, folder.engine.last_recovery.action,
                )
        except TakebackError as exc:
            folder.error = exc.message
            log.error("workspace folder %s cannot be used: %s", path, exc.message)
        return folder

    def remove(self, uri: str) -> None:
        try:
            path = os.path.realpath(file_path(uri))
        except InvalidInput:
            return
        for folder in self.items:
            if folder.path == path and folder.engine is not None:
                folder.engine.close()
        self.items = [f for f in self.items if f.path != path]

    # ------------------------------------------------------------------ lookup

    def default(self) -> Folder:
        if not self.items:
            raise StateError("no workspace folder is open: start the server with a root folder or workspace folders")
        return self.items[0]

    def for_path(self, path: str) -> Folder:
        """The innermost folder holding ``path`` (a real path)."""
        best = None
        for folder in self.items:
            if folder.contains(path) and (best is None or len(folder.path) > len(best.path)):
                best = folder
        if best is None:
            raise OutsideWorkspace(f"{path} is outside every workspace folder")
        return best

    def for_uri(self, uri: str) -> Folder:
        return self.for_path(real_path(file_path(uri)))

    def named(self, uri: str) -> Folder:
        if not uri.strip():  # an empty 'folder' never quietly means the first folder
            raise InvalidInput("'folder' is empty: give a workspace folder URI, or leave it out to mean the first folder")
        path = os.path.realpath(file_path(uri))
        for folder in self.items:
            if folder.path == path:
                return folder
        raise NotFound(f"{uri} is not one of the workspace folders")

    async def resolve(self, folder: str | None = None, uri: str | None = None, turn: str | None = None) -> Folder:
        """The folder a request means (see the module's docstring)."""
        if folder is not None:
            return self.named(folder)
        if uri:
            return self.for_uri(uri)
        if turn and len(self.items) > 1 and len(turn) >= 10 and set(turn.upper()) <= _ULID_CHARS:
            for item in self.items:
                if item.engine is None:
                    continue
                try:
                    await read(item.engine, item.engine.entry, turn)
                    return item
                except TakebackError:
                    continue
        return self.default()

    # ------------------------------------------------------------------ changes

    async def changed(self, folder: Folder, reason: str = "request") -> None:
        """Tell the client when the folder's timeline changed (``reason`` says who changed it);
        after this server's own writing request (``request``), or when the poller found another
        process's records (``external``), its engine's upkeep follows."""
        if folder.engine is None:
            return
        if reason == "request":
            self.upkeep_soon(folder)
        async with folder.lock:
            try:
                version = await asyncio.to_thread(read_version, folder.engine)
            except TakebackError as exc:
                log.debug("could not read %s's timeline version: %s", folder.path, exc.message)
                return
            if version == folder.version:
                return
            folder.version = version
        if reason == "external":  # another process wrote: its records are folded now, not in the next request
            self.upkeep_soon(folder)
        self.server.invalidate(folder)
        self.server.protocol.notify(
            TIMELINE_CHANGED, TimelineChangedParams(folder=folder.uri, head=version, reason=reason)
        )

    def upkeep_soon(self, folder: Folder) -> None:
        """Run the work the folder's engine leaves for after an answer (``Engine.upkeep``: other
        processes' records folded, the work tree's watch with its first listing, merging small
        packs, the timeline cache after a big operation) once the answer to the request that left
        it is out, or once the poller announced another process's records, as the resident
        process does after its answers: in a worker thread, under the store's lock as any engine call. One at a
        time per folder; a failure is logged (the next request's upkeep tries again)."""
        engine = folder.engine
        if folder.upkeep_due or engine is None:
            return
        folder.upkeep_due = True

        async def later() -> None:
            await asyncio.sleep(UPKEEP_AFTER)
            # not in turn with ``folder.writes``: waiting for the store there would hold back a request's look at the documents
            async with folder.upkeeping:
                folder.upkeep_due = False
                try:
                    await asyncio.to_thread(engine.upkeep)  # (the engine takes the store's lock for what it writes)
                except TakebackError as exc:
                    log.warning("%s: upkeep after the last request: %s", folder.path, exc.message)

        self.server.background(later(), f"upkeep {folder.path}")

    async def hook_failures(self, folder: Folder) -> None:
        """Tell the client when agents' hooks logged a failure in the folder's store (or the log
        went away: its status changed too); failures logged before the server started are in
        the status only."""
        if folder.engine is None:
            return
        store = folder.engine.store.path
        stamp = await asyncio.to_thread(failures.stamp, store)
        if stamp == folder.failures or (stamp is not None and stamp[0] == 0):
            return  # unchanged, or a hook's line not written yet (its file exists a moment before)
        folder.failures = stamp
        self.server.protocol.notify(
            TIMELINE_CHANGED, TimelineChangedParams(folder=folder.uri, head=folder.version, reason="hook-failure")
        )
        if stamp is None:
            return
        summary = await asyncio.to_thread(failures.summary, store)
        log.warning("%s: an agent's hook logged a failure: %s", folder.path, summary["last_hook_failure"])
        now = time.monotonic()
        if not self.hook_failure_messages or (folder.told is not None and now - folder.told < MESSAGE_SECONDS):
            return
        folder.told = now
        self.server.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Warning,
            message=(
                f"Takeback: an agent's hook failed to record in {os.path.basename(folder.path)} "
                f"({summary['hook_failures']} failure{'' if summary['hook_failures'] == 1 else 's'} logged; "
                f"last: {summary['last_hook_failure']}). "
                f"`takeback status` counts them; the log is {store / failures.FILE_NAME}"
            ),
        ))

    async def poll(self) -> None:
        """Notice log heads moved by other processes (the CLI, another editor's server), and
        failures agents' hooks logged."""
        while True:
            await asyncio.sleep(self.poll_seconds)
            for folder in list(self.items):
                await self.changed(folder, reason="external")
                await self.hook_failures(folder)


def _seconds(value: object) -> float | None:
    """A duration from initializationOptions: a number of seconds above 0 and at most a day."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 86400:
        return float(value)
    if value is not None:
        log.warning("ignoring the initialization option %r: not a number of seconds between 0 and 86400", value)
    return None


def _flag(options: dict, name: str, default: bool) -> bool:
    """A true-or-false initialization option (another value is logged and the default kept)."""
    value = options.get(name)
    if isinstance(value, bool):
        return value
    if value is not None:
        log.warning("ignoring the initialization option %s=%r: not true or false", name, value)
    return default


def setup(server: TakebackServer) -> None:
    @server.feature(types.INITIALIZE)
    async def initialize(ls: TakebackServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        poll = _seconds(options.get("pollInterval"))
        if poll is not None:
            ls.folders.poll_seconds = poll
        timeout = _seconds(options.get("applyEditTimeout"))
        if timeout is not None:
            ls.editor_timeout = timeout
        messages = options.get("hookFailureMessages")
        if isinstance(messages, bool):
            ls.folders.hook_failure_messages = messages
        elif messages is not None:
            log.warning("ignoring the initialization option hookFailureMessages=%r: not true or false", messages)
        ls.hover_options = HoverOptions(_flag(options, "hover", True), _flag(options, "hoverCommandLinks", False))
        settings = options.get("settings")
        if isinstance(settings, dict):
            ls.folders.settings = settings
        uris = [f.uri for f in params.workspace_folders or []]
        if not uris:
            root = params.root_uri or (params.root_path and path_uri(params.root_path))
            if root:
                uris = [root]
        for uri in uris:
            await ls.folders.add(uri)

    @server.feature(types.INITIALIZED)
    def initialized(ls: TakebackServer, params: types.InitializedParams) -> None:
        ls.background(ls.folders.poll(), "timeline poller")

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def folders_changed(ls: TakebackServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for removed in params.event.removed or []:
            ls.folders.remove(removed.uri)
        for added in params.event.added or []:
            await ls.folders.add(added.uri)
