"""Every data type Takeback passes around, in one place (pydantic models).

Three groups live here:

* what the operation log stores (``Record`` and its kinds), which is the storage format;
* what the engine derives from the log (``Entry``, ``FileChange``, ``Checkpoint``);
* what operations answer (``OperationResult``, ``StoreStatus``, ``GcReport``).

The engine, the CLI and the language server all speak these types; the CLI prints
them as JSON with ``model_dump(mode="json")`` and the server sends the same shape.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field

from ..errors import InvalidInput

MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000

EntryKind = Literal["turn", "undo", "redo", "revert", "restore", "mark"]  # mark: the person's own checkpoint (engine/marks.py)
EntryState = Literal["open", "applied", "reverted", "partial", "not-applied"]
Verdict = Literal["safe", "partial", "broken", "refused"]  # (broken: in records written before refused existed)
OnConflict = Literal["abort", "skip", "markers", "force"]
ON_CONFLICT: tuple[OnConflict, ...] = get_args(OnConflict)  # every adapter's list of choices comes from here


def check_on_conflict(on_conflict: str) -> None:
    """Refuse a bad option before anything happens (an open turn would otherwise be ended first)."""
    if on_conflict not in ON_CONFLICT:
        raise InvalidInput(f"on-conflict must be one of {', '.join(ON_CONFLICT)}, not {on_conflict!r}")


CheckStatus = Literal["passed", "failed", "error", "skipped"]
Withheld = Literal["secret", "oversize", "unknown"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)

    @classmethod
    def assembled(cls, **values: Any) -> Self:
        """``model_construct(**values)`` (no validation: values already checked) when ``values``
        name every field, put in place directly: the instance's fields, the set of fields given,
        no extra, private attributes at their defaults, as ``model_construct`` leaves them (a test
        compares the two). pydantic's own took 8 µs an ``Entry`` (it looks up every field's
        default and alias), most of a log header's cost; this 1.5. Fewer values: ``model_construct``."""
        if values.keys() != cls.model_fields.keys():
            return cls.model_construct(**values)
        made = cls.__new__(cls)
        private = {name: attr.get_default() for name, attr in cls.__private_attributes__.items()}
        object.__setattr__(made, "__dict__", values)
        object.__setattr__(made, "__pydantic_fields_set__", set(values))
        object.__setattr__(made, "__pydantic_extra__", None)
        object.__setattr__(made, "__pydantic_private__", private or None)
        return made


# --------------------------------------------------------------------------- storage


class FileVersion(_Model):
    """One side of a file change: what a path held at a moment.

    ``oid`` is the git blob id of the content, which is in the store, unless the content was
    withheld by policy (a secret, or over the size cap): then ``oid`` is a keyed digest
    (``hmac:…``) that still tells whether a file on disk is the same, and the bytes are not kept.
    ``withheld="unknown"``: a before-image Takeback could neither capture before the write nor
    derive and verify (``before_unknown``); no file is ever the same as it, and undo skips it.
    """

    oid: str
    mode: int = MODE_FILE
    size: int = 0
    withheld: Withheld | None = None


def before_unknown(mode: int = MODE_FILE) -> FileVersion:
    """The before-image of a file whose content before an agent's write is not known: its own
    id (``unknown:`` and random), so it matches no file and no other version."""
    return FileVersion(oid=f"unknown:{secrets.token_hex(16)}", mode=mode, size=0, withheld="unknown")


def same_version(a: FileVersion | None, b: FileVersion | None) -> bool:
    """Whether two sides hold the same file: same content id and mode (None = absent)."""
    if a is None or b is None:
        return a is b
    return (a.oid, a.mode) == (b.oid, b.mode)


class PathChange(_Model):
    """What one checkpoint did to one path. ``None`` on a side means the path did not exist.

    ``new_folders``: the parent folders the change created along with the file (shallowest
    first); for a deleted file, the folder the change made in its place and left empty (the
    path itself). Taking the change back removes them again once they are empty. Records
    written before the field existed have none, and their folders stay.
    """

    path: str
    before: FileVersion | None
    after: FileVersion | None
    renamed_from: str | None = None
    additions: int = 0
    deletions: int = 0
    binary: bool = False
    new_folders: list[str] = []


