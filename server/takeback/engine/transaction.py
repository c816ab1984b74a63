"""One change to a workspace's timeline: the store's lock, a fresh timeline, records, one commit.

Every engine call that reads or writes the timeline runs in a ``Transaction``
(``Engine.transaction()``; a call made inside another joins it). Opening one takes the store's
lock and brings the in-memory timeline (``history.History``) up to the log's head and the open
turns' files. ``add`` folds records into that timeline at once, so what comes next in the same
transaction sees them, and keeps them to publish; leaving the transaction publishes every
record added as one log commit (compare-and-swap on the log's ref), then runs what waited for
the publish (``after_publish``: removing an ended turn's file). A transaction that raises
publishes nothing it had not published yet: the timeline is folded again from what the log
holds, and the files that waited are left in place.

A write that must be in the log before it touches the disk (the journal rolls a write forward
on recovery only if its record was published) calls ``publish`` at that point; a write that asks
an editor lets the lock go in ``released``, which publishes first (nothing unpublished is in
memory while another thread or process holds the store), and afterwards goes on only if the log
and the open turns' files are where they were, or stops with ``StateError`` (``handoff.py``).

The open turns' begins that wait in their files (``brackets.py``) go into the log with the first
record added after them, in the same commit, in the order they began.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from ..core.models import CheckpointRecorded, EntriesDropped, EntryBegun, OperationDone, Record, RecordEnvelope
from ..errors import StateError
from .history import History

MOVED = "the timeline changed while the editor was asked; nothing was recorded, run it again"


class Transaction:
    """Records gathered under the store's lock, published together."""

    def __init__(self, history: History) -> None:
        self.history = history
        self._pending: list[Record] = []
        self._blobs: set[str] = set()
        self._after: list[Callable[[], None]] = []
        self._dirty = False  # something is folded into the timeline that the log does not hold
        self.suspended = False
        self.moved = False  # the timeline moved while the lock was let go (``released``)

    def add(self, *records: Record) -> None:
        """Fold ``records`` into the timeline now; they are published with the transaction.
        The open turns' begins still waiting in their files go first."""
        timeline = self.history.timeline
        if timeline.tentatives:
            self._pending += timeline.tentatives
            timeline.confirm()
        for record in records:
            if isinstance(record, CheckpointRecorded):
                for change in record.changes:
                    for version in (change.before, change.after):
                        if version is not None and not version.withheld:
                            self._blobs.add(version.oid)
                self._blobs.update(lost.kept.oid for lost in record.lost if lost.kept is not None)  # ignored files kept
            timeline.apply(record)
        self._pending += records
        self._dirty = True

    def after_publish(self, action: Callable[[], None]) -> None:
        """Run ``action`` once what was added so far is in the log (never, if it is not)."""
        self._after.append(action)

    def publish(self, tentatives: bool = False) -> None:
        """Publish what was added as one log commit (nothing to publish: no commit). With
        ``tentatives``, the open turns' waiting begins are published even if nothing was added
        (the log is about to be rewritten: retention)."""
        if tentatives and self.history.timeline.tentatives:
            self.add()
        if self._pending:
            meta = RecordEnvelope(records=self._pending).model_dump_json().encode()
            store = self.history.store
            # An operation (undo, redo, revert, restore) is published with fsync whatever the
            # setting: it is rare, and its answer must outlive a power cut (docs/storage.md).
            operation = any(isinstance(r, OperationDone) for r in self._pending)
            with store.durable() if operation else contextlib.nullcontext():
                head = store.append(meta, self._blobs, subject(self._pending), self.history.head)
            self.history.published(head, self._pending)
            self._pending, self._blobs = [], set()
        self._dirty = False
        actions, self._after = self._after, []
        for action in actions:
            action()

    def abandon(self) -> None:
        """Forget what was added and not published (the transaction raised)."""
        self._pending, self._blobs, self._after = [], set(), []
        if self._dirty:
            self.history.rebuild()
            self._dirty = False

    @contextlib.contextmanager
    def released(self) -> Iterator[None]:
        """Publish, let the store's lock go for the body (an editor's answer may take minutes)
        and take it again; ``moved`` then says whether the log or an open turn moved meanwhile
        (the timeline is brought up to date if so)."""
        self.publish()
        version = self.history.version()
        self.suspended = True
        try:
            with self.history.store.released():
                yield
        finally:
            self.suspended = False
        self.moved = self.history.version() != version
        if self.moved:
            self.history.refresh()

    def check_unmoved(self) -> None:
        """Stop with ``StateError`` if the timeline moved while the lock was let go."""
        if self.moved:
            raise StateError(MOVED)


def subject(records: list[Record]) -> str:
    """The log commit's subject, for people reading the store with git tools (and for the copy
    ``share push`` sends, made again from its rewritten records, ``engine/sharing.py``)."""
    first = records[0]
    if isinstance(first, EntryBegun):
        text = f"{first.kind} #{first.number}" + (f": {first.label}" if first.label else "")
    else:  # retention's EntriesDropped, which belongs to no entry, is never published this way
        assert not isinstance(first, EntriesDropped)
        text = f"{first.type} in {first.entry}"
    kinds = [r.type for r in records]
    return f"{text} ({', '.join(kinds)})"
