"""Undo, redo, revert and restore: planning them against the timeline and carrying them out.

``Operations`` is the part of ``Engine`` that takes recorded changes back. Each operation
picks the changes to take back (a turn's, an operation's, everything after a checkpoint),
plans every path as a chain of three-way merges (``planning.Planner``), answers a dry run or a
conflict without writing, and otherwise hands documents open in an editor to it (with the
store's lock let go: ``handoff.py``), writes the other files under the journal, reads them
back (another program's write in between: put back, ``ChangedMeanwhile``) and adds the
operation's own entry to its transaction, so it too can be undone; the open turns it ends and
the operation are one log commit. The words of its answer come from ``core/wording.py``.
"""


from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypedDict, Unpack

from ..core import wording
from ..core.clock import new_id as _new_id
from ..core.clock import now as _now
from ..core.hunks import HunkAt
from ..core.merge import Version
from ..core.models import (
    CheckpointRecorded,
    Entry,
    GitMove,
    LostFile,
    NextStep,
    OnConflict,
    OperationDone,
    OperationResult,
    PathChange,
    Record,
    Verdict,
    check_on_conflict,
)
from ..core.planning import (
    Plan,
    Planner,
    WithBlobs,
    from_checkpoint,
    outcome,
    set_aside,
    with_renames,
)
from ..core.textdiff import is_binary, unified_diff
from ..core.timeline import FoldedEntry, Timeline, git_moved, lost_of, outside_of, relevant_steps, resolve_step
from ..errors import (
    ChangedMeanwhile,
    NothingToDo,
    StateError,
    StoreError,
    TakebackError,
)
from ..workspace.files import Workspace
from ..workspace.journal import JournalFile, wording_of
from . import brackets, narrow, remote
from .handoff import EditorApply, ask_editor, put_back_bits, set_exec_bits
from .narrow import Scope
from .parts import EngineParts
from .transaction import Transaction

log = logging.getLogger("takeback.engine")

def _in_log_anyway(tx: Transaction) -> bool:
    """Whether the log's ref moved though publishing failed (the disk refused to flush the
    ref once written): the operation then stands, and is not rolled back."""
    try:
        return tx.history.store.head() != tx.history.head
    except (TakebackError, OSError):
        return False  # cannot tell: roll back (recovery decides from the log if that fails)


class EditorIo(TypedDict, total=False):
    """How an operation reaches documents open in an editor (the language server gives both):
    their content now, by path (``overlay``: planned from, instead of the disk), and what applies
    the new content to them (``editor``)."""

    overlay: dict[str, Version | None]
    editor: EditorApply | None


class Targets(NamedTuple):
    """What ``undo`` and ``redo`` would act on now (``Operations.targets``)."""

    undo: Entry | None
    redo: Entry | None
    settled: bool = True
    """False while a whole-disk turn is open: its changes on disk decide, so the answer can
    change before the timeline's version does."""


