"""Undo, redo, revert and restore: planning them against the timeline and carrying them out.

``Operations`` is the part of ``Engine`` that takes recorded changes back. Each operation
picks the changes to take back (a turn's, an operation's, everything after a checkpoint),
plans every path as a chain of three-way merges (``planning.Planner``), answers a dry run or a
conflict without writing, and otherwise hands documents open in an editor to it (with the
store's lock let go: ``handoff.py``), writes the other files under the journal and appends the
operation's own entry, so it too can be undone. The wording of results (verdict, advice, labels) is here.
"""


from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from typing import Any, Literal, TypedDict, Unpack

from ..core.clock import new_id as _new_id
from ..core.clock import now as _now
from ..core.merge import Version
from ..core.models import (
    ON_CONFLICT,
    CheckpointRecorded,
    Entry,
    FileOutcome,
    FileVersion,
    OnConflict,
    OperationDone,
    OperationResult,
    PathChange,
    Record,
    Verdict,
    same_version,
)
from ..core.planning import PathPlan, Plan, Planner
from ..core.textdiff import is_binary, line_stats, unified_diff
from ..core.timeline import FoldedEntry, Timeline, relevant_steps
from ..errors import (
    InvalidInput,
    NotFound,
    NothingToDo,
    OutsideWorkspace,
    StateError,
)
from ..workspace.journal import JournalFile
from . import brackets
from .handoff import EditorApply, ask_editor
from .parts import EngineParts

log = logging.getLogger("takeback.engine")

class EditorIo(TypedDict, total=False):
    """How an operation reaches documents open in an editor (the language server gives both):
    their content now, by path (``overlay``: planned from, instead of the disk), and what applies
    the new content to them (``editor``)."""

    overlay: dict[str, Version | None]
    editor: EditorApply | None



