"""Marks: the person's own checkpoint on the timeline (``takeback mark "before the refactor"``).

``Marks`` is the part of ``Engine`` (a mixin, declared in ``parts.py``) that records a mark: an
entry of kind ``mark`` holding what changed on disk that no entry recorded, attributed to the
person (no agent, no session). It is an entry like any other: ``revert`` of it takes exactly
those changes back (three-way, as any revert), ``restore`` to it (``#N`` or ``mark:NAME``,
``Timeline.resolve``) brings every later change back to the state it recorded. A mark with no
such change is still a restore point: it holds one checkpoint with no file, so it has its place
in log order.

What changed since the last entry is found against the timeline's last known state, not with a
bracket: for every path an applied checkpoint recorded, the newest recorded ``after`` is what
the disk held when the timeline last saw that path; where the disk holds something else now, the
person changed it since, and that recorded version is the change's exact before-image (its
content is in the store; promise 9 needs nothing derived). A bracket pair done at once sees
nothing (no time passes between its begin and its end), and a scan compares with a snapshot
taken at a bracket's begin, which no longer exists once the turn has ended; keeping one between
turns would mean a whole-tree snapshot after every entry (promise 3). The cost is a read of each
path the kept timeline knows, which retention bounds. What it cannot see: a file no entry ever
recorded (a new file of the person's, an edit to a file no agent touched) has no known earlier
state, so no before-image Takeback could stand behind; it is left out rather than recorded with
a guessed before (a revert of the mark would then delete or rewrite it).

Left out as well: a path whose newest recorded version is "before unknown" (it never matches),
a path behind a symlinked folder (never read through), and a file the newest operation applied
in an editor and the disk still lacks (``unsaved.py``: the person has not saved it; that is not
their change). A mark is refused while a whole-disk bracket turn is open: every change on disk
until its end is that turn's. An agent session's open turn (steps only) goes on.
"""

from __future__ import annotations

from ..core.clock import new_id as _new_id
from ..core.clock import now as _now
from ..core.models import CheckpointRecorded, Entry, FileVersion, PathChange, TurnEnded
from ..errors import StateError
from .parts import EngineParts
from .turns import withheld_notice

MARK_CHANGES = "the person's changes since the last entry"
"""The label of a mark's checkpoint (the mark's own name is the entry's label)."""


class Marks(EngineParts):
    """Recording the person's own checkpoint (a part of ``Engine``)."""

    def mark(self, name: str | None = None, source: str = "cli") -> Entry:
        """Put a mark named ``name`` on the timeline, holding the files changed on disk since the
        timeline last recorded them (see the module's docstring). Answers the mark's entry."""
        name = (name or "").strip() or None
        with self.transaction() as tx:
            whole = [s for s in self.timeline.open_turns() if not self._session_turn(s)]
            if whole:
                number = whole[-1].begun.number
                raise StateError(
                    f"turn #{number} is open: everything that changes on disk until it ends is that turn's; "
                    "end it first ('takeback end'), then mark"
                )
            lacking = {f.path for f in self.unsaved()}
            changes: list[PathChange] = []
            notices: list[str] = []
            for path, known in self._last_recorded().items():
                if path in lacking or (known is not None and known.withheld == "unknown"):
                    continue
                if self.workspace.link_above(path) is not None:
                    continue
                try:
                    disk = self.workspace.read(path)
                except OSError as exc:
                    notices.append(f"{path}: cannot be read ({exc.strerror or exc}); not in this mark")
                    continue
                if self.capture.matches(path, known, disk):
                    continue
                now = None if disk is None else self.capture.version(path, disk.content, disk.mode)
                for version in (known, now):
                    if version is not None and version.withheld:
                        notices.append(withheld_notice(path, version))
                        break
                changes.append(self._path_change(path, known, now, new=None if disk is None else disk.content))
            entry_id = _new_id()
            tx.add(
                self._new_begin(entry_id, label=name, session=None, source=source, kind="mark"),
                CheckpointRecorded(id=_new_id(), at=_now(), entry=entry_id, label=MARK_CHANGES, changes=changes,
                                   notices=notices),
                TurnEnded(id=_new_id(), at=_now(), entry=entry_id),
            )
            self._auto_gc()
            return self.timeline.view(self.timeline.state(entry_id))

    def _last_recorded(self) -> dict[str, FileVersion | None]:
        """Per path any applied checkpoint recorded, what the newest such record left there
        (None: absent): the timeline's last known state of the files it knows."""
        found: dict[str, FileVersion | None] = {}
        for owner, cp in self.timeline.checkpoints_newest_first():
            if not owner.applied.get(cp.id, True):
                continue
            for change in cp.changes:
                found.setdefault(change.path, change.after)
                if change.renamed_from:
                    found.setdefault(change.renamed_from, None)
        return dict(sorted(found.items()))
