"""Reading a file's blame from the store: the file's versions as the timeline recorded them, in
log order, handed to ``core/blame.py`` (which owns the attribution rule), and the commit ``git
blame`` gives each line that was there before the timeline.

What is read: every applied checkpoint's change to the file (its before and after content, from
the store), who made it (an agent's step of a turn; the person's mark; an operation, whose lines
come back from what earlier changes removed), in the order the log holds them. A bracket's
change after its own turn's steps covers them (``Change.own_gap``).

A renamed file's lines keep their authors: its first recorded version's history starts with
the old path's. The old path is the one a step renamed it from (``renamed_from``, or a file of
the same content the same step deleted: an agent's ``mv``), or, when its first recorded version
was already there (the person's ``git mv`` or copy between turns), the path whose newest
recorded version before it left exactly that content behind (``Timeline.wrote``).

Cost: what the file's history costs. The checkpoints that changed the path come from the
timeline's per-path index (``Timeline.touching``), so only their file lists are read (the
first blame of a process reads the cache's pages, which keep each checkpoint's paths), and
each version's content is read once. A long-lived process (the resident, the language server)
keeps the attribution it folded last per path and HEAD's ``git blame`` per HEAD commit, so its
next blame of the file reads and diffs only the versions recorded since (``_folded``).

The person's repository is only read (libgit2's blame of the file at HEAD, in-process): no git
state changes.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import pygit2

from ..core.blame import Attribution, Change, finish, fold, with_commits
from ..core.models import MODE_LINK, Blame, BlameLine, BlameOrigin, CheckpointRecorded, FileVersion, PathChange
from ..core.textdiff import is_binary, split_lines
from ..core.timeline import FoldedEntry, Timeline
from ..errors import TakebackError
from ..workspace.capture import Capturer

OPERATIONS = ("undo", "redo", "revert", "restore")
EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # (no line to carry: never a rename's source)


def blame_file(
    timeline: Timeline, capture: Capturer, rel: str, now: bytes, repo: pygit2.Repository | None, root: Path,
    first: int | None = None, last: int | None = None,
) -> Blame:
    """Who wrote each line of ``rel`` (content ``now``), lines ``first``..``last`` (1-based, both
    included; None: from the top, to the end). ``repo``: the person's repository, if any, whose
    work tree holds ``root``."""
    history = _History(timeline, capture)
    steps = history.steps(rel, now)
    origins = finish(_folded(history, str(capture.store.path), rel, steps), now)
    if repo is not None and any(o.kind == "before" for o in origins):
        head = head_blame(repo, root / rel)
        if head is not None:
            origins = with_commits(origins, now, *head)
    texts = split_lines(now)
    start = max(first or 1, 1)
    end = min(last if last is not None else len(texts), len(texts))
    lines = [
        BlameLine(line=n, text=texts[n - 1].rstrip(b"\n").decode("utf-8", "replace"), origin=origins[n - 1])
        for n in range(start, end + 1)
    ]
    return Blame(path=rel, lines=lines, entries=len(history.entries))


# What this process folded last for each (store, path), newest used last: the steps' keys and the
# attribution after them. A blame whose steps start with those carries on from it, so a
# long-lived process (the resident, the language server) reads and diffs only the versions
# recorded since (``_folded``).
_KEPT: OrderedDict[tuple[str, str], tuple[tuple[_Key, ...], Attribution]] = OrderedDict()
_KEEP_PATHS = 32


def _folded(history: _History, store: str, rel: str, steps: list[_Step]) -> Attribution:
    """The attribution after ``steps``: carried on from what was kept for ``rel`` when its
    steps begin ours, else from nothing; kept again unless a content was not known (a blob
    the store lacks may come later: a teammate's timeline's contents are fetched when needed)."""
    keys = tuple(step.key for step in steps)
    kept = _KEPT.get((store, rel))
    done, state = 0, Attribution()
    if kept is not None and keys[: len(kept[0])] == kept[0]:
        done, state = len(kept[0]), kept[1].copy()
        if done and state.content is not None:  # (the next change's before, most likely: not read again)
            history.contents[kept[0][-1][2]] = (state.content, True)
    changes = [history.change(step) for step in steps[done:]]
    fold(changes, state)
    if all(c.before_known and c.after_known for c in changes):
        _KEPT[(store, rel)] = (keys, state.copy())
        _KEPT.move_to_end((store, rel))
        while len(_KEPT) > _KEEP_PATHS:
            _KEPT.popitem(last=False)
    return state


def file_history(timeline: Timeline, capture: Capturer, rel: str, now: bytes | None = None) -> tuple[list[Change], int]:
    """The recorded changes of ``rel`` in log order (a renamed file's from its old path's
    first), and how many entries made them. Only the checkpoints that changed them are read
    (``Timeline.touching``); each version's content is read once. ``now``: the file as it
    stands, where the timeline never recorded ``rel`` (renamed by the person since the last
    record of its old path: the old path's history is the file's)."""
    history = _History(timeline, capture)
    changes = [history.change(step) for step in history.steps(rel, now)]
    return changes, len(history.entries)


_Key = tuple[str, str, str, bool]


@dataclass(frozen=True, slots=True)
class _Step:
    """One recorded change of the file before its contents are read: by checkpoint ``cp`` of
    ``state``, from ``before`` to ``after``."""

    state: FoldedEntry
    cp: CheckpointRecorded
    before: FileVersion | None
    after: FileVersion | None
    own_gap: bool

    @property
    def key(self) -> _Key:
        """What makes the change the same one: its checkpoint, both versions, its gap."""
        return (self.cp.id, self.before.oid if self.before else "", self.after.oid if self.after else "", self.own_gap)


class _History:
    """One blame's walk: the entries seen so far (in log order, for ``own_gap``) and the
    contents read, by oid."""

    def __init__(self, timeline: Timeline, capture: Capturer) -> None:
        self.timeline, self.capture = timeline, capture
        self.entries: dict[str, None] = {}
        self.contents: dict[str, tuple[bytes | None, bool]] = {}

    def steps(self, rel: str, now: bytes | None) -> list[_Step]:
        """``rel``'s recorded changes (``file_history``)."""
        steps = self.of(rel, None)
        if not steps and now:
            found = self.wrote(FileVersion(oid=str(pygit2.hash(now)), size=len(now)), rel, self.timeline.checkpoint_count)
            if found is not None:
                steps = self.of(found[0], found[1] + 1)
        return steps

    def change(self, step: _Step) -> Change:
        """``step`` with its contents."""
        before, before_known = self.content(step.before)
        after, after_known = self.content(step.after)
        return Change(
            before=before, after=after, by=_origin(step.state, step.cp), before_known=before_known,
            after_known=after_known, restores=step.state.begun.kind in OPERATIONS, own_gap=step.own_gap,
        )

    def of(self, rel: str, until: int | None) -> list[_Step]:
        """The changes of ``rel`` recorded before place ``until`` in log order (None: all)."""
        steps: list[_Step] = []
        for state, cp in self.timeline.touching(rel):
            position = self.timeline.position(cp.id)
            if until is not None and position >= until:
                break
            if not state.applied.get(cp.id, True):
                continue  # an editor refused the batch: it never reached the file
            change = next(c for c in cp.changes if c.path == rel)
            before_version = change.before
            if not steps:  # the file's first version here: renamed (or copied) from another path?
                source = _moved_from(cp, change) if change.before is None else None
                if source is not None:
                    steps.extend(self.of(source.path, position))
                    before_version = source.before
                if not steps and before_version is not None and (found := self.wrote(before_version, rel, position)):
                    steps.extend(self.of(found[0], found[1] + 1))
            steps.append(_Step(state, cp, before_version, change.after, cp.bracket and state.begun.entry in self.entries))
            self.entries[state.begun.entry] = None
        return steps

    def wrote(self, version: FileVersion, rel: str, until: int) -> tuple[str, int] | None:
        """Where the file's first recorded content came from, when another path's recorded
        version left exactly it behind before place ``until`` (the person's ``git mv`` or copy
        between turns): that path and the place of its newest such change."""
        if version.withheld or version.mode == MODE_LINK or version.oid == EMPTY_BLOB:
            return None
        for state, cp in reversed(self.timeline.wrote(version.oid)):
            position = self.timeline.position(cp.id)
            if position >= until or not state.applied.get(cp.id, True):
                continue
            for change in cp.changes:
                if change.path != rel and change.after is not None and change.after.oid == version.oid:
                    return change.path, position
        return None

    def content(self, version: FileVersion | None) -> tuple[bytes | None, bool]:
        """A side's content (None: no file) and whether it is known: withheld content, a symlink,
        binary content and a blob the store lacks are not lines. Each oid is read once."""
        if version is None:
            return None, True
        if version.withheld or version.mode == MODE_LINK:
            return None, False
        found = self.contents.get(version.oid)
        if found is None:
            try:
                content = self.capture.content(version)
                found = (None, False) if is_binary(content) else (content, True)
            except TakebackError:
                found = (None, False)
            self.contents[version.oid] = found
        return found


