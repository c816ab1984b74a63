"""Teammates' timelines, read only, as git's remote-tracking branches are: reading them, and
taking one of their turns back in this workspace.

A timeline ``share fetch`` brought in (``refs/takeback/remotes/<remote>/<who>`` of
``shared.git``, ``storage/share.py``) is folded here into a ``Timeline`` of its own (the same
``Timeline.apply`` as the local log), every record checked again on the way
(``sharing.records_of``: ``history.check_record``, the rule the local log and ``fetch`` apply). It has its own numbers:
``REMOTE/WHO#N`` names turn N of it (``origin/alice@laptop#12``; ``origin/alice#12`` when one
machine of alice's was fetched). Its file contents are read from ``shared.git``, fetched from
the promisor remote the first time something needs one (``Contents``).

Nothing here writes a teammate's timeline. ``revert`` takes one of their turns back in *this*
workspace: the turn's changes, planned and carried out by the same code as a local revert
(``Operations._operate``: three-way per file, base = their turn's result, ours = the file now,
theirs = where their turn started), as an entry of this workspace's own timeline, whose record
names the teammate's turn (``OperationDone.target`` its id, ``OperationDone.remote`` its
timeline) and which is taken back as any operation is.

Cost: a teammate's timeline is read whole from ``shared.git`` (its ``meta.json`` blobs, no file
content) the first time a process needs it at a tip; a long-lived process (the language server's
hover, the resident's ``blame``) keeps the folded timelines of the last tips it read (``_READ``:
a commit id names its whole chain, so the same tip folds to the same timeline), and reads again
only after a fetch moved a tip. Nothing here changes a folded timeline once read.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..core.merge import Version
from ..core.models import Entry, FileVersion, OnConflict, OperationResult, check_on_conflict
from ..core.textdiff import unified_diff
from ..core.timeline import FoldedEntry, Timeline, relevant_steps
from ..errors import InvalidInput, NotFound, NothingToDo, StoreError
from ..storage import share
from ..storage.store import Store
from . import narrow
from .sharing import records_of

if TYPE_CHECKING:
    from ..workspace.capture import Capturer
    from .operations import EditorIo, Operations

_NAME = r"[A-Za-z0-9._-]+"
REF = re.compile(rf"(?P<remote>{_NAME})/(?P<who>{_NAME}(?:@{_NAME})?)#(?P<number>\d+)")
"""``REMOTE/WHO#N``: turn N of a teammate's fetched timeline (WHO: ``person@machine`` or ``person``)."""


def names_teammate(spec: str) -> bool:
    """Whether ``spec`` names a teammate's turn (``REMOTE/WHO#N``) rather than one of this
    workspace's (a number, an id, ``last``, ``mark:NAME``: none holds a ``/``)."""
    text = (spec or "").strip()
    return "/" in text and "#" in text and not text.startswith("mark:")


@dataclass
class Teammate:
    """One fetched timeline: ``remote`` (as ``fetch`` named it), ``who`` (``person@machine``),
    its tip in ``shared.git`` and its entries folded."""

    remote: str
    who: str
    tip: str
    timeline: Timeline

    @property
    def name(self) -> str:
        return f"{self.remote}/{self.who}"


def remote_name(root: Path, remote: str) -> str:
    """The name ``fetch`` keeps a remote's timelines under: a remote's name as it is, a URL's
    ``url-<hash>`` (``share.remote_of``)."""
    return remote if re.fullmatch(_NAME, remote) else share.remote_of(root, remote)[0]


def fetched(store: Store, remote: str | None = None) -> dict[str, str]:
    """The fetched timelines (of ``remote``, or all): ``<remote>/<who>``: tip."""
    found = share.fetched(store)
    return {name: tip for name, tip in found.items() if remote is None or name.split("/", 1)[0] == remote}


# The teammates' timelines this process folded last, newest used last: (store, name, tip) →
# the Teammate (read only by every caller).
_READ: OrderedDict[tuple[str, str, str], Teammate] = OrderedDict()
_KEEP_READ = 16


def read(store: Store, name: str, tip: str) -> Teammate:
    """The fetched timeline ``name`` (``<remote>/<who>``) up to ``tip``, folded; each record
    checked again the first time this process reads that tip (a store or a ``shared.git``
    changed since the fetch is refused the same way)."""
    key = (str(store.path), name, tip)
    kept = _READ.get(key)
    if kept is None:
        timeline = Timeline()
        for commit, data in share.metas(store, name, tip):
            for record in records_of(data, f"{name}, commit {commit}"):
                timeline.apply(record)
        remote, who = name.split("/", 1)
        kept = Teammate(remote=remote, who=who, tip=tip, timeline=timeline)
    _READ[key] = kept
    _READ.move_to_end(key)
    while len(_READ) > _KEEP_READ:
        _READ.popitem(last=False)
    return kept


