"""The resident process: one per user and setting, it keeps engines loaded for agents' hooks.

Started in the background by the first hook that finds none (``client.start``), it listens on
a socket in the user's private folder (``address.py``), answers one JSON request per
connection, and exits after ``TAKEBACK_RESIDENT_IDLE`` seconds (default 600) without a request,
when its own code changed on disk (``staleness.py``; it answers "stale" and the caller works
in-process, then starts a fresh one), when its socket was taken away, or on ``takeback resident stop``. A process
that is leaving takes its socket away at once (the next caller starts a fresh process) and exits
once the requests in flight are answered.

What it holds: one long-lived ``Engine`` per workspace it was asked about (at most
``_MAX_ENGINES``, the least recently used closed first), each opened again when the files its
settings come from change or its store was removed; the requests of one workspace run one at a time, in the order they
arrive. The store's own lock still rules across processes (the language server, the CLI), so
nothing is shared with them but the store on disk. Work no answer needs (merging a store's small
packs, setting up the work tree's watch) waits until the hook's connection is closed
(``Engine.defer_upkeep``/``upkeep``); then, when no other request is in flight, the heap's free
pages go back to the system (glibc's ``malloc_trim``: a shell step's look-ups free megabytes
that glibc would otherwise keep; every thread allocates from one heap, so the pages it keeps are
the main heap's, which the trim reaches). The hook that starts the process names the workspace it
recorded into (``run --warm``): that one is made ready as soon as the process listens
(``Resident.warm_up``), so the session's next hook, often its first shell step, finds the work
tree watched and listed instead of listing it twice. A session's start (its agent's
session-start hook) asks for the same for its workspace, answered before the work is done
(``Resident.warm_soon``): by the session's first prompt the work is over.

Trust: only the user can enter the socket's folder, and a peer whose uid is not the user's is
refused anyway (``SO_PEERCRED``); a request whose fingerprint is not this process's is refused,
so a caller with other settings never gets work done under these.

Requests and answers are netstrings (``wire.py``): ``hook`` hands over a hook call as it came
(the payload's bytes, the agent, the event, the hook's folder and environment), which is read
and recorded as ``takeback hook`` would do it (``hooks/handle.py``), then answered; ``status``
answers pid, start time, hook events recorded (a session's start is not one), the workspaces
held and those of them made ready (``ready``: their engine's upkeep has nothing left to set up,
the work tree watched and listed: ``Engine.ready``); ``stop`` answers, then
the process exits; ``cli`` runs a command of the command line (``cli.py``: a reading one, an
operation, ``begin``/``end``; ``status`` counts them apart, as ``cli_requests``, those that write
as ``cli_writes``: accepted on the connection before they run, ``wire.ACCEPTED``, and their
workspace's engine kept up as a hook's) with the engine held for its workspace, lent for the
whole command (``_Held.lent``: with the request lock and the store's lock; opened anew first
when a new engine would answer otherwise, ``Engine.as_if_opened``). ``status`` also counts the
engines opened for the workspaces held (``engines_opened``: a debugging aid).

The guard (``hooks/guarding.py``: the classifier and its shell parser, tree-sitter-bash) is
loaded on a thread as soon as the process listens (``Resident.load_guard``), beside the warm-up:
importing it costs 15-70 ms (measured on the 2-CPU VM under load 3-8; tree-sitter-bash's own
import 2-10 ms, the parser built in 0.05 ms, the first parse of a line 0.25-0.3 ms against 0.1
after), which the first pre-tool hook would otherwise pay. ``status`` says how long it took
(``guard_loaded_ms``). Its modules are then watched for staleness like the rest.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path

from .. import config as config_module
from ..engine.engine import Engine
from ..hooks.events import Event
from ..hooks.handle import handle
from ..hooks.record import record_logged
from ..hooks.where import workspace_for
from . import address, staleness, wire
from . import cli as cli_requests  # imported now: its code (and the CLI's) is watched for staleness

log = logging.getLogger("takeback.resident")

_MAX_ENGINES = 8
_MAX_REQUEST = 32 << 20
_DEFAULT_IDLE_SECONDS = 600.0


def idle_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get("TAKEBACK_RESIDENT_IDLE", _DEFAULT_IDLE_SECONDS)))
    except ValueError:
        return _DEFAULT_IDLE_SECONDS


def _folder_id(path: Path) -> tuple[int, int] | None:
    """Which folder is at ``path`` (None: none): another one there is a folder made anew."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