class Operations(EngineParts):
    """Undo, redo, revert and restore (mixed into ``Engine``, whose state they use)."""

    def undo(self, dry_run: bool = False, on_conflict: OnConflict = "abort", **io: Unpack[EditorIo]) -> OperationResult:
        """Revert the last applied agent turn, whichever session's (a turn still open is
        ended first, so its bracket's changes are recorded and it is the one undone)."""
        _check_on_conflict(on_conflict)
        with self.transaction():
            for entry_id in reversed(self.timeline.order):
                state = self.timeline.entries[entry_id]
                if state.begun.kind != "turn" or state.state not in ("open", "applied"):
                    continue
                if state.state == "open":
                    state = self._with_pending_bracket(state)
                if any(state.applied.get(cp.id, True) for cp in state.checkpoints):
                    return self._revert_entry("undo", state, dry_run, on_conflict, **io)
            target = self.timeline.undo_target()
            return self._revert_entry("undo", target, dry_run, on_conflict, **io)

    def redo(self, dry_run: bool = False, on_conflict: OnConflict = "abort", **io: Unpack[EditorIo]) -> OperationResult:
        """Re-apply what the last undo, revert or restore took away."""
        _check_on_conflict(on_conflict)
        with self.transaction():
            target = self.timeline.redo_target()
            return self._revert_entry("redo", target, dry_run, on_conflict, **io)

    def revert(
        self,
        turn: str,
        dry_run: bool = False,
        on_conflict: OnConflict = "abort",
        paths: Iterable[str] | None = None,
        **io: Unpack[EditorIo],
    ) -> OperationResult:
        """Take back one entry's changes, keeping everything done after it.

        With ``paths``, only the changes to those paths (and their rename partners) are taken
        back; the entry's own state stays as it is, and the revert is its own timeline entry.
        """
        _check_on_conflict(on_conflict)
        with self.transaction():
            target = self.timeline.resolve(turn)
            if target.state == "open":
                target = self._with_pending_bracket(target)
            return self._revert_entry("revert", target, dry_run, on_conflict, paths=paths, **io)

    def restore(self, checkpoint: str, dry_run: bool = False, on_conflict: OnConflict = "abort", **io: Unpack[EditorIo]) -> OperationResult:
        """Bring every file touched since ``checkpoint`` (or ``last-green``) back to its state then."""
        _check_on_conflict(on_conflict)
        with self.transaction():
            if checkpoint == "last-green":
                green = self.timeline.last_green()
                cp = green.checkpoints[-1]
            else:
                cp = self.timeline.resolve_checkpoint(checkpoint)
            owner = self.timeline.entries[cp.entry]
            later = self.timeline.checkpoints_after(cp.id)
            open_states = self.timeline.open_turns()  # a restore ends them all: it goes back in time
            unrecorded: list[CheckpointRecorded] = []  # what an open turn's bracket saw so far
            if dry_run or not later:
                for open_state in open_states:
                    pending = self._with_pending_bracket(open_state)
                    if pending is not open_state:
                        unrecorded.append(pending.checkpoints[-1])
            ended = False
            if open_states and not dry_run and (later or unrecorded):
                for open_state in open_states:
                    self._end(open_state, [], [])  # its changes on disk are then among those restored
                ended = True
                later = self.timeline.checkpoints_after(cp.id)
            elif unrecorded:  # a preview plans with what ending the turns would record
                later = [*later, *unrecorded]
            if not later:
                raise NothingToDo(f"nothing to restore: no change was recorded after checkpoint {cp.id} (turn #{owner.begun.number})")
            steps: dict[str, list[PathChange]] = {}
            by_entry: dict[str, list[CheckpointRecorded]] = {}
            for item in later:
                by_entry.setdefault(item.entry, []).append(item)
            for entry_id, cps in by_entry.items():
                if entry_id == owner.begun.entry:
                    cps = _from_checkpoint(owner, cp, cps)
                for path, changes in relevant_steps(cps).items():
                    steps.setdefault(path, []).extend(changes)
            effects: dict[str, str] = {}
            previous: dict[str, str] = {}
            for state in self.timeline.entries_after(cp.id):
                if state.state in ("applied", "open", "partial"):
                    previous[state.begun.entry] = state.state
                    effects[state.begun.entry] = "reverted"
            if owner.checkpoints and owner.checkpoints[-1].id != cp.id and owner.state in ("applied", "open"):
                previous[owner.begun.entry] = owner.state
                effects[owner.begun.entry] = "partial"
            label = f"restore to checkpoint {cp.id[-8:]} of turn #{owner.begun.number}"
            return self._operate(
                "restore", owner, steps, effects, previous, dry_run, on_conflict, label, checkpoint_target=cp.id,
                ending=open_states, ended=ended, **io
            )

    def _turns_ending(self, target: FoldedEntry) -> list[FoldedEntry]:
        """The open turns an operation on ``target`` ends just before it writes: a whole-disk
        one (its bracket would take the operation's writes for the agent's), and the target
        itself. Other agent sessions' turns go on: they record only their own steps."""
        return [
            s for s in self.timeline.open_turns()
            if s.begun.entry == target.begun.entry or not self._session_turn(s)
        ]

    def _with_pending_bracket(self, state: FoldedEntry) -> FoldedEntry:
        """The open turn as 'end' would record it now, recording nothing: what an operation plans
        with (the turn itself is ended only when the operation goes on to write)."""
        opened = brackets.read(self._brackets, state.begun.entry)
        if opened is None or opened.scan is None:
            return state
        cp = self._bracket_checkpoint(state, opened)
        if cp is None:
            return state
        return dataclasses.replace(
            state, checkpoints=[*state.checkpoints, cp], applied={**state.applied, cp.id: True}, _view=None
        )

    def _revert_entry(
        self, kind: str, target: FoldedEntry, dry_run: bool, on_conflict: OnConflict,
        paths: Iterable[str] | None = None, **io: Unpack[EditorIo]
    ) -> OperationResult:
        number = target.begun.number
        if target.state in ("reverted",):
            by = self.timeline.entries.get(target.reverted_by or "")
            hint = f" by #{by.begun.number}; run 'takeback revert {by.begun.number}' to bring it back" if by else ""
            raise NothingToDo(f"turn #{number} is already reverted{hint}")
        if target.state == "not-applied":
            raise NothingToDo(f"turn #{number} was never applied to the workspace")
        checkpoints = [cp for cp in target.checkpoints if target.applied.get(cp.id, True)]
        steps = relevant_steps(checkpoints)
        previous = {target.begun.entry: target.state if target.state != "open" else "applied"}
        effects = {target.begun.entry: "reverted"}
        if target.operation is not None:
            for entry_id, old in target.operation.previous.items():
                if entry_id != target.begun.entry and entry_id in self.timeline.entries:
                    previous[entry_id] = self.timeline.entries[entry_id].state
                    effects[entry_id] = old
        label = _operation_label(kind, target, self.timeline)
        if paths is not None:
            steps = _only_paths(steps, {self.workspace.rel(p) for p in paths}, number)
            if set(steps) != set(relevant_steps(checkpoints)):
                effects, previous = {}, {}  # a few files only: the entry itself stays as it is
            label = f"{kind} {', '.join(sorted(steps))} from " + label.split(" ", 1)[1]
        return self._operate(kind, target, steps, effects, previous, dry_run, on_conflict, label, **io)

    def _operate(
        self,
        kind: str,
        target: FoldedEntry,
        steps: dict[str, list[PathChange]],
        effects: dict[str, str],
        previous: dict[str, str],
        dry_run: bool,
        on_conflict: OnConflict,
        label: str,
        checkpoint_target: str | None = None,
        overlay: dict[str, Version | None] | None = None,
        editor: EditorApply | None = None,
        ending: list[FoldedEntry] | None = None,
        ended: bool = False,
    ) -> OperationResult:
        """``ending``: the open turns the operation ends before it writes (default:
        ``_turns_ending``); ``ended``: the caller already ended them, to plan with their changes.
        (Previews, and operations that stop or fail validation, end nothing.)"""
        _check_on_conflict(on_conflict)
        overlay = {self.workspace.rel(p): v for p, v in (overlay or {}).items()}
        plan = self._plan(target, steps, on_conflict, overlay)
        number = target.begun.number
        outcomes = [_outcome(p.path, p.ours, p.result, p.merged) for p in plan.writes]
        if ending is None:
            ending = self._turns_ending(target)
        base: dict[str, Any] = dict(
            operation=kind, dry_run=dry_run, on_conflict=on_conflict, target=target.begun.entry,
            target_number=number, restored=outcomes, skipped=plan.skipped, conflicts=plan.conflicts,
            notices=_open_turn_notices(kind, ending, ended),
        )
        again = _command(kind, number, checkpoint_target, done=False)
        _advise(plan, again)
        verdict = _verdict(plan)
        stopped = self._not_carried_out(kind, target, plan, base, again, on_conflict, dry_run, verdict)
        if stopped is not None:
            return stopped
        if verdict == "partial" and target.begun.entry in effects and effects[target.begun.entry] == "reverted":
            effects[target.begun.entry] = "partial"
        for state in ending:
            if state.state == "open":
                self._end(state, [], [])  # its bracket's changes are the agent's; the operation's writes are not
        base["notices"] = _open_turn_notices(kind, ending, True)
        entry = self._execute(kind, plan, effects, previous, verdict, on_conflict, label, target, checkpoint_target, overlay, editor)
        rest = _command(kind, number, checkpoint_target, done=True)
        _advise(plan, rest, done=True)
        return OperationResult(
            **base, verdict=verdict, applied=True, entry=entry,
            message=f"{kind} of #{number} done as #{entry.number}: {len(outcomes)} file(s) changed" + _tail(plan)
            + _notes_tail(target),
            next_action=_next_action(kind, entry, plan, rest),
        )

    def _plan(
        self, target: FoldedEntry, steps: dict[str, list[PathChange]], on_conflict: OnConflict,
        overlay: dict[str, Version | None],
    ) -> Plan:
        """What taking ``steps`` back would write, from the files now (``overlay``: open
        documents, which the editor writes)."""
        out_of_reach = self._out_of_reach(steps)

        def read(rel: str) -> Version | None:
            if rel in out_of_reach:
                return None  # nothing is read through such a symlink
            return overlay[rel] if rel in overlay else self.workspace.read(rel)

        def unwritable(rel: str) -> str | None:
            return None if rel in overlay else self.workspace.unwritable(rel)  # the editor writes open documents

        planner = Planner(
            self.capture, read, on_conflict, label_theirs=f"before #{target.begun.number}", layout=self.workspace,
            unwritable=unwritable,
        )
        plan = planner.plan(steps)
        _set_aside(plan, out_of_reach)
        return plan

    def _not_carried_out(
        self, kind: str, target: FoldedEntry, plan: Plan, base: dict[str, Any], again: str, on_conflict: OnConflict,
        dry_run: bool, verdict: Verdict,
    ) -> OperationResult | None:
        """The answer of an operation that writes nothing: stopped by overlapping edits, a dry
        run, or nothing left to change. None: it goes ahead."""
        number = target.begun.number
        blocking = plan.blocking_conflicts
        if blocking and on_conflict == "abort":
            return OperationResult(
                **{**base, "restored": []}, verdict="broken", applied=False,
                message=f"{kind} of #{number} stopped: {len(blocking)} file(s) changed since in ways that overlap; nothing was written",
                next_action=_conflict_advice(again, plan),
            )
        if dry_run:
            return OperationResult(
                **base, verdict=verdict, applied=False,
                message=f"dry run: {kind} of #{number} would change {len(base['restored'])} file(s)" + _tail(plan)
                + _notes_tail(target),
                next_action="run it without --dry-run to carry it out",
                patch=self._patch(plan),
            )
        if verdict == "broken":
            return OperationResult(
                **base, verdict="broken", applied=False,
                message=f"{kind} of #{number} changed nothing: every file was skipped or in conflict",
                next_action=_conflict_advice(again, plan),
            )
        return None

    def _out_of_reach(self, steps: dict[str, list[PathChange]]) -> dict[str, tuple[str | None, str]]:
        """Recorded paths that lie behind a symlink now (a folder swapped for one since they were
        recorded), which nothing may read or write through: the link leads outside the
        workspace, or the operation itself puts the link's path back. path -> (that symlink,
        why it is skipped unless the operation removes the link first)."""
        refused: dict[str, tuple[str | None, str]] = {}
        for path in steps:
            link = self.workspace.link_above(path)
            try:
                self.workspace.rel(path)
                where = "now"
            except OutsideWorkspace as exc:
                if link is None:
                    refused[path] = (None, str(exc))
                    continue
                where = "that leads outside the workspace"
            else:
                if link is None or link not in steps:
                    continue  # a symlinked folder inside the workspace the operation leaves alone
            refused[path] = (link, f"{link} is a symlink {where}, and Takeback never writes through it; "
                                   "remove the link and run this again")
        return refused

    def _execute(
        self,
        kind: str,
        plan: Plan,
        effects: dict[str, str],
        previous: dict[str, str],
        verdict: str,
        on_conflict: OnConflict,
        label: str,
        target: FoldedEntry,
        checkpoint_target: str | None,
        overlay: dict[str, Version | None],
        editor: EditorApply | None,
    ) -> Entry:
        with self.transaction() as tx:
            editor_writes = [(item.path, item.result) for item in plan.writes if item.path in overlay]
            if editor_writes:
                # Asked first, with the store's lock let go; the disk is written only once it applied.
                on_disk = {item.path: item.ours for item in plan.writes if item.path not in overlay}
                if editor is None or not ask_editor(tx, self.workspace, editor, editor_writes, on_disk):
                    raise StateError("the editor did not apply the changes to its open documents; nothing was written")
            entry_id = _new_id()
            changes, journal_files, backups = self._changes_and_journal(plan, overlay)
            self.journal.start(entry_id, kind, journal_files, backups, plan.folders)
            written: list[JournalFile] = []
            try:
                self.journal.forward(journal_files, plan.folders, written, lambda item: self._write_after(item, plan))
                tx.add(*self._operation_records(entry_id, kind, label, target, checkpoint_target, on_conflict, verdict,
                                                effects, previous, plan, changes))
                tx.publish()  # the turns it ended and the operation: one log commit, before the journal goes
            except BaseException:
                self.journal.roll_back(written)
                self.journal.finish()
                raise
            self.journal.finish()
            return self.timeline.view(self.timeline.entries[entry_id])

    def _operation_records(
        self, entry_id: str, kind: str, label: str, target: FoldedEntry, checkpoint_target: str | None,
        on_conflict: OnConflict, verdict: str, effects: dict[str, str], previous: dict[str, str], plan: Plan,
        changes: list[PathChange],
    ) -> list[Record]:
        """The operation's own entry: its begin, its checkpoint (every write) and what it did."""
        now = _now()
        return [
            self._new_begin(entry_id, label=label, session=target.begun.session, source="operation", kind=kind, at=now),
            CheckpointRecorded(id=_new_id(), at=now, entry=entry_id, label=label, changes=changes),
            OperationDone(
                id=_new_id(), at=now, entry=entry_id, target=target.begun.entry,
                checkpoint_target=checkpoint_target, on_conflict=on_conflict, verdict=verdict,  # type: ignore[arg-type]
                effects=effects, previous=previous,  # type: ignore[arg-type]
                skipped=[s.path for s in plan.skipped], conflicts=[c.path for c in plan.conflicts],
            ),
        ]

    def _changes_and_journal(
        self, plan: Plan, overlay: dict[str, Version | None],
    ) -> tuple[list[PathChange], list[JournalFile], dict[str, bytes]]:
        """The operation's checkpoint changes (every write), and what the journal keeps for the
        writes on disk (the editor's are not journaled): each file's before and after, and a
        backup of a before-image the store withholds (a secret), so a crash can roll it back."""
        changes: list[PathChange] = []
        journal_files: list[JournalFile] = []
        backups: dict[str, bytes] = {}
        for i, item in enumerate(plan.writes):
            ours = item.ours
            before = None if ours is None else self.capture.version(item.path, ours.content, ours.mode)
            after = None if item.result is None else self.capture.version(item.path, item.result.content, item.result.mode)
            changes.append(
                self._path_change(
                    item.path, before, after, None,
                    ours.content if ours else None, item.result.content if item.result else None,
                    new_folders=item.new_folders,
                )
            )
            if item.path in overlay:
                continue
            backup = None
            if before is not None and before.withheld and ours is not None:
                backup = f"{i}.bin"
                backups[backup] = ours.content
            journal_files.append(
                JournalFile(path=item.path, before=before, after=after, backup=backup, new_folders=item.new_folders)
            )
        return changes, journal_files, backups

    def _write_after(self, item: JournalFile, plan: Plan) -> None:
        if item.after is not None and item.after.withheld:
            result = next(p.result for p in plan.paths if p.path == item.path)
            assert result is not None
            self.workspace.write(item.path, result.content, result.mode, fsync=self.config.fsync)
        else:
            self.journal.write_side(item, "after")

    def _patch(self, plan: Plan) -> str:
        parts = []
        for item in plan.writes:
            ours = item.ours
            result = item.result
            if (ours and is_binary(ours.content)) or (result and is_binary(result.content)):
                parts.append(f"Binary file {item.path} would change\n")
                continue
            parts.append(
                unified_diff(
                    item.path,
                    ours.content if ours else None,
                    result.content if result else None,
                    before_mode=ours.mode if ours else None,
                    after_mode=result.mode if result else None,
                )
            )
        return "".join(parts)