def teammates(store: Store, remote: str) -> list[Teammate]:
    """Every timeline fetched from ``remote``, by ``who``."""
    return [read(store, name, tip) for name, tip in sorted(fetched(store, remote).items())]


def log(store: Store, remote: str) -> list[tuple[Teammate, list[Entry]]]:
    """Each timeline fetched from ``remote`` with its entries, newest first (``takeback log --remote``)."""
    if not fetched(store, remote):
        raise NotFound(f"no timeline fetched from {remote}: 'takeback share fetch {remote}' brings teammates' timelines in")
    return [(mate, [mate.timeline.view(state) for state in mate.timeline.newest_first()]) for mate in teammates(store, remote)]


def resolve(store: Store, spec: str) -> tuple[Teammate, FoldedEntry]:
    """The teammate's timeline and entry ``REMOTE/WHO#N`` names; refused with one line when no
    fetched timeline matches, or when WHO (a person, without a machine) matches several."""
    found = REF.fullmatch((spec or "").strip())
    if found is None:
        raise InvalidInput(f"{spec!r}: name a teammate's turn as REMOTE/PERSON@MACHINE#N or REMOTE/PERSON#N "
                           "(e.g. origin/alice#12: 'takeback log --remote origin' lists them)")
    remote, who, number = found["remote"], found["who"], int(found["number"])
    there = fetched(store, remote)
    if not there:
        raise NotFound(f"no timeline fetched from {remote}: 'takeback share fetch {remote}' brings teammates' timelines in")
    if "@" in who:
        names = [name for name in there if name == f"{remote}/{who}"]
    else:
        names = [name for name in there if name.split("/", 1)[1].split("@", 1)[0] == who]
    if not names:
        raise NotFound(f"no timeline {remote}/{who} was fetched from {remote} (it holds {_listed(there)}); "
                       f"'takeback share fetch {remote}' brings new ones in")
    if len(names) > 1:
        raise InvalidInput(f"{remote}/{who} is ambiguous: {who} shared timelines from several machines "
                           f"({_listed(names)}); name one, as {sorted(names)[0]}#{number}")
    mate = read(store, names[0], there[names[0]])
    state = mate.timeline.find(mate.timeline.numbered.get(number, ""))
    if state is None:
        raise NotFound(f"no turn #{number} in {mate.name}'s timeline (its newest is #{mate.timeline.max_number})")
    return mate, state


def diff(store: Store, capture: Capturer, mate: Teammate, entry: Entry) -> str:
    """The unified diff of what a teammate's entry changed, its contents read from ``shared.git``."""
    contents = Contents(store, mate.remote, capture)
    parts = []
    for change in entry.files:
        if change.withheld:
            parts.append(f"diff --takeback a/{change.path} b/{change.path}\n# content withheld ({change.withheld}): not stored\n")
            continue
        parts.append(unified_diff(
            change.path, contents.content(change.before) if change.before else None,
            contents.content(change.after) if change.after else None, old_path=change.old_path,
            before_mode=change.before.mode if change.before else None, after_mode=change.after.mode if change.after else None,
        ))
    return "".join(parts)


def _listed(names: Any) -> str:
    shown = sorted(names)
    return ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")


class Contents:
    """A teammate's recorded content: from this store when it holds the blob, else from
    ``shared.git`` (fetched from ``remote`` when missing, refused over the size limit:
    ``share.content``); compared with the disk as this workspace's own (``Capturer.matches``)."""

    def __init__(self, store: Store, remote: str, capture: Capturer) -> None:
        self.store, self.remote, self.capture = store, remote, capture
        self.blobs: dict[str, bytes] = {}

    def content(self, version: FileVersion) -> bytes:
        if version.withheld:
            raise StoreError(f"content withheld by policy ({version.withheld}); it was never stored")
        if version.oid not in self.blobs:
            held = self.store.has(version.oid)
            self.blobs[version.oid] = (self.store.read_blob(version.oid) if held
                                       else share.content(self.store, self.remote, version.oid))
        return self.blobs[version.oid]

    def matches(self, rel: str, version: FileVersion | None, disk: Version | None) -> bool:
        return self.capture.matches(rel, version, disk)


