"""The timeline as this process knows it: the operation log folded into memory.

``History`` owns the in-memory ``Timeline``, the log head it was folded up to, the records folded
since the timeline cache (in log order) and the log commit that holds each checkpoint, the
timeline cache that makes opening cost only what is new, and the open turns' begins that wait
in their files (``brackets.py``), folded in as tentative behind the log's last entry. It reads;
the one thing that writes the log is a ``transaction.Transaction``, which folds what it
publishes back in here (``published``).

The cache (``timeline_cache.py``) holds the timeline already folded: an index with its counts
and newest entries, and pages of the older entries. Opening reads the index only; the older
entries are read from their pages when something needs one (``Timeline.whole`` calls
``_older``), or folded from the log when a page is refused; a listing of headers (``log``)
reads only the pages' headers (``_headers_of``, kept while the pages wait). A checkpoint read from the cache
keeps its file list in the log (``CheckpointRecorded.defer``), read back from its commit the
first time something needs it (``_file_list``), so opening, ``status`` and ``log`` cost the
newest entries, not the timeline's length nor its files. It is written when opening (or a
publish) folded many records or file changes since it was (``CACHE_AFTER_RECORDS``, a file
change counting as a record): the pages whose entries changed, then the index.
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
import functools
import gc
import logging
import os
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path

from pydantic import ValidationError

from ..core.models import CheckpointRecorded, Entry, EntryBegun, PathChange, Record, RecordEnvelope
from ..core.timeline import FoldedEntry, Older, Timeline, Touched
from ..core.timeline import marks as timeline_marks
from ..errors import StoreError
from ..storage import repair
from ..storage.store import Store
from ..workspace.files import is_recorded_path
from . import brackets
from . import timeline_cache as pages

log = logging.getLogger("takeback.engine")

_OLD_CACHE_FILE = "timeline.pickle"  # older versions' cache: removed, never read
CACHE_AFTER_RECORDS = 50  # rewrite the cache once this many records (or file changes) were folded since
CACHE_ON_PUBLISH = 1000  # ... or once a publish brings what is folded past this many (a big turn)
PageIndex = tuple[bytes, list[str], str]
"""A page's per-path index as read, unchecked (``PageRead.touched``), its checkpoints' ids, and
the page named for a message (``_touched_of``)."""


class History:
    """One store's log, folded: ``timeline``, ``head`` and the ``folded`` records since its cache."""

    def __init__(self, store: Store, brackets_dir: Path) -> None:
        self.store = store
        self.brackets_dir = brackets_dir
        self.timeline = Timeline()
        self.folded: list[Record] = []  # the records folded since the cache (or since nothing), in order
        self.head: str | None = None
        self.sources: dict[str, str] = {}  # checkpoint id: the log commit that holds it (those loaded)
        self.replayed = 0  # how many log commits the last refresh read
        self.uncached = 0  # records (a file change counting as one) folded since the cache was written
        self.lists_read = 0  # file lists read back from the log for checkpoints the cache deferred
        self.pages_read = 0  # the cache's pages read (opening reads none: only the index)
        self.headers_read = 0  # the cache's pages whose headers only were read (an unlimited ``log``)
        self._pages: list[pages.PageRef] = []  # the pages of the cache that hold only entries not in memory
        self._base: tuple[bytes, str] | None = None  # the cache this timeline started from, and its head
        self._cache_read = False
        self._cache_stamp: tuple[int, int, int] | None = None  # the cache file as last read or written
        self._refolded = False  # what was folded was thrown away and the log read again since then
        self._last_meta: tuple[str, list[Record]] | None = None
        self.save_later = False  # a publish leaves a due cache to the engine's ``upkeep``
        self._begins_kept = brackets.BeginsKept()  # the open turns' begins as read (again when a file changes)

    # ------------------------------------------------------------------ cache

    def load_cache(self) -> None:
        """Start from the timeline cached at some log head (``timeline_cache.py``: its counts and
        newest entries; the older ones are read from its pages when something needs them), so
        opening costs what is new. A cache that is not valid is thrown away (the log is read)."""
        (self.store.path / _OLD_CACHE_FILE).unlink(missing_ok=True)
        cache_file = self.store.path / pages.CACHE_FILE
        self._cache_stamp, self._refolded = self._stamp_of_cache(), False
        try:
            data = cache_file.read_bytes()
            self._start_from(data)
        except FileNotFoundError:
            return
        except (OSError, ValidationError, StoreError) as exc:
            # an older format (5 held every record) is thrown away: the log is read, and the
            # next save writes this format
            log.warning("the timeline cache %s is not valid, so it is not used: %s", cache_file, exc)
            pages.discard(self.store.path, cache_file)
            self.timeline, self.head, self.sources, self._base = Timeline(), None, {}, None
            self._cache_stamp = self._stamp_of_cache()

    def _start_from(self, data: bytes, lists: dict[str, list[PathChange]] | None = None) -> None:
        """The timeline the cache ``data`` holds: its counts, its tail's entries, its pages left
        to be read when something needs an older entry (``_older``). ``lists``: file lists in
        memory already, by checkpoint (those the cache was written from), not read again."""
        with collector_paused():
            cache = pages.read_index(data)
            timeline = Timeline()
            self.sources = {}
            for cached in cache.tail:
                timeline.add_folded(self._state_of(cached, "the timeline cache", lists or {}), cached.positions)
        timeline.max_number, timeline.record_count = cache.max_number, cache.record_count
        timeline.entry_count, timeline.turn_count = cache.entry_count, cache.turn_count
        timeline.checkpoint_count, timeline.open_ids = cache.checkpoint_count, list(cache.open_ids)
        timeline.dropped = list(cache.dropped)
        self.timeline = timeline
        if cache.pages:
            self._defer_older(cache.head, list(cache.pages))
        self.head, self._pages, self._base = cache.head, list(cache.pages), (data, cache.head)
        self.folded = []

    def _state_of(
        self, cached: pages.CachedEntry, where: str, lists: dict[str, list[PathChange]],
    ) -> FoldedEntry:
        """A cached entry folded again: checked like any record read back, each checkpoint's file
        list taken from ``lists`` or left to be read from the log commit the cache names for it."""
        if not len(cached.checkpoints) == len(cached.commits) == len(cached.positions):
            raise StoreError(f"{where} does not name a log commit and a place for each checkpoint")
        self.check_record(cached.begun, where)
        for cp, commit in zip(cached.checkpoints, cached.commits, strict=True):
            if cp.entry != cached.begun.entry:
                raise StoreError(f"{where} holds the checkpoint {cp.id} under another entry")
            self.check_record(cp, where)
            if cp.id in lists:
                cp.changes = lists[cp.id]  # (a record's file list never changes)
            elif not cp.changes:
                cp.defer(partial(self._file_list, commit, cp.id))
            self.sources[cp.id] = commit
        return FoldedEntry(
            begun=cached.begun, checkpoints=cached.checkpoints, applied=cached.applied, ended=cached.ended,
            checks=cached.checks, operation=cached.operation, state=cached.state, reverted_by=cached.reverted_by,
            summary=cached.summary,
        )

    def _cached(self, state: FoldedEntry, positions: dict[str, int]) -> pages.CachedEntry:
        """``state`` as the cache keeps it (its summary worked out now if it is not known)."""
        return pages.CachedEntry.model_construct(
            begun=state.begun, checkpoints=[cp.model_copy(update={"changes": []}) for cp in state.checkpoints],
            commits=[self.sources[cp.id] for cp in state.checkpoints],
            positions=[positions[cp.id] for cp in state.checkpoints], applied=dict(state.applied),
            ended=state.ended, checks=list(state.checks), operation=state.operation, state=state.state,
            reverted_by=state.reverted_by, summary=self.timeline.summary(state),
        )

    def _paged(self, read: pages.PageRead, name: str, positions: dict[str, int]) -> tuple[list[FoldedEntry], PageIndex]:
        """A page's entries folded again (their checkpoints' places noted in ``positions``), and
        its per-path index, left to be checked when something asks it (``_touched_of``)."""
        where = f"the timeline page {name}"
        states = [self._state_of(cached, where, {}) for cached in read.entries]
        for cached in read.entries:
            positions.update(zip((cp.id for cp in cached.checkpoints), cached.positions, strict=True))
        return states, (read.touched, [cp.id for state in states for cp in state.checkpoints], where)

    def _older(self, head: str, refs: list[pages.PageRef]) -> Older:
        """The entries the cache's pages hold (``Timeline.whole``). A page that is missing, torn or
        not what the index says is refused: the cache is removed (the next save writes it
        again) and those entries are folded from the log up to the cache's head instead."""
        states: list[FoldedEntry] = []
        positions: dict[str, int] = {}
        kept: list[PageIndex] = []
        try:
            with collector_paused():
                for ref in refs:
                    self.pages_read += 1
                    paged, index = self._paged(pages.read_page(self.store.path, ref), ref.name, positions)
                    states.extend(paged)
                    kept.append(index)
            return states, positions, partial(_touched_of, self.store.path, kept)
        except StoreError as exc:
            log.warning("the timeline cache's pages are not used: %s", exc)
            pages.remove(self.store.path)
            self._pages = []  # (``_base`` stays: ``rebuild`` reads its pages, or the log, again)
            return _older_from_log(self, head, sum(ref.count for ref in refs))

    def _file_list(self, commit: str, checkpoint: str) -> list[PathChange]:
        """The file list of a checkpoint the cache deferred, read from its log commit and checked
        like any record read back. A cache that named the wrong commit is removed (the next open
        reads the log) and the store refused for this call."""
        try:
            if self._last_meta is None or self._last_meta[0] != commit:
                self._last_meta = (commit, _records_of(self.store, commit))
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
            pages.remove(self.store.path)
            raise

    def save_cache(self) -> None:
        """Write the cache (``timeline_cache.py``): the pages of the older entries that changed or
        are new (all of them when the whole timeline is in memory), then the index with the
        newest entries inline. Each entry's summary is worked out now if it is not known.

        Then, once a save filled a page, a long-lived engine's timeline (``save_later``: its
        saves are the engine's upkeep, between calls) starts again from the cache just written,
        as an engine opening now would: the tail in memory (with the file lists it held), every
        page waiting. Kept in memory, what was written to pages is written again at every save
        (all the engine folded since it opened: 3 s a save after a few dozen big turns, issue
        18), and its memory grows with it. A short-lived one keeps what it folded (it may go on
        to need it; its saves can come in the middle of a transaction)."""
        if self.timeline.tentatives or self.head is None:
            return  # the cache holds what the log holds; the next open saves it
        try:  # a file list that cannot be read back (StoreError) leaves the cache as it was
            with collector_paused():
                try:
                    refs, tail, kept, carried = self._write_pages()
                except pages.PageRefused:
                    self.timeline.whole()  # (the older entries from the log: the pages are all written)
                    refs, tail, kept, carried = self._write_pages()
            timeline = self.timeline
            index = pages.Index(
                format=pages.FORMAT, head=self.head, max_number=timeline.max_number,
                record_count=timeline.record_count, entry_count=timeline.entry_count, turn_count=timeline.turn_count,
                checkpoint_count=timeline.checkpoint_count, open_ids=list(timeline.open_ids),
                dropped=list(timeline.dropped), pages=refs, tail=tail,
            )
            data = index.model_dump_json().encode("utf-8")
            pages.write_index(self.store.path, data, {ref.name for ref in refs})
            if self.save_later and any(ref.full for ref in refs[len(kept):]):
                self._start_from(data, {cp.id: cp.changes for state in self.timeline.loaded()[-pages.TAIL_ENTRIES:]
                                        for cp in state.checkpoints if cp.loaded()})
            else:
                self._pages, self._base, self.folded = kept, (data, self.head), []
                if not self.timeline.is_whole:  # in memory now: what follows the pages kept as they were
                    self.timeline.take_in(*carried)
                    self._defer_older(self.head, kept)
            self.uncached = 0
            self._cache_stamp, self._refolded = self._stamp_of_cache(), False
        except (OSError, StoreError, KeyError) as exc:  # (KeyError: a checkpoint whose log commit is not known)
            log.warning("could not write the timeline cache: %s", exc)

    def _write_pages(
        self,
    ) -> tuple[list[pages.PageRef], list[pages.CachedEntry], list[pages.PageRef], Older]:
        """Write the pages the cache needs now; answers every page's reference, the tail, the
        pages kept as they were and the entries (with their checkpoints' places) read from the
        last page to be written again. The entries in memory follow the pages kept (only a
        whole timeline can have changed an older entry): a last page not full yet is read and
        written again with the entries that leave the tail."""
        timeline = self.timeline
        kept = [] if timeline.is_whole else list(self._pages)
        carried: list[FoldedEntry] = []
        positions: dict[str, int] = {}
        carried_paths: dict[str, Touched] = {}  # (its index, not the carried checkpoints' file lists)
        carried_headers: list[Entry] = []  # (its headers: one built again may need an older page)
        if kept and not kept[-1].full:
            last = kept.pop()
            self.pages_read += 1
            read = pages.read_page(self.store.path, last, headers=True)
            carried, index = self._paged(read, last.name, positions)
            carried_paths = _touched_of(self.store.path, [index])
            carried_headers = read.headers or []
        loaded = timeline.loaded()
        for state in loaded:
            positions.update((cp.id, timeline.position(cp.id)) for cp in state.checkpoints)
        cut = max(0, len(loaded) - pages.TAIL_ENTRIES)
        spill = carried + loaded[:cut]
        headers = carried_headers + [timeline.bare_header(state) for state in loaded[:cut]]
        refs = list(kept)
        touched = [{cp.id: list(carried_paths[cp.id] if cp.id in carried_paths else timeline.touched(cp))
                    for cp in state.checkpoints} for state in spill]
        for start, end in pages.page_spans([sum(map(len, paths.values())) for paths in touched]):
            chunk = spill[start:end]
            marks = set().union(*(timeline_marks(state) for state in chunk))
            kept_paths = {cp_id: paths for each in touched[start:end] for cp_id, paths in each.items()}
            cached = [self._cached(s, positions) for s in chunk]
            refs.append(pages.write_page(self.store.path, cached, headers[start:end], kept_paths, marks))
        tail = [self._cached(state, positions) for state in loaded[cut:]]
        ids = [cp.id for state in carried for cp in state.checkpoints]
        return refs, tail, kept, (carried, {cp: positions[cp] for cp in ids}, lambda: carried_paths)

    def _defer_older(self, head: str, refs: list[pages.PageRef]) -> None:
        """Leave the entries of the pages ``refs`` (the cache's at ``head``) outside memory until
        something needs them (``Timeline.whole``); their headers are read from the pages once
        something lists them (``_headers_of``), and kept."""
        if not refs:
            self.timeline.defer_older(None, set(), 0, -1)
            return
        marks = {mark for ref in refs for mark in ref.marks}
        last_position = max(ref.last_position for ref in refs)
        headers = functools.cache(partial(_headers_of, self, refs))  # (read once: a resident's next ``log`` too)
        self.timeline.defer_older(partial(self._older, head, refs), marks, refs[-1].last, last_position, headers)

    def _stamp_of_cache(self) -> tuple[int, int, int] | None:
        return _stamp(self.store.path / pages.CACHE_FILE)

    def cache_unchanged(self) -> bool:
        """Whether the cache file is the one this history last read or wrote (or still none),
        and what it folded since was never thrown away for a full read of the log (a rewritten
        log): then what it counts as not cached is what a history opened now would count."""
        return self._cache_read and not self._refolded and self._stamp_of_cache() == self._cache_stamp

    def wants_cache(self) -> bool:
        """Whether enough was folded since the cache was written to write it again."""
        return self.uncached >= CACHE_AFTER_RECORDS

    def check_record(self, record: Record, where: str) -> None:
        """``check_record`` (below), for a record read back from this store."""
        check_record(record, f"{where} in {self.store.path}")

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
            published = self.timeline.find(begun.entry, begun.number)
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
            return brackets.read_begins(self.brackets_dir, self._begins_kept)
        except StoreError:
            aside = repair.Quarantine(self.store.path)
            for path, problem in brackets.torn(self.brackets_dir):
                aside.set_aside(path, problem)
            aside.save()
            return brackets.read_begins(self.brackets_dir, self._begins_kept)

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
            self.timeline, self.folded, self.head, self._base, self._pages = Timeline(), [], None, None, []
            return self._fold_once(self.store.head())

    def _fold_once(self, head: str | None) -> int:
        self._refolded = self._refolded or (self.head is not None and head is None)
        try:
            chain = self.store.commit_chain(head, self.head) if head else []
        except StoreError:
            self._refolded = self._refolded or self.head is not None
            self.timeline, self.folded, self.sources, self._last_meta = Timeline(), [], {}, None
            self._base, self._pages = None, []
            chain = self.store.commit_chain(head, None) if head else []
        if head is None or self.head is None:
            self.timeline, self.folded = Timeline(), []  # a full replay (gc resets head) starts from nothing
            self.sources, self._last_meta, self._base, self._pages = {}, None, None, []
        with collector_paused():
            for oid in chain:
                self._fold_records(oid, _records_of(self.store, oid))
        self.head = head
        return len(chain)

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
        timeline again from the cache it started from (kept in memory, its pages read again if
        they are needed) and the records folded since, up to ``head``, then the open turns'
        files. No log object is read."""
        head, sources, folded = self.head, self.sources, self.folded
        if self._base is None:
            self.timeline = Timeline()
        else:
            self._start_from(self._base[0])
        with collector_paused():
            for record in folded:
                self.timeline.apply(record)
        self.head, self.sources, self.folded = head, {**self.sources, **sources}, folded
        self.refresh()

    def published(self, head: str, records: list[Record]) -> None:
        """``records`` (already folded into the timeline) are in the log now, up to ``head``;
        the cache is written again once what it lacks reaches ``CACHE_ON_PUBLISH`` (a big turn),
        here or, with ``save_later``, by the engine's upkeep once the answer is out."""
        self.head = head
        self.folded += records
        for record in records:
            self._note(head, record)
        if self.save_due and not self.save_later:
            self.save_cache()

    @property
    def save_due(self) -> bool:
        """Whether a publish left the cache to be written (``save_later``)."""
        return self.uncached >= CACHE_ON_PUBLISH

    def version(self) -> str | None:
        """A token that changes whenever the timeline does: the log head, followed by
        ``+<entry>`` for each open turn's file (opening a turn does not move the head). Read
        from the store, not from memory. Cheap: the ref and two lines of each open turn's file."""
        head = self.store.head()
        begins = self._begins()
        return head if not begins else (head or "") + "".join(f"+{begun.entry}" for _name, begun in begins)