class Check(_Model):
    """A check the agent (or a person) ran for a turn, e.g. the test suite.

    ``ran_on``: what the files on disk were when it ran. ``end``: the entry's end state as
    recorded then (every file it changed held what it left there); ``other``: not (they were
    changed since, or the timeline moved on without them); ``earlier`` (only in a folded entry,
    never written): the entry recorded more changes after it ran; None: not known (a check
    recorded by an older version, or given with the turn's end). Only ``end`` and None count
    toward ``Entry.checks_passed``: a check speaks for the state it ran on.
    """

    name: str
    status: CheckStatus
    command: str | None = None
    exit_code: int | None = None
    at: datetime | None = None
    ran_on: Literal["end", "earlier", "other"] | None = None

    @property
    def counts(self) -> bool:
        """Whether it speaks for its entry's end state (``ran_on``)."""
        return self.ran_on in ("end", None)


class GitMove(_Model):
    """Something of the person's git state that moved during a step or a turn, which Takeback
    does not take back (it never changes git state): ``fact`` says what moved ("branch main
    moved from abc1234 to def5678"), ``command`` the git command that would put it back from the
    reflog, where there is one. Read by ``scanning/gitstate.py``."""

    what: Literal["branch", "ref", "head", "index", "stash"]  # ref: any other ref (a tag …), read before a guarded call
    fact: str
    command: str | None = None


@dataclass(frozen=True)
class AtRisk:
    """What a tool call the guard let through may destroy that Takeback does not record, named
    before it runs (``Engine.begin_step``): ``git``, it may move the person's refs, index or
    stash; ``paths``, workspace-relative ignored files and folders (a folder ends in ``/``) it
    may delete or overwrite. The step keeps what it can of them (``engine/lost.py``)."""

    git: bool = False
    paths: tuple[str, ...] = ()


class LostFile(_Model):
    """A file a step's call deleted or overwrote that Takeback does not record (an ignored
    file named at risk before the call, ``AtRisk.paths``): ``kept``, the bytes Takeback copied
    before the call (``command`` writes them back); None, they are lost, and ``why`` says
    why they were not kept (a secret, over the size cap, beyond ``guard.keep_bytes``)."""

    path: str
    how: Literal["deleted", "overwritten"]
    kept: FileVersion | None = None
    why: str | None = None
    command: str | None = None


class EntryBegun(_Model):
    """Opens a timeline entry: an agent turn, or an operation (undo, revert …)."""

    type: Literal["begin"] = "begin"
    id: str
    at: datetime
    entry: str
    number: int
    kind: EntryKind = "turn"
    session: str | None = None
    label: str | None = None
    agent: str | None = None
    source: Literal["edit", "bracket", "cli", "lsp", "operation", "hook"] = "bracket"
    head: str | None = None


class CheckpointRecorded(_Model):
    """One edit batch inside an entry, with the before and after of every touched path."""

    type: Literal["checkpoint"] = "checkpoint"
    id: str
    at: datetime
    entry: str
    label: str | None = None
    changes: list[PathChange]
    applied: bool = True
    bracket: bool = False  # recorded by a bracket's end scan: covers the whole turn for its paths
    notices: list[str] = []
    git_moved: list[GitMove] = []  # the person's git state that moved during this step (stores before it: none)
    outside: list[str] = []  # files the step's tool named outside the workspace: not recorded (stores before it: none)
    lost: list[LostFile] = []  # ignored files named at risk that the step's call deleted or overwrote (stores before it: none)
    # Where ``changes`` comes from while it is not in memory (``defer``): the timeline keeps a
    # checkpoint's header and reads its file list from the log only when something needs it.
    _load: Callable[[], list[PathChange]] | None = PrivateAttr(default=None)

    def defer(self, load: Callable[[], list[PathChange]]) -> None:
        """Forget the file list; ``load`` (which must check what it reads) brings it back on
        first use of ``changes``. Such a record is never serialised whole (``loaded``)."""
        self.__dict__.pop("changes", None)
        if self.__pydantic_private__ is None:
            self._load = load
        else:  # set directly: pydantic's own setting of a private attribute costs more (one per cached checkpoint)
            self.__pydantic_private__["_load"] = load

    def loaded(self) -> bool:
        """Whether ``changes`` is in memory (always, unless ``defer`` let it go and it is not read back yet)."""
        return "changes" in self.__dict__

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:  # reached only for what is not in __dict__
            if name == "changes" and self.__pydantic_private__ and self.__pydantic_private__.get("_load"):
                changes = self.__pydantic_private__["_load"]()
                self.__dict__["changes"] = changes
                return changes
            return super().__getattr__(name)


