"""Turns: opening and ending them, and what a bracket saw change on disk during one.

``Turns`` is the part of ``Engine`` (a mixin; what it uses of the engine is declared in
``parts.py``) that opens a turn (its begin waits in its file, ``brackets.py``), ends one or every
open turn (recording the bracket's changes, less what edit batches and steps already recorded),
picks the turn a step or batch of an agent session joins, and attaches checks. Several turns can
be open at once, one per agent session; a turn with a whole-disk bracket is open alone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path

from pydantic import ValidationError

from ..config import Config
from ..core import wording
from ..core.clock import new_id as _new_id
from ..core.clock import now as _now
from ..core.models import (
    Check,
    CheckpointRecorded,
    CheckRecorded,
    Entry,
    EntryBegun,
    FileVersion,
    GitMove,
    PathChange,
    Record,
    TurnEnded,
    same_version,
)
from ..core.textdiff import is_binary, line_stats
from ..core.timeline import FoldedEntry
from ..errors import (
    InvalidInput,
    NeedsConsent,
    StateError,
    StoreError,
    TakebackError,
)
from ..scanning import gitstate
from ..scanning.scan import Changed, GitScanner, WalkScanner, snapshot_kind, snapshot_paths
from ..workspace.capture import Capturer
from ..workspace.files import is_recorded_path
from . import brackets
from .parts import EngineParts

log = logging.getLogger("takeback.engine")


class Turns(EngineParts):
    """Opening and ending turns, and what their brackets saw (a part of ``Engine``)."""

    def begin_turn(
        self,
        label: str | None = None,
        session: str | None = None,
        agent: str | None = None,
        source: str = "bracket",
        bracket: bool = True,
        copy_all: bool = False,
    ) -> Entry:
        """Open a turn. With ``bracket`` (the default), whatever changes on disk until
        ``end_turn`` is recorded too: such a turn is open alone, so every open turn is ended
        first. Without, the turn is ``session``'s (an agent's prompt through its hooks): it
        takes that session's steps and batches only, and ends only the session's own open turn
        (an agent that died, or a prompt whose stop never came) and a whole-disk one.

        The turn's begin goes to its file, with the bracket's snapshot, and reaches the log with
        the next record published (``brackets.py``): nothing is published here. A bracket's
        first begin in a folder that is not a git repository copies the whole folder: above the
        ``first_copy_limit`` setting that is ``NeedsConsent`` unless ``copy_all``, before
        anything is done."""
        with self.transaction() as tx:
            if bracket and not copy_all:
                refusal = first_copy_refusal(self._scanner(), self.config, "run 'takeback begin --copy-all' to copy it")
                if refusal is not None:
                    raise NeedsConsent(refusal)
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
            tx.publish()  # the ended turns' files go before this turn's file is written (it may take their name)
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
                    git=self._git_state() if bracket else None,
                )
            except OSError as exc:
                raise StoreError(f"cannot write to the store {self.store.path}: {exc}") from exc
            self.timeline.add_tentative(record)
            entry = self.timeline.view(self.timeline.state(entry_id))
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
        with self.transaction():
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
    ) -> EntryBegun:
        """The record that opens entry ``entry_id``: the next number, the user's HEAD now."""
        return EntryBegun(
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
        with self.transaction():
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
            git_moved=self._git_moved(opened) if opened is not None else [],
        ))
        with self.transaction() as tx:
            tx.add(*records)
            if opened is not None:
                tx.after_publish(opened.remove)  # the begin waits in it until the end is in the log

    def _turn_capture(self, opened: brackets.OpenTurn) -> Capturer:
        """How the open turn's content is stored: under the settings in force when it began."""
        if opened.config is None:
            return self.capture  # a turn begun by an older version
        try:
            config = Config.model_validate(opened.config)
        except ValidationError as exc:
            raise StoreError(f"unreadable settings in the open turn's file in {self._brackets}: {exc}") from exc
        if config == self.config:
            # The settings did not change since begin (as nearly always): the engine's own
            # capturer, whose answers about secret paths are remembered (a fresh one asks the
            # patterns again for every file of a big turn's end).
            return self.capture
        return Capturer(self.store, self.workspace, config)

    def _git_state(self, also: tuple[str, ...] = (), every_ref: bool = False) -> dict | None:
        """The person's git state now (``gitstate.read``: a few file reads, no git process), for
        a bracket's or a step's begin to keep; ``also``: refs to read besides HEAD's branch;
        ``every_ref``: every ref (before a guarded call that may move them)."""
        if self._git_dir is False:
            self._git_dir = gitstate.find(self.workspace.root)
        return gitstate.read(self._git_dir, also, every_ref) if self._git_dir else None

    def _git_moved(self, opened: brackets.OpenTurn) -> list[GitMove]:
        """What of the person's git state moved since ``opened`` began (``gitstate.moves``):
        nothing Takeback takes back, so a turn and its undo can say so."""
        before = opened.git
        if not before:
            return []
        try:
            after = self._git_state(tuple(before["refs"]), bool(before.get("every_ref")))
            copy, index_file = opened.index, Path(str(self._git_dir)) / "index"
            same = None if copy is None else (lambda: gitstate.index_same(copy.parsed(), index_file))
            return gitstate.moves(before, after, same)
        except (KeyError, TypeError, ValueError, AttributeError, OSError, StoreError) as exc:
            log.warning("what moved of git during the turn is not known: %s", exc)  # a begin state not as written
            return []

    def _bracket_checkpoint(self, state: FoldedEntry, opened: brackets.OpenTurn) -> CheckpointRecorded | None:
        """What changed on disk since the bracket's snapshot (``state``'s begin), as the turn's
        bracket checkpoint (stored under the settings the turn began with)."""
        assert opened.scan is not None
        kind = snapshot_kind(opened.scan)
        scanner = self._scanner(kind)
        if scanner.kind != kind:
            # Begun in a git work tree that is gone (or git is): no index to tell what changed.
            return CheckpointRecorded(
                id=_new_id(), at=_now(), entry=state.begun.entry, label="changes on disk", changes=[], bracket=True,
                notices=["what changed on disk during this turn was not recorded: the git repository "
                         "its bracket began with is gone (or git, or the git_scanner setting is)"],
            )
        outside = next((p for p in snapshot_paths(opened.scan) if not is_recorded_path(p)), None)
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
        stats: tuple[int, int] | None = None,
    ) -> PathChange:
        """Describe one path's change; ``old``/``new`` are its bytes when the caller has them;
        ``new_folders``: the folders it created along with the file; ``stats``: its (+lines,
        -lines) when the caller counted them already (an operation, for its answer)."""
        additions = deletions = 0
        binary = False
        if not any(v is not None and v.withheld for v in (before, after)):
            if old is None and before is not None:
                old = self.store.read_blob(before.oid)
            if new is None and after is not None:
                new = self.store.read_blob(after.oid)
            binary = is_binary(old) or is_binary(new)
            additions, deletions = stats if stats is not None else line_stats(old, new)
        return PathChange.assembled(  # (every value made or checked here: 5,000 validations were 15 ms of a big turn's end)
            path=path, before=before, after=after, renamed_from=renamed_from,
            additions=additions, deletions=deletions, binary=binary, new_folders=list(new_folders),
        )

    def check_target(self, turn: str | None = None) -> CheckTarget:
        """The entry a check run now belongs to, and the files that keep the disk from being its
        end state. The one rule: ``turn`` if named; else the open turn (the agent's work so far);
        else the newest entry that changed files, an operation too (after an undo, the files
        are the state the undo left, not the turn it took back)."""
        with self.transaction():
            if turn:
                state = self.timeline.resolve(turn)
            else:
                state = self.timeline.open_turn() or next(
                    (s for s in self.timeline.newest_first() if any(s.applied.get(cp.id, True) for cp in s.checkpoints)),
                    None,
                ) or self.timeline.resolve("last")  # (no entry changed files: the newest turn, or "no turn yet")
            view = self.timeline.view(state)
            return CheckTarget(entry=view, differs=[f.path for f in view.files if not self._holds(f.path, f.after)])

    def _holds(self, rel: str, version: FileVersion | None) -> bool:
        """Whether the file on disk is ``version`` (None: absent); a file that cannot be read is not."""
        try:
            return self.capture.matches(rel, version, self.workspace.read(rel))
        except (OSError, TakebackError):
            return False

    def record_check(
        self,
        turn: str | None,
        name: str,
        status: str,
        command: str | None = None,
        exit_code: int | None = None,
        ran_on: CheckTarget | None = None,
    ) -> Entry:
        """Attach a check (tests, lint …) with its status to an entry: ``ran_on``'s, as
        ``check_target`` found it before the check ran; else the one ``check_target(turn)``
        finds now. The check says whether the files were that entry's end state (``Check.ran_on``)."""
        if status not in ("passed", "failed", "error", "skipped"):
            raise InvalidInput(f"check status {status!r} is not one of passed, failed, error, skipped")
        if not name:
            raise InvalidInput("a check needs a name")
        target = ran_on if ran_on is not None else self.check_target(turn)
        with self.transaction() as tx:
            state = self.timeline.resolve(target.entry.id)
            check = Check(name=name, status=status, command=command, exit_code=exit_code, at=_now(),  # type: ignore[arg-type]
                          ran_on="other" if target.differs else "end")
            tx.add(CheckRecorded(id=_new_id(), at=_now(), entry=state.begun.entry, check=check))
            return self.timeline.view(state)


