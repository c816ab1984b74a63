"""The words of an operation's answer: its verdict, the one-line tail of its message, the
command that runs it again, the advice each conflict gets and the next safe action.

Pure: a plan (``planning.Plan``) and the timeline's entries in, text out. The engine's
operations (``engine/operations.py``) build their ``OperationResult`` with these; the CLI and the
editors show that result as it comes. The next safe action is built once, as ``Advice``: the
sentence in the CLI's words and the commands it names (``NextStep``), from the same values, so a
client that names commands its own way (Neovim's ``:TakebackRedo``) says the same thing.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import NamedTuple

from .models import Entry, GitMove, LostFile, NextStep, OnConflict, UnsavedFile, Verdict
from .planning import Plan
from .timeline import FoldedEntry, Timeline


def later_change(name: str, paths: list[str], hunk: bool, on_lines: bool) -> str:
    """A plan's notice of a later change to what it takes back: ``turn #14 also changed
    src/app.py after it`` (for a hunk, whether it changed the hunk's own lines)."""
    if not hunk:
        return f"{name} also changed {listed(paths)} after it"
    where = "the lines of this hunk in" if on_lines else "other lines of"
    return f"{name} also changed {where} {listed(paths)} after it"


def size(n: float) -> str:
    """A number of bytes as people read it: 545 B, 4.0 KiB, 512.0 MiB, 1.2 GiB."""
    if n < 1024:
        return f"{n:.0f} B"
    for unit in ("KiB", "MiB"):
        n /= 1024
        if n < 1024:
            return f"{n:.1f} {unit}"
    return f"{n / 1024:.1f} GiB"


def counted(count: int, noun: str) -> str:
    """``1 file``, ``3 files``, ``1 clean file``: a count with its noun, plural when it is not one."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def files(count: int, kind: str = "") -> str:
    """``1 file``, ``3 files``, ``1 clean file`` (``kind``: a word before the noun)."""
    return counted(count, f"{kind} file" if kind else "file")


def listed(names: list[str], shown: int = 3, sep: str = ", ") -> str:
    """``a, b, c and 2 more``: the first ``shown`` of ``names``, then how many are left out."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return sep.join(names[:shown]) + more


def changed_meanwhile(kind: str, paths: list[str]) -> str:
    """Why an operation stopped after its writes: reading them back found other bytes in
    ``paths`` (another program wrote to them meanwhile). Its files are then put back."""
    return (f"{kind} stopped: another program wrote to {listed(paths)} while the {kind} was writing "
            f"(the disk did not hold what it wrote); the files it wrote were put back and nothing was recorded; "
            f"run it again once the other program is done")


def open_turn_notices(kind: str, states: list[FoldedEntry], ended: bool) -> list[str]:
    """What an operation did (or, not carried out, would do) to open turns: it ends them first,
    so a turn's changes on disk are recorded as the turn's and the operation's are not."""
    if ended:
        return [
            f"turn #{s.begun.number} was still open; {kind} ended it first (what changed on disk during it is recorded as its changes)"
            for s in states
        ]
    return [f"turn #{s.begun.number} is open; carrying out this {kind} ends it first" for s in states]


def verdict(plan: Plan) -> Verdict:
    """What the workspace is after carrying ``plan`` out: ``refused``, nothing is written (a
    conflict, a file in the way: it is as it was); ``partial``, some paths are not taken back
    (skipped, left in conflict, conflict markers to resolve) or later edits were written over
    (``force``: the answer says which, and taking the operation back restores them); ``safe``,
    every path taken back and nothing of anyone's later work overwritten."""
    if not plan.complete and not plan.writes:
        return "refused"
    return "safe" if plan.complete and not plan.forced else "partial"


def notes_tail(target: FoldedEntry) -> str:
    """Says that the target has notes (what its recording left out, content not stored), so an
    answer is never a plain SAFE over a turn that did not record everything."""
    notes = {n for cp in target.checkpoints for n in cp.notices}
    if not notes:
        return ""
    return f"; #{target.begun.number} has {len(notes)} note(s) on what it did not record or store (takeback show {target.begun.number})"


def git_move(move: GitMove) -> str:
    """A git move as ``show`` lists it under "cannot take back": the fact, and the command that
    would put it back where there is one (an index has none: git keeps no earlier one)."""
    if move.command:
        return f"{move.fact}; to put it back: {move.command}"
    return f"{move.fact}; it cannot be put back" if move.what == "index" else move.fact


def lost_file(lost: LostFile) -> str:
    """An ignored file a guarded call destroyed, as ``show`` lists it: kept, with the command
    that writes it back (run in the workspace's folder), or lost, and why."""
    if lost.kept is not None and lost.command:
        return f"{lost.how} {lost.path}: kept by Takeback; to write it back: {lost.command}"
    return f"{lost.how} {lost.path}: lost (not kept: {lost.why or 'unknown'})"


def cannot_take_back_notices(
    kind: str, taken_back: list[tuple[int, list[GitMove], list[str], list[LostFile]]],
) -> list[str]:
    """What the entries an operation takes back (``taken_back``: each one's number, git moves,
    files written outside the workspace and ignored files its guarded calls destroyed) did that
    the operation does not take back: one notice a git move, one for the files outside, one for
    the ignored files lost, so nobody believes a turn fully undone when its commit, its stash
    drop, its write to ``~/.bashrc`` or its ``rm -rf`` of a database stays."""
    if kind == "redo":
        return []  # a redo brings entries back; it takes nothing back
    out: list[str] = []
    for number, moves, outside, lost in taken_back:
        if lost:
            kept = sum(1 for item in lost if item.kept is not None)
            shown = ", ".join(item.path for item in lost[:5]) + (f" and {len(lost) - 5} more" if len(lost) > 5 else "")
            out.append(f"turn #{number} also deleted or overwrote ignored files ({shown}): this does not put them back"
                       + (f"; {kept} of them kept by Takeback: 'takeback show {number}' gives the commands that do"
                          if kept else "; Takeback kept none of them"))
        out.extend(f"turn #{number} also: {move.fact}: Takeback does not take that back"
                   + (f"; to put it back: {move.command}" if move.command else "") for move in moves)
        if outside:
            shown = ", ".join(outside[:5]) + (f" and {len(outside) - 5} more" if len(outside) > 5 else "")
            out.append(f"turn #{number} also wrote outside the workspace ({shown}): Takeback does not hold "
                       + ("that file, so it stays as it is" if len(outside) == 1 else "those files, so they stay as they are"))
    return out


def tail(plan: Plan) -> str:
    bits = []
    if plan.skipped:
        bits.append(f"{len(plan.skipped)} skipped")
    markers = [c for c in plan.conflicts if c.markers_written]
    other = plan.blocking_conflicts
    if markers:
        bits.append(f"conflict markers written in {len(markers)}")
    if plan.forced:
        bits.append(f"written over later edits in {listed(plan.forced)}")
    if other:
        bits.append(f"{len(other)} left in conflict")
    return f" ({', '.join(bits)})" if bits else ""


def cli(step: NextStep) -> str:
    """A step as the CLI spells it: ``takeback revert 4 --on-conflict skip``."""
    text = f"takeback {step.command}"
    if step.command == "restore":
        text += f" {step.checkpoint}"
    elif step.step is not None:
        text += f" {step.step}"
    elif step.number is not None:
        text += f" {step.number}"
    if step.hunk is not None:
        text += f" --hunk {shlex.quote(step.hunk)}"
    text += f" --on-conflict {step.on_conflict}" if step.on_conflict else ""
    return text + (" -- " + " ".join(shlex.quote(p) for p in step.paths) if step.paths else "")


def said(step: NextStep) -> str:
    """``'takeback redo' brings turn #4 back``: a step quoted, then what it does."""
    return f"'{cli(step)}' {step.does}"


class Advice(NamedTuple):
    """The next safe action: ``text`` (the CLI's words, ``OperationResult.next_action``) and
    ``steps``, the commands it quotes, in the order it quotes them (``OperationResult.next``)."""

    text: str
    steps: list[NextStep]


def step(kind: str, number: int, checkpoint_target: str | None, done: bool) -> NextStep:
    """The command that runs this operation (again): once it was carried out in part, the one
    that takes back what it left (an undo of #4 left files in conflict: revert 4). No ``does``:
    the callers say what it does there."""
    if kind == "restore":
        return NextStep(command="restore", checkpoint=checkpoint_target, does="")
    if kind == "revert" or done:
        return NextStep(command="revert", number=number, does="")
    return NextStep(command=kind, does="")  # type: ignore[arg-type]  # undo or redo


def command(kind: str, number: int, checkpoint_target: str | None, done: bool) -> str:
    """``step`` as the CLI spells it ('takeback revert 4')."""
    return cli(step(kind, number, checkpoint_target, done))


def _with(again: NextStep, does: str, on_conflict: OnConflict | None = None) -> NextStep:
    return again.model_copy(update={"does": does, "on_conflict": on_conflict})


def _force(again: NextStep) -> NextStep:
    return _with(again, "puts back the starting content where it overlaps your later edits (undoable)", "force")


def _force_option(command: str) -> str:
    return f"'{command} --on-conflict force' puts back the starting content where it overlaps your later edits (undoable)"


def advise(plan: Plan, command: str, done: bool = False) -> None:
    """Give each conflict the ways out that work for it (``command`` runs the operation again)."""
    if done:
        leave = "it is left as it is"
    elif plan.writes:
        leave = f"leave it as it is ('{command} --on-conflict skip' changes only the clean files)"
    else:
        leave = "leave it as it is"
    forced = set(plan.forced)
    for conflict in plan.conflicts:
        if conflict.markers_written:
            conflict.advice = "resolve the conflict markers (<<<<<<< … >>>>>>>) in it by hand"
        elif conflict.path in forced:
            conflict.advice = ""
        elif conflict.markers_possible:
            conflict.advice = f"'{command} --on-conflict markers' writes conflict markers into it; " + _force_option(command)
        else:
            why = "it is binary" if conflict.binary else "only a text file both sides edited can take them"
            conflict.advice = f"conflict markers cannot be written into it ({why}); {_force_option(command)}, or {leave}"


def conflict_advice(again: NextStep, plan: Plan) -> Advice:
    """The next action when nothing was written: only the ways out that can work (``again``
    runs the operation again)."""
    clean = len(plan.writes)
    if not plan.conflicts:
        return Advice("nothing can be done automatically; the skipped files list why", [])
    options = []
    if clean:
        options.append(_with(again, f"changes only the {files(clean, 'clean')}", "skip"))
    markable = [c.path for c in plan.conflicts if c.markers_possible]
    if markable:
        where = "" if len(markable) == len(plan.conflicts) else f" into {', '.join(markable)} (the others cannot take markers)"
        options.append(_with(again, f"writes conflict markers{where} to resolve by hand", "markers"))
    options.append(_force(again))
    return Advice("nothing was written; choose: " + "; ".join(said(o) for o in options), options)


def blocked(plan: Plan) -> str:
    """What keeps files from being changed at all (``Plan.blocked``): each with its reason."""
    reasons = {s.path: s.reason.split("; ")[0] for s in plan.skipped}  # the way out follows, per file
    return "cannot change " + listed([f"{path} ({reasons[path]})" for path in plan.blocked], sep="; ")


def blocked_advice(again: NextStep, plan: Plan) -> Advice:
    """The next action when files that cannot be changed stopped an operation: the way out."""
    paths = listed(plan.blocked)
    if not plan.writes:
        rerun = _with(again, f"runs it again once what stands in the way of {paths} is fixed")
        return Advice(f"nothing was written; once what stands in the way of {paths} is fixed, run '{cli(again)}' again", [rerun])
    skip = _with(
        again,
        f"takes back the other {files(len(plan.writes))} and leaves {paths} as {'it is' if len(plan.blocked) == 1 else 'they are'}",
        "skip",
    )
    rerun = _with(again, "runs it again once what stands in the way is fixed")
    return Advice(f"nothing was written; {said(skip)}, or fix what stands in the way and run '{cli(again)}' again", [skip, rerun])


def dry_run_advice(again: NextStep, on_conflict: OnConflict) -> Advice:
    """The next action after a dry run: the same command, carried out."""
    run = _with(again, "carries it out", None if on_conflict == "abort" else on_conflict)
    return Advice("run it without --dry-run to carry it out", [run])


class TakeBack(NamedTuple):
    """The command that takes a carried-out operation back just after it (``take_back``) and
    what it does: ``takeback redo`` after an undo, ``takeback undo`` after a redo, each only
    when it would act on exactly that, and otherwise ``takeback revert N`` (N: the operation's
    own entry, which reverting takes back exactly). The MCP server's ``take_back`` is this."""

    command: str
    """``undo``, ``redo`` or ``revert``."""
    number: int | None
    """The entry ``revert`` takes back (None for undo and redo)."""
    does: str
    """What it does: "brings turn #4 back", "takes turn #4 away again", "takes this revert back"."""

    @property
    def step(self) -> NextStep:
        return NextStep(command=self.command, number=self.number, does=self.does)  # type: ignore[arg-type]

    @property
    def text(self) -> str:
        return cli(self.step)


def _operation_target(state: FoldedEntry, timeline: Timeline) -> FoldedEntry | None:
    operation = state.operation
    return timeline.find(operation.target) if operation is not None and operation.target else None


def redone_turn(done: FoldedEntry, timeline: Timeline) -> FoldedEntry | None:
    """The one agent turn a redo brought back as a whole: the redo re-applied an undo or a
    revert whose only effect was taking that turn back (not a restore, nor a revert of some
    files or of another operation). None: it brought back something else."""
    redone = _operation_target(done, timeline)
    if redone is None or redone.operation is None or redone.begun.kind not in ("undo", "revert"):
        return None
    subject = _operation_target(redone, timeline)
    if subject is None or subject.begun.kind != "turn" or set(redone.operation.effects) != {subject.begun.entry}:
        return None
    return subject


def take_back(
    done: FoldedEntry, timeline: Timeline, undo_next: Callable[[], str | None], redo_next: Callable[[], str | None]
) -> TakeBack:
    """What takes operation ``done`` back, asked on the timeline just after it: ``undo_next``
    and ``redo_next`` give the entry ``takeback undo`` and ``takeback redo`` would act on now
    (``Operations.targets``' rules; None: nothing). ``takeback undo`` takes back the newest
    applied agent turn, which after a redo of an older turn is another one; ``takeback redo``
    re-applies the newest applied undo, revert or restore."""
    kind, number = done.begun.kind, done.begun.number
    target = _operation_target(done, timeline)
    if kind == "undo" and target is not None:
        does = f"brings turn #{target.begun.number} back"
        return TakeBack("redo", None, does) if redo_next() == done.begun.entry else TakeBack("revert", number, does)
    if kind == "redo":
        turn = redone_turn(done, timeline)
        if turn is not None and undo_next() == turn.begun.entry:
            return TakeBack("undo", None, f"takes turn #{turn.begun.number} away again")
    return TakeBack("revert", number, f"takes this {kind} back")


def next_action(entry: Entry, plan: Plan, rest: NextStep, back: TakeBack) -> Advice:
    """The next safe action once an operation (entry ``entry``) was carried out: what it left
    (``rest`` takes that back: ``step(..., done=True)``), then what takes it back."""
    steps: list[NextStep] = []
    still = ""
    left = [c.path for c in plan.blocking_conflicts]
    if left:
        steps.append(_force(rest))
        still = f"{', '.join(left)} left in conflict: {said(steps[-1])}; "
    if plan.blocked:
        steps.append(_with(rest, "takes them back too"))
        still += f"{', '.join(plan.blocked)} skipped: once what stands in the way is fixed, {said(steps[-1])}; "
    markers = [c.path for c in plan.conflicts if c.markers_written]
    if markers:
        steps.append(NextStep(command="revert", number=entry.number, does="takes this back"))
        return Advice(f"{still}resolve the conflict markers in {', '.join(markers)}; {said(steps[-1])}", steps)
    steps.append(back.step)
    return Advice(f"{still}{said(back.step)}", steps)


def already_reverted(target: FoldedEntry, by: FoldedEntry | None) -> str:
    """Why ``target`` cannot be taken back again, and what brings it back: reverting ``by``, the
    entry that took it back (which brings back everything else ``by`` took back too)."""
    text = f"turn #{target.begun.number} is already reverted"
    if by is None:
        return text
    others = [] if by.operation is None else [
        e for e, state in by.operation.effects.items() if e != target.begun.entry and state in ("reverted", "partial")
    ]
    also = f" (with the {len(others)} other entr{'y' if len(others) == 1 else 'ies'} #{by.begun.number} took back)" if others else ""
    return f"{text} by #{by.begun.number}; run 'takeback revert {by.begun.number}' to bring it back{also}"


def operation_label(kind: str, target: FoldedEntry, timeline: Timeline) -> str:
    """'undo turn #4: add login', 'redo turn #4: add login' (for a redo of that undo) …"""
    subject = target
    if kind == "redo" and target.operation is not None:
        subject = (timeline.find(target.operation.target) if target.operation.target else None) or target
    what = "turn" if subject.begun.kind == "turn" else subject.begun.kind
    text = f"{kind} {what} #{subject.begun.number}"
    if subject.begun.kind in ("turn", "mark") and subject.begun.label:
        text += f": {subject.begun.label}"
    return text


SAVE_COMMAND = "takeback save"
"""What writes the files ``unsaved_line`` names (``Engine.save``; an editor offers its own way)."""


def unsaved_line(file: UnsavedFile) -> str:
    """One file the newest operation applied in an editor and the disk lacks, in the words of
    what the asker knows of its buffer: 'a.py: undo #5 is applied in the editor, not saved'."""
    op = f"{file.kind} #{file.operation}"
    held = f" (turn #{file.held_by}'s change)" if file.kind == "undo" and file.held_by is not None else ""
    if file.editor == "unsaved":
        return f"{file.path}: {op} is applied in the editor, not saved"
    if file.editor == "discarded":
        return f"{file.path}: the editor's change was discarded: the disk holds what it held before {op}{held}"
    return (f"{file.path}: {op} was applied in an editor and is not on disk (not saved, or discarded there): "
            f"it holds what it held before{held}")


def unsaved_notices(files: list[UnsavedFile]) -> list[str]:
    """What an operation's plan says of them: it starts from the disk (or the buffers), not from
    what the timeline says, and how to write them first."""
    lacking = [f for f in files if f.editor != "unsaved"]
    if not lacking:
        return []
    return [unsaved_line(f) + f"; this plan starts from what is on disk ('{SAVE_COMMAND}' writes it first)" for f in lacking]