def _records_of(store: Store, commit: str) -> list[Record]:
    """The records the log commit ``commit`` holds, as written (checked by the caller)."""
    try:
        return RecordEnvelope.model_validate_json(store.read_meta(commit)).records
    except ValueError as exc:
        raise StoreError(f"unreadable record {commit} in {store.path}: {exc}") from exc


def _older_from_log(history: History, head: str, count: int) -> Older:
    """The oldest ``count`` entries as ``history``'s log up to ``head`` folds them (its pages
    refused: ``History._older``)."""
    folded = Timeline()
    sources: dict[str, str] = {}
    with collector_paused():
        for oid in history.store.commit_chain(head, None):
            for record in _records_of(history.store, oid):
                history.check_record(record, f"the record {oid}")
                folded.apply(record)
                if isinstance(record, CheckpointRecorded):
                    sources[record.id] = oid
    older = folded.ordered()[:count]
    for state in older:
        for cp in state.checkpoints:
            history.sources[cp.id] = sources[cp.id]
    ids = [cp.id for state in older for cp in state.checkpoints]
    return older, {cp: folded.position(cp) for cp in ids}, None


def _headers_of(history: History, refs: list[pages.PageRef]) -> list[Entry] | None:
    """The headers the pages ``refs`` of ``history``'s store keep, newest first; None when a page
    is refused or names a path no recorded change can have (``check_record``'s rule, for the
    files its entries' steps lost): the older entries are then loaded (``History._older``), a
    refused page's from the log."""
    found: list[Entry] = []
    try:
        with collector_paused():
            for ref in reversed(refs):
                history.headers_read += 1
                headers = pages.read_headers(history.store.path, ref)
                lost = (lost.path for h in headers for lost in (*h.lost, *(lost for cp in h.checkpoints for lost in cp.lost)))
                check_paths(lost, f"the timeline page {ref.name}")
                found.extend(reversed(headers))
    except StoreError as exc:
        log.warning("the timeline cache's headers are not used: %s", exc)
        return None
    return found


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns)


