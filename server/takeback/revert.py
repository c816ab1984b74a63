"""Planning a revert: which content each path should get, and what stands in the way.

Every operation that moves files back (undo, redo, revert, restore) is a list of recorded
changes to take back. For each path they are taken back newest first, each as a three-way
merge (base = what the change produced, ours = the file now, theirs = what it started from),
so edits made in between — by the person or by later turns — stay. The plan says per path
the final content, or the conflict or the reason it is skipped. Nothing is written here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .capture import Capturer
from .merge import MergeResult, Version, merge_file
from .models import Conflict, FileVersion, OnConflict, PathChange, SkippedFile
from .workspace import DiskFile, cannot_read

Reader = Callable[[str], DiskFile | None]
Obstacle = Callable[[str], str | None]  # why a file cannot be put at a path now, or None


def _version_of(disk: DiskFile | None) -> Version | None:
    """A file as it is now, in the merge's terms (None = absent)."""
    return None if disk is None else Version(disk.content, disk.mode)


@dataclass
class PathPlan:
    """The outcome for one path: the content it should end with (None = absent)."""

    path: str
    ours: DiskFile | None
    result: Version | None
    skipped: str | None = None
    conflict: Conflict | None = None
    merged: bool = False
    forced: bool = False

    @property
    def writes(self) -> bool:
        """Whether carrying out the plan changes this path."""
        if self.skipped is not None:
            return False
        if self.conflict is not None and not (self.conflict.markers_written or self.forced):
            return False
        return self.result != _version_of(self.ours)


@dataclass
class Plan:
    paths: list[PathPlan] = field(default_factory=list)

    @property
    def writes(self) -> list[PathPlan]:
        return [p for p in self.paths if p.writes]

    @property
    def conflicts(self) -> list[Conflict]:
        return [p.conflict for p in self.paths if p.conflict is not None]

    @property
    def blocking_conflicts(self) -> list[Conflict]:
        return [p.conflict for p in self.paths if p.conflict is not None and not (p.forced or p.conflict.markers_written)]

    @property
    def skipped(self) -> list[SkippedFile]:
        return [SkippedFile(path=p.path, reason=p.skipped) for p in self.paths if p.skipped]


class Planner:
    def __init__(
        self, capture: Capturer, read: Reader, on_conflict: OnConflict, label_theirs: str, obstacle: Obstacle | None = None
    ) -> None:
        self.capture = capture
        self.read = read
        self.obstacle = obstacle
        self.on_conflict = on_conflict
        self.label_theirs = label_theirs

    def plan(self, steps: dict[str, list[PathChange]]) -> Plan:
        plan = Plan()
        for path in sorted(steps):
            try:
                planned = self._plan_path(path, steps[path])
            except OSError as exc:  # the file cannot be read now (permission denied …)
                plan.paths.append(PathPlan(path, None, None, skipped=f"{cannot_read(exc)}; it was left as it is"))
                continue
            if planned.writes and planned.result is not None and self.obstacle is not None:
                reason = self.obstacle(path)
                if reason is not None:  # seen now, so a dry run and the run itself agree
                    planned = PathPlan(path, planned.ours, _version_of(planned.ours), skipped=reason)
            plan.paths.append(planned)
        return plan

    def _materialize(self, version: FileVersion | None) -> Version | None:
        if version is None:
            return None
        return Version(self.capture.content(version), version.mode)

    def _plan_path(self, path: str, changes: list[PathChange]) -> PathPlan:
        ours = self.read(path)
        current = _version_of(ours)
        merged_any = False
        forced: Conflict | None = None
        for change in reversed(changes):
            base, theirs = change.after, change.before
            as_disk = None if current is None else DiskFile(current.content, current.mode)
            if self.capture.matches(path, base, as_disk):
                if theirs is not None and theirs.withheld:
                    return PathPlan(path, ours, current, skipped=_withheld_reason(theirs))
                if theirs is None and base is not None and base.withheld:
                    # Deleting content the store never kept could not be undone (promise 4).
                    return PathPlan(path, ours, current, skipped=_undeletable_reason(base))
                current = self._materialize(theirs)
                continue
            if self.capture.matches(path, theirs, as_disk):
                continue  # already as it was before this change
            withheld = next((v for v in (base, theirs) if v is not None and v.withheld), None)
            if withheld is not None:
                return PathPlan(path, ours, current, skipped=_withheld_reason(withheld) + "; the file changed since")
            outcome = merge_file(self._materialize(base), current, self._materialize(theirs), label_theirs=self.label_theirs)
            if outcome.conflict is None:
                current = outcome.result
                merged_any = merged_any or outcome.merged
                continue
            if self.on_conflict == "force":
                forced = forced or Conflict(
                    path=path,
                    reason=f"forced: {outcome.conflict}; your version is kept in this operation's checkpoint",
                    hunks=outcome.hunks,
                )
                current = self._materialize(theirs)
                continue
            return self._conflict(path, ours, current, outcome)
        return PathPlan(path, ours, current, merged=merged_any, conflict=forced, forced=forced is not None)

    def _conflict(self, path: str, ours: DiskFile | None, current: Version | None, outcome: MergeResult) -> PathPlan:
        binary = outcome.markers is None and outcome.hunks == 0 and "binary" in (outcome.conflict or "")
        conflict = Conflict(path=path, reason=outcome.conflict or "conflict", hunks=outcome.hunks, binary=binary)
        if self.on_conflict == "markers" and outcome.markers is not None and current is not None:
            conflict.markers_written = True
            return PathPlan(path, ours, Version(outcome.markers, current.mode), conflict=conflict)
        return PathPlan(path, ours, _version_of(ours), conflict=conflict)


def _undeletable_reason(version: FileVersion) -> str:
    what = "secret file" if version.withheld == "secret" else f"file over the size cap ({version.size} bytes)"
    return (
        f"{what}: not deleted, because its content is not stored and the deletion could not be undone; "
        "delete it by hand if you want it gone"
    )


def _withheld_reason(version: FileVersion) -> str:
    if version.withheld == "secret":
        return "secret file: its content is not stored (secrets policy), so it cannot be brought back"
    return f"file over the size cap ({version.size} bytes): its content was not stored"