def _check_on_conflict(on_conflict: str) -> None:
    """Refuse a bad option before anything happens (an open turn would otherwise be ended first)."""
    if on_conflict not in ON_CONFLICT:
        raise InvalidInput(f"on-conflict must be one of {', '.join(ON_CONFLICT)}, not {on_conflict!r}")

def _from_checkpoint(
    owner: FoldedEntry, cp: CheckpointRecorded, later: list[CheckpointRecorded]
) -> list[CheckpointRecorded]:
    """The owner's checkpoints after ``cp``, with its bracket checkpoint starting at ``cp``.

    A bracket checkpoint's before-images are the turn's start; restoring to a checkpoint inside
    that turn must take back only what came after it, so a path an earlier batch (up to ``cp``)
    touched starts from that batch's after-image instead.
    """
    at_cp: dict[str, FileVersion | None] = {}
    for item in owner.checkpoints[: owner.checkpoints.index(cp) + 1]:
        if owner.applied.get(item.id, True):
            for change in item.changes:
                at_cp[change.path] = change.after
    out = []
    for item in later:
        if item.bracket:
            changes = []
            for change in item.changes:
                if change.path in at_cp:
                    start = at_cp[change.path]
                    if same_version(start, change.after):
                        continue
                    change = change.model_copy(update={"before": start})
                changes.append(change)
            item = item.model_copy(update={"changes": changes})
        out.append(item)
    return out


