"""Steps: one tool call of an agent, recorded as one checkpoint of the open turn.

A step has a start and an end that arrive in two different processes (an agent runs a hook
before the call and another after it), so what the start saw waits in the store between them
(``brackets/step-<key>``, ``brackets.py``). Two kinds:

* ``paths`` given (an edit tool that names its files): the start stores those files'
  before-images (and the folders writing a missing one would create); the end compares them
  with the files now. Cost: those files, never a scan.
* no ``paths`` (a shell command): the start takes the scanner's snapshot, like a turn's bracket;
  the end records what changed on disk in between.

Either way a change that other steps, batches or operations recorded while the step ran (an edit
running beside the command, another agent session's step on the same file, an undo) is theirs:
it is left out, and where it is only the first (or last) part of what the step saw on a path, the
step records the rest. Two sessions never claim the same change.

A turn opened without a bracket (``begin_turn(bracket=False)``) is then the union of its steps:
what changes on disk between two steps is not in it. A step joins its session's open turn
(``Engine._turn_for``: several sessions each have their own); a step whose session has no turn
open is recorded as a turn of its own, labelled by the step.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from itertools import pairwise

from ..core.clock import new_id as _new_id
from ..core.clock import now as _now
from ..core.models import CheckpointRecorded, Entry, EntryBegun, FileVersion, PathChange, TurnEnded, same_version
from ..core.timeline import FoldedEntry
from ..errors import StoreError
from . import brackets
from .parts import EngineParts

PATHS_KIND = "paths"
"""An edit step's own snapshot: ``{"kind": "paths", "files": {path: version or null},
"new_folders": {path: [folders writing it would create]}}``, made and read here only (a shell
step keeps a scanner's snapshot instead, which only ``scanning/scan.py`` reads)."""


def _file_name(key: str) -> str:
    return brackets.STEP_PREFIX + hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


class Steps(EngineParts):
    """The step methods of ``Engine`` (a mixin: it uses the engine's store, scanner and log)."""

    def begin_step(
        self, key: str, paths: Iterable[str] | None = None, session: str | None = None, agent: str | None = None,
    ) -> None:
        """Start step ``key``: keep the before-images of ``paths`` (an edit), or with no
        ``paths`` the scanner's snapshot (a shell command), until ``end_step(key)``."""
        rels = None if paths is None else sorted({self.workspace.rel(p) for p in paths})
        with self.transaction():
            state = self._turn_for(session)
            begun = EntryBegun(
                id=_new_id(), at=_now(), entry=state.begun.entry if state else _new_id(), number=0,
                session=session, agent=agent, source="hook",
            )
            scanner = None
            if rels is not None:
                files, folders = {}, {}
                for rel in rels:
                    version = self.capture.from_disk(rel)
                    files[rel] = version.model_dump() if version else None
                    if version is None and self.workspace.missing_folders(rel):
                        folders[rel] = self.workspace.missing_folders(rel)  # what writing it would create
                snapshot = {"kind": PATHS_KIND, "files": files, "new_folders": folders}
            else:
                scanner = self._scanner()
                snapshot = scanner.begin(self.capture.from_disk)
            self.store.flush()  # the content the snapshot names is on disk before the snapshot
            try:
                brackets.write(
                    self._brackets, begun, snapshot, scanner.index_file() if scanner is not None else None,
                    self.config.fsync, nested_sources=scanner.nested_indexes if scanner is not None else None,
                    config=self.config.model_dump(mode="json"), name=_file_name(key),
                )
            except OSError as exc:
                raise StoreError(f"cannot write to the store {self.store.path}: {exc}") from exc

    def end_step(self, key: str, label: str | None) -> Entry | None:
        """End step ``key``: record what it changed as a checkpoint named ``label`` of the turn
        it began in (or of a turn of its own). None: no such step, or it changed nothing."""
        name = _file_name(key)
        with self.transaction() as tx:
            opened = brackets.read_named(self._brackets, name)
            if opened is None or opened.begun is None or opened.scan is None:
                return None
            step = opened.begun
            began_in = self.timeline.entries.get(step.entry)
            joined = began_in if began_in is not None and began_in in self.timeline.open_turns() else None
            seen = self._recorded_since(step)
            if opened.scan.get("kind") == PATHS_KIND:
                cp = self._paths_checkpoint(seen, opened)
            else:
                cp = self._bracket_checkpoint(seen, opened)
            if cp is not None:
                cp = self._without_others(cp, seen)
            records: list[EntryBegun | CheckpointRecorded | TurnEnded] = []
            if cp is not None:
                cp = cp.model_copy(update={"label": label, "bracket": False})
                if joined is not None:
                    records.append(cp)
                else:
                    entry_id = _new_id()
                    records.append(step.model_copy(update={
                        "id": entry_id, "entry": entry_id, "number": self.timeline.max_number + 1, "label": label,
                        "at": _now(), "head": self._user_head(),
                    }))
                    records.append(cp.model_copy(update={"entry": entry_id}))
                    records.append(TurnEnded(id=_new_id(), at=_now(), entry=entry_id))
                tx.add(*records)
            tx.after_publish(opened.remove)
            if not records:
                return None
            return self.timeline.view(self.timeline.entries[records[-1].entry])

    def discard_steps(self, session: str | None) -> int:
        """Remove the steps of ``session`` that never ended (a tool call whose end never came);
        answers how many."""
        removed = 0
        with self.transaction():
            for name in brackets.step_names(self._brackets):
                try:
                    opened = brackets.read_named(self._brackets, name)
                except StoreError:
                    opened = None
                    (self._brackets / name).unlink(missing_ok=True)
                if opened is not None and opened.begun is not None and opened.begun.session == session:
                    opened.remove()
                    removed += 1
        return removed

    def _recorded_since(self, step: EntryBegun) -> FoldedEntry:
        """What every entry recorded while the step ran (steps side by side, another session's,
        operations), as one state whose checkpoints explain changes away (``_explained_by_batches``)."""
        timeline = self.timeline
        since: list[CheckpointRecorded] = []
        applied: dict[str, bool] = {}
        for cp_id in reversed(timeline.checkpoint_seq):
            owner = timeline.entries[timeline.checkpoint_owner[cp_id]]
            cp = timeline.checkpoint(owner.begun.entry, cp_id)
            if cp.at < step.at:
                break  # the log is written in time order, under the store's lock
            since.append(cp)
            applied[cp_id] = owner.applied.get(cp_id, True)
        return FoldedEntry(begun=step, checkpoints=since[::-1], applied=applied)

    def _without_others(self, cp: CheckpointRecorded, seen: FoldedEntry) -> CheckpointRecorded | None:
        """The step's checkpoint without what others recorded meanwhile on its paths: where their
        changes to a path chain from what the step began with (or up to what it ended with),
        the step's change starts where theirs ended (or ends where theirs began)."""
        changes: list[PathChange] = []
        for change in cp.changes:
            chain = [
                c for other in seen.checkpoints
                if not other.bracket and seen.applied.get(other.id, True)
                for c in other.changes if c.path == change.path
            ]
            before, after = change.before, change.after
            if chain and all(same_version(a.after, b.before) for a, b in pairwise(chain)):
                if same_version(chain[0].before, before):
                    before = chain[-1].after
                elif same_version(chain[-1].after, after):
                    after = chain[0].before
            if same_version(before, after):
                continue
            if before is change.before and after is change.after:
                changes.append(change)
                continue
            made = change.new_folders if (before is None) != (after is None) else []  # an addition's, or a deletion's
            changes.append(self._path_change(change.path, before, after, new_folders=made))
        if not changes and not cp.notices:
            return None
        return cp.model_copy(update={"changes": changes})

    def _paths_checkpoint(self, seen: FoldedEntry, opened: brackets.OpenTurn) -> CheckpointRecorded | None:
        """What an edit step changed in the files it named (under the settings it began with)."""
        assert opened.scan is not None
        capture = self._turn_capture(opened)
        changes = []
        for rel, data in sorted(opened.scan.get("files", {}).items()):
            before = FileVersion.model_validate(data) if data else None
            disk = self.workspace.read(rel)
            after = None if disk is None else capture.version(rel, disk.content, disk.mode)
            if same_version(before, after):
                continue
            made = opened.scan.get("new_folders", {}).get(rel, []) if before is None and after is not None else []
            changes.append(self._path_change(rel, before, after, new=disk.content if disk else None, new_folders=made))
        if not changes:
            return None
        return CheckpointRecorded(id=_new_id(), at=_now(), entry=seen.begun.entry, changes=changes)
