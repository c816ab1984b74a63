"""Steps: one tool call of an agent, recorded as one checkpoint of the open turn.

A step has a start and an end that arrive in two different processes (an agent runs a hook
before the call and another after it), so what the start saw waits in the store between them
(``brackets/step-<key>``, ``brackets.py``). Two kinds:

* ``paths`` given (an edit tool that names its files): the start stores those files'
  before-images (and the folders writing a missing one would create) and the scanner's snapshot
  too; the end compares the named files with the files now. The payload is a hint, the disk the
  truth: when what changed on disk is not all in the named files (the tool wrote others, or the
  named ones are not what it wrote), the step records what changed, like a shell step, with a
  notice; the named files keep the before-images captured for them. Cost: those files and a
  scan, which a long-lived process's watch answers without listing the tree (``watch.py``).
* no ``paths`` (a shell command, or an edit tool whose files cannot be found): the start takes
  the scanner's snapshot, like a turn's bracket; the end records what changed on disk in between.

Either way a change that other steps, batches or operations recorded while the step ran (an edit
running beside the command, another agent session's step on the same file, an undo) is theirs:
it is left out, and where it is only the first (or last) part of what the step saw on a path, the
step records the rest. Two sessions never claim the same change.

In a folder that is not a git repository the first scan copies the whole folder into the store;
above the ``first_copy_limit`` setting (``turns.first_copy_refusal``) nobody is there to ask, so
an edit step records its named files only (no scan) and a shell step is refused (``NeedsConsent``:
the hook logs it, ``takeback status`` shows it) until the person allows the copy.

A turn opened without a bracket (``begin_turn(bracket=False)``) is then the union of its steps:
what changes on disk between two steps is not in it. A step joins its session's open turn
(``Engine._turn_for``: several sessions each have their own); a step whose session has no turn
open is recorded as a turn of its own, labelled by the step.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import pairwise
from typing import Literal

import pygit2

from ..core import derive
from ..core.clock import new_id as _new_id
from ..core.clock import now as _now
from ..core.models import (
    AtRisk,
    BatchChange,
    CheckpointRecorded,
    Entry,
    EntryBegun,
    FileVersion,
    LostFile,
    PathChange,
    TurnEnded,
    same_version,
)
from ..core.timeline import FoldedEntry
from ..errors import InvalidInput, NeedsConsent, StoreError
from ..scanning.scan import snapshot_sees
from ..workspace import birth
from . import brackets, lost
from .parts import EngineParts
from .turns import first_copy_refusal

_ALLOW_FIRST_COPY = "run 'takeback begin --copy-all' and then 'takeback end' once in it"
"""What allows an agent's steps the first whole-folder copy: a bracket that takes it."""

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
        at_risk: AtRisk | None = None,
    ) -> None:
        """Start step ``key``: keep the before-images of ``paths`` (an edit), or with no
        ``paths`` the scanner's snapshot (a shell command), until ``end_step(key)``. ``at_risk``:
        what the call (one the guard let through) may destroy that Takeback does not record —
        every ref is read, and the ignored files named are kept as far as ``guard.keep_bytes``
        allows (``lost.py``), so the end can say what was lost and how to put back the rest."""
        rels = None if paths is None else sorted({self.workspace.rel(p) for p in paths})
        with self.transaction():
            state = self._turn_for(session)
            begun = EntryBegun(
                id=_new_id(), at=_now(), entry=state.begun.entry if state else _new_id(), number=0,
                session=session, agent=agent, source="hook",
            )
            scanner = self._scanner()  # an edit step scans too: the payload is a hint
            refusal = first_copy_refusal(scanner, self.config, _ALLOW_FIRST_COPY)
            if rels is None:
                if refusal is not None:  # a shell step: nothing but a scan can see what it changes
                    raise NeedsConsent(refusal)
                snapshot = scanner.begin(self.capture.from_disk)
            else:
                files, folders = {}, {}
                for rel in rels:
                    version = self.capture.from_disk(rel)
                    files[rel] = version.model_dump() if version else None
                    if version is None and self.workspace.missing_folders(rel):
                        folders[rel] = self.workspace.missing_folders(rel)  # what writing it would create
                snapshot = {"kind": PATHS_KIND, "files": files, "new_folders": folders,  # (no scan: its paths only)
                            "scan": None if refusal is not None else scanner.begin(self.capture.from_disk),
                            "scanned_ns": time.time_ns()}
            kept = None
            if at_risk is not None and at_risk.paths:
                kept = lost.keep(self.capture, self.workspace, at_risk.paths, self.config.guard.keep_bytes)
            self.store.flush()  # the content the snapshot names is on disk before the snapshot
            try:
                brackets.write(
                    self._brackets, begun, snapshot, scanner.index_file(), self.config.fsync,
                    nested_sources=scanner.nested_indexes, config=self.config.model_dump(mode="json"), name=_file_name(key),
                    index_copies=self.store.path / brackets.INDEX_COPIES,
                    git=self._git_state(every_ref=at_risk is not None and at_risk.git), at_risk=kept,
                )
            except OSError as exc:
                raise StoreError(f"cannot write to the store {self.store.path}: {exc}") from exc

    def end_step(self, key: str, label: str | None, outside: Sequence[str] = ()) -> Entry | None:
        """End step ``key``: record what it changed as a checkpoint named ``label`` of the turn
        it began in (or of a turn of its own); ``outside``: files its tool named outside the
        workspace, which it lists as not recorded. None: no such step, or it changed nothing."""
        name = _file_name(key)
        with self.transaction() as tx:
            opened = brackets.read_named(self._brackets, name)
            if opened is None or opened.begun is None or opened.scan is None:
                return None
            step = opened.begun
            began_in = self.timeline.find(step.entry)
            joined = began_in if began_in is not None and began_in in self.timeline.open_turns() else None
            seen = self._recorded_since(step)
            if opened.scan.get("kind") == PATHS_KIND:
                cp = self._paths_checkpoint(seen, opened)
                if isinstance(opened.scan.get("scan"), dict):
                    cp = self._as_seen_on_disk(cp, seen, opened, name)
            else:
                cp = self._bracket_checkpoint(seen, opened)
            if cp is not None:
                cp = self._without_others(cp, seen)
            moved = self._git_moved(opened)
            number = joined.begun.number if joined is not None else self.timeline.max_number + 1
            gone = self._lost(opened, number, cp)
            if moved or outside or gone:  # a step that moved git, wrote elsewhere or lost files is one: it says what cannot be taken back
                cp = (cp or CheckpointRecorded(id=_new_id(), at=_now(), entry=step.entry, changes=[])).model_copy(
                    update={"git_moved": moved, "outside": list(dict.fromkeys(outside)), "lost": gone})
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
            return self.timeline.view(self.timeline.state(records[-1].entry))

    def _lost(self, opened: brackets.OpenTurn, number: int, cp: CheckpointRecorded | None) -> list[LostFile]:
        """The ignored files a guarded step kept at its begin that are gone or changed now
        (``lost.losses``), but for those it records as its own changes."""
        if not opened.at_risk:
            return []
        recorded = {c.path for c in cp.changes} if cp is not None else set()
        try:
            return lost.losses(opened.at_risk, self._turn_capture(opened), self.workspace, number, recorded)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a begin state not as written
            raise StoreError(f"unreadable kept files in the step's file in {self._brackets}: {exc}") from exc

    def record_made_edit(
        self, path: str, edits: list[tuple[str, str]], label: str, session: str | None = None, agent: str | None = None,
    ) -> Entry | None:
        """Record an edit reported only after it was made (``edits``: the (old, new) texts it
        replaced in ``path``), as a step of ``session``'s open turn. Its before-image is the only
        one that fits the file now (``core/derive.py``: a unique reversal, or a version Takeback
        or git knows that gives the file now); an empty one is an absent file when the file was
        born during the turn; otherwise the file is "before unknown" and undo leaves it alone.
        None: the edit changed nothing."""
        rel = self.workspace.rel(path)
        disk = self.workspace.read(rel)
        if disk is None:
            raise InvalidInput(f"{rel} is gone: the edit reported on it cannot be recorded")
        text = disk.content.decode("utf-8", "surrogateescape")
        known = [k.decode("utf-8", "surrogateescape") for k in self.known_versions(rel)]
        derived = derive.only_fit(text, edits, known)
        before: bytes | None | Literal["unknown"] = "unknown"
        if derived == "" and "" not in known:  # an empty file, or none: the file's birth tells
            before = None if self._born_in_turn(rel, session) else "unknown"
        elif derived is not None:
            before = derived.encode("utf-8", "surrogateescape")
        if before == disk.content:
            return None
        change = BatchChange(path=rel, before=before, after=disk.content, mode=disk.mode)
        return self.record_batch([change], label=label, session=session, agent=agent, source="hook")[0]

    def _born_in_turn(self, rel: str, session: str | None) -> bool:
        """Whether ``rel`` was created after ``session``'s open turn began (its birth time, where
        the file system keeps one)."""
        turn = self._turn_for(session)
        born = birth.born_ns(self.workspace.root / rel)
        return turn is not None and born is not None and born >= int(turn.begun.at.timestamp() * 1e9)

    def known_versions(self, rel: str) -> list[bytes]:
        """What ``rel`` held as far as Takeback and git know, for checking a before-image derived
        from an edit reported after it was made (``core/derive.py``): the last version a
        checkpoint recorded for it, git's HEAD and index versions (each when there is one)."""
        found: list[bytes] = []
        timeline = self.timeline
        for owner, cp in timeline.checkpoints_newest_first():
            change = next((c for c in cp.changes if c.path == rel), None)
            if change is not None and owner.applied.get(cp.id, True):
                if change.after is not None and not change.after.withheld and self.store.has(change.after.oid):
                    found.append(self.capture.content(change.after))
                break
        self._user_head()  # opens the user's repository, once
        repo = self._user_repo
        if repo and repo.workdir:
            found.extend(_git_versions(repo, os.path.relpath(self.workspace.root / rel, repo.workdir)))
        return found

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
            brackets.sweep(self._brackets)  # the links those steps held (their index copy stays for the next step)
        return removed

    def _recorded_since(self, step: EntryBegun) -> FoldedEntry:
        """What every entry recorded while the step ran (steps side by side, another session's,
        operations), as one state whose checkpoints explain changes away (``_explained_by_batches``)."""
        timeline = self.timeline
        since: list[CheckpointRecorded] = []
        applied: dict[str, bool] = {}
        for owner, cp in timeline.checkpoints_newest_first():
            if cp.at < step.at:
                break  # the log is written in time order, under the store's lock
            since.append(cp)
            applied[cp.id] = owner.applied.get(cp.id, True)
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

    def _as_seen_on_disk(
        self, cp: CheckpointRecorded | None, seen: FoldedEntry, opened: brackets.OpenTurn, name: str,
    ) -> CheckpointRecorded | None:
        """An edit step's checkpoint checked against what changed on disk while it ran (its
        scanner snapshot): the changes to files it did not name are added, with a notice —
        but for those another step still open will see at its end (a shell command running beside
        it, as Copilot CLI runs them): they are that step's."""
        assert opened.scan is not None
        named = set(opened.scan.get("files", {}))
        scanned = opened.scan.get("scanned_ns")
        touched = self._scan_cache.touched_since(str(self.workspace.root), scanned) if isinstance(scanned, int) else None
        if touched is not None and touched <= named:
            return cp  # the watch saw no other file change since the snapshot: no scan needed
        on_disk = self._bracket_checkpoint(seen, replace(opened, scan=opened.scan["scan"]))
        others = [c for c in on_disk.changes if c.path not in named] if on_disk is not None else []
        if others:
            still_open = self._open_snapshots(name)
            others = [c for c in others if not any(_sees(s, c.path, c.after) for s in still_open)]
        if not others:
            return cp
        changed = ", ".join(c.path for c in others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        notice = (f"the tool named {', '.join(sorted(named)) or 'no file'} but changed {changed} too: "
                  "recorded from what changed on disk")
        assert on_disk is not None
        base = cp or on_disk.model_copy(update={"changes": [], "notices": []})
        return base.model_copy(update={
            "changes": sorted([*base.changes, *others], key=lambda c: c.path),
            "notices": [*base.notices, *on_disk.notices, notice],
        })

    def _open_snapshots(self, besides: str) -> list[dict]:
        """The snapshots of the steps open now but ``besides``: a shell step's scan, an edit
        step's files and scan."""
        found = []
        for other in brackets.step_names(self._brackets):
            try:
                opened = brackets.read_named(self._brackets, other) if other != besides else None
            except StoreError:
                opened = None
            if opened is not None and opened.scan is not None:
                found.append(opened.scan)
        return found

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


def _sees(snapshot: dict, rel: str, now: FileVersion | None) -> bool:
    """Whether the step that began with ``snapshot`` will record ``rel``'s change to ``now``:
    an edit step that names it, or one whose scan will find it changed."""
    if snapshot.get("kind") == PATHS_KIND:
        inner = snapshot.get("scan")
        return rel in snapshot.get("files", {}) or (isinstance(inner, dict) and snapshot_sees(inner, rel, now))
    return snapshot_sees(snapshot, rel, now)


def _git_versions(repo: pygit2.Repository, path: str) -> list[bytes]:
    """The HEAD and index versions of ``path`` (relative to the work tree) in ``repo``."""
    if path.startswith("..") or os.sep != "/" and os.sep in path:
        return []
    found = []
    try:
        if not repo.head_is_unborn:
            tree = repo.head.peel(pygit2.Tree)
            if path in tree:
                found.append(repo[tree[path].id].read_raw())
        entry = repo.index[path] if path in repo.index else None
        if entry is not None:
            found.append(repo[entry.id].read_raw())
    except (pygit2.GitError, KeyError, ValueError, OSError):
        pass
    return found