def _set_aside(plan: Plan, out_of_reach: dict[str, tuple[str | None, str]]) -> None:
    """Skip the paths out of reach, unless the symlink in their way is itself removed by the
    plan (it comes first: plans are in path order), so a folder replaced by a symlink comes
    back in one step."""
    if not out_of_reach:
        return
    removed = {p.path for p in plan.paths if p.writes and p.result is None}
    for i, planned in enumerate(plan.paths):
        link, reason = out_of_reach.get(planned.path, (None, None))
        if reason is not None and (link is None or link not in removed):
            plan.paths[i] = PathPlan(planned.path, None, None, skipped=reason)


def _outcome(path: str, ours: Version | None, result: Version | None, merged: bool) -> FileOutcome:
    old = ours.content if ours else None
    new = result.content if result else None
    additions, deletions = line_stats(old, new)
    action: Literal["delete", "create", "write"] = "delete" if result is None else ("create" if ours is None else "write")
    return FileOutcome(path=path, action=action, additions=additions, deletions=deletions, merged=merged)

def _open_turn_notices(kind: str, states: list[FoldedEntry], ended: bool) -> list[str]:
    """What an operation did (or, not carried out, would do) to open turns: it ends them first,
    so a turn's changes on disk are recorded as the turn's and the operation's are not."""
    if ended:
        return [
            f"turn #{s.begun.number} was still open; {kind} ended it first (what changed on disk during it is recorded as its changes)"
            for s in states
        ]
    return [f"turn #{s.begun.number} is open; carrying out this {kind} ends it first" for s in states]