def _touched_of(store: Path, kept: list[PageIndex]) -> dict[str, Touched]:
    """What the checkpoints of pages read (``History._paged``) changed, from their per-path
    index, checked like any record read back: every checkpoint of the page, clean paths. A page
    whose index is not valid is left out (its checkpoints' file lists are read instead, the
    truth) and the cache removed from ``store``: the next save writes it again."""
    found: dict[str, Touched] = {}
    for data, ids, where in kept:
        try:
            index = pages.touched_of(data)
            if index.keys() != set(ids):
                raise StoreError(f"{where} does not name the paths of each checkpoint")
            check_paths((path for pairs in index.values() for path, _oid in pairs), where)
        except (ValueError, StoreError) as exc:
            log.warning("the timeline cache's per-path index is not used: %s", exc)
            pages.remove(store)
            continue
        found.update((cp_id, tuple(pairs)) for cp_id, pairs in index.items())
    return found


def check_record(record: Record, where: str) -> None:
    """Refuse a record that names a path no recorded change can have (``..``, absolute, inside
    ``.git``): the store (or a teammate's timeline) was not written by Takeback, and nothing may
    act on it. ``where`` names the record for the message."""
    if not isinstance(record, CheckpointRecorded):
        return
    named = [path for change in record.changes for path in (change.path, change.renamed_from, *change.new_folders)]
    named += [lost.path for lost in record.lost]  # (a command is built from it: never one naming a path elsewhere)
    check_paths(named, where, ": Takeback did not write it, and will not act on it")


