"""The timeline as this process knows it: the operation log folded into memory.

``History`` owns the in-memory ``Timeline``, the log head it was folded up to, every record
folded (in log order) and the log commit that holds each checkpoint, the timeline cache
(``timeline.json``) that makes opening cost only what is new, and the open turns' begins that
wait in their files (``brackets.py``), folded in as tentative behind the log's last entry. It
reads; the one thing that writes the log is a ``transaction.Transaction``, which folds what it
publishes back in here (``published``).

The cache holds every record's header, not the checkpoints' file lists: a checkpoint read from
it keeps its file list in the log (``CheckpointRecorded.defer``), read back from its commit the
first time something needs it (``_file_list``), so opening, ``status`` and ``log`` cost the
entries, not their files. It is written when opening (or a publish) folded many records or
file changes since it was (``CACHE_AFTER_RECORDS``, a file change counting as a record).
Folding many records, and building many entries' views, pauses Python's cyclic collector
(``collector_paused``), whose full passes over what is being built made an open's cost grow
faster than the timeline.

Nothing read back from the store is trusted blindly: a record (from the log or the cache, which
is plain validated data) must name clean workspace paths, or the store is refused with an error
that says so; a file list read back later is checked the same way. Every method must be called
with the store's lock held.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..core.models import CheckpointRecorded, EntryBegun, PathChange, Record, RecordEnvelope
from ..core.timeline import Timeline
from ..errors import StoreError
from ..storage import atomic, repair
from ..storage.store import Store
from ..workspace.files import is_recorded_path
from . import brackets

log = logging.getLogger("takeback.engine")

_CACHE_FILE = "timeline.json"
_OLD_CACHE_FILE = "timeline.pickle"  # older versions' cache: removed, never read
_CACHE_FORMAT: Final = 5  # bump when the records' shape changes (and _TimelineCache.format with it)
CACHE_AFTER_RECORDS = 50  # rewrite the cache once this many records (or file changes) were folded since
CACHE_ON_PUBLISH = 1000  # ... or once a publish brings what is folded past this many (a big turn)


class _TimelineCache(BaseModel):
    """What ``timeline.json`` holds: a log head and every record folded up to it, in log order,
    each checkpoint without its file list (``changes`` empty) and with the log commit that holds
    it (``commits``); and each entry's (files, additions, deletions) where it was known
    (``summaries``), so ``log`` prints it without reading a file list."""

    model_config = ConfigDict(extra="forbid")
    format: Literal[5]
    head: str
    records: list[Record]
    commits: dict[str, str]
    summaries: dict[str, tuple[int, int, int]]


class History:
    """One store's log, folded: ``timeline``, ``head`` and the ``folded`` records behind it."""

    def __init__(self, store: Store, brackets_dir: Path) -> None:
        self.store = store
        self.brackets_dir = brackets_dir
        self.timeline = Timeline()
        self.folded: list[Record] = []  # every record of the log folded into the timeline, in order
        self.head: str | None = None
        self.sources: dict[str, str] = {}  # checkpoint id: the log commit that holds it
        self.replayed = 0  # how many log commits the last refresh read
        self.uncached = 0  # records (a file change counting as one) folded since the cache was written
        self.lists_read = 0  # file lists read back from the log for checkpoints the cache deferred
        self._cache_read = False
        self._cache_stamp: tuple[int, int, int] | None = None  # the cache file as last read or written
        self._refolded = False  # what was folded was thrown away and the log read again since then
        self._last_meta: tuple[str, list[Record]] | None = None

    # ------------------------------------------------------------------ cache

    def load_cache(self) -> None:
        """Start from the records cached at some log head, so opening costs what is new. A cache
        that is not valid is thrown away (the log is read instead)."""
        (self.store.path / _OLD_CACHE_FILE).unlink(missing_ok=True)
        cache_file = self.store.path / _CACHE_FILE
        self._cache_stamp, self._refolded = self._stamp_of_cache(), False
        try:
            # strict: faster too. An older format (4 held the file lists, not their commits) is
            # thrown away: the log is read, and the next save writes this format.
            with collector_paused():
                cache = _TimelineCache.model_validate_json(cache_file.read_bytes(), strict=True)
                timeline = self._from_cache(cache)
        except FileNotFoundError:
            return
        except (OSError, ValidationError, StoreError) as exc:
            log.warning("the timeline cache %s is not valid, so it is not used: %s", cache_file, exc)
            _discard(self.store.path, cache_file)
            self._cache_stamp = self._stamp_of_cache()
            return
        self.timeline, self.head, self.folded, self.sources = timeline, cache.head, cache.records, dict(cache.commits)

    def _from_cache(self, cache: _TimelineCache) -> Timeline:
        """The timeline the cache's records fold into, each checkpoint without a file list left
        to be read from the commit the cache names for it."""
        timeline = Timeline()
        for record in cache.records:
            self.check_record(record, "the timeline cache")
            if isinstance(record, CheckpointRecorded) and not record.changes:
                commit = cache.commits.get(record.id)
                if commit is None:
                    raise StoreError(f"the timeline cache names no log commit for the checkpoint {record.id}")
                record.defer(partial(self._file_list, commit, record.id))
            timeline.apply(record)
        for entry_id, summary in cache.summaries.items():
            state = timeline.entries.get(entry_id)
            if state is not None:
                state.summary = summary
        return timeline

    def _file_list(self, commit: str, checkpoint: str) -> list[PathChange]:
        """The file list of a checkpoint the cache deferred, read from its log commit and checked
        like any record read back. A cache that named the wrong commit is removed (the next open
        reads the log) and the store refused for this call."""
        try:
            if self._last_meta is None or self._last_meta[0] != commit:
                self._last_meta = (commit, self._records_of(commit))
            for record in self._last_meta[1]:
                if isinstance(record, CheckpointRecorded) and record.id == checkpoint:
                    self.check_record(record, f"the record {commit}")
                    self.lists_read += 1
                    return record.changes
            raise StoreError(
                f"the timeline cache in {self.store.path} says the log commit {commit} holds the checkpoint "
                f"{checkpoint}, and it does not: the cache is removed, try again"
            )
        except StoreError:
            (self.store.path / _CACHE_FILE).unlink(missing_ok=True)
            raise

    def save_cache(self) -> None:
        """Write the cache: the records' headers, each checkpoint's commit, the entries' summaries
        (worked out now for the entries folded since, whose file lists are in memory)."""
        if self.timeline.tentatives or self.head is None:
            return  # the cache holds what the log holds; the next open saves it
        records: list[Record] = [
            r.model_copy(update={"changes": []}) if isinstance(r, CheckpointRecorded) else r for r in self.folded
        ]
        try:  # a file list that cannot be read back (StoreError) leaves the cache as it was
            summaries = {entry_id: self.timeline.summary(state) for entry_id, state in self.timeline.entries.items()}
            cache = _TimelineCache(format=_CACHE_FORMAT, head=self.head, records=records, commits=self.sources,
                                   summaries=summaries)
            atomic.write(self.store.path / _CACHE_FILE, cache.model_dump_json().encode("utf-8"))
            self.uncached = 0
            self._cache_stamp, self._refolded = self._stamp_of_cache(), False
        except (OSError, StoreError) as exc:
            log.warning("could not write the timeline cache: %s", exc)

    def _stamp_of_cache(self) -> tuple[int, int, int] | None:
        try:
            info = os.stat(self.store.path / _CACHE_FILE)
        except OSError:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    def cache_unchanged(self) -> bool:
        """Whether the cache file is the one this history last read or wrote (or still none),
        and what it folded since was never thrown away for a full read of the log (a rewritten
        log): then what it counts as not cached is what a history opened now would count."""
        return self._cache_read and not self._refolded and self._stamp_of_cache() == self._cache_stamp

    def wants_cache(self) -> bool:
        """Whether enough was folded since the cache was written to write it again."""
        return self.uncached >= CACHE_AFTER_RECORDS

    def check_record(self, record: Record, where: str) -> None:
        """Refuse a record that names a path no recorded change can have (``..``, absolute,
        inside ``.git``): the store was not written by Takeback, and nothing may act on it."""
        if isinstance(record, CheckpointRecorded):
            for change in record.changes:
                for path in (change.path, change.renamed_from, *change.new_folders):
                    if path is not None and not is_recorded_path(path):
                        raise StoreError(
                            f"{where} in {self.store.path} names the path {path!r}, which is outside the "
                            "workspace or inside .git: Takeback did not write it, and will not act on it"
                        )

    # ------------------------------------------------------------------ folding

    def refresh(self) -> int:
        """Fold the log's new commits, and the open turns' begins the log does not hold yet,
        into the timeline (the first time, from the cache on); answers how many log commits it
        read (also kept in ``replayed``)."""
        if not self._cache_read:
            self._cache_read = True
            self.load_cache()
        head = self.store.head()
        waiting = self._begins()
        replayed = 0
        if head != self.head:
            self.timeline.retract()  # the log may hold them now
            replayed = self._fold(head)
        tentative = {b.entry for b in self.timeline.tentatives}
        unpublished = []
        for name, begun in waiting:
            published = self.timeline.entries.get(begun.entry)
            if published is None or begun.entry in tentative:
                unpublished.append(begun)
            elif published.state != "open":  # its turn ended, and the file outlived it (a crash)
                (self.brackets_dir / name).unlink(missing_ok=True)
        if [b.entry for b in self.timeline.tentatives] != [b.entry for b in unpublished]:
            self.timeline.retract()
            for begun in unpublished:
                self.timeline.add_tentative(begun)
        self.replayed = replayed
        return replayed

    def _begins(self) -> list[tuple[str, EntryBegun]]:
        """The open turns' begins; an open turn's file a crash or power cut left torn (empty, cut
        short) is set aside (``repair.py``), never left to block every command."""
        try:
            return brackets.read_begins(self.brackets_dir)
        except StoreError:
            aside = repair.Quarantine(self.store.path)
            for path, problem in brackets.torn(self.brackets_dir):
                aside.set_aside(path, problem)
            aside.save()
            return brackets.read_begins(self.brackets_dir)

    def _fold(self, head: str | None) -> int:
        """Fold the log up to ``head``. A commit that cannot be read (a pack a power cut tore
        past what opening the store checks) makes the store look deeply (``Store.repair``):
        what is torn is set aside, the log goes back to what can be read, and it is read again."""
        try:
            return self._fold_once(head)
        except StoreError:
            if not self.store.repair(deep=True):
                raise
            self._refolded = True
            self.timeline, self.folded, self.head = Timeline(), [], None
            return self._fold_once(self.store.head())

    def _fold_once(self, head: str | None) -> int:
        self._refolded = self._refolded or (self.head is not None and head is None)
        try:
            chain = self.store.commit_chain(head, self.head) if head else []
        except StoreError:
            self._refolded = self._refolded or self.head is not None
            self.timeline, self.folded, self.sources, self._last_meta = Timeline(), [], {}, None
            chain = self.store.commit_chain(head, None) if head else []
        if head is None or self.head is None:
            self.timeline, self.folded = Timeline(), []  # a full replay (gc resets head) starts from nothing
            self.sources, self._last_meta = {}, None
        with collector_paused():
            for oid in chain:
                self._fold_records(oid, self._records_of(oid))
        self.head = head
        return len(chain)

    def _records_of(self, commit: str) -> list[Record]:
        """The records the log commit ``commit`` holds, as written (checked by the caller)."""
        try:
            return RecordEnvelope.model_validate_json(self.store.read_meta(commit)).records
        except ValueError as exc:
            raise StoreError(f"unreadable record {commit} in {self.store.path}: {exc}") from exc

    def _fold_records(self, commit: str, records: list[Record]) -> None:
        for record in records:
            self.check_record(record, f"the record {commit}")
            self.timeline.apply(record)
            self.folded.append(record)
            self._note(commit, record)

    def _note(self, commit: str, record: Record) -> None:
        """Remember which commit holds ``record`` (a checkpoint), and count it as not cached."""
        self.uncached += 1
        if isinstance(record, CheckpointRecorded):
            self.sources[record.id] = commit
            self.uncached += len(record.changes)

    def replay(self) -> None:
        """Fold the whole log again (after the log was rewritten: retention)."""
        self._refolded = self._refolded or self.head is not None
        self.head = None
        self.refresh()

    def rebuild(self) -> None:
        """Forget what was folded in but never published (a transaction that failed): the
        timeline again from the records behind ``head``, then the open turns' files. No object
        is read."""
        timeline = Timeline()
        for record in self.folded:
            timeline.apply(record)
        self.timeline = timeline
        self.refresh()

    def published(self, head: str, records: list[Record]) -> None:
        """``records`` (already folded into the timeline) are in the log now, up to ``head``;
        the cache is written again once what it lacks reaches ``CACHE_ON_PUBLISH`` (a big turn)."""
        self.head = head
        self.folded += records
        for record in records:
            self._note(head, record)
        if self.uncached >= CACHE_ON_PUBLISH:
            self.save_cache()

    def version(self) -> str | None:
        """A token that changes whenever the timeline does: the log head, followed by
        ``+<entry>`` for each open turn's file (opening a turn does not move the head). Read
        from the store, not from memory. Cheap: the ref and two lines of each open turn's file."""
        head = self.store.head()
        begins = self._begins()
        return head if not begins else (head or "") + "".join(f"+{begun.entry}" for _name, begun in begins)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a long timeline is built (its records,
    their entries, their views): each full pass walks every object built so far, so leaving it
    on makes the building cost grow with the square of the timeline's length (cProfile of an
    open at 2,000 entries: 35 ms without a pass, 80-130 ms with one). Nothing built there is a
    cycle left for it; the collector is on again afterwards (unless it was off already)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _discard(store: Path, cache_file: Path) -> None:
    """Drop a cache that is not valid: one that is not even JSON (empty or cut short: a crash or
    power cut tore it), or a folder in its place, is set aside (``repair.py``); one of an older
    format, or one that cannot be read (a symlink loop), is removed."""
    problem = None
    try:
        json.loads(cache_file.read_bytes())
    except ValueError:
        problem = "the timeline cache is empty or cut short (it is rebuilt from the log)"
    except IsADirectoryError:
        problem = "a folder stood where the timeline cache goes (the cache is rebuilt from the log)"
    except OSError:
        pass
    if problem is not None:
        aside = repair.Quarantine(store)
        aside.set_aside(cache_file, problem)
        aside.save()
    cache_file.unlink(missing_ok=True)