def _verdict(plan: Plan) -> Verdict:
    if not plan.skipped and not any(not c.reason.startswith("forced:") for c in plan.conflicts):
        return "safe"
    return "partial" if plan.writes else "broken"


def _notes_tail(target: FoldedEntry) -> str:
    """Says that the target has notes (what its recording left out, content not stored), so an
    answer is never a plain SAFE over a turn that did not record everything."""
    notes = {n for cp in target.checkpoints for n in cp.notices}
    if not notes:
        return ""
    return f"; #{target.begun.number} has {len(notes)} note(s) on what it did not record or store (takeback show {target.begun.number})"


def _tail(plan: Plan) -> str:
    bits = []
    if plan.skipped:
        bits.append(f"{len(plan.skipped)} skipped")
    markers = [c for c in plan.conflicts if c.markers_written]
    forced = [c for c in plan.conflicts if c.reason.startswith("forced:")]
    other = [c for c in plan.conflicts if not c.markers_written and not c.reason.startswith("forced:")]
    if markers:
        bits.append(f"conflict markers written in {len(markers)}")
    if forced:
        bits.append(f"{len(forced)} forced over later edits")
    if other:
        bits.append(f"{len(other)} left in conflict")
    return f" ({', '.join(bits)})" if bits else ""

def _command(kind: str, number: int, checkpoint_target: str | None, done: bool) -> str:
    """The command that runs this operation (again): once it was carried out in part, the one
    that takes back what it left (an undo of #4 left files in conflict: 'takeback revert 4')."""
    if kind == "restore":
        return f"takeback restore {checkpoint_target}"
    if kind == "revert" or done:
        return f"takeback revert {number}"
    return f"takeback {kind}"