class _Held:
    """One workspace's engine, the lock its requests take turns on, and what it was opened on:
    its settings' stamp and its store's folder."""

    def __init__(self, workspace: str) -> None:
        self.workspace = workspace
        self.lock = threading.Lock()
        self.engine: Engine | None = None
        self.stamp: tuple = ()
        self.store: tuple[int, int] | None = None
        self.opened = 0  # engines opened for this workspace (``status``: ``engines_opened``)
        self.recording = False  # a hook recorded with it: its upkeep (watch, merges) is worth doing

    @property
    def ready(self) -> bool:
        """Whether its engine is open and its upkeep set up what it would (``Engine.ready``:
        the work tree watched and listed): ``status``'s ``ready``."""
        engine = self.engine
        return engine is not None and engine.ready

    def engine_now(self) -> Engine:
        """The engine, opened again when the files its settings come from changed or its store
        was removed (the person reclaiming disk): a fresh engine makes the store anew, as a
        hook working in-process would."""
        if self.engine is not None and (
            staleness.stamp(config_module.config_files(self.engine.workspace.root)) != self.stamp
            or _folder_id(self.engine.store.path) != self.store
        ):
            self.close()
        if self.engine is None:
            engine = Engine(self.workspace, long_lived=True)
            engine.defer_upkeep()  # pack merges wait until the answer is out (``Resident._upkeep``)
            self.stamp = staleness.stamp(config_module.config_files(engine.workspace.root))
            self.store = _folder_id(engine.store.path)
            self.engine = engine
            self.opened += 1
        return self.engine

    @contextlib.contextmanager
    def lent(self) -> Iterator[Engine | None]:
        """The engine for one command of the command line (``cli.py``), answering as a new one
        would, held with the store's lock for the whole command; None (nothing held, a new
        engine says why) when it cannot be had."""
        with self.lock, contextlib.ExitStack() as store_held:
            try:
                engine = self._as_opened(store_held)
            except Exception:  # noqa: BLE001 - an engine opened for the command meets it again, as it would have
                store_held.close()
                self.close()
                engine = None
            yield engine

    def _as_opened(self, store_held: contextlib.ExitStack) -> Engine:
        """The engine, with the store's lock taken on ``store_held``, answering as one opened
        now: opened again when its settings are not those it would read now, or when it cannot
        be brought to what an opening would do (``Engine.as_if_opened``)."""
        engine = self.engine
        if engine is not None and config_module.load_config(engine.workspace.root) != engine.config:
            self.close()  # the stamps of the settings' files may miss an edit that kept them
        opened = self.opened
        engine = self.engine_now()
        store_held.enter_context(engine.store.locked())
        if self.opened != opened or engine.as_if_opened():
            return engine
        store_held.close()
        older, self.engine = self.engine, None
        try:
            engine = self.engine_now()
            if older is not None:
                engine.adopt_tree(older)  # (the watch and what it vouches for: the next begin lists nothing)
        finally:
            _close(older, self.workspace)
        store_held.enter_context(engine.store.locked())
        return engine

    def close(self) -> None:
        engine, self.engine = self.engine, None
        _close(engine, self.workspace)


def _close(engine: Engine | None, workspace: str) -> None:
    if engine is not None:
        try:
            engine.close()
        except Exception:  # a store that went away cannot be closed any better
            log.exception("closing the engine of %s", workspace)


def _malloc_trim() -> Callable[[int], object] | None:
    """glibc's ``malloc_trim`` (None elsewhere: musl, macOS)."""
    try:
        import ctypes

        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()
M_ARENA_MAX = -8  # glibc's mallopt parameter: how many heaps threads allocate from


def _mallopt() -> Callable[[int, int], int] | None:
    """glibc's ``mallopt`` (None elsewhere)."""
    try:
        import ctypes

        return ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None


_MALLOPT = _mallopt()


