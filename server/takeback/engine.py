"""The turn engine: opens a workspace's store, records agent turns, answers questions.

``Engine`` is the one API the CLI and the language server call; it knows nothing of either.
Recording (brackets, edit batches, checks) and reading (timeline, diffs, status, gc) are here;
undo, redo, revert and restore come from ``operations.Operations``.
Every mutating call holds the store's lock, brings the in-memory timeline up to the log's
head (another process may have written) and the open turns' files, does its work and appends
its records in one compare-and-swap (a turn's begin waits in its file and is published with the
first record appended after it: ``brackets.py``).

Several turns can be open at once, one per agent session: a turn opened without a bracket (an
agent's prompt through its hooks) takes only the steps and batches of its own session, so two
sessions in one workspace keep separate turns. A turn with a whole-disk bracket claims every
change on disk, so it is open alone: beginning it ends every open turn, and while it is open
every step and batch joins it. Operations that write the workspace go through the journal, so they
complete or leave every file as it was. A write that asks an editor to change open documents
lets the lock go while it waits, and goes on only if nothing moved meanwhile (``handoff.py``).

Nothing read back from the store is trusted blindly: records (from the log or the timeline
cache, ``timeline.json``, which is plain validated data) and the journal must name clean
workspace paths, or the store is refused with an error that says so; a turn is ended under
the settings it began with (kept in the open turn's file), whatever changed in between.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Final, Literal

import pygit2
from pydantic import BaseModel, ConfigDict, ValidationError

from . import atomic, brackets, failures
from .capture import Capturer
from .clock import new_id as _new_id
from .clock import now as _now
from .config import Config, default_store_dir, load_config
from .errors import (
    InvalidInput,
    NotFound,
    NothingToDo,
    StateError,
    StoreError,
    TakebackError,
)
from .handoff import ask_editor
from .journal import Journal, JournalDoc, JournalFile
from .merge import Version
from .models import (
    MODE_FILE,
    BatchChange,
    Check,
    CheckpointApplied,
    CheckpointRecorded,
    CheckRecorded,
    EntriesDropped,
    Entry,
    FileVersion,
    GcReport,
    PathChange,
    Record,
    RecordEnvelope,
    StoreStatus,
    TurnBegun,
    TurnEnded,
    same_version,
)
from .operations import EditorApply, Operations
from .scan import Changed, GitScanner, ScanCache, WalkScanner, make_scanner
from .steps import Steps
from .store import Store
from .textdiff import is_binary, line_stats, unified_diff
from .timeline import FoldedEntry, Timeline
from .workspace import DiskFile, Workspace, is_recorded_path

log = logging.getLogger("takeback.engine")

_CACHE_FILE = "timeline.json"
_OLD_CACHE_FILE = "timeline.pickle"  # older versions' cache: removed, never read
_CACHE_FORMAT: Final = 4  # bump when the records' shape changes (and _TimelineCache.format with it)
_CACHE_AFTER_RECORDS = 50  # rewrite the cache when opening had to read this many log commits


class _TimelineCache(BaseModel):
    """What ``timeline.json`` holds: a log head and every record folded up to it, in log order
    (replaying them costs no object reads; they are validated like the log's own)."""

    model_config = ConfigDict(extra="forbid")
    format: Literal[4]
    head: str
    records: list[Record]


class Engine(Operations, Steps):
    """One workspace's timeline and the operations on it."""

    def __init__(self, workspace: str | os.PathLike[str], config: Config | None = None, long_lived: bool = False) -> None:
        """``long_lived``: the process keeps this engine for many calls (the language server);
        it then watches the work tree (``watch.py``, unless the ``watch_tree`` setting is off)
        so a bracket's begin can reuse the previous listing when nothing changed."""
        if not os.fspath(workspace).strip():  # Path("") would quietly mean the current folder
            raise InvalidInput("the workspace folder is empty: name a folder")
        root = Path(workspace)
        if not root.is_dir():
            raise InvalidInput(f"workspace {root} is not a folder")
        self.workspace = Workspace(root)
        self.config = config or load_config(self.workspace.root)
        store_dir = self.config.store_dir or default_store_dir(self.workspace.root)
        self.store = Store(Path(store_dir), self.workspace.root, self.config.fsync, self.config.lock_timeout)
        self.capture = Capturer(self.store, self.workspace, self.config)
        self.journal = Journal(self.store, self.workspace, self.config.fsync)
        self.timeline = Timeline()
        self._folded: list[Record] = []  # every record of the log folded into the timeline, in order
        self._head: str | None = None
        self._user_repo: pygit2.Repository | None | Literal[False] = False
        self._scan_cache = ScanCache(watch_tree=long_lived and self.config.watch_tree)
        self._brackets = self.store.path / "brackets"
        store_real = os.path.realpath(self.store.path)
        root_real = str(self.workspace.root)
        self._store_rel = os.path.relpath(store_real, root_real) if store_real.startswith(root_real + os.sep) else None
        with self.store.locked():
            self._load_cache()
            replayed = self._refresh()
            if replayed >= _CACHE_AFTER_RECORDS:
                self._save_cache()
            self._check_journal()
            self.last_recovery = self.journal.recover(self._committed, self.capture.matches)
            if self.last_recovery:
                log.warning(
                    "recovered an interrupted %s: %s %d files; %d left as they were (changed since): %s",
                    self.last_recovery.operation,
                    self.last_recovery.action,
                    len(self.last_recovery.paths),
                    len(self.last_recovery.left),
                    ", ".join(self.last_recovery.left) or "-",
                )

    # ------------------------------------------------------------------ log plumbing

    def _load_cache(self) -> None:
        """Start from the records cached at some log head, so opening costs what is new. A cache
        that is not valid is thrown away (the log is read instead)."""
        (self.store.path / _OLD_CACHE_FILE).unlink(missing_ok=True)
        cache_file = self.store.path / _CACHE_FILE
        try:
            cache = _TimelineCache.model_validate_json(cache_file.read_bytes(), strict=True)  # strict: faster too
            timeline = Timeline()
            for record in cache.records:
                self._check_record(record, "the timeline cache")
                timeline.apply(record)
        except FileNotFoundError:
            return
        except (OSError, ValidationError, StoreError) as exc:
            log.warning("the timeline cache %s is not valid, so it is not used: %s", cache_file, exc)
            cache_file.unlink(missing_ok=True)
            return
        self.timeline, self._head, self._folded = timeline, cache.head, cache.records

    def _save_cache(self) -> None:
        if self.timeline.tentatives or self._head is None:
            return  # the cache holds what the log holds; the next open saves it
        cache = _TimelineCache(format=_CACHE_FORMAT, head=self._head, records=self._folded)
        try:
            atomic.write(self.store.path / _CACHE_FILE, cache.model_dump_json().encode("utf-8"))
        except OSError as exc:
            log.warning("could not write the timeline cache: %s", exc)

    def _check_record(self, record: Record, where: str) -> None:
        """Refuse a record that names a path no recorded change can have (``..``, absolute,
        inside ``.git``): the store was not written by Takeback, and nothing may act on it."""
        if isinstance(record, CheckpointRecorded):
            for change in record.changes:
                for path in (change.path, change.renamed_from, *change.new_folders):
                    if path is not None and not is_recorded_path(path):
                        raise StoreError(
                            f"{where} in {self.store.path} names the path {path!r}, which is outside the "
                            "workspace or inside .git: Takeback did not write it, and will not act on it"
                        )

    def _check_journal(self) -> None:
        """Refuse, before recovery writes anything, a journal whose paths are not the
        workspace's (or whose backups are not in its backup folder)."""
        try:
            doc: JournalDoc | None = self.journal.pending()
        except ValueError as exc:
            raise StoreError(f"unreadable journal {self.journal.file}: {exc}; nothing was written") from exc
        if doc is None:
            return
        for item in doc.files:
            try:
                for path in [item.path, *item.new_folders]:
                    self.workspace.check(path)
                backup = item.backup
                inside = backup is None or (os.path.basename(backup) == backup and backup not in ("", ".", ".."))
            except TakebackError:
                inside = False
            if not inside:
                raise StoreError(
                    f"the journal {self.journal.file} names {item.path!r} (backup {item.backup!r}, new folders "
                    f"{item.new_folders!r}), which is not a file inside the workspace: Takeback did not write it, "
                    "so nothing was recovered or written; remove the journal to go on"
                )
        for folder in doc.folders:
            if not is_recorded_path(folder):
                raise StoreError(
                    f"the journal {self.journal.file} names the folder {folder!r}, which is not inside the "
                    "workspace: Takeback did not write it, so nothing was recovered or written; remove the journal to go on"
                )

    def _refresh(self) -> int:
        """Fold the log's new commits, and the open turns' begins the log does not hold yet,
        into the timeline; answers how many log commits it read."""
        head = self.store.head()
        waiting = brackets.read_begins(self._brackets)
        replayed = 0
        if head != self._head:
            self.timeline.retract()  # the log may hold them now
            replayed = self._fold(head)
        tentative = {b.entry for b in self.timeline.tentatives}
        unpublished = []
        for name, begun in waiting:
            published = self.timeline.entries.get(begun.entry)
            if published is None or begun.entry in tentative:
                unpublished.append(begun)
            elif published.state != "open":  # its turn ended, and the file outlived it (a crash)
                (self._brackets / name).unlink(missing_ok=True)
        if [b.entry for b in self.timeline.tentatives] != [b.entry for b in unpublished]:
            self.timeline.retract()
            for begun in unpublished:
                self.timeline.add_tentative(begun)
        return replayed

    def _fold(self, head: str | None) -> int:
        try:
            chain = self.store.commit_chain(head, self._head) if head else []
        except StoreError:
            self.timeline, self._folded = Timeline(), []
            chain = self.store.commit_chain(head, None) if head else []
        if head is None or self._head is None:
            self.timeline, self._folded = Timeline(), []  # a full replay (gc resets _head) starts from nothing
        for oid in chain:
            try:
                envelope = RecordEnvelope.model_validate_json(self.store.read_meta(oid))
            except ValueError as exc:
                raise StoreError(f"unreadable record {oid} in {self.store.path}: {exc}") from exc
            for record in envelope.records:
                self._check_record(record, f"the record {oid}")
                self.timeline.apply(record)
                self._folded.append(record)
        self._head = head
        return len(chain)

    def _append(self, records: Sequence[Record]) -> None:
        """Publish records as one log commit (all or none) and fold them into the timeline.
        The open turns' begins that wait outside the log are published first in the same
        commit, in the order they began (so the log's order is the order of the numbers)."""
        published: list[Record] = [*self.timeline.tentatives, *records]
        blobs: set[str] = set()
        for record in records:
            if isinstance(record, CheckpointRecorded):
                for change in record.changes:
                    for version in (change.before, change.after):
                        if version is not None and not version.withheld:
                            blobs.add(version.oid)
        meta = RecordEnvelope(records=published).model_dump_json().encode()
        self._head = self.store.append(meta, blobs, _message(published), self._head)
        self.timeline.confirm()
        for record in records:
            self.timeline.apply(record)
        self._folded += published

    def close(self) -> None:
        """Let go of what a long-lived engine holds besides its store (the work tree's watch)."""
        with self.store.locked():
            self._scan_cache.close()

    def timeline_version(self) -> str | None:
        """A token that changes whenever the timeline does: the log head, followed by
        ``+<entry>`` for each open turn's file (opening a turn does not move the head). Cheap:
        reads the ref and two lines of each open turn's file."""
        with self.store.locked():
            head = self.store.head()
            begins = brackets.read_begins(self._brackets)
        return head if not begins else (head or "") + "".join(f"+{begun.entry}" for _name, begun in begins)

    def _committed(self, journal_id: str) -> bool:
        """Whether the operation a journal belongs to reached the log (then it rolls forward).

        An operation's journal is named by its entry (committed with its ``OperationDone``);
        an applied batch's by its checkpoint (recorded before the files are written).
        """
        if journal_id in self.timeline.checkpoint_owner:
            return True
        state = self.timeline.entries.get(journal_id)
        return state is not None and state.operation is not None

    def _user_head(self) -> str | None:
        if self._user_repo is False:
            try:
                found = pygit2.discover_repository(str(self.workspace.root))
                self._user_repo = pygit2.Repository(found) if found else None
            except pygit2.GitError:
                self._user_repo = None
        repo = self._user_repo
        if not repo:
            return None
        try:
            return None if repo.head_is_unborn else str(repo.head.target)
        except pygit2.GitError:
            return None

    def _skip(self, rel: str) -> bool:
        return self._store_rel is not None and (rel == self._store_rel or rel.startswith(self._store_rel + "/"))

    def _scanner(self, kind: str | None = None) -> GitScanner | WalkScanner:
        """The scanner for a new bracket, or (``kind``) for ending one begun with that kind: a
        walk's snapshot is compared by a walk even if the folder became a repository since."""
        scanner = make_scanner(
            self.workspace,
            self.store.path / "statcache.json",
            self.config.git_scanner and kind != WalkScanner.kind,
            self._skip,
            self._scan_cache,
        )
        scanner.before_save = self.store.flush  # content a cache names is stored before the cache
        return scanner

    # ------------------------------------------------------------------ turns

    def begin_turn(
        self,
        label: str | None = None,
        session: str | None = None,
        agent: str | None = None,
        source: str = "bracket",
        bracket: bool = True,
    ) -> Entry:
        """Open a turn. With ``bracket`` (the default), whatever changes on disk until
        ``end_turn`` is recorded too: such a turn is open alone, so every open turn is ended
        first. Without, the turn is ``session``'s (an agent's prompt through its hooks): it
        takes that session's steps and batches only, and ends only the session's own open turn
        (an agent that died, or a prompt whose stop never came) and a whole-disk one.

        The turn's begin goes to its file, with the bracket's snapshot, and reaches the log with
        the next record published (``brackets.py``): nothing is published here."""
        with self.store.locked():
            self._refresh()
            notices = []
            for open_state in self.timeline.open_turns():
                if not bracket and self._session_turn(open_state) and open_state.begun.session != session:
                    continue  # another agent session's turn goes on
                log.info("turn #%d was still open; ending it first", open_state.begun.number)
                self._end(open_state, [], [], ended_by="next_prompt")
                notices.append(
                    f"turn #{open_state.begun.number} was still open; this begin ended it first "
                    "(what changed on disk until now is recorded as its changes)"
                )
            entry_id = _new_id()
            scanner = self._scanner() if bracket else None
            snapshot = scanner.begin(self.capture.from_disk) if scanner is not None else None
            record = self._new_begin(entry_id, label=label, session=session, agent=agent, source=source)
            self.store.flush()  # the content the snapshot names is on disk before the snapshot
            try:
                brackets.write(
                    self._brackets, record, snapshot, scanner.index_file() if scanner is not None else None,
                    self.config.fsync, nested_sources=scanner.nested_indexes if scanner is not None else None,
                    config=self.config.model_dump(mode="json"),
                    name=brackets.FILE_NAME if bracket else brackets.session_name(entry_id),
                )
            except OSError as exc:
                raise StoreError(f"cannot write to the store {self.store.path}: {exc}") from exc
            self.timeline.add_tentative(record)
            entry = self.timeline.view(self.timeline.entries[entry_id])
            return entry.model_copy(update={"notices": [*notices, *entry.notices]}) if notices else entry

    def end_turn(
        self,
        turn: str | None = None,
        commands: Iterable[str] = (),
        checks: Iterable[Check] = (),
        ended_by: str | None = None,
    ) -> Entry:
        """Close open turn ``turn``, or every open turn (several agent sessions may each have
        one), recording what a bracket saw change on disk; ``ended_by``: who ended it
        (``TurnEnded.ended_by``). ``commands`` and ``checks`` go to the newest turn ended, which
        is the answer (naming the others it ended in its notices)."""
        with self.store.locked():
            self._refresh()
            open_states = self.timeline.open_turns()
            if not open_states:
                raise StateError("no turn is open: start one with 'takeback begin'")
            if turn is not None:
                state = self.timeline.resolve(turn)
                if state not in open_states:
                    if len(open_states) == 1:
                        raise StateError(f"turn {turn} is not the open turn (#{open_states[0].begun.number} is)")
                    raise StateError(f"turn {turn} is not open (the open turns are {_numbers(open_states)})")
                open_states = [state]
            for state in open_states[:-1]:
                self._end(state, [], [], ended_by)
            state = open_states[-1]
            self._end(state, list(commands), list(checks), ended_by)
            self._auto_gc()
            entry = self.timeline.view(state)
            if len(open_states) == 1:
                return entry
            also = [f"also ended turn #{s.begun.number}" + (f" (session {s.begun.session})" if s.begun.session else "")
                    for s in open_states[:-1]]
            return entry.model_copy(update={"notices": [*also, *entry.notices]})

    def _new_begin(
        self, entry_id: str, label: str | None, session: str | None, agent: str | None = None, source: str = "bracket",
        kind: str = "turn", at: datetime | None = None,
    ) -> TurnBegun:
        """The record that opens entry ``entry_id``: the next number, the user's HEAD now."""
        return TurnBegun(
            id=entry_id, at=at or _now(), entry=entry_id, number=self.timeline.max_number + 1, kind=kind,  # type: ignore[arg-type]
            session=session, label=label, agent=agent, source=source,  # type: ignore[arg-type]
            head=self._user_head(),
        )

    def _session_turn(self, state: FoldedEntry) -> bool:
        """Whether open turn ``state`` is a session's (no bracket, its own file), not whole-disk."""
        return brackets.is_session_turn(self._brackets, state.begun.entry)

    def _turn_for(self, session: str | None) -> FoldedEntry | None:
        """The open turn a step or batch of ``session`` joins (None: it is a turn of its own):
        a whole-disk turn, open alone, takes everything; else the session's own open turn; else
        the one open turn, if it or the step has no session."""
        open_states = self.timeline.open_turns()
        whole = [s for s in open_states if not self._session_turn(s)]
        if whole:
            return whole[-1]
        mine = [s for s in open_states if s.begun.session == session]
        if mine:
            return mine[-1]
        if len(open_states) == 1 and None in (session, open_states[0].begun.session):
            return open_states[0]
        return None

    def open_turn_of(self, session: str | None) -> Entry | None:
        """The open turn ``session``'s stop ends: the one its steps join, unless that one
        belongs to another session."""
        with self.store.locked():
            self._refresh()
            state = self._turn_for(session)
            if state is None:
                return None
            mine = session is None or state.begun.session in (None, session)
            return self.timeline.view(state) if mine else None

    def _end(self, state: FoldedEntry, commands: list[str], checks: list[Check], ended_by: str | None = None) -> None:
        records: list[Record] = []
        opened = brackets.read(self._brackets, state.begun.entry)
        if opened is not None and opened.scan is not None:
            cp = self._bracket_checkpoint(state, opened)
            if cp is not None:
                records.append(cp)
        now = _now()
        checks = [c if c.at else c.model_copy(update={"at": now}) for c in checks]
        records.append(TurnEnded(
            id=_new_id(), at=now, entry=state.begun.entry, commands=commands, checks=checks, ended_by=ended_by,
        ))
        self._append(records)
        if opened is not None:
            opened.remove()

    def _turn_capture(self, opened: brackets.OpenTurn) -> Capturer:
        """How the open turn's content is stored: under the settings in force when it began."""
        if opened.config is None:
            return self.capture  # a turn begun by an older version
        try:
            config = Config.model_validate(opened.config)
        except ValidationError as exc:
            raise StoreError(f"unreadable settings in the open turn's file in {self._brackets}: {exc}") from exc
        return Capturer(self.store, self.workspace, config)

    def _bracket_checkpoint(self, state: FoldedEntry, opened: brackets.OpenTurn) -> CheckpointRecorded | None:
        """What changed on disk since the bracket's snapshot (``state``'s begin), as the turn's
        bracket checkpoint (stored under the settings the turn began with)."""
        assert opened.scan is not None
        scanner = self._scanner(opened.scan.get("kind"))
        if scanner.kind != opened.scan.get("kind"):
            # Begun in a git work tree that is gone (or git is): no index to tell what changed.
            return CheckpointRecorded(
                id=_new_id(), at=_now(), entry=state.begun.entry, label="changes on disk", changes=[], bracket=True,
                notices=["what changed on disk during this turn was not recorded: the git repository "
                         "its bracket began with is gone (or git, or the git_scanner setting is)"],
            )
        snapshot_paths = opened.scan.get("dirty") or opened.scan.get("files") or {}  # git's, or a walk's
        outside = next((p for p in snapshot_paths if not is_recorded_path(p)), None)
        if outside is not None:
            raise StoreError(
                f"the open turn's snapshot in {self._brackets} names {outside!r}, which is outside the workspace "
                "or inside .git: Takeback did not write it; remove the file to go on"
            )
        capture = self._turn_capture(opened)
        changed = scanner.end(opened.scan, opened.index, capture.from_disk, capture.version, opened.nested)
        # What edit batches and steps recorded since the bracket began (the turn's own, or a step
        # of a turn that ended meanwhile) is theirs: the bracket does not claim it again.
        explaining = self._recorded_since(state.begun)
        changed = [c for c in changed if not _explained_by_batches(explaining, c)]
        notices = [*scanner.notices, *scanner.skipped.notices(), *_notices(changed)]
        if not changed and not notices:
            return None
        begun_ns = int(state.begun.at.timestamp() * 1_000_000) * 1000
        known = [c.path for c in changed if c.before is not None]  # files there at begin
        return CheckpointRecorded(
            id=_new_id(),
            at=_now(),
            entry=state.begun.entry,
            label="changes on disk",
            changes=[
                self._path_change(
                    c.path, c.before, c.after,
                    new_folders=self.workspace.folders_made_since(c.path, begun_ns, known) if c.before is None
                    else self.workspace.folder_made_in_place(c.path, begun_ns) if c.after is None else [],
                )
                for c in changed
            ],
            bracket=True,
            notices=notices,
        )

    def _path_change(
        self,
        path: str,
        before: FileVersion | None,
        after: FileVersion | None,
        renamed_from: str | None = None,
        old: bytes | None = None,
        new: bytes | None = None,
        new_folders: Iterable[str] = (),
    ) -> PathChange:
        """Describe one path's change; ``old``/``new`` are its bytes when the caller has them;
        ``new_folders``: the folders it created along with the file."""
        additions = deletions = 0
        binary = False
        if not any(v is not None and v.withheld for v in (before, after)):
            if old is None and before is not None:
                old = self.store.read_blob(before.oid)
            if new is None and after is not None:
                new = self.store.read_blob(after.oid)
            binary = is_binary(old) or is_binary(new)
            additions, deletions = line_stats(old, new)
        return PathChange(
            path=path, before=before, after=after, renamed_from=renamed_from,
            additions=additions, deletions=deletions, binary=binary, new_folders=list(new_folders),
        )

    def _joined_turn(self, turn: str | None, session: str | None = None) -> FoldedEntry | None:
        """The open turn a batch joins (None: it is a turn of its own): ``turn``, which must be
        open, else the one ``session``'s steps join (``_turn_for``)."""
        if turn is None:
            return self._turn_for(session)
        state = self.timeline.resolve(turn)
        if state not in self.timeline.open_turns():
            raise StateError(f"turn {turn} is not open; batches can only join an open turn")
        return state

    def record_batch(
        self,
        changes: list[BatchChange],
        label: str | None = None,
        session: str | None = None,
        agent: str | None = None,
        turn: str | None = None,
        applied: bool = True,
        source: str = "edit",
    ) -> tuple[Entry, str]:
        """Record one edit batch (before-images now, content after) as a checkpoint.

        The batch joins the open turn; with no open turn it is a turn of its own.
        Answers the entry and the new checkpoint's id. Nothing in the workspace is written.
        """
        if not changes:
            raise InvalidInput("an edit batch needs at least one file change")
        rels = [self.workspace.rel(c.path) for c in changes]
        if len(set(rels)) != len(rels):
            raise InvalidInput("an edit batch names the same path twice")
        renamed = [self.workspace.rel(c.renamed_from) if c.renamed_from else None for c in changes]
        with self.store.locked():
            self._refresh()
            state = self._joined_turn(turn, session)  # checked before any content is stored
            path_changes = []
            notices: list[str] = []
            for rel, change, source_path in zip(rels, changes, renamed, strict=True):
                path_changes.append(self._batch_change(rel, change, source_path, notices))
            records: list[Record] = []
            standalone = state is None
            entry_id = state.begun.entry if state else _new_id()
            if standalone:
                records.append(
                    self._new_begin(entry_id, label=label, session=session, agent=agent, source=source)
                )
            checkpoint_id = _new_id()
            records.append(
                CheckpointRecorded(
                    id=checkpoint_id, at=_now(), entry=entry_id, label=label, changes=path_changes,
                    applied=applied, notices=notices,
                )
            )
            if standalone:
                records.append(TurnEnded(id=_new_id(), at=_now(), entry=entry_id))
            self._append(records)
            if standalone:
                self._auto_gc()
            return self.timeline.view(self.timeline.entries[entry_id]), checkpoint_id

    def _batch_change(self, rel: str, change: BatchChange, source_path: str | None, notices: list[str]) -> PathChange:
        """One file of an edit batch, its before-image from the batch or the disk now (a notice
        added when the secrets or size policy withholds a version)."""
        if change.before == "disk":
            disk = self.workspace.read(rel)
            old = disk.content if disk else None
            before_mode = disk.mode if disk else None
        else:
            old = change.before
            if change.mode is not None:
                before_mode = change.mode
            else:
                size = self.workspace.size(rel)
                disk = self.workspace.read(rel) if size is not None else None
                before_mode = disk.mode if disk else None
        before = None if old is None else self.capture.version(rel, old, before_mode or MODE_FILE)
        mode = change.mode or before_mode or MODE_FILE
        after = None if change.after is None else self.capture.version(rel, change.after, mode)
        for version in (before, after):
            if version is not None and version.withheld:
                notices.append(_withheld_notice(rel, version))
                break
        made = self.workspace.missing_folders(rel) if old is None and after is not None else []
        return self._path_change(rel, before, after, source_path, old, change.after, made)

    def apply_batch(self, changes: list[BatchChange], **kwargs) -> tuple[Entry, str]:
        """Record a batch and write it to disk (for callers with no editor to apply it)."""
        entry, checkpoint_id, _applied = self.apply_through(changes, **kwargs)
        return entry, checkpoint_id

    def apply_through(
        self,
        changes: list[BatchChange],
        editor: EditorApply | None = None,
        in_editor: Iterable[str] = (),
        **record,
    ) -> tuple[Entry, str, bool]:
        """Record a batch (``record_batch``'s arguments) and bring it into the workspace; answers
        the entry, the checkpoint and whether the workspace got it.

        Paths in ``in_editor`` (documents open in an editor, whose before-images ``changes``
        carry) go through ``editor``, first, with the store's lock let go (``handoff.py``); the
        rest is written on disk under the journal once the editor applied its part. If the
        editor refuses, the batch is recorded as not applied and nothing is written; if the
        timeline or a file moved while the editor was asked, nothing is recorded (the editor's
        applied part is the caller's to take back). All or nothing.
        """
        with self.store.locked():
            self._refresh()
            editor_rels = {self.workspace.rel(p) for p in in_editor}
            editor_writes: list[tuple[str, Version | None]] = []
            on_disk: dict[str, DiskFile | None] = {}
            for change in changes:
                rel = self.workspace.rel(change.path)
                if rel in editor_rels:
                    mode = change.mode or MODE_FILE
                    editor_writes.append((rel, None if change.after is None else Version(change.after, mode)))
                else:
                    on_disk[rel] = self.workspace.read(rel)
            applied = True
            if editor_writes:
                self._joined_turn(record.get("turn"), record.get("session"))  # refused before the editor is asked
                applied = editor is not None and ask_editor(self, editor, editor_writes, on_disk)
            entry, checkpoint_id = self.record_batch(changes, applied=applied, **record)
            if applied:
                self._write_batch(checkpoint_id, changes, editor_rels)
            return self.timeline.view(self.timeline.entries[entry.id]), checkpoint_id, applied

    def _write_batch(self, checkpoint_id: str, changes: list[BatchChange], skip: set[str]) -> None:
        """Write a recorded checkpoint's files on disk (but those in ``skip``), under the journal.
        ``changes`` is the batch it was recorded from (the content, also where the store withheld
        it). If anything fails, the writes are rolled back and the checkpoint marked not applied."""
        owner = self.timeline.checkpoint_owner[checkpoint_id]
        cp = self.timeline.checkpoint(owner, checkpoint_id)
        given = {self.workspace.rel(c.path): c for c in changes}
        items: list[JournalFile] = []
        backups: dict[str, bytes] = {}
        for i, change in enumerate(cp.changes):
            if change.path in skip:
                continue
            backup = None
            if change.before is not None and change.before.withheld:
                source = given.get(change.path)
                old = source.before if source is not None and isinstance(source.before, bytes) else None
                if old is None:
                    disk = self.workspace.read(change.path)
                    old = disk.content if disk else None
                if old is not None:
                    backup = f"{i}.bin"
                    backups[backup] = old
            items.append(
                JournalFile(
                    path=change.path, before=change.before, after=change.after, backup=backup,
                    new_folders=change.new_folders,
                )
            )
        self.journal.start(checkpoint_id, "apply", items, backups)
        written: list[JournalFile] = []
        try:
            self.journal.forward(items, [], written, lambda item: self._write_batch_after(item, given))
        except BaseException as exc:
            self.journal.roll_back(written)
            self.journal.finish()
            try:
                self.set_applied(checkpoint_id, False, f"not applied: {exc}")
            except TakebackError:
                log.exception("could not mark checkpoint %s as not applied", checkpoint_id)
            raise
        self.journal.finish()

    def _write_batch_after(self, item: JournalFile, given: dict[str, BatchChange]) -> None:
        """Write one path of an edit batch: its content from the batch where the store withheld
        it (a secret, or over the size cap), else from the store."""
        if item.after is not None and item.after.withheld:
            content = given[item.path].after if item.path in given else None
            self.workspace.write(item.path, content or b"", item.after.mode, fsync=self.config.fsync)
        else:
            self.journal.write_side(item, "after")

    def set_applied(self, checkpoint_id: str, applied: bool, reason: str | None = None) -> Entry:
        """Say whether a recorded checkpoint reached the workspace (the editor may refuse)."""
        with self.store.locked():
            self._refresh()
            owner = self.timeline.checkpoint_owner.get(checkpoint_id)
            if owner is None:
                raise NotFound(f"no checkpoint {checkpoint_id}")
            record = CheckpointApplied(
                id=_new_id(), at=_now(), entry=owner, checkpoint=checkpoint_id, applied=applied, reason=reason
            )
            self._append([record])
            return self.timeline.view(self.timeline.entries[owner])

    def record_check(
        self,
        turn: str | None,
        name: str,
        status: str,
        command: str | None = None,
        exit_code: int | None = None,
    ) -> Entry:
        """Attach a check (tests, lint …) with its status to a turn (default: the open or last one)."""
        if status not in ("passed", "failed", "error", "skipped"):
            raise InvalidInput(f"check status {status!r} is not one of passed, failed, error, skipped")
        if not name:
            raise InvalidInput("a check needs a name")
        with self.store.locked():
            self._refresh()
            state = self.timeline.resolve(turn) if turn else (self.timeline.open_turn() or self.timeline.resolve("last"))
            check = Check(name=name, status=status, command=command, exit_code=exit_code, at=_now())  # type: ignore[arg-type]
            self._append([CheckRecorded(id=_new_id(), at=_now(), entry=state.begun.entry, check=check)])
            return self.timeline.view(state)

    # ------------------------------------------------------------------ reading

    def refresh(self) -> None:
        with self.store.locked():
            self._refresh()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[Engine]:
        """Hold the store for a series of calls (the timeline fresh at the start), so that no
        other process or thread moves the timeline in between: an adapter's read that must not
        see an operation half-way, or a plan that a confirmation then carries out. Adapters use
        this, never the store's lock itself."""
        with self.store.locked():
            self._refresh()
            yield self

    def replay(self) -> None:
        """Fold the whole log again (after the log was rewritten: retention)."""
        self._head = None
        self._refresh()

    def entries(self, session: str | None = None, limit: int | None = None, before: int | None = None) -> list[Entry]:
        """Timeline entries, newest first; ``before`` pages by entry number."""
        self.refresh()
        out = []
        for state in reversed(self.timeline.ordered()):
            if session is not None and state.begun.session != session:
                continue
            if before is not None and state.begun.number >= before:
                continue
            out.append(self.timeline.view(state))
            if limit is not None and len(out) >= limit:
                break
        return out

    def entry(self, turn: str) -> Entry:
        self.refresh()
        return self.timeline.view(self.timeline.resolve(turn))

    def diff(self, turn: str, path: str | None = None) -> str:
        """The unified diff of what an entry changed (one file, or all)."""
        entry = self.entry(turn)
        rel = self.workspace.rel(path) if path else None
        parts = []
        for change in entry.files:
            if rel is not None and rel not in (change.path, change.old_path):
                continue
            if change.withheld:
                parts.append(f"diff --takeback a/{change.path} b/{change.path}\n# content withheld ({change.withheld}): not stored\n")
                continue
            before = self.store.read_blob(change.before.oid) if change.before else None
            after = self.store.read_blob(change.after.oid) if change.after else None
            parts.append(
                unified_diff(
                    change.path, before, after, old_path=change.old_path,
                    before_mode=change.before.mode if change.before else None,
                    after_mode=change.after.mode if change.after else None,
                )
            )
        if rel is not None and not parts:
            raise NotFound(f"turn #{entry.number} did not change {rel}")
        return "".join(parts)

    def file_at(self, turn: str, path: str, side: str = "after") -> bytes | None:
        """A path's content before or after an entry (None: it did not exist then)."""
        if side not in ("before", "after"):
            raise InvalidInput(f"side must be 'before' or 'after', not {side!r}")
        entry = self.entry(turn)
        rel = self.workspace.rel(path)
        for change in entry.files:
            if rel == change.path or (side == "before" and rel == change.old_path):
                version = change.before if side == "before" else change.after
                if rel == change.old_path and change.kind == "renamed":
                    version = change.before
                if version is None:
                    return None
                if version.withheld:
                    raise StateError(f"{rel}: content withheld by policy ({version.withheld}); it was never stored")
                return self.store.read_blob(version.oid)
        raise NotFound(f"turn #{entry.number} did not change {rel}")

    def status(self) -> StoreStatus:
        self.refresh()
        ordered = self.timeline.ordered()
        open_states = self.timeline.open_turns()
        try:
            undo_target = self.timeline.undo_target().begun.number
        except NothingToDo:
            undo_target = None
        try:
            redo_target = self.timeline.redo_target().begun.number
        except NothingToDo:
            redo_target = None
        user_head = self._user_head()
        return StoreStatus(
            workspace=str(self.workspace.root),
            store=str(self.store.path),
            store_bytes=self.store.size_bytes(),
            entries=len(ordered),
            turns=sum(1 for s in ordered if s.begun.kind == "turn"),
            open_turn=self.timeline.view(open_states[-1]) if open_states else None,
            open_turns=[self.timeline.view(s) for s in open_states],
            last_entry=self.timeline.view(ordered[-1]) if ordered else None,
            undo_target=undo_target,
            redo_target=redo_target,
            git_repository=bool(self._user_repo),
            head=user_head,
            retention=self.config.retention,
            fsync=self.config.fsync,
            last_recovery=self.last_recovery or self.journal.last_report(),
            config_problems=list(self.config.problems),
            **failures.summary(self.store.path),
        )

    # ------------------------------------------------------------------ retention

    def _auto_gc(self) -> None:
        policy = self.config.retention
        if len(self.timeline.order) > policy.max_entries * 1.1 + 10:
            self.gc()

    def gc(self) -> GcReport:
        """Apply the retention policy: drop old entries, then unreachable objects."""
        from .retention import collect

        with self.store.locked():
            self._refresh()
            if self.timeline.tentatives:
                self._append([])  # the open turns' begins go into the log that gc rewrites
            report = collect(self)
            self.replay()
            return report


# ---------------------------------------------------------------------- helpers


def _explained_by_batches(state: FoldedEntry, change: Changed) -> bool:
    """Whether the applied edit batches and steps in ``state`` (what was recorded since the
    bracket began) account for all of a path's change on disk (they chain from the bracket's
    start to its end): then the bracket adds nothing."""
    steps = [
        c
        for cp in state.checkpoints
        if not cp.bracket and state.applied.get(cp.id, True)
        for c in cp.changes
        if c.path == change.path
    ]
    if not steps or not same_version(steps[0].before, change.before) or not same_version(steps[-1].after, change.after):
        return False
    return all(same_version(a.after, b.before) for a, b in pairwise(steps))


def _withheld_notice(rel: str, version: FileVersion) -> str:
    if version.withheld == "secret":
        return f"{rel}: secret file, content not stored (secrets policy)"
    return f"{rel}: {version.size} bytes, over the size cap; content not stored"


def _notices(changed: list[Changed]) -> list[str]:
    notices = []
    for c in changed:
        for version in (c.before, c.after):
            if version is not None and version.withheld:
                notices.append(_withheld_notice(c.path, version))
                break
    return notices


def _numbers(states: list[FoldedEntry]) -> str:
    return ", ".join(f"#{s.begun.number}" for s in states)


def _message(records: list[Record]) -> str:
    """The log commit's subject, for people reading the store with git tools."""
    first = records[0]
    if isinstance(first, TurnBegun):
        text = f"{first.kind} #{first.number}" + (f": {first.label}" if first.label else "")
    elif isinstance(first, EntriesDropped):  # not published this way (retention rewrites the log)
        text = first.type
    else:
        text = f"{first.type} in {first.entry}"
    kinds = [r.type for r in records]
    return f"{text} ({', '.join(kinds)})"