def _force_option(command: str) -> str:
    return f"'{command} --on-conflict force' puts back the starting content over your later edits (undoable)"

def _advise(plan: Plan, command: str, done: bool = False) -> None:
    """Give each conflict the ways out that work for it (``command`` runs the operation again)."""
    if done:
        leave = "it is left as it is"
    elif plan.writes:
        leave = f"leave it as it is ('{command} --on-conflict skip' changes only the clean files)"
    else:
        leave = "leave it as it is"
    for conflict in plan.conflicts:
        if conflict.markers_written:
            conflict.advice = "resolve the conflict markers (<<<<<<< … >>>>>>>) in it by hand"
        elif conflict.reason.startswith("forced:"):
            conflict.advice = ""
        elif conflict.markers_possible:
            conflict.advice = f"'{command} --on-conflict markers' writes conflict markers into it; " + _force_option(command)
        else:
            why = "it is binary" if conflict.binary else "only a text file both sides edited can take them"
            conflict.advice = f"conflict markers cannot be written into it ({why}); {_force_option(command)}, or {leave}"

def _conflict_advice(command: str, plan: Plan) -> str:
    """The next action when nothing was written: only the ways out that can work."""
    clean = len(plan.writes)
    if not plan.conflicts:
        return "nothing can be done automatically; the skipped files list why"
    options = []
    if clean:
        options.append(f"'{command} --on-conflict skip' changes only the {clean} clean file(s)")
    markable = [c.path for c in plan.conflicts if c.markers_possible]
    if markable:
        where = "" if len(markable) == len(plan.conflicts) else f" into {', '.join(markable)} (the others cannot take markers)"
        options.append(f"'{command} --on-conflict markers' writes conflict markers{where} to resolve by hand")
    options.append(_force_option(command))
    return "nothing was written; choose: " + "; ".join(options)

