"""Reading a file's blame from the store: the file's versions as the timeline recorded them, in
log order, handed to ``core/blame.py`` (which owns the attribution rule), and the commit ``git
blame`` gives each line that was there before the timeline.

What is read: every applied checkpoint's change to the file (its before and after content, from
the store), who made it (an agent's step of a turn; the person's mark; an operation, whose lines
come back from what earlier changes removed), in the order the log holds them. A bracket's
change after its own turn's steps covers them (``Change.own_gap``). A rename into the file
starts from the renamed file's content before.

Cost: the contents read are the file's own versions. Finding them is not yet: the timeline keeps
no index of the entries by path, so every checkpoint's file list is looked at (the older ones
read from the log when they are not in memory); a per-path index is what would make the
lookup cost the file's history only.

The person's repository is only read (libgit2's blame of the file at HEAD, in-process): no git
state changes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from ..core.blame import Change, attribute, with_commits
from ..core.models import MODE_LINK, Blame, BlameLine, BlameOrigin, CheckpointRecorded, FileVersion
from ..core.textdiff import is_binary, split_lines
from ..core.timeline import FoldedEntry, Timeline
from ..errors import TakebackError
from ..workspace.capture import Capturer

OPERATIONS = ("undo", "redo", "revert", "restore")


def blame_file(
    timeline: Timeline, capture: Capturer, rel: str, now: bytes, repo: pygit2.Repository | None, root: Path,
    first: int | None = None, last: int | None = None,
) -> Blame:
    """Who wrote each line of ``rel`` (content ``now``), lines ``first``..``last`` (1-based, both
    included; None: from the top, to the end). ``repo``: the person's repository, if any, whose
    work tree holds ``root``."""
    changes, entries = file_history(timeline, capture, rel)
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


def file_history(timeline: Timeline, capture: Capturer, rel: str) -> tuple[list[Change], int]:
    """The recorded changes of ``rel`` in log order, and how many entries made them."""
    steps: dict[str, tuple[FoldedEntry, int, CheckpointRecorded]] = {}
    for state in timeline.ordered():
        for index, cp in enumerate(state.checkpoints, 1):
            steps[cp.id] = (state, index, cp)
    changes: list[Change] = []
    touched: set[str] = set()
    for cp_id in timeline.checkpoint_seq:
        state, index, cp = steps[cp_id]
        if not state.applied.get(cp_id, True):
            continue  # an editor refused the batch: it never reached the file
        for change in cp.changes:
            if change.path != rel:
                continue
            before_version = change.before
            if before_version is None and change.renamed_from:
                before_version = next((c.before for c in cp.changes if c.path == change.renamed_from), None)
            before, before_known = _content(capture, before_version)
            after, after_known = _content(capture, change.after)
            kind = state.begun.kind
            changes.append(Change(
                before=before, after=after, by=_origin(state, index, cp), before_known=before_known,
                after_known=after_known, restores=kind in OPERATIONS,
                own_gap=cp.bracket and state.begun.entry in touched,
            ))
            touched.add(state.begun.entry)
    return changes, len(touched)


def _origin(state: FoldedEntry, index: int, cp: CheckpointRecorded) -> BlameOrigin:
    """Who made checkpoint ``cp`` (the ``index``-th of ``state``)."""
    begun = state.begun
    if begun.kind == "turn":
        return BlameOrigin(
            kind="turn", entry=begun.entry, number=begun.number, step=index, step_label=cp.label,
            agent=begun.agent, session=begun.session, label=begun.label, at=cp.at,
        )
    return BlameOrigin(kind="person", why="mark" if begun.kind == "mark" else "operation", entry=begun.entry, number=begun.number,
                       label=begun.label or begun.kind, at=cp.at)


def _content(capture: Capturer, version: FileVersion | None) -> tuple[bytes | None, bool]:
    """A side's content (None: no file) and whether it is known: withheld content, a symlink,
    binary content and a blob the store lacks are not lines."""
    if version is None:
        return None, True
    if version.withheld or version.mode == MODE_LINK:
        return None, False
    try:
        content = capture.content(version)
    except TakebackError:
        return None, False
    return (None, False) if is_binary(content) else (content, True)


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