class Resident:
    def __init__(self, folder: str, print_: str, idle: float) -> None:
        self.print_ = print_
        self.path = address.socket_path(folder, print_)
        self.idle = idle
        self.started = time.time()
        self.requests = 0
        self.cli_requests = 0
        self.cli_writes = 0
        self.last_request = time.monotonic()
        self.active = 0
        self.stopping = False
        self._state = threading.Lock()
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._code = staleness.Code()
        self.guard_loaded: float | None = None  # seconds the guard's import and first parse took (``status``)
        self._sock: socket.socket | None = None
        self._sock_id: tuple[int, int] | None = None

    # ------------------------------------------------------------------ life cycle

    def serve(self, lock: int, warm: list[str] | None = None, sock: socket.socket | None = None) -> int:
        """Serve while holding ``lock`` (``address.take_lock``), closed at the end, on ``sock``
        when the caller listens already (``address.listen``); the workspaces of the folders
        ``warm`` names are made ready meanwhile (``warm_up``)."""
        if _MALLOPT is not None:
            # One heap for every thread (each request and the warm-up run on their own): glibc
            # would give threads heaps of their own, whose partly used pages ``malloc_trim`` cannot
            # give back (100,000 files: 81 MB against 71 after a few steps, measured).
            _MALLOPT(M_ARENA_MAX, 1)
        handler = logging.FileHandler(address.sibling(self.path, ".log"), mode="w", encoding="utf-8")
        os.chmod(address.sibling(self.path, ".log"), 0o600)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logging.getLogger("takeback").addHandler(handler)
        logging.getLogger("takeback").setLevel(logging.INFO)
        signal.signal(signal.SIGTERM, self._on_term)
        try:
            self._listen(sock)
            log.info("serving %s (pid %d)", self.path, os.getpid())
            self._guard_thread = self._load_guard_in_background()
            if warm:
                self._warm_in_background(warm)
            self._loop()
        finally:
            self._close()
            logging.getLogger("takeback").removeHandler(handler)
            handler.close()
            os.close(lock)
        return 0

    def _on_term(self, _signum: int, _frame: object) -> None:
        self.stopping = True  # the loop ends within a second, once no request is in flight

    def _listen(self, sock: socket.socket | None) -> None:
        if sock is None:
            sock = address.listen(self.path)
        info = os.stat(self.path)
        self._sock, self._sock_id = sock, (info.st_dev, info.st_ino)

    def _loop(self) -> None:
        """Accept until the process should leave. Once it is leaving (``stop``, SIGTERM, its
        code changed), its socket goes first: a caller that came every few hundred milliseconds
        would otherwise keep it from the quiet second it waited for, and be refused ("stale") by
        it forever, every hook working in-process; with the socket gone the next hook starts a
        fresh process, which takes the lock once the requests in flight here are answered."""
        assert self._sock is not None
        while not self.stopping:
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                if self._should_exit():
                    return
                continue
            with self._state:
                self.active += 1
                self.last_request = time.monotonic()
            threading.Thread(target=self._serve_one, args=(conn,), daemon=True).start()
        self._stop_listening()
        while not self._should_exit():
            time.sleep(0.05)

    def _should_exit(self) -> bool:
        with self._state:
            busy = self.active > 0
            idle_for = time.monotonic() - self.last_request
        if busy:
            return False
        if self.stopping:
            return True
        if idle_for > self.idle:
            log.info("idle for %.0f s: exiting", idle_for)
            return True
        try:
            info = os.stat(self.path)
            if (info.st_dev, info.st_ino) != self._sock_id:
                log.info("the socket was replaced: exiting")
                return True
        except OSError:
            log.info("the socket was removed: exiting")
            return True
        return False

    def _stop_listening(self) -> None:
        """Close the socket and take its file away (unless another process's socket is there now)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            try:
                info = os.stat(self.path)
                if (info.st_dev, info.st_ino) == self._sock_id:
                    os.unlink(self.path)
            except OSError:
                pass

    def _close(self) -> None:
        self._stop_listening()
        guard = getattr(self, "_guard_thread", None)
        if guard is not None:
            guard.join(5.0)  # an import under way: the process leaves once it is done (a few ms)
        with self._state:
            held = list(self._held.values())
            self._held.clear()
        for item in held:
            with item.lock:
                item.close()

    # ------------------------------------------------------------------ requests

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            with conn:
                if not self._same_user(conn):
                    return
                conn.settimeout(30.0)
                try:
                    answer = self._answer(wire.unpack(self._read(conn)), conn)
                except ValueError as exc:
                    answer = [b"refused", str(exc).encode()]
                conn.sendall(wire.pack(answer))
            self._upkeep()  # the connection is closed: the hook has its answer
            self._give_back()
        except Exception:  # one bad connection never ends the process
            log.exception("a request failed")
        finally:
            with self._state:
                self.active -= 1
                self.last_request = time.monotonic()

    @staticmethod
    def _same_user(conn: socket.socket) -> bool:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        return uid == os.getuid()

    @staticmethod
    def _read(conn: socket.socket) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > wire.MAX_BYTES:
                raise ValueError("request too large")

    def _answer(self, fields: list[bytes], conn: socket.socket | None = None) -> list[bytes]:
        if len(fields) < 2:
            return [b"refused", b"not a request"]
        op, print_ = fields[0], fields[1].decode("utf-8", "surrogateescape")
        if print_ != self.print_:
            return [b"refused", b"another setting"]
        if op == b"status":
            return [b"done", json.dumps(self.status()).encode()]
        if op == b"stop":
            self.stopping = True
            return [b"done"]
        if op == b"cli":
            return self._cli(fields[2:], conn)
        if op != b"hook" or len(fields) != 7:
            return [b"refused", b"unknown request"]
        if self.stopping or self._stale():
            self.stopping = True
            return [b"refused", b"stale"]
        agent, event_name, cwd = (f.decode("utf-8", "surrogateescape") for f in fields[2:5])
        env = wire.read_environment(fields[5])
        reply = handle(agent, event_name or None, cwd, fields[6], env, self._record)
        return [b"done", reply.unlogged.encode("utf-8", "surrogateescape"), reply.stdout, b"%d" % reply.status]

    def _cli(self, fields: list[bytes], conn: socket.socket | None = None) -> list[bytes]:
        """A command of the command line (``cli.py``), unless this process is leaving. One that
        writes is accepted on ``conn`` first (``wire.ACCEPTED``: the caller never runs it again)
        and counted apart (``cli_writes``); its workspace's engine then gets the upkeep a hook's
        does (its pack merges, the work tree's watch that makes the next ``begin``/``end`` cheap)."""
        if self.stopping or self._stale():
            self.stopping = True
            return [b"refused", b"stale"]
        writing: list[bool] = []

        def accept() -> None:
            if conn is None:
                raise OSError("no connection to accept on")
            conn.sendall(wire.pack([wire.ACCEPTED]))
            writing.append(True)
            with self._state:
                self.cli_writes += 1

        def lend(root: Path) -> contextlib.AbstractContextManager[Engine | None]:
            held = self._held_for(str(root))  # (as hooks name it)
            if writing:
                held.recording = True
            return held.lent()

        answer = cli_requests.serve(fields, lend, accept)
        if answer[:1] == [b"done"]:
            with self._state:
                self.cli_requests += 1
        return answer

    def _record(self, workspace: str, event: Event, event_name: str | None) -> str | None:
        """Record ``event`` with this process's engine for ``workspace`` (opened on first use);
        a session's start records nothing and is answered at once (``warm_soon``)."""
        if event.kind == "session_start":
            self.warm_soon(workspace)
            return None
        held = self._held_for(workspace)
        with held.lock:
            with self._state:
                self.requests += 1
            held.recording = True
            try:
                engine = held.engine_now()
            except Exception:  # noqa: BLE001 - the in-process path logs it like any failure
                return record_logged(workspace, event, event_name)  # (no engine is held: tried afresh next time)
            return record_logged(workspace, event, event_name, engine)  # (its store takes any failure)

    def _upkeep(self) -> None:
        """The engines' deferred work (pack merges, the work tree's watch), after an answer, one
        workspace at a time; none for an engine only the command line read with (it writes
        nothing, and a watch is worth its memory only for hooks). A merge runs without the
        workspace's lock: a request that comes meanwhile is served beside it."""
        with self._state:
            held = list(self._held.values())
        for one in held:
            with one.lock:
                engine = one.engine if one.recording else None
                if engine is not None:
                    engine.upkeep(merge=False)
            if engine is not None:
                engine.merge_packs()  # the workspace's next request need not wait for the copy (``store.merge_due``)

    def _warm_in_background(self, folders: list[str]) -> threading.Thread | None:
        """Make the workspaces of ``folders`` ready (``warm_up``) on a thread (answered; None
        when none could be found), their locks taken here, before any request is accepted: a
        hook for one of them waits for it."""
        try:
            held = list({id(h): h for h in (self._held_for(workspace_for([], f)) for f in folders)}.values())
        except Exception:  # the first request opens the engine itself
            log.exception("finding the workspaces of %s", ", ".join(folders))
            return None
        for one in held:
            one.lock.acquire()
        return self._start_warm(held)

    def warm_soon(self, workspace: str) -> threading.Thread | None:
        """A session began in ``workspace`` (its agent's session-start hook): make it ready
        (``warm_up``) on a thread, and return at once, so the hook is answered before the
        work is done; its lock is taken here, so the session's first prompt, which comes after
        the person typed it, waits for what is left of it rather than doing it again. Nothing
        when it is ready already, or when a request holds it (that request's upkeep makes it
        ready: ``_upkeep``)."""
        held = self._held_for(workspace)
        if held.ready or not held.lock.acquire(blocking=False):
            return None
        return self._start_warm([held])

    def _start_warm(self, held: list[_Held]) -> threading.Thread:
        """Run ``warm_up`` for ``held`` (their locks taken by the caller) on a thread."""
        with self._state:
            self.active += 1  # not idle meanwhile; and no heap trim while it runs
        thread = threading.Thread(target=self.warm_up, args=(held,), name="takeback-warm", daemon=True)
        thread.start()
        return thread

    def warm_up(self, held: list[_Held]) -> None:
        """Make ready, before any request names them, the workspaces the hook that started this
        process recorded into (``client.start``), whose next hook is often the session's first
        shell step: each one's engine opened and its upkeep run as after a hook's answer
        (``Engine.upkeep``: the work tree watched and listed, the parsed index kept). Called with
        their locks held and counted in ``active`` (``_warm_in_background``); releases them. A
        hook that comes meanwhile waits, then asks only about what the watch saw touched. Best
        effort: a failure is logged and the first request opens the engine as it would have."""
        try:
            for one in held:
                try:
                    if self.stopping or self._stale():
                        continue
                    one.recording = True  # a hook recorded there: its upkeep is worth doing
                    began = time.monotonic()
                    one.engine_now().upkeep()
                    log.info("made %s ready in %.2f s", one.workspace, time.monotonic() - began)
                except Exception:  # the first request opens the engine itself
                    log.exception("making %s ready", one.workspace)
                finally:
                    one.lock.release()
        finally:
            with self._state:
                self.active -= 1
                self.last_request = time.monotonic()
            self._give_back(alone_at=0)

    def _load_guard_in_background(self) -> threading.Thread:
        """Import the guard (``hooks/guarding.py``: the classifier and its shell parser,
        tree-sitter-bash) and parse one line, on a thread, as soon as the process listens: off
        the path of the first pre-tool hook, which otherwise pays it (see ``load_guard``)."""
        thread = threading.Thread(target=self.load_guard, name="takeback-guard", daemon=True)
        thread.start()
        return thread

    def load_guard(self) -> None:
        """The guard imported, its parser built and one line parsed (15-70 ms here, most of it
        the import; a first parse 0.3 ms against 0.1 after), its modules then watched for
        staleness as the rest of the code. A hook that comes meanwhile waits for the import in
        progress (Python's import lock) rather than doing it again. Best effort: a failure is
        logged, and the hook that needs the guard imports it itself."""
        began = time.monotonic()
        try:
            from ..hooks import guarding  # the module a pre-tool hook uses

            guarding.warm()
        except Exception:  # the hook that needs it will say what is wrong
            log.exception("loading the guard")
            return
        self.guard_loaded = time.monotonic() - began
        self._code.add_loaded()
        log.info("guard loaded in %.1f ms", 1000 * self.guard_loaded)

    def _give_back(self, alone_at: int = 1) -> None:
        """Hand the heap's free pages back to the system once no other request is in flight
        (``alone_at``: how many are in flight counting the caller's own): glibc keeps what a
        shell step's listing and index look-ups freed (``malloc_trim``)."""
        with self._state:
            alone = self.active == alone_at
        if alone and _TRIM is not None:
            _TRIM(0)

    def _held_for(self, workspace: str) -> _Held:
        closing = []
        with self._state:
            held = self._held.get(workspace)
            if held is None:
                held = self._held[workspace] = _Held(workspace)
            self._held.move_to_end(workspace)
            while len(self._held) > _MAX_ENGINES:
                _, old = self._held.popitem(last=False)
                closing.append(old)
        for old in closing:
            with old.lock:
                old.close()
        return held

    def status(self) -> dict:
        with self._state:
            workspaces = [w for w, held in self._held.items() if held.engine is not None]
            ready = [w for w, held in self._held.items() if held.ready]
            return {
                "pid": os.getpid(), "socket": self.path, "since": self.started, "requests": self.requests,
                "cli_requests": self.cli_requests, "cli_writes": self.cli_writes,
                "engines_opened": sum(held.opened for held in self._held.values()),
                "idle_exit_seconds": self.idle, "workspaces": workspaces, "ready": ready,
                "guard_loaded_ms": None if self.guard_loaded is None else round(1000 * self.guard_loaded, 1),
            }

    def _stale(self) -> bool:
        """Whether Takeback's code changed on disk since this process loaded it (an upgrade,
        an edit of a development checkout): then a fresh process must take over."""
        return self._code.changed()


def serve(folder: str, print_: str, lock: int, warm: list[str] | None = None, sock: socket.socket | None = None) -> int:
    """``takeback resident run``, once it holds the lock (and, ``sock``, listens): serve until
    idle (see above); ``warm``: folders whose workspaces are made ready at once
    (``Resident.warm_up``)."""
    return Resident(folder, print_, idle_seconds()).serve(lock, warm, sock)