def _moved_from(cp: CheckpointRecorded, change: PathChange) -> PathChange | None:
    """The change of ``cp`` that took away the path ``change`` (a new file) was renamed from:
    the one it names (``renamed_from``), else one that deleted a file of the same content (an
    agent's ``mv``: ``aggregate_files`` pairs them the same way)."""
    if change.after is None:
        return None
    for other in cp.changes:
        if other.path != change.path and other.before is not None and other.after is None and (
            other.path == change.renamed_from or (change.renamed_from is None and other.before.oid == change.after.oid)
        ):
            return other
    return None


def _origin(state: FoldedEntry, cp: CheckpointRecorded) -> BlameOrigin:
    """Who made checkpoint ``cp`` of ``state``."""
    index = state.checkpoints.index(cp) + 1
    begun = state.begun
    if begun.kind == "turn":
        return BlameOrigin(
            kind="turn", entry=begun.entry, number=begun.number, step=index, step_label=cp.label,
            agent=begun.agent, session=begun.session, label=begun.label, at=cp.at,
        )
    return BlameOrigin(kind="person", why="mark" if begun.kind == "mark" else "operation", entry=begun.entry, number=begun.number,
                       label=begun.label or begun.kind, at=cp.at)


_HEAD_BLAMES: dict[tuple[str, str, str], tuple[bytes, list[str]]] = {}  # HEAD's blame per (work tree, HEAD, path)


