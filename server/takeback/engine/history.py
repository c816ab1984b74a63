"""The timeline as this process knows it: the operation log folded into memory.

``History`` owns the in-memory ``Timeline``, the log head it was folded up to, every record
folded (in log order), the timeline cache (``timeline.json``) that makes opening cost only what
is new, and the open turns' begins that wait in their files (``brackets.py``), folded in as
tentative behind the log's last entry. It reads; the one thing that writes the log is a
``transaction.Transaction``, which folds what it publishes back in here (``published``).

Nothing read back from the store is trusted blindly: a record (from the log or the cache, which
is plain validated data) must name clean workspace paths, or the store is refused with an error
that says so. Every method must be called with the store's lock held.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..core.models import CheckpointRecorded, EntryBegun, Record, RecordEnvelope
from ..core.timeline import Timeline
from ..errors import StoreError
from ..storage import atomic, repair
from ..storage.store import Store
from ..workspace.files import is_recorded_path
from . import brackets

log = logging.getLogger("takeback.engine")

_CACHE_FILE = "timeline.json"
_OLD_CACHE_FILE = "timeline.pickle"  # older versions' cache: removed, never read
_CACHE_FORMAT: Final = 4  # bump when the records' shape changes (and _TimelineCache.format with it)
CACHE_AFTER_RECORDS = 50  # rewrite the cache when opening had to read this many log commits


class _TimelineCache(BaseModel):
    """What ``timeline.json`` holds: a log head and every record folded up to it, in log order
    (replaying them costs no object reads; they are validated like the log's own)."""

    model_config = ConfigDict(extra="forbid")
    format: Literal[4]
    head: str
    records: list[Record]


class History:
    """One store's log, folded: ``timeline``, ``head`` and the ``folded`` records behind it."""

    def __init__(self, store: Store, brackets_dir: Path) -> None:
        self.store = store
        self.brackets_dir = brackets_dir
        self.timeline = Timeline()
        self.folded: list[Record] = []  # every record of the log folded into the timeline, in order
        self.head: str | None = None
        self.replayed = 0  # how many log commits the last refresh read
        self._cache_read = False

    # ------------------------------------------------------------------ cache

    def load_cache(self) -> None:
        """Start from the records cached at some log head, so opening costs what is new. A cache
        that is not valid is thrown away (the log is read instead)."""
        (self.store.path / _OLD_CACHE_FILE).unlink(missing_ok=True)
        cache_file = self.store.path / _CACHE_FILE
        try:
            cache = _TimelineCache.model_validate_json(cache_file.read_bytes(), strict=True)  # strict: faster too
            timeline = Timeline()
            for record in cache.records:
                self.check_record(record, "the timeline cache")
                timeline.apply(record)
        except FileNotFoundError:
            return
        except (OSError, ValidationError, StoreError) as exc:
            log.warning("the timeline cache %s is not valid, so it is not used: %s", cache_file, exc)
            _discard(self.store.path, cache_file)
            return
        self.timeline, self.head, self.folded = timeline, cache.head, cache.records

    def save_cache(self) -> None:
        if self.timeline.tentatives or self.head is None:
            return  # the cache holds what the log holds; the next open saves it
        cache = _TimelineCache(format=_CACHE_FORMAT, head=self.head, records=self.folded)
        try:
            atomic.write(self.store.path / _CACHE_FILE, cache.model_dump_json().encode("utf-8"))
        except OSError as exc:
            log.warning("could not write the timeline cache: %s", exc)

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
            self.timeline, self.folded, self.head = Timeline(), [], None
            return self._fold_once(self.store.head())

    def _fold_once(self, head: str | None) -> int:
        try:
            chain = self.store.commit_chain(head, self.head) if head else []
        except StoreError:
            self.timeline, self.folded = Timeline(), []
            chain = self.store.commit_chain(head, None) if head else []
        if head is None or self.head is None:
            self.timeline, self.folded = Timeline(), []  # a full replay (gc resets head) starts from nothing
        for oid in chain:
            try:
                envelope = RecordEnvelope.model_validate_json(self.store.read_meta(oid))
            except ValueError as exc:
                raise StoreError(f"unreadable record {oid} in {self.store.path}: {exc}") from exc
            for record in envelope.records:
                self.check_record(record, f"the record {oid}")
                self.timeline.apply(record)
                self.folded.append(record)
        self.head = head
        return len(chain)

    def replay(self) -> None:
        """Fold the whole log again (after the log was rewritten: retention)."""
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
        """``records`` (already folded into the timeline) are in the log now, up to ``head``."""
        self.head = head
        self.folded += records

    def version(self) -> str | None:
        """A token that changes whenever the timeline does: the log head, followed by
        ``+<entry>`` for each open turn's file (opening a turn does not move the head). Read
        from the store, not from memory. Cheap: the ref and two lines of each open turn's file."""
        head = self.store.head()
        begins = self._begins()
        return head if not begins else (head or "") + "".join(f"+{begun.entry}" for _name, begun in begins)


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

