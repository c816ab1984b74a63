"""The timeline: what the operation log means, rebuilt by replaying its records.

Records are facts appended in order; this module folds them into entries (turns and
operations), their checkpoints and states, and answers the questions every operation asks:
which entry does ``#17`` name, what would undo and redo target, which turn was last green.
A timeline may start from one folded earlier (the cache's) with its older entries left out of
memory until a question needs them (``Timeline.whole``). It never writes anything.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from ..errors import InvalidInput, NotFound, NothingToDo
from .models import (
    Check,
    Checkpoint,
    CheckpointApplied,
    CheckpointRecorded,
    CheckRecorded,
    DroppedSpan,
    EntriesDropped,
    Entry,
    EntryBegun,
    FileChange,
    FileVersion,
    GitMove,
    LostFile,
    OperationDone,
    PathChange,
    Record,
    TurnEnded,
    same_version,
)

REDO_KINDS = ("undo", "revert", "restore")
Touched = tuple[tuple[str, str], ...]
"""What a checkpoint changed, as the per-path index keeps it: (path, its after's oid or "" when
the change left no file), one per change (``touched_by``)."""
Older = tuple[list["FoldedEntry"], dict[str, int], Callable[[], dict[str, Touched]] | None]
"""The older entries a cache's pages hold (``Entries.defer_older``): in log order, their
checkpoints' places in log order, and what reads what each checkpoint changed where the pages
kept it (called when a path's checkpoints are first asked: ``touching``, ``wrote``)."""
MARK_PREFIX = "mark:"
"""``mark:NAME`` names the newest mark called NAME wherever an entry or a checkpoint is named
(``resolve``; ``restore mark:NAME`` goes back to it)."""


@dataclass
class FoldedEntry:
    """An entry being folded from its records."""

    begun: EntryBegun
    checkpoints: list[CheckpointRecorded] = field(default_factory=list)
    applied: dict[str, bool] = field(default_factory=dict)
    ended: TurnEnded | None = None
    checks: list[Check] = field(default_factory=list)
    operation: OperationDone | None = None
    state: str = "open"
    reverted_by: str | None = None
    # (files, additions, deletions) of its view, kept while its checkpoints and their applied
    # flags stay as they were: the header of an entry whose file lists are not read (``header``)
    summary: tuple[int, int, int] | None = None
    remote: str | None = None  # a teammate's entry (``engine/remote.py``): their timeline, ``REMOTE/WHO``
    # built from it on demand and kept until a record changes it (``changed``); a copy made with
    # ``dataclasses.replace`` starts without them
    _view: Entry | None = field(default=None, init=False, repr=False, compare=False)
    _header: Entry | None = field(default=None, init=False, repr=False, compare=False)

    def changed(self) -> None:
        """A record changed this entry: its views are built again when asked for."""
        self._view = self._header = None


class Entries:
    """The entries of one workspace in log order, and the indexes over them (by number, each
    checkpoint's entry and place in log order), some of them possibly still outside memory:
    ``Timeline``'s storage (see there).
    """

    def __init__(self) -> None:
        self._entries: dict[str, FoldedEntry] = {}
        self._order: list[str] = []
        self._owner: dict[str, str] = {}  # checkpoint id: its entry
        self._numbered: dict[int, str] = {}  # entry number: its id (``resolve``, without a walk of every entry)
        self._seq: list[str] = []  # every checkpoint id in log order
        self._position: dict[str, int] = {}  # checkpoint id: its place in log order
        self.max_number = 0
        self.record_count = 0
        self.entry_count = 0
        self.turn_count = 0
        self.checkpoint_count = 0
        self.open_ids: list[str] = []  # the agent turns begun and not ended, oldest first
        self.dropped: list[DroppedSpan] = []  # what retention dropped (its latest record)
        self.tentatives: list[EntryBegun] = []  # open turns' begins not yet in the log, oldest first
        self._before_tentative: tuple[int, int, int, int, list[str]] | None = None
        self._older: Callable[[], Older] | None = None
        self._older_headers: Callable[[], list[Entry] | None] | None = None  # their headers, newest first
        self._older_numbers: dict[str, int] | None = None  # their numbers by id, from their headers (``number_of``)
        self._older_marks: set[str] = set()
        self._older_last = 0  # the highest number an older entry has
        self._older_position = -1  # the latest place in log order an older entry's checkpoint has
        # the per-path index (``touching``, ``wrote``): each checkpoint's (path, after's oid or "")
        # and, from them, path: its checkpoints and after's oid: its checkpoints; a checkpoint whose
        # file list is not in memory and whose paths the cache did not keep waits in ``_unindexed``
        self._touched: dict[str, Touched] = {}
        self._by_path: dict[str, list[str]] = {}
        self._by_oid: dict[str, list[str]] = {}
        self._unindexed: list[str] = []
        self._kept_paths: list[Callable[[], dict[str, Touched]]] = []  # the pages' per-path index, not read yet
        self._newest_operation: str | None = None  # the loaded operation done latest in log order (``newest_operation``)

    # ------------------------------------------------------------------ the older entries

    def defer_older(
        self, load: Callable[[], Older] | None, marks: set[str],
        last_number: int, last_position: int, headers: Callable[[], list[Entry] | None] | None = None,
    ) -> None:
        """The entries before the loaded ones wait outside memory: ``load`` answers them in log
        order, with their checkpoints' places in log order; ``marks`` is what any of them may
        answer (``marks``), ``last_number`` the highest number among them, ``last_position`` the
        latest place in log order among their checkpoints (-1: none); ``headers`` answers their
        headers newest first, without loading them (None: it cannot). ``load`` None: none waits."""
        self._older, self._older_marks, self._older_last = load, set(marks), last_number
        self._older_position, self._older_headers, self._older_numbers = last_position, headers, None

    @property
    def is_whole(self) -> bool:
        """Whether every entry is in memory (no older page waits)."""
        return self._older is None

    def whole(self) -> None:
        """Load the older entries, if they wait outside memory: every question can be answered."""
        if self._older is None:
            return
        load, self._older, self._older_headers, self._older_numbers = self._older, None, None, None
        self.take_in(*load())
        self._older_marks, self._older_last, self._older_position = set(), 0, -1

    def take_in(
        self, older: list[FoldedEntry], positions: dict[str, int], touched: Callable[[], dict[str, Touched]] | None,
    ) -> None:
        """Put ``older`` (entries older than every loaded one, in log order, their checkpoints at
        ``positions`` in log order, ``touched`` reading what each changed where it was kept) in
        memory, before the loaded ones; their checkpoints wait to be indexed until a path's are
        asked."""
        entries = {state.begun.entry: state for state in older}
        numbered: dict[int, str] = {}
        for state in older:
            numbered.setdefault(state.begun.number, state.begun.entry)
            for cp in state.checkpoints:
                self._owner[cp.id] = state.begun.entry
                self._index(cp, None)
        for number, entry_id in self._numbered.items():
            numbered.setdefault(number, entry_id)
        entries.update(self._entries)
        self._entries, self._numbered = entries, numbered
        self._order = [state.begun.entry for state in older] + self._order
        self._position.update(positions)
        self._seq = sorted(self._owner, key=self._position.__getitem__)
        if touched is not None:
            self._kept_paths.append(touched)
        if self._newest_operation is None:
            self._newest_operation = next((s.begun.entry for s in reversed(older) if _is_operation(s)), None)

    def add_folded(self, state: FoldedEntry, positions: list[int]) -> None:
        """Put an entry folded earlier (the cache's tail) behind the loaded ones, its checkpoints
        at ``positions`` in log order; the counts are the cache's, set by its reader."""
        entry_id = state.begun.entry
        self._entries[entry_id] = state
        self._order.append(entry_id)
        self._numbered.setdefault(state.begun.number, entry_id)
        for cp, position in zip(state.checkpoints, positions, strict=True):
            self._owner[cp.id] = entry_id
            self._index(cp, None)
            self._position[cp.id] = position
            self._seq.append(cp.id)
        self._seq.sort(key=self._position.__getitem__)
        self.note_operation(state)

    # ------------------------------------------------------------------ the tentative begins

    @property
    def tentative(self) -> EntryBegun | None:
        """The newest open turn's begin waiting outside the log, if any."""
        return self.tentatives[-1] if self.tentatives else None

    def retract(self) -> None:
        """Take the tentative begins out (the log may hold them now, or their files are gone)."""
        if not self.tentatives:
            return
        assert self._before_tentative is not None
        for begun in self.tentatives:
            self._order.remove(begun.entry)
            del self._entries[begun.entry]
            if self._numbered.get(begun.number) == begun.entry:
                del self._numbered[begun.number]
        self.max_number, self.record_count, self.entry_count, self.turn_count, self.open_ids = self._before_tentative
        self.tentatives, self._before_tentative = [], None

    def confirm(self) -> None:
        """The tentative begins were published: they are part of the log's timeline from now on."""
        self.tentatives, self._before_tentative = [], None

    # ------------------------------------------------------------------ the newest operation

    def note_operation(self, state: FoldedEntry) -> None:
        """``state``, folded last, may be an operation done (``_is_operation``): then it is the
        newest one, as an operation's begin, checkpoint and done are published together, behind
        every entry before them (``engine/operations.py``)."""
        if _is_operation(state):
            self._newest_operation = state.begun.entry

    def newest_operation(self, mark: str) -> tuple[FoldedEntry | None, list[FoldedEntry]]:
        """The newest operation done, and the entries after it in log order (none when there
        is none), without a walk of the entries: the older pages are read only when no
        loaded entry is an operation and ``mark`` says one of them may be what the caller looks
        for (``newest_first``'s rule; ``engine/unsaved.py``)."""
        if self._newest_operation is None and self._older is not None and mark in self._older_marks:
            self.whole()
        newest = self._newest_operation
        if newest is None:
            return None, []
        return self._entries[newest], [self._entries[i] for i in self._order[self._order.index(newest) + 1:]]

    # ------------------------------------------------------------------ the per-path index

    def _index(self, cp: CheckpointRecorded, touched: Touched | None) -> None:
        """Index checkpoint ``cp`` by the paths it changed: ``touched``, else its file list when
        that is in memory; else it waits in ``_unindexed`` (``touching`` reads its list)."""
        if touched is None:
            if not cp.loaded():
                self._unindexed.append(cp.id)
                return
            touched = touched_by(cp)
        self._add_index(cp.id, touched)

    def _add_index(self, cp_id: str, touched: Touched) -> None:
        self._touched[cp_id] = touched
        for path, oid in touched:
            self._by_path.setdefault(path, []).append(cp_id)
            if oid:
                self._by_oid.setdefault(oid, []).append(cp_id)

    def _take_kept(self) -> None:
        """Index the waiting checkpoints whose paths the pages read so far kept."""
        if not self._kept_paths:
            return
        kept: dict[str, Touched] = {}
        for read in self._kept_paths:
            kept.update(read())
        self._kept_paths, waiting, self._unindexed = [], self._unindexed, []
        for cp_id in waiting:
            if cp_id in kept and cp_id not in self._touched:
                self._add_index(cp_id, kept[cp_id])
            else:
                self._unindexed.append(cp_id)

    def touched(self, cp: CheckpointRecorded) -> Touched:
        """The (path, after's oid or "") of each change of ``cp`` (its file list read if the
        index does not hold it): what the cache's pages keep of it."""
        found = self._touched.get(cp.id)
        if found is None and self._kept_paths:
            self._take_kept()
            found = self._touched.get(cp.id)
        return found if found is not None else touched_by(cp)

    def _indexed(self, ids: list[str]) -> list[tuple[FoldedEntry, CheckpointRecorded]]:
        """The checkpoints ``ids`` with their entries, in log order (the whole timeline in memory,
        the checkpoints that waited indexed first)."""
        return [(state, self.checkpoint_in(state, cp_id))
                for cp_id in sorted(set(ids), key=self._position.__getitem__)
                for state in (self._entries[self._owner[cp_id]],)]

    def _settle(self) -> None:
        """Every entry in memory, and the checkpoints that waited indexed (from the pages' per-path
        index, else their file lists read)."""
        self.whole()
        self._take_kept()
        waiting, self._unindexed = self._unindexed, []
        for cp_id in waiting:
            owner = self._owner.get(cp_id)
            if owner is not None and cp_id not in self._touched:
                cp = self.checkpoint_in(self._entries[owner], cp_id)
                self._index(cp, touched_by(cp))

    def touching(self, path: str) -> list[tuple[FoldedEntry, CheckpointRecorded]]:
        """The checkpoints that changed ``path``, with their entries, in log order: read from the
        index, so only those checkpoints' file lists are read (``engine/blame.py``)."""
        self._settle()
        return self._indexed(self._by_path.get(path, []))

    def wrote(self, oid: str) -> list[tuple[FoldedEntry, CheckpointRecorded]]:
        """The checkpoints a change of which left content ``oid`` behind, in log order."""
        self._settle()
        return self._indexed(self._by_oid.get(oid, []))

    @staticmethod
    def checkpoint_in(state: FoldedEntry, checkpoint_id: str) -> CheckpointRecorded:
        return next(cp for cp in state.checkpoints if cp.id == checkpoint_id)

    def loaded(self) -> list[FoldedEntry]:
        """The entries in memory, in log order (all of them when ``is_whole``)."""
        return [self._entries[i] for i in self._order]

    def position(self, checkpoint_id: str) -> int:
        """A loaded checkpoint's place in log order."""
        return self._position[checkpoint_id]

    def number_of(self, entry_id: str) -> int | None:
        """Entry ``entry_id``'s number (None: the timeline does not hold it), from the older pages'
        headers when they can say it (``defer_older``), not loading them: a header of an undo
        of an old turn names that turn's number, and ``log`` reads no page for it."""
        state = self._entries.get(entry_id)
        if state is None and self._older is not None:
            if self._older_numbers is None and self._older_headers is not None and (older := self._older_headers()) is not None:
                self._older_numbers = {header.id: header.number for header in older}
            if self._older_numbers is not None:
                return self._older_numbers.get(entry_id)
            state = self.find(entry_id)  # (the pages cannot give their headers: loaded)
        return state.begun.number if state is not None else None

    def find(self, entry_id: str, number: int | None = None) -> FoldedEntry | None:
        """Entry ``entry_id``, if the timeline holds it; an older page is loaded only when it may
        hold it (not when its ``number``, if known, is newer than any older entry's)."""
        state = self._entries.get(entry_id)
        if state is None and self._older is not None and (number is None or number <= self._older_last):
            self.whole()
            state = self._entries.get(entry_id)
        return state

    def state(self, entry_id: str) -> FoldedEntry:
        """Entry ``entry_id``, which the timeline holds (``KeyError`` if not): ``find``."""
        state = self.find(entry_id)
        if state is None:
            raise KeyError(entry_id)
        return state

    @property
    def entries(self) -> dict[str, FoldedEntry]:
        self.whole()
        return self._entries

    @entries.setter
    def entries(self, entries: dict[str, FoldedEntry]) -> None:
        self.whole()
        self._entries = entries

    @property
    def order(self) -> list[str]:
        self.whole()
        return self._order

    @property
    def checkpoint_owner(self) -> dict[str, str]:
        self.whole()
        return self._owner

    @property
    def numbered(self) -> dict[int, str]:
        self.whole()
        return self._numbered

    @property
    def checkpoint_seq(self) -> list[str]:
        self.whole()
        return self._seq

    def checkpoints_newest_first(self) -> Iterator[tuple[FoldedEntry, CheckpointRecorded]]:
        """Every checkpoint with its entry, newest first: the loaded ones, and the older pages
        loaded only when the walk reaches a place in log order one of theirs may hold."""
        walked = 0
        while True:
            seq = self._seq
            if walked < len(seq):
                cp_id = seq[-1 - walked]
                if self._older is None or self._position[cp_id] > self._older_position:
                    owner = self._entries[self._owner[cp_id]]
                    yield owner, next(cp for cp in owner.checkpoints if cp.id == cp_id)
                    walked += 1
                    continue
            elif self._older is None:
                return
            self.whole()

    def newest_first(self, mark: str | None = None) -> Iterator[FoldedEntry]:
        """The entries, newest first: the loaded ones, then (loading them) the older ones, unless
        ``mark`` says none of them can be what the caller looks for."""
        loaded = self._order
        for entry_id in reversed(loaded):
            yield self._entries[entry_id]
        if self._older is not None and (mark is None or mark in self._older_marks):
            self.whole()
        older = self._order[: self._order.index(loaded[0])] if loaded else self._order
        if older is not loaded:
            for entry_id in reversed(older):
                yield self._entries[entry_id]

    def session_starts(self, sessions: set[str]) -> dict[str, tuple[FoldedEntry, str | None]]:
        """The first agent turn of each of ``sessions`` with the session's first prompt (the
        oldest turn's label that is not blank): what titles a session in the panel. Walks every
        entry's begin record (no file list), older pages included."""
        found: dict[str, tuple[FoldedEntry, str | None]] = {}
        for state in self.newest_first():
            begun = state.begun
            if begun.kind != "turn" or begun.session is None or begun.session not in sessions:
                continue
            label = (begun.label or "").strip() or None
            earlier = found.get(begun.session)
            found[begun.session] = (state, label or (earlier[1] if earlier else None))
        return found


class Timeline(Entries):
    """Every entry of one workspace, in log order.

    The older entries may wait in the timeline cache's pages (``engine/history.py``): then only
    the newest are in memory (``loaded``), the counts are the cache's, and whatever needs an
    older entry loads them all first (``whole``): ``entries``, ``order``, ``checkpoint_owner``,
    ``numbered`` and ``checkpoint_seq`` always answer for the whole timeline, and the questions
    below (``resolve``, ``undo_target``, ``last_green`` ...) walk past the newest entries only
    when an older page may hold their answer (its ``marks``).
    """

    # ------------------------------------------------------------------ folding

    def apply(self, record: Record) -> None:
        self.record_count += 1
        if isinstance(record, EntriesDropped):
            self.dropped = list(record.spans)
            return
        if isinstance(record, EntryBegun):
            self._entries[record.entry] = FoldedEntry(begun=record)
            self._order.append(record.entry)
            self._numbered.setdefault(record.number, record.entry)
            self.max_number = max(self.max_number, record.number)
            self.entry_count += 1
            if record.kind == "turn":
                self.turn_count += 1
                self.open_ids.append(record.entry)  # several can be open: one per agent session
            return
        state = self.find(record.entry)
        if state is None:
            return  # its entry was dropped by retention
        state.changed()
        if isinstance(record, CheckpointRecorded | CheckpointApplied):
            state.summary = None
            if state.checks:  # the checks so far ran on the entry before this change of it
                state.checks = [c.model_copy(update={"ran_on": "earlier"}) if c.ran_on == "end" else c for c in state.checks]
        if isinstance(record, CheckpointRecorded):
            state.checkpoints.append(record)
            state.applied[record.id] = record.applied
            self._owner[record.id] = record.entry
            self._position[record.id] = self.checkpoint_count
            self.checkpoint_count += 1
            self._seq.append(record.id)
            self._index(record, None)
        elif isinstance(record, CheckpointApplied):
            state.applied[record.checkpoint] = record.applied
            if state.ended is not None and state.operation is None and state.state in ("applied", "not-applied"):
                # an editor refused (or later took) a batch of an ended turn: its state follows
                state.state = "applied" if any(state.applied.values()) else "not-applied"
        elif isinstance(record, TurnEnded):
            if record.entry in self.open_ids:
                self.open_ids.remove(record.entry)
            state.ended = record
            state.checks.extend(record.checks)
            any_applied = any(state.applied.values()) or not state.checkpoints
            if state.state == "open":
                state.state = "applied" if any_applied else "not-applied"
        elif isinstance(record, CheckRecorded):
            state.checks.append(record.check)
        elif isinstance(record, OperationDone):
            state.operation = record
            state.state = "applied"
            self.note_operation(state)
            for entry_id, new_state in record.effects.items():
                target = self.find(entry_id)
                if target is None:
                    continue
                target.changed()
                target.state = new_state
                target.reverted_by = record.entry if new_state in ("reverted", "partial") else None

    def add_tentative(self, begun: EntryBegun) -> None:
        """Fold in an open turn's begin, which waits outside the log until a record is published
        (``brackets.py``); ``retract`` takes every such begin out again. Begins wait only behind
        the log's last entry: nothing else is folded in while one is tentative."""
        if self._before_tentative is None:
            self._before_tentative = (self.max_number, self.record_count, self.entry_count, self.turn_count,
                                      list(self.open_ids))
        self.apply(begun)
        self.tentatives.append(begun)

    # ------------------------------------------------------------------ questions

    def ordered(self) -> list[FoldedEntry]:
        self.whole()
        return [self._entries[i] for i in self._order]

    def last_entry(self) -> FoldedEntry | None:
        """The newest entry, if any."""
        return next(self.newest_first(), None)

    def open_turns(self) -> list[FoldedEntry]:
        """The open agent turns, oldest first: at most one per agent session, or one whole-disk
        bracket alone (``Engine.begin_turn``)."""
        states = (self.find(entry_id) for entry_id in self.open_ids)
        return [s for s in states if s is not None and s.state == "open"]

    def open_turn(self) -> FoldedEntry | None:
        """The newest open agent turn, if any."""
        for entry_id in reversed(self.open_ids):
            state = self.find(entry_id)
            if state is not None and state.state == "open":
                return state
        return None

    def resolve(self, spec: str) -> FoldedEntry:
        """An entry from ``17``, ``#17``, ``last``, ``mark:NAME`` (the newest mark of that name),
        a ULID or a unique ULID prefix."""
        text = (spec or "").strip()
        if not text:
            raise InvalidInput("empty turn: give a number like 17 or #17, a turn id, or 'last'")
        if text.startswith(MARK_PREFIX):
            return _newest_mark(self, text[len(MARK_PREFIX):].strip())
        if text == "last":
            for state in self.newest_first("turn"):
                if state.begun.kind == "turn":
                    return state
            raise NotFound("there is no turn yet in this workspace")
        number_text = text[1:] if text.startswith("#") else text
        if number_text.isdigit():
            number = int(number_text)
            if number <= self._older_last:
                self.whole()
            numbered = self._entries.get(self._numbered.get(number, ""))
            if numbered is None:  # (a number no entry has: the walk before the index, kept as it was)
                numbered = next((s for s in self.entries.values() if s.begun.number == number), None)
            if numbered is not None:
                return numbered
            if 1 <= number <= self.max_number:  # numbers are never reused: only retention leaves gaps
                raise NotFound(self._dropped(number))
            raise NotFound(f"no turn #{number} in this workspace's timeline (it has {len(self.order)} entries)")
        upper = text.upper()
        if (found_id := self.find(upper)) is not None:
            return found_id
        if len(upper) >= 4 and all(c in "0123456789ABCDEFGHJKMNPQRSTVWXYZ" for c in upper):
            found = [s for i, s in self.entries.items() if i.startswith(upper)]
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                raise InvalidInput(
                    f"turn id prefix {text} is ambiguous: it matches {_listed(found)}; "
                    "give more of the id, or the number"
                )
        raise NotFound(f"no turn matches {text!r}: use a number like 17 or #17, a turn id, or 'last'")

    def _dropped(self, number: int) -> str:
        """Why entry ``number``, lower than the newest, is not on the timeline any more."""
        for span in reversed(self.dropped):
            if span.first <= number <= span.last:
                when = span.at.astimezone().strftime("%Y-%m-%d")
                return f"turn #{number} was dropped by retention on {when} ({span.why}); the store no longer holds it"
        return f"turn #{number} was dropped by retention (when is no longer recorded); the store no longer holds it"

    def resolve_checkpoint(self, spec: str) -> CheckpointRecorded:
        """A checkpoint from its id (or unique prefix), ``#N`` (a turn's last), ``#N.k`` or
        ``#N.0`` (the state turn N started from: the last checkpoint recorded before its first,
        whichever entry holds it; so "just before step k" is always ``#N.(k-1)``); a mark, by
        ``#N`` or ``mark:NAME``, is its one checkpoint (the state it recorded)."""
        text = (spec or "").strip()
        upper = text.upper()
        owner = self.checkpoint_owner.get(upper)
        if owner:
            return self.checkpoint(owner, upper)
        if len(upper) >= 4 and not text.startswith("#") and not text.replace(".", "").isdigit():
            found = [c for c in self.checkpoint_owner if c.startswith(upper)]
            if len(found) == 1:
                return self.checkpoint(self.checkpoint_owner[found[0]], found[0])
            if len(found) > 1:
                raise InvalidInput(
                    f"checkpoint id prefix {text} is ambiguous: it matches {self._checkpoints_listed(found)}; "
                    "give more of the id, or #N.k"
                )
        turn_part, dot, index_part = text.partition(".")
        if dot and turn_part.lstrip("#").isdigit() and index_part.isdigit():
            state = self.resolve(turn_part)
            index = int(index_part)
            if index == 0 and state.checkpoints:
                return self._before(state)
            if not 1 <= index <= len(state.checkpoints):
                raise NotFound(f"turn #{state.begun.number} has {len(state.checkpoints)} checkpoints, not {index}")
            return state.checkpoints[index - 1]
        state = self.resolve(text)
        if not state.checkpoints:
            raise NotFound(f"turn #{state.begun.number} has no checkpoint")
        return state.checkpoints[-1]

    def _before(self, state: FoldedEntry) -> CheckpointRecorded:
        """The checkpoint recorded just before ``state``'s first one (``#N.0``)."""
        index = self.checkpoint_seq.index(state.checkpoints[0].id)
        if index == 0:
            number = state.begun.number
            raise NotFound(
                f"nothing was recorded before turn #{number} (its start is the oldest state the timeline holds): "
                f"revert {number} takes the whole turn back"
            )
        previous = self.checkpoint_seq[index - 1]
        return self.checkpoint(self.checkpoint_owner[previous], previous)

    def _checkpoints_listed(self, found: list[str], shown: int = 3) -> str:
        """``#3.1 (01J…9Q), #3.2 (01J…9R)``: the checkpoints an ambiguous prefix matched."""
        names = []
        for checkpoint_id in sorted(found)[:shown]:
            state = self.entries[self.checkpoint_owner[checkpoint_id]]
            index = next(i for i, cp in enumerate(state.checkpoints, 1) if cp.id == checkpoint_id)
            names.append(f"#{state.begun.number}.{index} ({checkpoint_id})")
        return ", ".join(names) + (f" and {len(found) - shown} more" if len(found) > shown else "")

    def checkpoint_spec(self, checkpoint_id: str) -> str:
        """``N.k``: how a person names checkpoint ``checkpoint_id`` (the k-th of entry N), which
        ``resolve_checkpoint`` reads back as it (the id itself if the number names another entry)."""
        state = self.entries[self.checkpoint_owner[checkpoint_id]]
        index = next(i for i, cp in enumerate(state.checkpoints, 1) if cp.id == checkpoint_id)
        if self.resolve(str(state.begun.number)) is not state:
            return checkpoint_id
        return f"{state.begun.number}.{index}"

    def checkpoint(self, owner: str, checkpoint_id: str) -> CheckpointRecorded:
        """Checkpoint ``checkpoint_id`` of entry ``owner``: both from ``checkpoint_owner`` or
        ``checkpoint_seq``, which the fold fills with the entries' checkpoints (always found)."""
        state = self.find(owner)
        assert state is not None
        return next(cp for cp in state.checkpoints if cp.id == checkpoint_id)

    def undo_target(self, pending: Callable[[FoldedEntry], FoldedEntry] | None = None) -> FoldedEntry:
        """The one rule for what ``undo`` takes back: the newest agent turn, applied or open, with
        a change that reached the workspace. ``pending`` gives an open turn as ending it now would
        record it (its bracket's changes on disk so far: ``Operations.targets``, the rule's one
        caller); the answer is then that turn, so a preview, ``status`` and the undo agree."""
        for state in self.newest_first("undo"):
            if state.begun.kind != "turn" or state.state not in ("applied", "open"):
                continue
            if state.state == "open" and pending is not None:
                state = pending(state)
            if any(state.applied.get(cp.id, True) for cp in state.checkpoints):
                return state  # an editor that refused every batch of a turn left nothing to undo
        raise NothingToDo("nothing to undo: no applied agent turn is left on the timeline")

    def redo_target(self) -> FoldedEntry:
        for state in self.newest_first("redo"):
            if state.begun.kind in REDO_KINDS and state.state == "applied":
                return state
        raise NothingToDo("nothing to redo: no undo, revert or restore is waiting to be re-applied")

    def last_green(self) -> FoldedEntry:
        """The newest entry whose checks passed on its end state and whose changes are in place
        (applied: a reverted turn is never green). An operation can be it: a check run after an
        undo speaks for the state the undo left."""
        for state in self.newest_first("green"):
            if state.state == "applied" and state.checkpoints and self.header(state).checks_passed:
                return state
        raise NothingToDo("no applied entry has passing checks on its end state: record checks with 'takeback check -- COMMAND'")

    def checkpoints_after(self, checkpoint_id: str) -> list[CheckpointRecorded]:
        """Every applied checkpoint recorded after ``checkpoint_id``, in log order."""
        index = self.checkpoint_seq.index(checkpoint_id)
        later = []
        for cp_id in self.checkpoint_seq[index + 1 :]:
            owner = self.entries[self.checkpoint_owner[cp_id]]
            if owner.applied.get(cp_id, True):
                later.append(self.checkpoint(owner.begun.entry, cp_id))
        return later

    def entries_after(self, checkpoint_id: str) -> list[FoldedEntry]:
        owner = self.checkpoint_owner[checkpoint_id]
        seen: list[FoldedEntry] = []
        for cp_id in self.checkpoint_seq[self.checkpoint_seq.index(checkpoint_id) + 1 :]:
            state = self.entries[self.checkpoint_owner[cp_id]]
            if state.begun.entry != owner and state not in seen:
                seen.append(state)
        return seen

    # ------------------------------------------------------------------ views

    def view(self, state: FoldedEntry) -> Entry:
        """The entry in full (its file lists read, if they were not)."""
        if state._view is None:
            files = _files_of(state)
            state._view = self._build_view(state, files)
            state.summary = _summary_of(files)
        return state._view

    def header(self, state: FoldedEntry) -> Entry:
        """The entry without its file lists when they are not in memory and its ``summary`` is
        known: ``files`` empty, ``file_count`` and the line counts from the summary, no
        ``state_hash``, no checkpoint's paths. What ``log`` prints needs no more."""
        if state._view is not None or state.summary is None or all(cp.loaded() for cp in state.checkpoints):
            return self.view(state)
        if state._header is None:  # kept: a long-lived engine's next ``log`` prints it again
            state._header = self.bare_header(state)
        return state._header

    def bare_header(self, state: FoldedEntry) -> Entry:
        """The header ``header`` answers for ``state`` once its file lists are not in memory
        (its summary worked out now if it is not known): what the cache's pages keep for each
        entry, so ``log`` reads an older page's headers and none of its records."""
        files = self.summary(state)[0]  # (first: the header's line counts are the summary's)
        header = self._build_view(state, None)
        header._file_count = files
        return header

    def headers_newest_first(self) -> Iterator[Entry]:
        """Every entry's header (``header``), newest first: the loaded ones', then the older
        ones' as their pages keep them, none of their records read (when the pages can give
        them, else the older entries are loaded)."""
        loaded = len(self._order)
        for entry_id in reversed(self._order):
            yield self.header(self._entries[entry_id])
        older = self._older_headers() if self._older is not None and self._older_headers is not None else None
        if older is not None:
            yield from older
        else:  # (past the ones given: the older entries, loaded if they still wait)
            yield from map(self.header, itertools.islice(self.newest_first(), loaded, None))

    def empty(self, state: FoldedEntry) -> bool:
        """Whether ``state`` is an empty turn (``Entry.empty_turn``, the rule's one place)."""
        return self.header(state).empty_turn

    def summary(self, state: FoldedEntry) -> tuple[int, int, int]:
        """(files, additions, deletions) of ``state``'s view (reading its file lists if needed),
        from the same ``aggregate_files`` as the view, without building the rest of the view:
        the cache's pages need it for entries other processes recorded, whose views this
        process may never show (two thirds of a 5,000-file entry's view was the rest)."""
        if state.summary is None:
            state.summary = _summary_of(_files_of(state))
        return state.summary

    def _build_view(self, state: FoldedEntry, files: list[FileChange] | None) -> Entry:
        """``state`` as an ``Entry``; ``files`` None: a header (``header``)."""
        begun = state.begun
        notices: list[str] = []
        for cp in state.checkpoints:
            notices.extend(n for n in cp.notices if n not in notices)
            if not state.applied.get(cp.id, True):
                notice = f"checkpoint {cp.id} was not applied by the editor"
                if notice not in notices:
                    notices.append(notice)
        target = None
        target_number = None
        verdict = None
        if state.operation is not None:
            target = state.operation.target
            verdict = state.operation.verdict
            if target:
                target_number = self.number_of(target)
            notices.extend(_file_fates(state.operation))
        ended_by = state.ended.ended_by if state.ended else None
        if (why := _ENDED_WITHOUT_STOP.get(ended_by or "")) and (ended_by != "end_command" or begun.source == "hook"):
            notices.append(f"ended at its last step without the agent's stop: {why}")
        # from records validated when read: checking them again was most of a header's cost (log)
        return Entry.assembled(
            id=begun.entry,
            number=begun.number,
            kind=begun.kind,
            session=begun.session,
            label=begun.label,
            agent=begun.agent,
            source=begun.source,
            created_at=begun.at,
            finished_at=(state.ended.at if state.ended else (state.operation.at if state.operation else None)),
            head=begun.head,
            state=state.state,
            checkpoints=[
                Checkpoint.assembled(
                    id=cp.id,
                    at=cp.at,
                    label=cp.label,
                    paths=[c.path for c in cp.changes] if files is not None else [],
                    applied=state.applied.get(cp.id, True),
                    bracket=cp.bracket,
                    git_moved=list(cp.git_moved), outside=list(cp.outside), lost=list(cp.lost),
                )
                for cp in state.checkpoints
            ],
            files=files or [],
            additions=sum(f.additions for f in files) if files is not None else (state.summary or (0, 0, 0))[1],
            deletions=sum(f.deletions for f in files) if files is not None else (state.summary or (0, 0, 0))[2],
            state_hash=state_hash(files) if files else None,
            commands=list(state.ended.commands) if state.ended else [],
            checks=list(state.checks),
            target=target,
            target_number=target_number,
            verdict=verdict,
            reverted_by=state.reverted_by,
            ended_by=ended_by,
            notices=notices, git_moved=git_moved(state), outside=outside_of(state.checkpoints), lost=lost_of(state.checkpoints),
        )


def _newest_mark(timeline: Timeline, name: str) -> FoldedEntry:
    """The newest mark named ``name`` (``engine/marks.py``): what ``mark:NAME`` names."""
    if not name:
        raise InvalidInput(f"give the mark's name after '{MARK_PREFIX}', as 'takeback mark' named it, or its number")
    for state in timeline.newest_first():
        if state.begun.kind == "mark" and (state.begun.label or "").strip() == name:
            return state
    raise NotFound(f"no mark named {name!r} on this workspace's timeline: 'takeback log' lists the marks")


def _is_operation(state: FoldedEntry) -> bool:
    """Whether ``state`` is an operation done: an entry other than a turn whose ``OperationDone``
    is folded."""
    return state.begun.kind != "turn" and state.operation is not None


def touched_by(cp: CheckpointRecorded) -> Touched:
    """What ``cp`` changed, as the per-path index keeps it (``Touched``)."""
    return tuple((c.path, c.after.oid if c.after is not None else "") for c in cp.changes)


def git_moved(state: FoldedEntry) -> list[GitMove]:
    """What of the person's git state moved during ``state``: its bracket's begin to end when it
    had one that saw something (the whole turn, steps included), else its steps' in order."""
    if state.ended is not None and state.ended.git_moved:
        return list(state.ended.git_moved)
    return [move for cp in state.checkpoints for move in cp.git_moved]


def outside_of(checkpoints: list[CheckpointRecorded]) -> list[str]:
    """The files these steps' tools named outside the workspace, once each, in order."""
    return list(dict.fromkeys(path for cp in checkpoints for path in cp.outside))


def lost_of(checkpoints: list[CheckpointRecorded]) -> list[LostFile]:
    """The ignored files these steps' calls deleted or overwrote (``CheckpointRecorded.lost``):
    per path its first loss (what it held before the turn: the bytes a kept one's command
    writes back)."""
    first: dict[str, LostFile] = {}
    for cp in checkpoints:
        for lost in cp.lost:
            first.setdefault(lost.path, lost)
    return list(first.values())


def _files_of(state: FoldedEntry) -> list[FileChange]:
    """What ``state``'s applied checkpoints changed, per path (``aggregate_files``)."""
    return aggregate_files([cp for cp in state.checkpoints if state.applied.get(cp.id, True)])


def _summary_of(files: list[FileChange]) -> tuple[int, int, int]:
    return len(files), sum(f.additions for f in files), sum(f.deletions for f in files)


def _file_fates(done: OperationDone) -> list[str]:
    """What an operation did to each file it did not simply take back, as ``show`` lists it."""
    fates = [f"skipped {path}" for path in done.skipped]
    for path in done.conflicts:
        if path in done.markers:
            fates.append(f"conflict markers written in {path}: resolve them by hand")
        elif path in done.forced:
            fates.append(f"written over later edits in {path} (forced; taking this operation back restores them)")
        else:
            fates.append(f"left in conflict: {path} (as it was)")
    return fates


def marks(state: FoldedEntry) -> set[str]:
    """What ``state`` may answer when a question walks the timeline newest first (a superset):
    ``turn`` (``resolve("last")``), ``undo`` (``undo_target``), ``redo`` (``redo_target``),
    ``green`` (``last_green``), ``editor`` (an operation that applied files in an editor:
    ``Engine.unsaved``). An older page carries its entries' marks (``newest_first``)."""
    found = set()
    if state.operation is not None and state.operation.editor:
        found.add("editor")
    if state.checkpoints and state.checks:
        found.add("green")
    if state.begun.kind == "turn":
        found.add("turn")
        if state.state in ("applied", "open"):
            found.add("undo")
    if state.begun.kind in REDO_KINDS and state.state == "applied":
        found.add("redo")
    return found


_ENDED_WITHOUT_STOP = {
    "next_prompt": "the next prompt arrived while it was open",
    "session_end": "its session ended",
    "end_command": "'takeback end' ended it",
}


def resolve_step(timeline: Timeline, spec: str) -> tuple[FoldedEntry, CheckpointRecorded] | None:
    """Step k of turn N and its entry from ``N.k`` or ``#N.k`` (k from 1), what ``revert``
    takes back alone; None when ``spec`` names an entry instead (a number, an id, ``last``:
    an id never holds a dot)."""
    turn_part, dot, index_part = (spec or "").strip().partition(".")
    if not (dot and turn_part.lstrip("#").isdigit() and index_part.isdigit()):
        return None
    if int(index_part) == 0:
        number = turn_part.lstrip("#")
        raise InvalidInput(
            f"{spec} is where turn #{number} started, not one of its steps: steps count from 1 "
            f"({number}.1 is its first), and 'revert {number}' takes the whole turn back"
        )
    cp = timeline.resolve_checkpoint(spec)
    return timeline.state(cp.entry), cp


def relevant_steps(checkpoints: list[CheckpointRecorded]) -> dict[str, list[PathChange]]:
    """Per path, the changes that together take it from the entry's start to its end.

    A bracket checkpoint covers the whole turn for its paths (its before is the state at
    begin), so the edit batches inside the bracket are not needed for those paths.
    """
    steps: dict[str, list[PathChange]] = {}
    covered: dict[str, PathChange] = {}
    for cp in checkpoints:
        for change in cp.changes:
            steps.setdefault(change.path, []).append(change)
            if cp.bracket:
                covered[change.path] = change
    for path, change in covered.items():
        steps[path] = [change]
    return steps


def aggregate_files(checkpoints: list[CheckpointRecorded]) -> list[FileChange]:
    """Per path: first before, last after; renames paired when the content moved."""
    steps = relevant_steps(checkpoints)
    # per path: (first before, last after, last change, +lines, -lines, binary); a path changed
    # once (each of a 5,000-file turn's) takes its one change's, no sum over a list of one
    firsts: dict[str, tuple[FileVersion | None, FileVersion | None, PathChange, int, int, bool]] = {}
    for path, changes in steps.items():
        last = changes[-1]
        if len(changes) == 1:
            firsts[path] = (last.before, last.after, last, last.additions, last.deletions, last.binary)
        else:
            firsts[path] = (changes[0].before, last.after, last, sum(c.additions for c in changes),
                            sum(c.deletions for c in changes), any(c.binary for c in changes))
    files: list[FileChange] = []
    deleted = {p: first[0] for p, first in firsts.items() if first[0] is not None and first[1] is None}
    paired: set[str] = set()
    for path in sorted(firsts):
        before, after, last, additions, deletions, binary = firsts[path]
        if same_version(before, after):
            continue
        version = after or before
        withheld = version.withheld if version else None
        if before is None and after is not None:
            source = last.renamed_from if last.renamed_from in deleted else None
            if source is None:
                source = next((p for p, b in deleted.items() if p not in paired and b.oid == after.oid and not b.withheld), None)
            if source is not None:
                paired.add(source)
                if deleted[source].oid == after.oid:
                    additions = deletions = 0  # the content moved unchanged: no line changed
                files.append(
                    FileChange(path=path, kind="renamed", old_path=source, before=deleted[source], after=after,
                               additions=additions, deletions=deletions, binary=binary, withheld=withheld)
                )
                continue
            kind: Literal["added", "modified", "deleted"] = "added"
        elif after is None:
            kind = "deleted"
        else:
            kind = "modified"
        files.append(FileChange(path=path, kind=kind, before=before, after=after, additions=additions,
                                deletions=deletions, binary=binary, withheld=withheld))
    return [f for f in files if not (f.kind == "deleted" and f.path in paired)] if paired else files


def state_hash(files: list[FileChange]) -> str:
    """A digest of the paths an entry left behind and their content (its resulting state)."""
    digest = hashlib.sha256()
    for change in sorted(files, key=lambda f: f.path):
        after = change.after
        digest.update(change.path.encode() + b"\0")
        digest.update((f"{after.oid}:{after.mode:o}" if after else "-").encode() + b"\n")
        if change.old_path:
            digest.update(change.old_path.encode() + b"\0-\n")
    return digest.hexdigest()[:16]


def _listed(found: list[FoldedEntry], shown: int = 3) -> str:
    """``#3 (01J…9Q), #4 (01J…9R)``: the entries an ambiguous prefix matched, oldest first."""
    found = sorted(found, key=lambda s: s.begun.number)
    names = [f"#{s.begun.number} ({s.begun.entry})" for s in found[:shown]]
    more = f" and {len(found) - shown} more" if len(found) > shown else ""
    return ", ".join(names) + more
