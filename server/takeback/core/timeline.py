"""The timeline: what the operation log means, rebuilt by replaying its records.

Records are facts appended in order; this module folds them into entries (turns and
operations), their checkpoints and states, and answers the questions every operation asks:
which entry does ``#17`` name, what would undo and redo target, which turn was last green.
It never writes anything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
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
    OperationDone,
    PathChange,
    Record,
    TurnEnded,
    same_version,
)

REDO_KINDS = ("undo", "revert", "restore")


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
    # built from it on demand and kept until a record changes it (``changed``); a copy made with
    # ``dataclasses.replace`` starts without them
    _view: Entry | None = field(default=None, init=False, repr=False, compare=False)
    _header: Entry | None = field(default=None, init=False, repr=False, compare=False)

    def changed(self) -> None:
        """A record changed this entry: its views are built again when asked for."""
        self._view = self._header = None


class Timeline:
    """Every entry of one workspace, in log order."""

    def __init__(self) -> None:
        self.entries: dict[str, FoldedEntry] = {}
        self.order: list[str] = []
        self.checkpoint_owner: dict[str, str] = {}
        self.numbered: dict[int, str] = {}  # entry number: its id (``resolve``, without a walk of every entry)
        self.checkpoint_seq: list[str] = []  # every checkpoint id in log order
        self.max_number = 0
        self.record_count = 0
        self.open_ids: list[str] = []  # the agent turns begun and not ended, oldest first
        self.dropped: list[DroppedSpan] = []  # what retention dropped (its latest record)
        self.tentatives: list[EntryBegun] = []  # open turns' begins not yet in the log, oldest first
        self._before_tentative: tuple[int, int, list[str]] | None = None

    # ------------------------------------------------------------------ folding

    def apply(self, record: Record) -> None:
        self.record_count += 1
        if isinstance(record, EntriesDropped):
            self.dropped = list(record.spans)
            return
        if isinstance(record, EntryBegun):
            self.entries[record.entry] = FoldedEntry(begun=record)
            self.order.append(record.entry)
            self.numbered.setdefault(record.number, record.entry)
            self.max_number = max(self.max_number, record.number)
            if record.kind == "turn":
                self.open_ids.append(record.entry)  # several can be open: one per agent session
            return
        state = self.entries.get(record.entry)
        if state is None:
            return  # its entry was dropped by retention
        state.changed()
        if isinstance(record, CheckpointRecorded | CheckpointApplied):
            state.summary = None
        if isinstance(record, CheckpointRecorded):
            state.checkpoints.append(record)
            state.applied[record.id] = record.applied
            self.checkpoint_owner[record.id] = record.entry
            self.checkpoint_seq.append(record.id)
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
            for entry_id, new_state in record.effects.items():
                target = self.entries.get(entry_id)
                if target is None:
                    continue
                target.changed()
                target.state = new_state
                target.reverted_by = record.entry if new_state in ("reverted", "partial") else None

    @property
    def tentative(self) -> EntryBegun | None:
        """The newest open turn's begin waiting outside the log, if any."""
        return self.tentatives[-1] if self.tentatives else None

    def add_tentative(self, begun: EntryBegun) -> None:
        """Fold in an open turn's begin, which waits outside the log until a record is published
        (``brackets.py``); ``retract`` takes every such begin out again. Begins wait only behind
        the log's last entry: nothing else is folded in while one is tentative."""
        if self._before_tentative is None:
            self._before_tentative = (self.max_number, self.record_count, list(self.open_ids))
        self.apply(begun)
        self.tentatives.append(begun)

    def retract(self) -> None:
        """Take the tentative begins out (the log may hold them now, or their files are gone)."""
        if not self.tentatives:
            return
        assert self._before_tentative is not None
        for begun in self.tentatives:
            self.order.remove(begun.entry)
            del self.entries[begun.entry]
            if self.numbered.get(begun.number) == begun.entry:
                del self.numbered[begun.number]
        self.max_number, self.record_count, self.open_ids = self._before_tentative
        self.tentatives, self._before_tentative = [], None

    def confirm(self) -> None:
        """The tentative begins were published: they are part of the log's timeline from now on."""
        self.tentatives, self._before_tentative = [], None

    # ------------------------------------------------------------------ questions

    def ordered(self) -> list[FoldedEntry]:
        return [self.entries[i] for i in self.order]

    def open_turns(self) -> list[FoldedEntry]:
        """The open agent turns, oldest first: at most one per agent session, or one whole-disk
        bracket alone (``Engine.begin_turn``)."""
        states = (self.entries.get(entry_id) for entry_id in self.open_ids)
        return [s for s in states if s is not None and s.state == "open"]

    def open_turn(self) -> FoldedEntry | None:
        """The newest open agent turn, if any."""
        for entry_id in reversed(self.open_ids):
            state = self.entries.get(entry_id)
            if state is not None and state.state == "open":
                return state
        return None

    def resolve(self, spec: str) -> FoldedEntry:
        """An entry from ``17``, ``#17``, ``last``, a ULID or a unique ULID prefix."""
        text = (spec or "").strip()
        if not text:
            raise InvalidInput("empty turn: give a number like 17 or #17, a turn id, or 'last'")
        if text == "last":
            for entry_id in reversed(self.order):
                if self.entries[entry_id].begun.kind == "turn":
                    return self.entries[entry_id]
            raise NotFound("there is no turn yet in this workspace")
        number_text = text[1:] if text.startswith("#") else text
        if number_text.isdigit():
            number = int(number_text)
            numbered = self.entries.get(self.numbered.get(number, ""))
            if numbered is None:  # (a number no entry has: the walk before the index, kept as it was)
                numbered = next((s for s in self.entries.values() if s.begun.number == number), None)
            if numbered is not None:
                return numbered
            if 1 <= number <= self.max_number:  # numbers are never reused: only retention leaves gaps
                raise NotFound(self._dropped(number))
            raise NotFound(f"no turn #{number} in this workspace's timeline (it has {len(self.order)} entries)")
        upper = text.upper()
        if upper in self.entries:
            return self.entries[upper]
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
        whichever entry holds it; so "just before step k" is always ``#N.(k-1)``)."""
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

    def checkpoint(self, owner: str, checkpoint_id: str) -> CheckpointRecorded:
        """Checkpoint ``checkpoint_id`` of entry ``owner``: both from ``checkpoint_owner`` or
        ``checkpoint_seq``, which the fold fills with the entries' checkpoints (always found)."""
        return next(cp for cp in self.entries[owner].checkpoints if cp.id == checkpoint_id)

    def undo_target(self, pending: Callable[[FoldedEntry], FoldedEntry] | None = None) -> FoldedEntry:
        """The one rule for what ``undo`` takes back: the newest agent turn, applied or open, with
        a change that reached the workspace. ``pending`` gives an open turn as ending it now would
        record it (its bracket's changes on disk so far: ``Operations.targets``, the rule's one
        caller); the answer is then that turn, so a preview, ``status`` and the undo agree."""
        for entry_id in reversed(self.order):
            state = self.entries[entry_id]
            if state.begun.kind != "turn" or state.state not in ("applied", "open"):
                continue
            if state.state == "open" and pending is not None:
                state = pending(state)
            if any(state.applied.get(cp.id, True) for cp in state.checkpoints):
                return state  # an editor that refused every batch of a turn left nothing to undo
        raise NothingToDo("nothing to undo: no applied agent turn is left on the timeline")

    def redo_target(self) -> FoldedEntry:
        for entry_id in reversed(self.order):
            state = self.entries[entry_id]
            if state.begun.kind in REDO_KINDS and state.state == "applied":
                return state
        raise NothingToDo("nothing to redo: no undo, revert or restore is waiting to be re-applied")

    def last_green(self) -> FoldedEntry:
        for entry_id in reversed(self.order):
            state = self.entries[entry_id]
            if state.begun.kind == "turn" and state.checkpoints and self.view(state).checks_passed:
                return state
        raise NothingToDo("no turn has passing checks: record checks with 'takeback check -- COMMAND'")

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
            files = aggregate_files([cp for cp in state.checkpoints if state.applied.get(cp.id, True)])
            state._view = self._build_view(state, files)
            state.summary = (len(files), state._view.additions, state._view.deletions)
        return state._view

    def header(self, state: FoldedEntry) -> Entry:
        """The entry without its file lists when they are not in memory and its ``summary`` is
        known: ``files`` empty, ``file_count`` and the line counts from the summary, no
        ``state_hash``, no checkpoint's paths. What ``log`` prints needs no more."""
        if state._view is not None or state.summary is None or all(cp.loaded() for cp in state.checkpoints):
            return self.view(state)
        if state._header is None:  # kept: a long-lived engine's next ``log`` prints it again
            state._header = self._build_view(state, None)
            state._header._file_count = state.summary[0]
        return state._header

    def summary(self, state: FoldedEntry) -> tuple[int, int, int]:
        """(files, additions, deletions) of ``state``'s view (reading its file lists if needed)."""
        if state.summary is None:
            self.view(state)
        assert state.summary is not None
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
            if target and target in self.entries:
                target_number = self.entries[target].begun.number
            for path in state.operation.skipped:
                notices.append(f"skipped {path}")
        ended_by = state.ended.ended_by if state.ended else None
        if (why := _ENDED_WITHOUT_STOP.get(ended_by or "")) and (ended_by != "end_command" or begun.source == "hook"):
            notices.append(f"ended at its last step without the agent's stop: {why}")
        # from records validated when read: checking them again was most of a header's cost (log)
        return Entry.model_construct(
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
                Checkpoint.model_construct(
                    id=cp.id,
                    at=cp.at,
                    label=cp.label,
                    paths=[c.path for c in cp.changes] if files is not None else [],
                    applied=state.applied.get(cp.id, True),
                    bracket=cp.bracket,
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
            notices=notices,
        )


_ENDED_WITHOUT_STOP = {
    "next_prompt": "the next prompt arrived while it was open",
    "session_end": "its session ended",
    "end_command": "'takeback end' ended it",
}


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
    firsts: dict[str, tuple[FileVersion | None, FileVersion | None, PathChange]] = {}
    for path, changes in steps.items():
        firsts[path] = (changes[0].before, changes[-1].after, changes[-1])
    files: list[FileChange] = []
    deleted = {p: b for p, (b, a, _c) in firsts.items() if b is not None and a is None}
    paired: set[str] = set()
    for path in sorted(firsts):
        before, after, last = firsts[path]
        if same_version(before, after):
            continue
        additions = sum(c.additions for c in steps[path])
        deletions = sum(c.deletions for c in steps[path])
        binary = any(c.binary for c in steps[path])
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
    return [f for f in files if not (f.kind == "deleted" and f.path in paired)]


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