def head_blame(repo: pygit2.Repository, path: Path) -> tuple[bytes, list[str]] | None:
    """The file at ``path`` as HEAD holds it and the commit ``git blame`` gives each of its
    lines; None where HEAD does not hold it (untracked, no commit yet, outside the work tree)."""
    workdir = repo.workdir
    if workdir is None:
        return None
    in_repo = os.path.relpath(path, os.path.realpath(workdir)).replace(os.sep, "/")
    if in_repo.startswith("../"):
        return None
    try:
        if repo.head_is_unborn:
            return None
        head = repo.head.peel(pygit2.Commit)
        blob = head.tree[in_repo]
        if not isinstance(blob, pygit2.Blob) or blob.filemode == MODE_LINK:
            return None
        content = blob.data
        if is_binary(content):
            return None
        key = (workdir, str(head.id), in_repo)  # (what HEAD's blame is a function of)
        if (known := _HEAD_BLAMES.get(key)) is not None:
            return known
        commits = [""] * len(split_lines(content))
        for hunk in repo.blame(in_repo, newest_commit=head.id):
            start = hunk.final_start_line_number - 1
            for k in range(start, min(start + hunk.lines_in_hunk, len(commits))):
                commits[k] = str(hunk.final_commit_id)
    except (KeyError, pygit2.GitError, ValueError):
        return None
    _HEAD_BLAMES[key] = (content, commits)
    while len(_HEAD_BLAMES) > _KEEP_PATHS:
        del _HEAD_BLAMES[next(iter(_HEAD_BLAMES))]
    return content, commits