def _next_action(kind: str, entry: Entry, plan: Plan, command: str) -> str:
    left = [c.path for c in plan.conflicts if not c.markers_written and not c.reason.startswith("forced:")]
    still = f"{', '.join(left)} left in conflict: {_force_option(command)}; " if left else ""
    if plan.blocked:
        still += f"{', '.join(plan.blocked)} skipped: once what stands in the way is fixed, '{command}' takes them back too; "
    markers = [c.path for c in plan.conflicts if c.markers_written]
    if markers:
        return f"{still}resolve the conflict markers in {', '.join(markers)}; 'takeback revert {entry.number}' takes this back"
    if kind == "undo":
        return f"{still}'takeback redo' brings turn #{entry.target_number} back"
    if kind == "redo":
        return f"{still}'takeback undo' takes it away again"
    return f"{still}'takeback revert {entry.number}' takes this {kind} back"

def _only_paths(steps: dict[str, list[PathChange]], wanted: set[str], number: int) -> dict[str, list[PathChange]]:
    """The steps for ``wanted`` paths, with the other side of any rename among them."""
    keep = {p for p in wanted if p in steps}
    if not keep:
        raise NotFound(f"turn #{number} did not change {', '.join(sorted(wanted))}")
    for path, changes in steps.items():
        for change in changes:
            if change.renamed_from and (path in keep or change.renamed_from in keep):
                keep.update({path, change.renamed_from} & set(steps))
    return {p: s for p, s in steps.items() if p in keep}

def _operation_label(kind: str, target: FoldedEntry, timeline: Timeline) -> str:
    """'undo turn #4: add login', 'redo turn #4: add login' (for a redo of that undo) …"""
    subject = target
    if kind == "redo" and target.operation is not None and target.operation.target in timeline.entries:
        subject = timeline.entries[target.operation.target]
    what = "turn" if subject.begun.kind == "turn" else subject.begun.kind
    text = f"{kind} {what} #{subject.begun.number}"
    if subject.begun.kind == "turn" and subject.begun.label:
        text += f": {subject.begun.label}"
    return text