class CheckpointApplied(_Model):
    """Says whether a checkpoint recorded before it was applied did reach the workspace."""

    type: Literal["applied"] = "applied"
    id: str
    at: datetime
    entry: str
    checkpoint: str
    applied: bool
    reason: str | None = None


class TurnEnded(_Model):
    type: Literal["end"] = "end"
    id: str
    at: datetime
    entry: str
    commands: list[str] = []
    checks: list[Check] = []
    # who ended it: "stop" (the agent said so), "next_prompt" (a new turn began while it was
    # open), "session_end", "end_command" ('takeback end'); None: an operation or an older store
    ended_by: str | None = None
    # the person's git state that moved between a bracket's begin and end (a turn with no
    # bracket, or an older store: none; its steps say it)
    git_moved: list[GitMove] = []


class CheckRecorded(_Model):
    type: Literal["check"] = "check"
    id: str
    at: datetime
    entry: str
    check: Check


class OperationDone(_Model):
    """Closes an operation entry (its changes are in the checkpoint before it).

    ``effects`` maps the entries whose state the operation changed to their new state:
    an undo of #4 says ``{#4's id: "reverted"}``; a redo of that undo says
    ``{undo's id: "reverted", #4's id: "applied"}``. What happened to each file that was not
    simply taken back: ``skipped``; ``conflicts`` (every path in conflict), of which
    ``markers`` got conflict markers and ``forced`` was written over later edits (records
    written before these two existed have neither: their conflicts read as left in conflict).
    """

    type: Literal["operation"] = "operation"
    id: str
    at: datetime
    entry: str
    target: str | None = None
    checkpoint_target: str | None = None
    on_conflict: OnConflict = "abort"
    verdict: Verdict
    effects: dict[str, EntryState] = {}
    previous: dict[str, EntryState] = {}
    skipped: list[str] = []
    conflicts: list[str] = []
    markers: list[str] = []
    forced: list[str] = []
    remote: str | None = None
    """The teammate's timeline (``REMOTE/WHO``) whose entry ``target`` is, when it is not this
    workspace's (``takeback revert origin/alice#12``: ``engine/remote.py``)."""
    editor: list[str] = []
    """Paths the operation applied to documents open in an editor (``workspace/applyEdit``): on
    disk only once the person saves them (``engine/unsaved.py`` watches for those discarded)."""


class DroppedSpan(_Model):
    """Entries ``first`` to ``last`` (numbers) that retention dropped at ``at``, and why."""

    first: int
    last: int
    at: datetime
    why: str


class EntriesDropped(_Model):
    """What retention has dropped so far (the newest spans), so a dropped entry's number is
    answered with when and why rather than 'no such turn'. Written by gc at the tip of the log
    it rewrites, replacing the one before; it belongs to no entry."""

    type: Literal["dropped"] = "dropped"
    id: str
    at: datetime
    spans: list[DroppedSpan]


Record = Annotated[
    EntryBegun | CheckpointRecorded | CheckpointApplied | TurnEnded | CheckRecorded | OperationDone | EntriesDropped,
    Field(discriminator="type"),
]


class RecordEnvelope(_Model):
    """The JSON document stored in each operation-log commit (``meta.json``).

    One commit holds the records of one engine call (a standalone batch is begin, checkpoint
    and end together), so a call is published or not as a whole.
    """

    format: int = 1
    records: list[Record]


class BatchChange(_Model):
    """One path of an edit batch handed to the engine (content after; None deletes it).

    ``before`` is what the path held just before the batch: the bytes the editor shows for an
    open document, or ``"disk"`` to read the file now; None means it did not exist;
    ``"unknown"``: it existed, but what it held is not known (``before_unknown``).
    """

    path: str
    after: bytes | None
    before: bytes | None | Literal["disk", "unknown"] = "disk"
    mode: int | None = None
    renamed_from: str | None = None