@dataclass(frozen=True)
class CheckTarget:
    """Where a check belongs (``Turns.check_target``): the entry, and the files on disk that were
    not what it left there (empty: the disk was its end state)."""

    entry: Entry
    differs: list[str]


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


def withheld_notice(rel: str, version: FileVersion) -> str:
    if version.withheld == "unknown":
        return (f"{rel}: before unknown (the edit was reported after it was made and its before-image "
                "could not be verified); undo leaves this file as it is")
    if version.withheld == "secret":
        return f"{rel}: secret file, content not stored (secrets policy)"
    return f"{rel}: {version.size} bytes, over the size cap; content not stored"


def _notices(changed: list[Changed]) -> list[str]:
    notices = []
    for c in changed:
        for version in (c.before, c.after):
            if version is not None and version.withheld:
                notices.append(withheld_notice(c.path, version))
                break
    return notices


def _numbers(states: list[FoldedEntry]) -> str:
    return ", ".join(f"#{s.begun.number}" for s in states)


def first_copy_refusal(scanner: GitScanner | WalkScanner, config: Config, allow: str) -> str | None:
    """Why ``scanner``'s next snapshot may not be taken without the person's yes: it is a walk's
    first, which copies the whole folder (not a git repository) into the store, and that is more
    than the ``first_copy_limit`` setting. None: it may (a repository, a walk that has its
    stat cache, a small folder, the limit 0). ``allow``: what allows it, for the message."""
    limit = config.first_copy_limit
    found = scanner.first_copy(limit, config.max_file_bytes) if limit and isinstance(scanner, WalkScanner) else None
    if found is None:
        return None
    files, total = found
    return (
        f"{scanner.workspace.root} is not a git repository, so the first checkpoint copies the whole folder into "
        f"the store: more than {wording.size(limit)} ({wording.counted(files, 'file')}, {wording.size(total)} "
        f"counted so far); nothing was done. To go on, {allow}, open the agent in a smaller folder, or raise "
        "first_copy_limit in your Takeback settings (0: never ask)"
    )