class Operations(EngineParts):
    """Undo, redo, revert and restore (mixed into ``Engine``, whose state they use)."""

    def undo(self, dry_run: bool = False, on_conflict: OnConflict = "abort", **io: Unpack[EditorIo]) -> OperationResult:
        """Revert the last applied agent turn, whichever session's (a turn still open is
        ended first, so its bracket's changes are recorded and it is the one undone)."""
        check_on_conflict(on_conflict)
        with self.transaction():
            return self._revert_entry("undo", self._undo_target(), dry_run, on_conflict, **io)

    def redo(self, dry_run: bool = False, on_conflict: OnConflict = "abort", **io: Unpack[EditorIo]) -> OperationResult:
        """Re-apply what the last undo, revert or restore took away."""
        check_on_conflict(on_conflict)
        with self.transaction():
            return self._revert_entry("redo", self.timeline.redo_target(), dry_run, on_conflict, **io)

    def targets(self, files: bool = True) -> Targets:
        """What ``undo`` and ``redo`` would act on now (None: nothing): the very functions they
        act on, so ``status``, code actions, the editor's panel and the MCP server name exactly
        what a click or a command then takes back. Adapters ask this, never re-implement it.
        ``files=False``: the entries as headers (``Timeline.header``), no file list read."""
        with self.transaction():
            found: list[Entry | None] = []
            for rule in (self._undo_target, self.timeline.redo_target):
                try:
                    found.append((self.timeline.view if files else self.timeline.header)(rule()))
                except NothingToDo:
                    found.append(None)
            # An open whole-disk turn's changes so far are read from the disk: the answer can
            # change with no record published (an adapter that caches it by timeline version must not).
            on_disk = any(not self._session_turn(s) for s in self.timeline.open_turns())
            return Targets(found[0], found[1], settled=not on_disk)

    def take_back(self, entry_id: str) -> wording.TakeBack:
        """What takes operation ``entry_id`` back now (``wording.take_back``, from undo's and redo's own rules)."""
        with self.transaction():
            undo, redo = (functools.partial(_entry_of, rule) for rule in (self._undo_target, self.timeline.redo_target))
            return wording.take_back(self.timeline.state(entry_id), self.timeline, undo, redo)

    def _undo_target(self) -> FoldedEntry:
        """The entry ``undo`` takes back: ``Timeline.undo_target``, with an open turn planned as
        ending it now would record it (what its bracket saw change on disk so far)."""
        return self.timeline.undo_target(self._with_pending_bracket)

    @remote.teammates_too  # ``REMOTE/WHO#N``: a teammate's turn, taken back in your files (``engine/remote.py``)
    def revert(
        self,
        turn: str,
        dry_run: bool = False,
        on_conflict: OnConflict = "abort",
        paths: Iterable[str] | None = None,
        pathspec: Iterable[str] | None = None,
        hunk: HunkAt | tuple[str, int] | None = None,
        **io: Unpack[EditorIo],
    ) -> OperationResult:
        """Take back one entry's changes, or one step's (``turn`` is ``N.k``), keeping
        everything done after it.

        With ``paths`` (workspace-relative paths) or ``pathspec`` (patterns, ``paths.matching``),
        only the changes to those paths (and their rename partners) are taken back; with
        ``hunk`` (a path and a line of it now, or of the change's result: ``HunkAt.of``), only
        the hunk of the file's change that covers that line (``core/hunks.py``). The entry's own state stays as it is for those; a step
        taken back makes its turn ``partial``. Each is its own timeline entry.
        """
        check_on_conflict(on_conflict)
        with self.transaction():
            found = resolve_step(self.timeline, turn)
            target, step = found if found is not None else (self.timeline.resolve(turn), None)
            if step is None and target.begun.kind == "mark" and not any(cp.changes for cp in target.checkpoints):
                raise NothingToDo(f"mark #{target.begun.number} holds no file change, so there is nothing to take back: "
                                  f"'takeback restore {target.begun.number}' goes back to it")
            if target.state == "open":
                target = self._with_pending_bracket(target)
            scope = Scope(step, None if paths is None else list(paths), None if pathspec is None else list(pathspec), hunk)
            return self._revert_entry("revert", target, dry_run, on_conflict, scope=scope, **io)

    def restore(self, checkpoint: str, dry_run: bool = False, on_conflict: OnConflict = "abort", **io: Unpack[EditorIo]) -> OperationResult:
        """Bring every file touched since ``checkpoint`` (or ``last-green``) back to its state then."""
        check_on_conflict(on_conflict)
        with self.transaction():
            if checkpoint == "last-green":
                green = self.timeline.last_green()
                cp = green.checkpoints[-1]
            else:
                cp = self.timeline.resolve_checkpoint(checkpoint)
            owner = self.timeline.state(cp.entry)
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
                raise NothingToDo(f"nothing to restore: no change was recorded after checkpoint {self.timeline.checkpoint_spec(cp.id)}")
            steps: dict[str, list[PathChange]] = {}
            by_entry: dict[str, list[CheckpointRecorded]] = {}
            for item in later:
                by_entry.setdefault(item.entry, []).append(item)
            for entry_id, cps in by_entry.items():
                if entry_id == owner.begun.entry:
                    cps = from_checkpoint(owner, cp, cps)
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
            label = (f"restore to checkpoint {self.timeline.checkpoint_spec(cp.id)} of "
                     f"{'mark' if owner.begun.kind == 'mark' else 'turn'} #{owner.begun.number}")
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
            state, checkpoints=[*state.checkpoints, cp], applied={**state.applied, cp.id: True}, summary=None
        )

    def _revert_entry(
        self, kind: str, target: FoldedEntry, dry_run: bool, on_conflict: OnConflict,
        scope: Scope | None = None, **io: Unpack[EditorIo]
    ) -> OperationResult:
        number = target.begun.number
        if target.state in ("reverted",):
            raise NothingToDo(wording.already_reverted(target, self.timeline.find(target.reverted_by or "")))
        if target.state == "not-applied":
            raise NothingToDo(f"turn #{number} was never applied to the workspace")
        checkpoints = [cp for cp in target.checkpoints if target.applied.get(cp.id, True)]
        steps = relevant_steps(checkpoints)
        previous = {target.begun.entry: target.state if target.state != "open" else "applied"}
        effects = {target.begun.entry: "reverted"}
        if target.operation is not None:
            for entry_id, old in target.operation.previous.items():  # (``find``: no page read for a turn in memory)
                if (state := self.timeline.find(entry_id) if entry_id != target.begun.entry else None) is not None:
                    previous[entry_id] = state.state
                    effects[entry_id] = old
        label = wording.operation_label(kind, target, self.timeline)
        narrowed = narrow.Narrowed(steps, effects, previous, label)
        if scope is not None:
            narrowed = narrow.narrowed(self.timeline, self.workspace, self.capture, kind, target, scope, narrowed,
                                       io.get("overlay"))
        return self._operate(kind, target, narrowed.steps, narrowed.effects, narrowed.previous, dry_run, on_conflict,
                             narrowed.label, narrowed=narrowed, **io)

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
        narrowed: narrow.Narrowed | None = None,
    ) -> OperationResult:
        """``ending``: the open turns it ends before it writes (default: ``_turns_ending``; a
        preview, or an operation that stops, ends none); ``ended``: the caller already ended
        them; ``narrowed``: a revert of less than an entry (``narrow.py``)."""
        buffers_known = overlay is not None  # an editor asks (the CLI does not know what buffers hold)
        overlay = {self.workspace.rel(p): v for p, v in (overlay or {}).items()}
        extra = narrowed or narrow.Narrowed(steps, effects, previous, label)
        plan = self._plan(target, steps, on_conflict, overlay, extra.blobs)
        number = target.begun.number
        counted = [outcome(p.path, p.ours, p.result, p.merged, p.counted) for p in plan.writes]
        plan.stats = {o.path: (o.additions, o.deletions) for o in counted}  # counted once: the change records them too
        outcomes = with_renames(plan, counted)  # (as answered: a rename's two sides read as one)
        if ending is None:
            ending = self._turns_ending(target)
        lacking = wording.unsaved_notices(self.unsaved(overlay if buffers_known else None))  # an editor's earlier change the disk lacks
        base: dict[str, Any] = dict(
            operation=kind, dry_run=dry_run, on_conflict=on_conflict, target=target.begun.entry,
            target_number=number, restored=outcomes, skipped=plan.skipped, conflicts=plan.conflicts,
            notices=_notices(self.timeline, kind, lacking, ending, ended, target, effects, checkpoint_target),
        )
        spec = None if checkpoint_target is None else self.timeline.checkpoint_spec(checkpoint_target)  # as a person types it
        again = wording.step(kind, number, spec, done=False).model_copy(update=extra.again)
        wording.advise(plan, wording.cli(again))
        verdict = wording.verdict(plan)
        stopped = self._not_carried_out(kind, target, plan, {**base, "notices": base["notices"] + extra.later}, again,
                                        on_conflict, dry_run, verdict)
        if stopped is not None:
            return stopped
        if not plan.complete and target.begun.entry in effects and effects[target.begun.entry] == "reverted":
            effects[target.begun.entry] = "partial"
        for state in ending:
            if state.state == "open":
                self._end(state, [], [])  # its bracket's changes are the agent's; the operation's writes are not
        base["notices"] = _notices(self.timeline, kind, lacking, ending, True, target, effects, checkpoint_target)
        entry = self._execute(kind, plan, effects, previous, verdict, on_conflict, label, target, checkpoint_target, overlay, editor)
        rest = wording.step(kind, number, spec, done=True).model_copy(update=extra.again)
        wording.advise(plan, wording.cli(rest), done=True)
        advice = wording.next_action(entry, plan, rest, self.take_back(entry.id))
        return OperationResult(
            **base, verdict=verdict, applied=True, entry=entry,
            message=f"{kind} of #{number} done as #{entry.number}: {wording.files(len(outcomes))} changed" + wording.tail(plan)
            + wording.notes_tail(target),
            next_action=advice.text, next=advice.steps,
        )

    def _plan(
        self, target: FoldedEntry, steps: dict[str, list[PathChange]], on_conflict: OnConflict,
        overlay: dict[str, Version | None], blobs: dict[str, bytes],
    ) -> Plan:
        """What taking ``steps`` back would write, from the files now (``overlay``: open
        documents, which the editor writes). Each folder on the way is looked at once
        (``FolderLook.steady``); the writes look again."""
        with self.workspace.folders.steady():
            out_of_reach = _out_of_reach(self.workspace, steps)

            def read(rel: str) -> Version | None:
                if rel in out_of_reach:
                    return None  # nothing is read through such a symlink
                return overlay[rel] if rel in overlay else self.workspace.read(rel)

            def unwritable(rel: str) -> str | None:
                return None if rel in overlay else self.workspace.unwritable(rel)  # the editor writes open documents

            planner = Planner(
                WithBlobs(self.capture, blobs) if blobs else self.capture, read, on_conflict,
                label_theirs=f"before #{target.begun.number}", layout=self.workspace,
                unwritable=unwritable,
            )
            plan = planner.plan(steps)
            set_aside(plan, out_of_reach)
        return plan

    def _not_carried_out(
        self, kind: str, target: FoldedEntry, plan: Plan, base: dict[str, Any], again: NextStep, on_conflict: OnConflict,
        dry_run: bool, verdict: Verdict,
    ) -> OperationResult | None:
        """The answer of an operation that writes nothing: stopped by overlapping edits, a dry
        run, or nothing left to change. None: it goes ahead."""
        number = target.begun.number
        blocking = plan.blocking_conflicts
        would = "would be refused" if dry_run else "refused"
        if blocking and on_conflict == "abort":
            return OperationResult(
                **{**base, "restored": []}, verdict="refused", applied=False,
                message=f"{kind} of #{number} {would}: {wording.files(len(blocking))} changed since in ways that overlap; "
                        "nothing was written",
                **_next(wording.conflict_advice(again, plan)),
            )
        if plan.blocked and on_conflict == "abort":  # a file it cannot change: nothing, unless told to skip it
            return OperationResult(
                **{**base, "restored": []}, verdict="refused", applied=False,
                message=f"{kind} of #{number} {would}: {wording.blocked(plan)}; nothing was written",
                **_next(wording.blocked_advice(again, plan)),
            )
        if dry_run:
            return OperationResult(
                **base, verdict=verdict, applied=False,
                message=f"dry run: {kind} of #{number} would change {wording.files(len(base['restored']))}" + wording.tail(plan)
                + wording.notes_tail(target),
                **_next(wording.dry_run_advice(again, on_conflict)),
                patch=_patch(plan),
            )
        if verdict == "refused":
            return OperationResult(
                **base, verdict="refused", applied=False,
                message=f"{kind} of #{number} refused: every file was skipped or in conflict; nothing was written",
                **_next(wording.conflict_advice(again, plan)),
            )
        return None

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
        with self.transaction() as tx:  # its publish is flushed (transaction.py), its files by the journal
            editor_writes = _editor_first(tx, self.workspace, editor, plan, overlay)
            entry_id = _new_id()
            changes, journal_files, backups = self._changes_and_journal(plan, overlay)
            self.journal.start(entry_id, kind, journal_files, backups, plan.folders)
            written: list[JournalFile] = []
            bits: dict[str, int] = {}
            try:
                content = functools.partial(_content_after, plan=plan)
                self.journal.forward(journal_files, plan.folders, written, content)
                bits = set_exec_bits(self.workspace, editor_writes)
                changed = self.journal.verify(journal_files, content)  # SAFE means the disk holds what was planned
                if changed:
                    raise ChangedMeanwhile(wording.changed_meanwhile(kind, changed))
                tx.add(*self._operation_records(entry_id, kind, label, target, checkpoint_target, on_conflict, verdict,
                                                effects, previous, plan, changes, set(overlay)))
                entry = self.timeline.view(self.timeline.state(entry_id))  # before the publish: a cache it writes reads its summary
                tx.publish()  # the turns it ended and the operation: one log commit, before the journal goes
            except BaseException as exc:
                if _in_log_anyway(tx):
                    self.journal.finish()
                    raise StoreError(
                        f"{kind} carried out and recorded, but the store could not flush it to disk "
                        f"({wording_of(exc)}): it may not survive a power cut"
                    ) from exc
                put_back_bits(self.workspace, bits)
                failure = self.journal.roll_back(written, exc)  # the journal stays if a path could not be put back
                if failure is exc:
                    raise
                raise failure from exc
            self.journal.finish()
            return entry

    def _operation_records(
        self, entry_id: str, kind: str, label: str, target: FoldedEntry, checkpoint_target: str | None,
        on_conflict: OnConflict, verdict: str, effects: dict[str, str], previous: dict[str, str], plan: Plan,
        changes: list[PathChange], editor_paths: set[str],
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
                markers=[c.path for c in plan.conflicts if c.markers_written], forced=plan.forced,
                editor=[item.path for item in plan.writes if item.path in editor_paths], remote=target.remote,
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
            result = item.result
            before = None if ours is None else self.capture.recorded(item.path, ours.content, ours.mode, item.ours_recorded)
            after = None if result is None else self.capture.recorded(item.path, result.content, result.mode, item.result_recorded)
            changes.append(
                self._path_change(
                    item.path, before, after, None,
                    ours.content if ours else None, item.result.content if item.result else None,
                    new_folders=item.new_folders, stats=plan.stats.get(item.path),
                )
            )
            if item.path in overlay:
                continue
            backup = None
            if before is not None and before.withheld and ours is not None:
                backup = f"{i}.bin"
                backups[backup] = ours.content
            journal_files.append(JournalFile(path=item.path, before=before, after=after, backup=backup,
                                             new_folders=item.new_folders))
        return changes, journal_files, backups


def _out_of_reach(workspace: Workspace, steps: dict[str, list[PathChange]]) -> dict[str, tuple[str | None, str]]:
    """Recorded paths that lie behind a symlink now (a folder swapped for one since they were
    recorded), which nothing may read or write through: the link leads outside the
    workspace, or the operation itself puts the link's path back. path -> (that symlink,
    why it is skipped unless the operation removes the link first)."""
    refused: dict[str, tuple[str | None, str]] = {}
    for path in steps:
        link, outside = workspace.reach(path)
        if outside is not None and link is None:
            refused[path] = (None, str(outside))
            continue
        if outside is None and (link is None or link not in steps):
            continue  # inside; a symlinked folder inside the workspace the operation leaves alone
        where = "now" if outside is None else "that leads outside the workspace"
        refused[path] = (link, f"{link} is a symlink {where}, and Takeback never writes through it; "
                               "remove the link and run this again")
    return refused


def _next(advice: wording.Advice) -> dict[str, Any]:
    """An answer's next safe action: its sentence and its steps (one ``Advice``)."""
    return {"next_action": advice.text, "next": advice.steps}


def _entry_of(rule: Callable[[], FoldedEntry]) -> str | None:
    """The entry ``rule`` (what undo or redo would act on) names, or None: nothing."""
    try:
        return rule().begun.entry
    except NothingToDo:
        return None


def _content_after(item: JournalFile, plan: Plan) -> bytes:
    """The bytes the operation writes at ``item``'s path: the planned result itself (read
    once, when planning; the store is not read again)."""
    result = plan.result_of(item.path)
    assert result is not None
    return result.content


def _patch(plan: Plan) -> str:
    """The unified diff a dry run shows: what carrying ``plan`` out would write."""
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


def _editor_first(
    tx: Transaction, workspace: Workspace, editor: EditorApply | None, plan: Plan, overlay: dict[str, Version | None],
) -> list[tuple[str, Version | None]]:
    """The writes to documents open in the editor, which it is asked to apply first, with the
    store's lock let go; the disk is written only once it applied them."""
    editor_writes = [(item.path, item.result) for item in plan.writes if item.path in overlay]
    if editor_writes:
        on_disk = {item.path: item.ours for item in plan.writes if item.path not in overlay}
        if editor is None or not ask_editor(tx, workspace, editor, editor_writes, on_disk):
            raise StateError("the editor did not apply the changes to its open documents; nothing was written")
    return editor_writes


def _notices(
    timeline: Timeline, kind: str, lacking: list[str], ending: list[FoldedEntry], ended: bool, target: FoldedEntry,
    effects: dict[str, str], checkpoint_target: str | None,
) -> list[str]:
    """An operation's notices: an editor's earlier change the disk lacks, the open turns it
    ends, and what the entries it takes back did that it cannot take back: the person's git
    state they moved, files their tools wrote outside the workspace."""
    held_not = _not_held_by(timeline, target, effects, checkpoint_target)
    return lacking + wording.open_turn_notices(kind, ending, ended) + wording.cannot_take_back_notices(kind, held_not)


def _not_held_by(
    timeline: Timeline, target: FoldedEntry, effects: dict[str, str], checkpoint_target: str | None,
) -> list[tuple[int, list[GitMove], list[str], list[LostFile]]]:
    """What an operation takes back holds that Takeback cannot take back, by entry number: its
    git moves (``Entry.git_moved``), the files written outside the workspace
    (``Entry.outside``) and the ignored files its guarded calls destroyed (``Entry.lost``).
    The entries it reverts (all of ``target`` when it takes back some of its files only); of a
    turn a restore goes back into, the steps after the checkpoint."""
    found = []
    taken = [e for e, state in effects.items() if state in ("reverted", "partial")] or [target.begun.entry]
    for entry_id in taken:
        state = timeline.find(entry_id)
        if state is None:
            continue
        if entry_id == target.begun.entry and checkpoint_target is not None:
            ids = [cp.id for cp in state.checkpoints]
            later = state.checkpoints[ids.index(checkpoint_target) + 1:] if checkpoint_target in ids else []
            moves = [m for cp in later for m in cp.git_moved]
        else:
            later, moves = state.checkpoints, git_moved(state)
        outside, lost = outside_of(later), lost_of(later)
        if moves or outside or lost:
            found.append((state.begun.number, moves, outside, lost))
    return found