# --------------------------------------------------------------------------- derived views


class FileChange(_Model):
    """A path as an entry changed it overall (first before, last after)."""

    path: str
    kind: Literal["added", "modified", "deleted", "renamed"]
    old_path: str | None = None
    before: FileVersion | None = None
    after: FileVersion | None = None
    additions: int = 0
    deletions: int = 0
    binary: bool = False
    withheld: Withheld | None = None


class Checkpoint(_Model):
    id: str
    at: datetime
    label: str | None = None
    paths: list[str]
    applied: bool = True
    bracket: bool = False  # what a bracket saw change on disk, not a step of the agent's
    git_moved: list[GitMove] = []  # the person's git state that moved during the step
    outside: list[str] = []  # files the step's tool named outside the workspace, which Takeback does not hold
    lost: list[LostFile] = []  # ignored files the step's call deleted or overwrote: kept (with a command) or lost


class Entry(_Model):
    """One item of the timeline: an agent turn, or an operation on earlier entries."""

    id: str
    number: int
    kind: EntryKind = "turn"
    session: str | None = None
    label: str | None = None
    agent: str | None = None
    source: str = "bracket"
    created_at: datetime
    finished_at: datetime | None = None
    head: str | None = None
    state: EntryState = "open"
    checkpoints: list[Checkpoint] = []
    files: list[FileChange] = []
    additions: int = 0
    deletions: int = 0
    state_hash: str | None = None
    commands: list[str] = []
    checks: list[Check] = []
    target: str | None = None
    target_number: int | None = None
    verdict: Verdict | None = None
    reverted_by: str | None = None
    ended_by: str | None = None
    notices: list[str] = []
    git_moved: list[GitMove] = []
    """What of the person's git state moved during it, which no undo of it takes back: its
    bracket's, else its steps' (``Checkpoint.git_moved``)."""
    outside: list[str] = []
    """Files its steps' tools named outside the workspace (``Checkpoint.outside``): not
    recorded, so no undo of it takes them back."""
    lost: list[LostFile] = []
    """Ignored files its steps' calls deleted or overwrote (``Checkpoint.lost``): no undo of
    it puts them back; those Takeback kept have the command that does."""
    # How many files it changed, in a header built without its file list (``Timeline.header``:
    # ``files`` is then empty); None: count ``files``. Never serialised.
    _file_count: int | None = PrivateAttr(default=None)

    @property
    def empty_turn(self) -> bool:
        """An agent turn, ended, that changed no file (a prompt answered in words): ``log``
        leaves it out unless asked (``--all``), and retention does not count it. A turn whose
        edit the editor did not apply (``not-applied``) is not empty: it says an edit failed."""
        return (self.kind == "turn" and self.state not in ("open", "not-applied") and self.file_count == 0
                and not self.git_moved and not self.outside and not self.lost)

    @property
    def file_count(self) -> int:
        private = self.__pydantic_private__  # read directly: pydantic's own lookup of it is slow
        count = private.get("_file_count") if private else None
        return len(self.files) if count is None else count

    @computed_field  # type: ignore[prop-decorator]
    @property
    def failed_checks(self) -> list[str]:
        """The checks whose latest run on this entry's end state (``Check.counts``) did not pass
        (failed or error), by name, first recorded first."""
        latest: dict[str, Check] = {}
        for check in self.checks:
            if check.counts:
                latest[check.name] = check
        return [name for name, check in latest.items() if check.status not in ("passed", "skipped")]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def checks_passed(self) -> bool | None:
        """Whether the latest run of every named check on this entry's end state passed (None: no
        check ran on it; one that ran on other files is listed in ``checks`` but says nothing here)."""
        return None if not any(check.counts for check in self.checks) else not self.failed_checks

    @computed_field  # type: ignore[prop-decorator]
    @property
    def shows_steps(self) -> bool:
        """Whether people are shown this entry's steps: an agent turn with several checkpoints, or
        with one that is a step of its own (not the bracket's changes on disk, not named as the turn)."""
        if self.kind != "turn" or not self.checkpoints:
            return False
        if len(self.checkpoints) > 1:
            return True
        only = self.checkpoints[0]
        label = (only.label or "").strip()
        return bool(label) and not only.bracket and label != (self.label or "").strip()