def check_paths(paths: Iterable[str | None], where: str, then: str = "") -> None:
    """Refuse (``StoreError``) the first of ``paths`` that no recorded change can have
    (``is_recorded_path``), read back from what ``where`` names; ``then`` ends the message."""
    for path in paths:
        if path is not None and not is_recorded_path(path):
            raise StoreError(f"{where} names the path {path!r}, which is outside the workspace or inside .git{then}")


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a long timeline is built (its records,
    their entries, their views): each full pass walks every object built so far, so leaving it
    on makes the building cost grow with the square of the timeline's length (cProfile of an
    open at 2,000 entries: 35 ms without a pass, 80-130 ms with one). Nothing built there is a
    cycle left for it; the collector is on again afterwards (unless it was off already).

    When the pause built many objects (``_PROMOTE_FROM``: a long timeline's pages and headers),
    they are then moved into the oldest generation at once (``gc.freeze`` then ``gc.unfreeze``:
    two list splices), where they would go anyway: left in the youngest, the first allocation
    after the pause walked all of them in one young pass (cProfile of ``log``'s work at 2,000
    entries: 17-31 ms of 106, collecting nothing). A small call's objects stay young, so a cycle
    one left is still found at once; skipped too when something else froze objects
    (``unfreeze`` would thaw them)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            if gc.get_count()[0] >= _PROMOTE_FROM and not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


_PROMOTE_FROM = 20_000  # young objects from which a pause's end moves them to the oldest generation
