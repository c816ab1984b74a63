"""A revert of less than an entry: one step of it (``N.k``), the files some paths or patterns
name, one hunk of one file; and the later changes to the same files (or lines) its plan names.

``narrowed`` turns a ``Scope`` into what ``Operations._operate`` carries out: the changes to
take back (a hunk's as ``before' → after``, before' made in memory by ``core/hunks.py`` and
planned from through ``planning.WithBlobs``), the states it gives the entry (a step's turn
becomes ``partial``; a few files or a hunk leave the entry as it is), its label, what the
command that runs it again names beyond the entry (``NextStep.step``, ``paths``, ``hunk``) and
the plan's notices of later changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..core import wording
from ..core.hunks import Hunk, HunkAt, take_back_hunk, touches
from ..core.merge import Version, merge_file
from ..core.models import MODE_LINK, CheckpointRecorded, FileVersion, PathChange
from ..core.planning import matching, only_paths, step_changes
from ..core.textdiff import line_stats
from ..core.timeline import FoldedEntry, Timeline
from ..errors import InvalidInput, NotFound, NothingToDo, TakebackError
from ..workspace.capture import Capturer
from ..workspace.files import Workspace


class Scope(NamedTuple):
    """What of an entry ``revert`` takes back: one step of it (``N.k``), only some paths
    (exact, or patterns: ``planning.matching``), one hunk (a path and a line of it now); all
    None: the whole entry."""

    step: CheckpointRecorded | None = None
    paths: list[str] | None = None
    pathspec: list[str] | None = None
    hunk: HunkAt | tuple[str, int] | None = None


class HunkTaken(NamedTuple):
    """The hunk a revert takes back: its file, the file as the entry left it, and the hunk."""

    path: str
    after: bytes
    hunk: Hunk


@dataclass
class Narrowed:
    """What an operation takes back and does to the timeline (the whole entry's, unless narrowed)."""

    steps: dict[str, list[PathChange]]
    effects: dict[str, str]
    previous: dict[str, str]
    label: str
    again: dict[str, Any] = field(default_factory=dict)
    """``NextStep`` fields naming the narrow target: ``step``, ``paths``, ``hunk``."""
    blobs: dict[str, bytes] = field(default_factory=dict)
    """Content planned from that the store does not hold (a hunk's before'), by blob id."""
    later: list[str] = field(default_factory=list)
    """The plan's notices: later changes to the same files (``wording.later_change``)."""


def narrowed(
    timeline: Timeline, workspace: Workspace, capture: Capturer, kind: str, target: FoldedEntry, scope: Scope,
    whole: Narrowed, overlay: dict[str, Version | None] | None,
) -> Narrowed:
    """``whole`` (the entry's revert) narrowed to ``scope``, with the plan's later notices."""
    number = target.begun.number
    out = Narrowed(dict(whole.steps), dict(whole.effects), dict(whole.previous), whole.label)
    step = scope.step
    checkpoints = [cp for cp in target.checkpoints if target.applied.get(cp.id, True)]
    if step is not None and checkpoints == [step]:
        step = None  # its one step: the whole entry
    if step is not None:
        spec = timeline.checkpoint_spec(step.id)
        if not target.applied.get(step.id, True):
            raise NothingToDo(f"step {spec} of turn #{number} was never applied to the workspace")
        out.steps = step_changes(target, step)
        out.effects = {target.begun.entry: "partial"}  # the turn's other steps stay
        out.previous = {target.begun.entry: whole.previous[target.begun.entry]}
        out.label = f"{kind} step #{spec} of " + whole.label.split(" ", 1)[1]
        out.again["step"] = spec
    full = set(out.steps)
    if scope.paths is not None:
        out.steps = only_paths(out.steps, {workspace.rel(p) for p in scope.paths}, number)
    if scope.pathspec is not None:
        out.steps = only_paths(out.steps, matching(out.steps, scope.pathspec, number), number)
        out.again["paths"] = list(scope.pathspec)
    chosen, line_now = None, 0
    if scope.hunk is not None:
        at = HunkAt(*scope.hunk)
        out.steps, out.blobs, chosen = _hunk_steps(workspace, capture, out.steps, at, number, overlay)
        line_now = at.line if at.of == "now" else chosen.hunk.first  # the CLI's --hunk names a line as the file stands now
        out.again["hunk"] = f"{chosen.path}:{line_now}"
    if set(out.steps) != full or chosen is not None:
        if step is None:
            out.effects, out.previous = {}, {}  # a few files only: the entry itself stays as it is
        what = f"the hunk at line {line_now} of " if chosen is not None else ""
        out.label = f"{kind} {what}{', '.join(sorted(out.steps))} from " + out.label.split(" ", 1)[1]
    if kind == "revert":
        out.later = later_notices(timeline, capture, target, step, out.steps, chosen)
    return out


def _hunk_steps(
    workspace: Workspace, capture: Capturer, steps: dict[str, list[PathChange]], hunk: HunkAt, number: int,
    overlay: dict[str, Version | None] | None,
) -> tuple[dict[str, list[PathChange]], dict[str, bytes], HunkTaken]:
    """The change that takes back only the hunk of ``hunk``'s file covering its line (as the
    file stands now, an editor's buffer if ``overlay`` holds it): before' → the entry's after."""
    rel = workspace.rel(hunk.path)
    if rel not in steps:
        raise NotFound(f"turn #{number} did not change {rel}")
    changes = steps[rel]
    before, after = changes[0].before, changes[-1].after
    if after is None:
        raise InvalidInput(f"turn #{number} deleted {rel}: a hunk is lines of a file it left; "
                           f"'takeback revert {number} -- {rel}' brings the file back")
    for side in (v for change in changes for v in (change.before, change.after)):
        if side is not None and side.withheld:
            raise InvalidInput(f"{rel}: its content was not stored ({side.withheld}), so no hunk of it can be taken back")
        if side is not None and side.mode == MODE_LINK:
            raise InvalidInput(f"{rel} is a symlink: it has no lines; take the whole file back instead")
    buffers = {workspace.rel(p): v for p, v in (overlay or {}).items()}
    now = buffers[rel] if rel in buffers else workspace.read(rel)
    if now is None:
        raise InvalidInput(f"{rel} is not there now: no line of it can name a hunk")
    after_bytes = capture.content(after)
    turns_before = b"" if before is None else own_before(capture, changes, rel, number)
    taken, chosen = take_back_hunk(turns_before, after_bytes, now.content, hunk.line, rel, hunk.of)
    if before is None:  # a file the entry made is one hunk: taking it back is taking its making back, as for the whole file
        return {rel: changes}, {}, HunkTaken(rel, after_bytes, chosen)
    version = FileVersion(oid=capture.store.hash_blob(taken), mode=after.mode, size=len(taken))
    additions, deletions = line_stats(taken, after_bytes)
    change = PathChange(path=rel, before=version, after=after, additions=additions, deletions=deletions)
    return {rel: [change]}, {version.oid: taken}, HunkTaken(rel, after_bytes, chosen)


def own_before(capture: Capturer, changes: list[PathChange], rel: str, number: int) -> bytes:
    """The file as the entry left it with each of its changes taken back in turn, newest first
    (as a whole-file revert does): its first before, except that what was written between its
    steps by others (the person typing while the agent worked) stays, so no hunk is theirs."""
    first, last = changes[0].before, changes[-1].after
    if len(changes) == 1 or last is None:
        return b"" if first is None else capture.content(first)
    current: Version | None = Version(capture.content(last), last.mode)
    for change in reversed(changes):
        base, theirs = (None if v is None else Version(capture.content(v), v.mode) for v in (change.after, change.before))
        outcome = merge_file(base, current, theirs)
        if outcome.conflict is not None:
            raise InvalidInput(f"the steps of turn #{number} and the edits made between them overlap in {rel}, so its "
                               f"hunks are not the turn's alone: take back one step's hunk ('takeback revert {number}.K --hunk …')")
        current = outcome.result
    return b"" if current is None else current.content


def later_notices(
    timeline: Timeline, capture: Capturer, target: FoldedEntry, step: CheckpointRecorded | None,
    steps: dict[str, list[PathChange]], chosen: HunkTaken | None,
) -> list[str]:
    """Who changed the same files (for a hunk, whether the same lines) after what is taken
    back: ``turn #14 also changed src/app.py after it``; a later step of the same turn is named
    as the step (``step #12.4``)."""
    known = [cp for cp in ([step] if step is not None else target.checkpoints) if cp.id in timeline.checkpoint_owner]
    if not known:
        return []
    touched: dict[str, tuple[str, list[str], bool]] = {}  # a later step or entry: (its name, paths, on the hunk's lines)
    for owner, cp in _touching_after(timeline, known[-1].id, steps):
        for change in cp.changes:
            if change.path not in steps:
                continue
            if owner.begun.entry == target.begun.entry:
                key, name = cp.id, f"step #{timeline.checkpoint_spec(cp.id)}"
            else:
                key, name = owner.begun.entry, f"{owner.begun.kind} #{owner.begun.number}"
            _name, paths, on_lines = touched.get(key, (name, [], False))
            on_lines = on_lines or (chosen is not None and _touches_hunk(capture, chosen, change))
            touched[key] = (name, paths if change.path in paths else [*paths, change.path], on_lines)
    return [wording.later_change(name, paths, chosen is not None, on_lines) for name, paths, on_lines in touched.values()]


def _touching_after(
    timeline: Timeline, checkpoint_id: str, paths: Iterable[str],
) -> list[tuple[FoldedEntry, CheckpointRecorded]]:
    """Every applied checkpoint recorded after ``checkpoint_id`` that changed one of ``paths``,
    with its entry, in log order: through the per-path index (``Timeline.touching``), so what
    the later history did to other files is not walked (a revert 1,000 entries back costs what
    one 10 back costs)."""
    found = {cp.id: (state, cp) for path in paths for state, cp in timeline.touching(path)}
    start = timeline.position(checkpoint_id)
    later = sorted((cp_id for cp_id in found if timeline.position(cp_id) > start), key=timeline.position)
    return [found[cp_id] for cp_id in later if found[cp_id][0].applied.get(cp_id, True)]


def _touches_hunk(capture: Capturer, chosen: HunkTaken, change: PathChange) -> bool:
    """Whether a later ``change`` of the hunk's file changed lines of the hunk (content not
    known counts as yes)."""
    if change.before is None or change.after is None or change.before.withheld or change.after.withheld:
        return True
    try:
        return touches(chosen.after, chosen.hunk, capture.content(change.before), capture.content(change.after))
    except TakebackError:
        return True