# --------------------------------------------------------------------------- results


class FileOutcome(_Model):
    """What an operation does to one path. ``renamed_from``: a ``create`` that puts back the
    content a ``delete`` of the same operation removes, so the two read as one rename (the
    delete stays in the list)."""

    path: str
    action: Literal["write", "create", "delete", "unchanged"]
    additions: int = 0
    deletions: int = 0
    merged: bool = False
    renamed_from: str | None = None


class SkippedFile(_Model):
    path: str
    reason: str


class Conflict(_Model):
    """A path the operation could not bring back cleanly. ``markers_possible``: a text merge
    overlapped, so ``--on-conflict markers`` can write conflict markers into it (never for a
    binary file, a file created or deleted on one side, or a mode or symlink change).
    ``advice`` is what the person can do about this path."""

    path: str
    reason: str
    hunks: int = 0
    binary: bool = False
    markers_possible: bool = False
    markers_written: bool = False
    advice: str = ""


class NextStep(_Model):
    """One command the next safe action (``OperationResult.next_action``) names, as data, so
    each client says it in its own words (``takeback revert 7 --on-conflict skip`` in a
    terminal, ``:TakebackRevert 7 skip`` in Neovim, a command title in VS Code).
    ``core/wording.py`` builds the sentence and these steps from the same values."""

    command: Literal["undo", "redo", "revert", "restore"]
    number: int | None = None
    """The entry ``revert`` acts on (None for the others)."""
    checkpoint: str | None = None
    """The checkpoint ``restore`` goes back to, as a person types it (``3.1``)."""
    step: str | None = None
    """The one step of entry ``number`` that ``revert`` takes back, as a person types it
    (``12.3``); None: the whole entry."""
    paths: list[str] = []
    """Only the files these patterns name (``revert N -- PATTERN…``, from the workspace's top)."""
    hunk: str | None = None
    """Only the hunk at ``PATH:LINE`` (``revert N --hunk PATH:LINE``, the line as the file stood then)."""
    on_conflict: OnConflict | None = None
    """The ``--on-conflict`` choice the step adds (None: the command's default, abort)."""
    does: str
    """What it does, in words every client can show after its own name for the command."""


class OperationResult(_Model):
    """The answer to undo, redo, revert and restore (also for a dry run). ``next_action`` is
    the next safe action in the CLI's words; ``next`` the commands it names, in its order."""

    operation: Literal["undo", "redo", "revert", "restore"]
    verdict: Verdict
    applied: bool
    dry_run: bool = False
    on_conflict: OnConflict = "abort"
    target: str | None = None
    target_number: int | None = None
    entry: Entry | None = None
    restored: list[FileOutcome] = []
    skipped: list[SkippedFile] = []
    conflicts: list[Conflict] = []
    next_action: str
    next: list[NextStep] = []
    message: str
    notices: list[str] = []
    patch: str | None = None


class RecoveryReport(_Model):
    """What recovery did with an operation a dead process left half-done: every path of the
    operation (``paths``) was rolled to one side, except those in ``left``, which held content
    that was neither side (changed since, by someone else) and were not touched, or could not
    be read or written (``problems``: one line per such path, saying why). ``set-aside``: the
    journal itself could not be read (torn by a power cut, or not a journal Takeback wrote); it
    was moved aside to ``journal_kept`` and nothing was rolled (``problems`` says why)."""

    at: datetime
    operation: str
    action: Literal["rolled-back", "rolled-forward", "set-aside"]
    paths: list[str]
    left: list[str] = []
    problems: list[str] = []
    journal_kept: str | None = None


class SetAside(_Model):
    """A file of the store a crash or power cut left torn, moved into ``quarantine/``."""

    path: str  # relative to the store (and to the repair's folder, where it now is)
    problem: str


class StoreRepair(_Model):
    """What opening the store set aside after a crash or power cut (``storage/repair.py``): the
    files, where the log ended before and after (``log_was``/``log_now``, ids), and one line per
    log commit lost. It stays in ``folder`` (inside the store) until the person deletes it."""

    at: datetime
    folder: str
    files: list[SetAside] = []
    log_was: str | None = None
    log_now: str | None = None
    log_now_subject: str | None = None
    lost: list[str] = []


