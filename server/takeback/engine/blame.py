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
each version's content is read once.

The person's repository is only read (libgit2's blame of the file at HEAD, in-process): no git
state changes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from ..core.blame import Change, attribute, with_commits
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
    changes, entries = file_history(timeline, capture, rel, now)
    origins = attribute(changes, now)
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
    return Blame(path=rel, lines=lines, entries=entries)


def file_history(timeline: Timeline, capture: Capturer, rel: str, now: bytes | None = None) -> tuple[list[Change], int]:
    """The recorded changes of ``rel`` in log order (a renamed file's from its old path's
    first), and how many entries made them. Only the checkpoints that changed them are read
    (``Timeline.touching``); each version's content is read once. ``now``: the file as it
    stands, where the timeline never recorded ``rel`` (renamed by the person since the last
    record of its old path: the old path's history is the file's)."""
    history = _History(timeline, capture)
    changes = history.of(rel, None)
    if not changes and now:
        found = history.wrote(FileVersion(oid=str(pygit2.hash(now)), size=len(now)), rel, timeline.checkpoint_count)
        if found is not None:
            changes = history.of(found[0], found[1] + 1)
    return changes, len(history.entries)


class _History:
    """One blame's walk: the entries seen so far (in log order, for ``own_gap``) and the
    contents read, by oid."""

    def __init__(self, timeline: Timeline, capture: Capturer) -> None:
        self.timeline, self.capture = timeline, capture
        self.entries: dict[str, None] = {}
        self.contents: dict[str, tuple[bytes | None, bool]] = {}

    def of(self, rel: str, until: int | None) -> list[Change]:
        """The changes of ``rel`` recorded before place ``until`` in log order (None: all)."""
        changes: list[Change] = []
        for state, cp in self.timeline.touching(rel):
            position = self.timeline.position(cp.id)
            if until is not None and position >= until:
                break
            if not state.applied.get(cp.id, True):
                continue  # an editor refused the batch: it never reached the file
            change = next(c for c in cp.changes if c.path == rel)
            before_version = change.before
            if not changes:  # the file's first version here: renamed (or copied) from another path?
                source = _moved_from(cp, change) if change.before is None else None
                if source is not None:
                    changes.extend(self.of(source.path, position))
                    before_version = source.before
                if not changes and before_version is not None and (found := self.wrote(before_version, rel, position)):
                    changes.extend(self.of(found[0], found[1] + 1))
            before, before_known = self.content(before_version)
            after, after_known = self.content(change.after)
            kind = state.begun.kind
            changes.append(Change(
                before=before, after=after, by=_origin(state, cp), before_known=before_known,
                after_known=after_known, restores=kind in OPERATIONS,
                own_gap=cp.bracket and state.begun.entry in self.entries,
            ))
            self.entries[state.begun.entry] = None
        return changes

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
        commits = [""] * len(split_lines(content))
        for hunk in repo.blame(in_repo, newest_commit=head.id):
            start = hunk.final_start_line_number - 1
            for k in range(start, min(start + hunk.lines_in_hunk, len(commits))):
                commits[k] = str(hunk.final_commit_id)
    except (KeyError, pygit2.GitError, ValueError):
        return None
    return content, commits
