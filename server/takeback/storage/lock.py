"""The store's lock: re-entrant within a process, exclusive across processes.

A thread lock serves the threads of one process (the language server's workers); a ``flock``
on the store's ``lock`` file serves processes (an editor's server, hooks, the CLI), waited for
up to ``timeout`` seconds, then ``Busy``. ``locked`` holds both, nested holds counting depth;
``released`` lets both go for a while from inside a hold (an editor's answer can take minutes)
and takes them again at the same depth. ``after_acquire`` runs each time the file lock is taken
anew: the store uses it to notice what other processes changed meanwhile.

``merging`` is the other lock: held by a merge of packs while it copies them without the store's
lock (``store.merge_due``), so one merge runs at a time and a check for leftovers
(``repair.torn_packs``) tells a merge at work from one a crash stopped (``merging_elsewhere``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import Busy


class StoreLock:
    def __init__(self, file: Path, timeout: float, after_acquire: Callable[[], None]) -> None:
        self.file = file
        self.timeout = timeout
        self._after_acquire = after_acquire
        self._thread = threading.RLock()
        self._depth = 0
        self._owner: int | None = None  # the thread holding it (``held_here``)
        self._fd: int | None = None

    def held_here(self) -> bool:
        """Whether this thread holds the lock, at any depth: a call made inside a hold needs no
        hold of its own (a big turn's capture stores 5,000 blobs, each under a nested hold)."""
        return self._depth > 0 and self._owner == threading.get_ident()

    @contextlib.contextmanager
    def locked(self) -> Iterator[bool]:
        """Hold the lock; answers whether this hold is the outermost one."""
        with self._thread:
            if self._depth == 0:
                self._acquire()
                self._after_acquire()
                self._owner = threading.get_ident()
            self._depth += 1
            try:
                yield self._depth == 1
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._owner = None
                    self._release()

    @contextlib.contextmanager
    def released(self) -> Iterator[None]:
        """Let go of a held lock (every level of it) for the block, then take it again."""
        with self._thread:
            depth = self._depth
            if depth == 0:
                raise RuntimeError("Store.released() outside a held lock")
            self._depth, self._owner = 0, None
            self._release()
        for _ in range(depth):  # each locked() level holds the thread lock once
            self._thread.release()
        try:
            yield
        finally:
            for _ in range(depth):
                self._thread.acquire()
            try:
                self._acquire()
                self._after_acquire()
            finally:
                # Even when the lock cannot be had again (Busy), the enclosing locked() blocks
                # unwind as if it were held: releasing a lock not held is harmless.
                self._depth, self._owner = depth, threading.get_ident()

    def _acquire(self) -> None:
        if self._fd is None:
            self._fd = os.open(self.file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        if not flock_within(self._fd, self.timeout):
            raise Busy(
                f"the store {self.file.parent} is locked by another Takeback process "
                f"for more than {self.timeout:.0f} s"
            )

    def _release(self) -> None:
        assert self._fd is not None  # only ever after an _acquire, which opened it
        fcntl.flock(self._fd, fcntl.LOCK_UN)  # the descriptor stays open for the next use


def flock_within(fd: int, seconds: float) -> bool:
    """Take an exclusive ``flock`` on ``fd``, waiting up to ``seconds`` (polling, with a growing
    pause); False when another holder kept it that long."""
    deadline = time.monotonic() + seconds
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


@contextlib.contextmanager
def merging(file: Path) -> Iterator[bool]:
    """Hold the merge lock ``file`` if no one holds it (never waits); answers whether it is held
    here. Released by the kernel if the process dies."""
    fd = os.open(file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # (the lock goes with the descriptor)


def merging_elsewhere(file: Path) -> bool:
    """Whether a merge holds the merge lock ``file`` now (in this process too: the lock belongs
    to an open descriptor, not to the process)."""
    with merging(file) as alone:
        return not alone
