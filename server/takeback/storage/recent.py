"""The content of blobs this process stored, read or verified lately, by id, within a byte budget.

A bracket's end reads back what its begin stored, an undo what the turn recorded, a redo what
the undo before it found on disk and took away; a blob id names its content, so a remembered
copy is never stale. Only reads use it: whether the store holds an object is always asked of
the store itself.

While the store's lock is held (``hold``: one operation), the budget is ``HELD_BUDGET``: a big
turn's end describes each file from the bytes its scan just read or stored (5,000 files of
1.3 KB: 13 MB both sides), which a 4 MB budget had dropped, so every one was read back from the
packs (issue 18). When the last hold ends, what is over ``BUDGET`` stays for ``GRACE`` seconds
more, then the oldest go, down to ``BUDGET`` (a timer, so a process left idle gives the memory
back): a person who undoes a big turn looks at the result and often redoes it within the
minute, and the redo writes back exactly the bytes the undo verified on disk (5,000 blobs read
from the packs again: 80-90 ms of a 650 ms redo).

Hand-written: a byte-bounded LRU with a grace period after the lock's hold; ``functools``'
cache counts entries, not bytes, and has no such period.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator


class RecentBlobs:
    BUDGET = 4 << 20
    HELD_BUDGET = 64 << 20
    LARGEST = 1 << 20
    GRACE = 60.0

    def __init__(self, grace: float | None = None) -> None:
        self.grace = self.GRACE if grace is None else grace
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0
        self._held = 0  # depth of ``hold`` (one per thread holding the store's lock)
        self._kept_until = 0.0  # (monotonic) until when the last hold's budget lasts
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()  # the language server reads from worker threads

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Keep up to ``HELD_BUDGET`` while the block runs, and for ``grace`` seconds after."""
        with self._lock:
            self._held += 1
        try:
            yield
        finally:
            with self._lock:
                self._held -= 1
                if not self._held:
                    self._kept_until = time.monotonic() + self.grace
                self._trim()

    @property
    def size(self) -> int:
        """The bytes held now."""
        return self._bytes

    def _expire_later(self) -> None:
        if self._timer is None:
            self._timer = threading.Timer(max(0.0, self._kept_until - time.monotonic()), self._expire)
            self._timer.daemon = True
            self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            self._timer = None
            if self._held:
                return  # the hold's end looks again
            if time.monotonic() < self._kept_until:
                self._expire_later()  # a later hold moved the end of the grace
            else:
                self._trim()

    def _trim(self) -> None:
        """Drop the oldest down to the budget of the moment (``HELD_BUDGET`` while held and in
        the grace after, when a timer comes back to drop what is over ``BUDGET``)."""
        budget = self.BUDGET
        if self._held:
            budget = self.HELD_BUDGET
        elif time.monotonic() < self._kept_until:
            budget = self.HELD_BUDGET
            if self._bytes > self.BUDGET:
                self._expire_later()
        while self._bytes > budget:
            _, dropped = self._items.popitem(last=False)
            self._bytes -= len(dropped)

    def get(self, oid: str) -> bytes | None:
        with self._lock:
            data = self._items.get(oid)
            if data is not None:
                self._items.move_to_end(oid)
            return data

    def remember(self, oid: str, data: bytes) -> None:
        if len(data) > self.LARGEST:
            return
        with self._lock:
            if oid in self._items:
                self._items.move_to_end(oid)
                return
            self._items[oid] = data
            self._bytes += len(data)
            self._trim()
