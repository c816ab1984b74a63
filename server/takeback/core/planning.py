"""Planning a revert: which content each path should get, and what stands in the way.

Every operation that moves files back (undo, redo, revert, restore) is a list of recorded
changes to take back. For each path they are taken back newest first, each as a three-way
merge (base = what the change produced, ours = the file now, theirs = what it started from),
so edits made in between — by the person or by later turns — stay. The plan says per path
the final content, or the conflict or the reason it is skipped, and then where the files go:
the folders the taken-back changes created that the plan's deletions empty are removed, so a
file can come back where a folder stood (and the reverse); a folder that still holds what the
changes did not add is a conflict. A folder the changes made where a file comes back and left
with no file (a deletion's ``new_folders``, or one made for a file that ends absent) is removed
too; one the person put files in since stays, and that file is skipped. Nothing is written here.

Around the planner: what a restore to a checkpoint inside a turn takes back (``from_checkpoint``),
what one step of a turn changed (``step_changes``), a revert of named paths with their rename
partners (``only_paths``, the paths patterns name: ``matching``), content planned from that the
store does not hold (``WithBlobs``: a hunk's before'), paths behind a symlink set aside
(``set_aside``) and what each write does, in lines (``outcome``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

import pathspec

from ..errors import InvalidInput, NotFound, cannot_read
from .merge import MergeResult, Version, merge_file
from .models import (
    CheckpointRecorded,
    Conflict,
    FileOutcome,
    FileVersion,
    OnConflict,
    PathChange,
    SkippedFile,
    same_version,
)
from .textdiff import line_stats
from .timeline import FoldedEntry, relevant_steps

Reader = Callable[[str], Version | None]


class Contents(Protocol):
    """Where recorded content comes from and how it is compared (``workspace.Capturer`` answers)."""

    def content(self, version: FileVersion) -> bytes: ...

    def matches(self, rel: str, version: FileVersion | None, disk: Version | None) -> bool: ...


class Layout(Protocol):
    """What the planner asks about folders on disk (``workspace.files.Workspace`` answers)."""

    def obstacle(self, rel: str, going: frozenset[str] = ...) -> str | None: ...

    def left_in(self, folder: str, going: frozenset[str]) -> list[str]: ...

    def missing_folders(self, rel: str, going: frozenset[str] = ...) -> list[str]: ...


Unwritable = Callable[[str], str | None]  # why a path cannot be written or removed for lack of permission, or None


@dataclass
class PathPlan:
    """The outcome for one path: the content it should end with (None = absent)."""

    path: str
    ours: Version | None
    result: Version | None
    skipped: str | None = None
    blocked: bool = False  # skipped for what stands on disk now (a folder in the way, no permission)
    conflict: Conflict | None = None
    merged: bool = False
    forced: bool = False
    new_folders: list[str] = field(default_factory=list)  # folders writing it creates
    # The recorded versions ``ours`` and ``result`` were found to be while planning (compared
    # by id, or read from the store), None when not known (a merge's result): the operation's
    # record names them without hashing and storing the same bytes again.
    ours_recorded: FileVersion | None = None
    result_recorded: FileVersion | None = None
    # (+lines, -lines) from ``ours`` to ``result`` when the record already counted them: the
    # path's one change taken back as recorded (the file as it left it, put back as it was
    # before), its counts swapped; None: counted from the bytes (``outcome``).
    counted: tuple[int, int] | None = None
    # Whether ``result`` differs from ``ours``, compared once (neither is ever replaced: a plan
    # changes a path by putting a new ``PathPlan`` in its place); an operation asks ``writes``
    # of every path about ten times, a 5,000-file one 50,000 comparisons of contents.
    _differs: bool | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def writes(self) -> bool:
        """Whether carrying out the plan changes this path."""
        if self.skipped is not None:
            return False
        if self.conflict is not None and not (self.conflict.markers_written or self.forced):
            return False
        if self._differs is None:
            self._differs = self.result != self.ours
        return self._differs


@dataclass
class Plan:
    paths: list[PathPlan] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)  # removed once its deletions empty them
    _by_path: dict[str, PathPlan] | None = field(default=None, repr=False, compare=False)
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)  # (+lines, -lines) per path written, once counted

    @property
    def writes(self) -> list[PathPlan]:
        return [p for p in self.paths if p.writes]

    def result_of(self, path: str) -> Version | None:
        """The content ``path`` is planned to end with (None: absent, or not in the plan)."""
        if self._by_path is None or len(self._by_path) != len(self.paths):
            self._by_path = {p.path: p for p in self.paths}
        planned = self._by_path.get(path)
        return planned.result if planned is not None else None

    @property
    def conflicts(self) -> list[Conflict]:
        return [p.conflict for p in self.paths if p.conflict is not None]

    @property
    def blocking_conflicts(self) -> list[Conflict]:
        return [p.conflict for p in self.paths if p.conflict is not None and not (p.forced or p.conflict.markers_written)]

    @property
    def complete(self) -> bool:
        """Whether carrying it out takes every path back: none skipped, none left in conflict or
        with conflict markers to resolve (a path forced over later edits is taken back)."""
        return not any(p.skipped or (p.conflict is not None and not p.forced) for p in self.paths)

    @property
    def forced(self) -> list[str]:
        """The paths it writes over later edits (``--on-conflict force``)."""
        return [p.path for p in self.paths if p.forced]

    @property
    def blocked(self) -> list[str]:
        """Skipped paths that running the operation again can bring back once the disk allows."""
        return [p.path for p in self.paths if p.blocked]

    @property
    def skipped(self) -> list[SkippedFile]:
        return [SkippedFile(path=p.path, reason=p.skipped) for p in self.paths if p.skipped]


class Planner:
    def __init__(
        self,
        capture: Contents,
        read: Reader,
        on_conflict: OnConflict,
        label_theirs: str,
        layout: Layout | None = None,
        unwritable: Unwritable | None = None,
    ) -> None:
        self.capture = capture
        self.read = read
        self.layout = layout
        self.unwritable = unwritable
        self.on_conflict = on_conflict
        self.label_theirs = label_theirs

    def plan(self, steps: dict[str, list[PathChange]]) -> Plan:
        plan = Plan()
        for path in sorted(steps):
            try:
                plan.paths.append(self._plan_path(path, steps[path]))
            except OSError as exc:  # the file cannot be read now (permission denied …)
                plan.paths.append(PathPlan(path, None, None, skipped=f"{cannot_read(exc)}; it was left as it is"))
        if self.layout is not None:
            self._place(plan, steps, self.layout)
        if self.unwritable is not None:
            for i, planned in enumerate(plan.paths):
                reason = self.unwritable(planned.path) if planned.writes else None
                if reason is not None:  # seen now, so a dry run and the run itself agree
                    plan.paths[i] = PathPlan(planned.path, planned.ours, planned.ours, skipped=reason, blocked=True)
        return plan

    def _place(self, plan: Plan, steps: dict[str, list[PathChange]], layout: Layout) -> None:
        """Where the files go (seen now, so a dry run and the run itself agree): the folders
        the deleted files' changes created go too, unless a file is written under them; a
        file whose place is taken by one of those folders needs it empty but for what goes.
        A folder the changes made where a file comes back, and that they left with no file
        (``_made_in_place``), goes too; one that holds what they did not put there stays, and
        that file is skipped."""
        deleted = {p.path for p in plan.paths if p.writes and p.result is None}
        written = [p for p in plan.paths if p.writes and p.result is not None]
        needed: set[str] = set()  # every folder a written file is in, and theirs
        for folder in {p.path.rpartition("/")[0] for p in written}:
            while folder and folder not in needed:
                needed.add(folder)
                folder = folder.rpartition("/")[0]
        folders = {f for path in deleted for change in steps[path] for f in change.new_folders} - needed
        in_place = _made_in_place(plan, steps, {p.path for p in written}) - needed - folders
        kept = {f: left for f in in_place if (left := layout.left_in(f, frozenset(deleted)))}
        in_place -= kept.keys()
        going = frozenset(deleted | folders | in_place)
        for i, planned in enumerate(plan.paths):
            if not (planned.writes and planned.result is not None):
                continue
            path, ours = planned.path, planned.ours
            if path in folders and (left := layout.left_in(path, going)):
                conflict = Conflict(
                    path=path,
                    reason=f"{path} is now a folder, and it holds what the changes taken back did not put "
                    f"there ({_shown(left)}); move that away and run this again",
                )
                plan.paths[i] = PathPlan(path, ours, ours, conflict=conflict)
            elif path in kept:
                why = (
                    f"{path} is now a folder, made where the file was by the changes taken back, and it holds "
                    f"what they did not put there ({_shown(kept[path])}); Takeback does not remove it: "
                    "move that away and run this again"
                )
                plan.paths[i] = PathPlan(path, ours, ours, skipped=why, blocked=True)
            elif (reason := layout.obstacle(path, going)) is not None:
                plan.paths[i] = PathPlan(path, ours, ours, skipped=reason, blocked=True)
            elif ours is None:
                planned.new_folders = layout.missing_folders(path, going)
        plan.folders = sorted(folders | in_place)

    def _materialize(self, version: FileVersion | None) -> Version | None:
        if version is None:
            return None
        return Version(self.capture.content(version), version.mode)

    def _plan_path(self, path: str, changes: list[PathChange]) -> PathPlan:
        ours = self.read(path)
        current = ours
        known: list[FileVersion | None] = [None, None]  # what ours and current are known to be
        merged_any = False
        forced: Conflict | None = None
        for change in reversed(changes):
            base, theirs = change.after, change.before
            if self.capture.matches(path, base, current):
                _known(known, current is ours, base)
                if theirs is not None and theirs.withheld:
                    return PathPlan(path, ours, current, skipped=_withheld_reason(theirs))
                if theirs is None and base is not None and base.withheld:
                    # Deleting content the store never kept could not be undone (promise 4).
                    return PathPlan(path, ours, current, skipped=_undeletable_reason(base))
                current = self._materialize(theirs)
                known[1] = theirs
                continue
            if self.capture.matches(path, theirs, current):
                _known(known, current is ours, theirs)
                continue  # already as it was before this change
            withheld = next((v for v in (base, theirs) if v is not None and v.withheld), None)
            if withheld is not None:
                return PathPlan(path, ours, current, skipped=_withheld_reason(withheld) + "; the file changed since")
            base_now, theirs_now = self._materialize(base), self._materialize(theirs)
            outcome = merge_file(base_now, current, theirs_now, label_theirs=self.label_theirs)
            if outcome.conflict is None:
                current, known[1] = outcome.result, None
                merged_any = merged_any or outcome.merged
                continue
            if self.on_conflict == "force":
                forced = forced or Conflict(path=path, reason=_forced_reason(outcome, base_now, current), hunks=outcome.hunks)
                current, known[1] = outcome.forced, (theirs if outcome.forced == theirs_now else None)
                continue
            return self._conflict(path, ours, current, outcome)
        return PathPlan(path, ours, current, merged=merged_any, conflict=forced, forced=forced is not None,
                        ours_recorded=known[0], result_recorded=known[1], counted=_counted(changes, known))

    def _conflict(self, path: str, ours: Version | None, current: Version | None, outcome: MergeResult) -> PathPlan:
        binary = outcome.markers is None and outcome.hunks == 0 and "binary" in (outcome.conflict or "")
        possible = outcome.markers is not None and current is not None
        conflict = Conflict(
            path=path, reason=outcome.conflict or "conflict", hunks=outcome.hunks, binary=binary, markers_possible=possible
        )
        if self.on_conflict == "markers" and outcome.markers is not None and current is not None:  # possible
            conflict.markers_written = True
            return PathPlan(path, ours, Version(outcome.markers, current.mode), conflict=conflict)
        return PathPlan(path, ours, ours, conflict=conflict)


def _counted(changes: list[PathChange], known: list[FileVersion | None]) -> tuple[int, int] | None:
    """The line counts of taking back a path's one change from the record (its own counts,
    swapped), when the file was found to be what the change left and the result is what was
    there before it, neither side withheld (its counts are of the stored bytes): no diff of
    the same two contents again. None: ``outcome`` counts them."""
    if len(changes) != 1:
        return None
    change = changes[0]
    if None in known or not (_same(known[0], change.after) and _same(known[1], change.before)):
        return None  # not the plain inverse (a merge, a file changed since, a file made or removed)
    if any(v is not None and v.withheld for v in (change.before, change.after)):
        return None
    return change.deletions, change.additions


def _same(a: FileVersion | None, b: FileVersion | None) -> bool:
    """``a == b``, the same object answered without comparing fields (planning notes the very
    version it matched: a pydantic comparison per path is 3% of planning a big operation)."""
    return a is b or a == b


def _known(known: list[FileVersion | None], is_ours: bool, version: FileVersion | None) -> None:
    """Note that the content planned so far was found to be ``version`` (and so is the file on
    disk, when that content is still the disk's own)."""
    known[1] = version
    if is_ours:
        known[0] = version


def _made_in_place(plan: Plan, steps: dict[str, list[PathChange]], written: set[str]) -> set[str]:
    """The folders the changes taken back made at a path where a file comes back: a deletion's
    (the folder a turn made in the file's place and emptied again), or one made for a file that
    ends absent (an edit batch put a file in it, a later one deleted that file)."""
    absent = {p.path for p in plan.paths if p.result is None and p.skipped is None and p.conflict is None}
    made = {
        folder
        for path, changes in steps.items()
        for change in changes
        if path in absent or (path in written and change.after is None)
        for folder in change.new_folders
    }
    return made & written


def _shown(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _undeletable_reason(version: FileVersion) -> str:
    what = "secret file" if version.withheld == "secret" else f"file over the size cap ({version.size} bytes)"
    return (
        f"{what}: not deleted, because its content is not stored and the deletion could not be undone; "
        "delete it by hand if you want it gone"
    )


def _forced_reason(outcome: MergeResult, base: Version | None, current: Version | None) -> str:
    """What ``--on-conflict force`` did to a conflicting file, plainly: where it took the
    operation's side, and what of the person's went with it."""
    kept = "your whole version is in this operation's checkpoint: taking the operation back restores it"
    if outcome.hunks:
        places = f"{outcome.hunks} place{'s' if outcome.hunks != 1 else ''}"
        return (f"forced: overlapping edits in {places}: the earlier content was put back there over your edits, "
                f"the rest of your edits in the file stay; {kept}")
    if outcome.forced is None and current is not None and base is not None:
        added, removed = line_stats(base.content, current.content)
        return f"forced: the file is removed, and with it what was changed in it since (+{added} -{removed}); {kept}"
    return f"forced: {outcome.conflict}; the earlier version was put back over yours; {kept}"


def _withheld_reason(version: FileVersion) -> str:
    if version.withheld == "unknown":
        return (
            "before unknown: the agent's edit was reported after it was made and its before-image could not be "
            "verified, so Takeback does not guess it; the file was left as it is (take the edit back by hand)"
        )
    if version.withheld == "secret":
        return "secret file: its content is not stored (secrets policy), so it cannot be brought back"
    return f"file over the size cap ({version.size} bytes): its content was not stored"


def from_checkpoint(
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


def set_aside(plan: Plan, out_of_reach: dict[str, tuple[str | None, str]]) -> None:
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


def outcome(
    path: str, ours: Version | None, result: Version | None, merged: bool, counted: tuple[int, int] | None = None,
) -> FileOutcome:
    """What writing ``result`` over ``ours`` does to ``path``; ``counted``: its (+lines, -lines)
    when the record counted them already (``PathPlan.counted``)."""
    old = ours.content if ours else None
    new = result.content if result else None
    additions, deletions = counted if counted is not None else line_stats(old, new)
    action: Literal["delete", "create", "write"] = "delete" if result is None else ("create" if ours is None else "write")
    return FileOutcome(path=path, action=action, additions=additions, deletions=deletions, merged=merged)


def with_renames(plan: Plan, outcomes: list[FileOutcome]) -> list[FileOutcome]:
    """``outcomes`` (one per ``plan.writes``, in order) with each create that puts back the
    content and mode a delete of the same plan removes marked as that rename, both counted as
    no line changed: the rule ``timeline.aggregate_files`` applies to a turn's own changes."""
    gone: dict[Version, list[str]] = {}  # what each delete removes (content and mode): its paths, in plan order
    for planned in plan.writes:
        if planned.result is None and planned.ours is not None:
            gone.setdefault(planned.ours, []).append(planned.path)
    sources: dict[str, str] = {}  # a create's path: the delete's path it pairs with
    paired: set[str] = set()  # those deletes (the content moved unchanged: no line changed on either side)
    for item, planned in zip(outcomes, plan.writes, strict=True):
        if item.action == "create" and planned.result is not None and gone.get(planned.result):
            source = gone[planned.result].pop(0)
            sources[item.path] = source
            paired.add(source)
    return [item.model_copy(update={"renamed_from": sources.get(item.path), "additions": 0, "deletions": 0})
            if item.path in sources or (item.action == "delete" and item.path in paired) else item for item in outcomes]


def only_paths(steps: dict[str, list[PathChange]], wanted: set[str], number: int) -> dict[str, list[PathChange]]:
    """The steps for ``wanted`` paths, with the other side of any rename among them."""
    keep = {p for p in wanted if p in steps}
    if not keep:
        raise NotFound(f"turn #{number} did not change {', '.join(sorted(wanted))}")
    for path, changes in steps.items():
        for change in changes:
            if change.renamed_from and (path in keep or change.renamed_from in keep):
                keep.update({path, change.renamed_from} & set(steps))
    return {p: s for p, s in steps.items() if p in keep}


def step_changes(owner: FoldedEntry, cp: CheckpointRecorded) -> dict[str, list[PathChange]]:
    """What step ``cp`` of ``owner`` changed, per path: its own changes, a bracket checkpoint's
    starting where the steps before it left each path (``from_checkpoint``), not at the turn's start."""
    index = owner.checkpoints.index(cp)
    if cp.bracket and index > 0:
        return relevant_steps(from_checkpoint(owner, owner.checkpoints[index - 1], [cp]))
    return relevant_steps([cp])


def matching(steps: dict[str, list[PathChange]], patterns: list[str], number: int) -> set[str]:
    """The paths of ``steps`` that ``patterns`` name: git's pathspec as gitignore's wildcards
    read it (``pathspec``'s GitIgnoreSpec), each anchored at the workspace's top: ``src/app.py``,
    ``src`` (everything under it), ``tests/**``, ``*.py`` (at the top only; ``**/*.py`` anywhere);
    ``:!PATTERN``, ``:^PATTERN`` or ``:(exclude)PATTERN`` leaves out what it names (alone, from
    every path the entry changed), as git's exclude magic does."""
    include: list[str] = []
    exclude: list[str] = []
    for pattern in patterns:
        text = pattern.strip()
        for magic in (":(exclude)", ":!", ":^"):
            if text.startswith(magic):
                text, into = text[len(magic):], exclude
                break
        else:
            into = include
        if text.startswith("./"):
            text = text[2:]
        if not text or text.startswith(("!", ":")):
            raise InvalidInput(f"path pattern {pattern!r}: give a path or a pattern such as 'src/app.py', 'tests/**' "
                               "or ':!docs/**'")
        into.append(text if text.startswith("/") else "/" + text)
    found = set(steps) if not include else {path for path in steps if _spec(include, patterns).match_file(path)}
    if exclude:
        found = {path for path in found if not _spec(exclude, patterns).match_file(path)}
    if not found:
        raise NotFound(f"turn #{number} changed no file that {', '.join(patterns)} names (it changed {', '.join(sorted(steps)[:5])}"
                       f"{' …' if len(steps) > 5 else ''})")
    return found


def _spec(anchored: list[str], patterns: list[str]) -> pathspec.PathSpec:
    try:
        return pathspec.GitIgnoreSpec.from_lines(anchored)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(f"cannot read the path patterns {', '.join(patterns)}: {exc}") from None


class WithBlobs:
    """Recorded content, and content made in memory that the store does not hold (by its blob
    id): a hunk's before' (``core/hunks.py``), planned from like any recorded version."""

    def __init__(self, contents: Contents, blobs: dict[str, bytes]) -> None:
        self.contents = contents
        self.blobs = blobs

    def content(self, version: FileVersion) -> bytes:
        made = self.blobs.get(version.oid)
        return made if made is not None else self.contents.content(version)

    def matches(self, rel: str, version: FileVersion | None, disk: Version | None) -> bool:
        return self.contents.matches(rel, version, disk)