class _Blobs(dict[str, bytes]):
    """``Narrowed.blobs`` for a teammate's turn: each of its contents read when the planner
    first asks for it (``planning.WithBlobs`` looks it up with ``get``), not all up front."""

    def __init__(self, contents: Contents, versions: dict[str, FileVersion]) -> None:
        super().__init__()
        self.contents, self.versions = contents, versions

    def __bool__(self) -> bool:
        return True

    def get(self, oid: str, default: Any = None) -> Any:
        version = self.versions.get(oid)
        return default if version is None else self.contents.content(version)


_Revert = TypeVar("_Revert", bound=Callable[..., OperationResult])


def teammates_too(revert_here: _Revert) -> _Revert:
    """``Operations.revert`` that also takes a teammate's turn (``REMOTE/WHO#N``) back (``revert``
    below); any other turn is this workspace's, as before."""

    @functools.wraps(revert_here)
    def either(ops: Operations, turn: str, dry_run: bool = False, on_conflict: OnConflict = "abort",
               paths: Any = None, pathspec: Any = None, hunk: Any = None, **io: Any) -> OperationResult:
        if not names_teammate(turn):
            return revert_here(ops, turn, dry_run, on_conflict, paths, pathspec, hunk, **io)
        if paths is not None or pathspec is not None or hunk is not None:
            raise InvalidInput(f"{turn}: a teammate's turn is taken back whole (no paths, no --hunk)")
        return revert(ops, turn, dry_run, on_conflict, **io)

    return cast(_Revert, either)


def revert(ops: Operations, spec: str, dry_run: bool = False, on_conflict: OnConflict = "abort",
           **io: Any) -> OperationResult:
    """Take the teammate's turn ``spec`` (``REMOTE/WHO#N``) back in this workspace, keeping
    every later edit (theirs that reached these files, and this person's): the local revert's
    plan and writes (``Operations._operate``), recorded as an entry of this timeline."""
    check_on_conflict(on_conflict)
    with ops.transaction():
        mate, target = resolve(ops.store, spec)
        name = f"{mate.name}#{target.begun.number}"
        if target.begun.kind != "turn":
            raise InvalidInput(f"{name} is a {target.begun.kind}, not an agent turn: only a teammate's turns are taken back")
        if target.state == "reverted":
            raise NothingToDo(f"{name} was taken back on {mate.who}'s own machine already: nothing of it is left to take back")
        if target.state == "not-applied":
            raise NothingToDo(f"{name} was never applied to {mate.who}'s files")
        done = _taken_back_here(ops.timeline, target.begun.entry)
        if done is not None:
            raise NothingToDo(f"{name} is taken back here already, by #{done.begun.number} "
                              f"('takeback redo' or 'takeback revert {done.begun.number}' brings it back)")
        steps = relevant_steps([cp for cp in target.checkpoints if target.applied.get(cp.id, True)])
        if not steps:
            raise NothingToDo(f"{name} changed no file: there is nothing to take back")
        versions = {v.oid: v for changes in steps.values() for c in changes for v in (c.before, c.after)
                    if v is not None and not v.withheld}
        blobs = _Blobs(Contents(ops.store, mate.remote, ops.capture), versions)
        here = dataclasses.replace(target, begun=target.begun.model_copy(update={"session": None}), remote=mate.name)
        effects = {target.begun.entry: "reverted"}
        previous = {target.begun.entry: "applied"}
        label = f"revert {name}" + (f": {target.begun.label}" if target.begun.label else "")
        narrowed = narrow.Narrowed(steps, effects, previous, label, again={"step": name}, blobs=blobs)
        editor = cast("EditorIo", io)
        result = ops._operate("revert", here, steps, effects, previous, dry_run, on_conflict, label,
                              narrowed=narrowed, **editor)
    number = target.begun.number
    message = result.message.replace(f"revert of #{number}", f"revert of {name}", 1)
    message = message.replace(f"; #{number} has", f"; {name} has").replace(f"(takeback show {number})", f"(takeback show {name})")
    return result.model_copy(update={"message": message})


def _taken_back_here(timeline: Timeline, entry_id: str) -> FoldedEntry | None:
    """This workspace's revert of the teammate's entry ``entry_id`` that still stands, if any."""
    for state in timeline.newest_first():
        operation = state.operation
        if operation is not None and state.begun.kind == "revert" and operation.target == entry_id:
            return state if state.state == "applied" else None
    return None