class UnsavedFile(_Model):
    """A file the newest operation applied in an editor whose disk still holds what it held
    before (``engine/unsaved.py``): ``held_by``, the entry that wrote what the disk holds (the
    operation's target for an undo: the turn it took back). ``editor``: what an open buffer
    holds, when the asker knows (the language server): ``unsaved``, the operation's content,
    not saved yet; ``discarded``, no buffer holds it (reloaded or closed without saving).
    None: not known (the CLI)."""

    path: str
    operation: int
    kind: str
    held_by: int | None = None
    editor: Literal["unsaved", "discarded"] | None = None


class SaveReport(_Model):
    """What ``takeback save`` wrote: the operation's content for each file ``UnsavedFile`` named."""

    operation: int | None = None
    written: list[str] = []
    skipped: list[SkippedFile] = []
    message: str


class RetentionPolicy(_Model):
    max_entries: int = 500
    max_age_days: int = 30
    max_bytes: int = 512 * 1024 * 1024


class StoreStatus(_Model):
    workspace: str
    store: str
    store_made: bool = True  # False: nothing recorded yet, ``store`` is where the first recorded turn makes it
    store_bytes: int
    entries: int
    turns: int
    open_turn: Entry | None = None  # the newest open turn
    open_turns: list[Entry] = Field(default_factory=list)  # every open turn, oldest first (one per agent session)
    last_entry: Entry | None = None
    undo_target: int | None = None
    redo_target: int | None = None
    git_repository: bool
    head: str | None = None
    retention: RetentionPolicy
    fsync: bool
    last_recovery: RecoveryReport | None = None
    repairs: list[StoreRepair] = Field(default_factory=list)  # what a crash or power cut left torn, set aside
    config_problems: list[str] = Field(default_factory=list)  # settings ignored or refused, and why
    hook_failures: int = 0  # failures agents' hooks logged in the store (``takeback hook``)
    last_hook_failure: str | None = None
    payload_problems: int = 0  # hook payloads read only in part (not UTF-8, half a character), yet recorded
    last_payload_problem: str | None = None
    unsaved: list[UnsavedFile] = Field(default_factory=list)  # the newest operation's editor writes the disk lacks


class GcReport(_Model):
    removed_entries: int
    removed_objects: int
    bytes_before: int
    bytes_after: int
    kept_entries: int
    dropped: list[DroppedSpan] = []  # which entries this run dropped, and why


# --------------------------------------------------------------------------- blame (``core/blame.py``)


class BlameOrigin(_Model):
    """Who wrote a line as the file stands now. ``kind``: ``turn`` (an agent's turn and step:
    ``entry``, ``number``, ``step`` from 1 with its ``step_label``, ``agent``, ``session``, the
    prompt in ``label``, ``at`` the step's time); ``person`` (``why``: ``between`` the timeline's
    versions, in a ``mark`` or an ``operation`` (that entry named), or ``since`` the newest
    recorded version); ``before`` the timeline (``commit``: the commit ``git blame`` gives the
    line at HEAD, where the file is tracked and the line is HEAD's); ``unknown`` (a version's
    content was not stored: withheld, binary, a symlink). ``edited_from``: the agent's line the
    person edited into this one."""

    kind: Literal["turn", "person", "before", "unknown"]
    entry: str | None = None
    number: int | None = None
    step: int | None = None
    step_label: str | None = None
    agent: str | None = None
    session: str | None = None
    label: str | None = None
    at: datetime | None = None
    why: Literal["between", "mark", "operation", "since"] | None = None
    commit: str | None = None
    edited_from: BlameOrigin | None = None
    remote: str | None = None
    """A teammate's turn (``engine/blame_remote.py``): the remote their timeline was fetched
    from, with ``who`` (``person@machine``); ``number`` and ``step`` are theirs."""
    who: str | None = None


class BlameLine(_Model):
    """One line of the file now (``line`` from 1; ``text`` without its line ending, bytes that
    are not UTF-8 as U+FFFD) and who wrote it."""

    line: int
    text: str
    origin: BlameOrigin


class Blame(_Model):
    """``takeback blame``'s answer: the lines asked for, and how many timeline entries that
    changed the file were read."""

    path: str
    lines: list[BlameLine]
    entries: int
