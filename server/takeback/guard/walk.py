"""The guard's few looks at the disk, each bounded: the ignored (and withheld) entries under a
folder a command deletes, how many files a folder holds, a file's size, the current branch.

These are the defaults of ``classify.Workspace``'s replaceable callables; the wiring may answer
them from the scanner's index instead. Each stops early rather than walk a large tree: the
classifier runs on the hot path of every tool call, so a walk that would go on gives up (the
classifier then says the call *may* delete ignored files, never that it is undoable).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable

WALK_LIMIT = 2_000  # entries looked at under a deleted folder before the walk gives up
WALK_SECONDS = 0.015  # … or this long, whichever comes first
COUNT_LIMIT = 10_000  # files counted in an ignored folder before "over 10,000 files"


def ignored_under(root: str, rel_folder: str, limit: int, is_ignored: Callable[[str], bool],
                  is_withheld: Callable[[str], bool]) -> list[str] | None:
    """The ignored files and folders (a folder ends in "/", and is one entry: the walk does not
    go into it) and the withheld files under ``rel_folder``, workspace-relative; ``None`` when
    the walk gave up (more than ``limit`` entries, or ``WALK_SECONDS``). ``.git`` is skipped."""
    rel_folder = rel_folder.strip("/")
    found: list[str] = []
    stack = [rel_folder]
    seen = 0
    deadline = time.monotonic() + WALK_SECONDS
    while stack:
        rel = stack.pop()
        try:
            entries = os.scandir(os.path.join(root, rel) if rel else root)
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > limit or (seen % 128 == 0 and time.monotonic() > deadline):
                    return None
                if entry.name == ".git":
                    continue
                child = f"{rel}/{entry.name}" if rel else entry.name
                try:
                    folder = entry.is_dir(follow_symlinks=False)
                except OSError:
                    folder = False
                if is_ignored(child + "/" if folder else child):
                    found.append(child + "/" if folder else child)
                elif folder:
                    stack.append(child)
                elif is_withheld(child):
                    found.append(child)
    return sorted(found)


def count_files(path: str, limit: int) -> int:
    """How many files (anything not a folder) ``path`` holds, counting no further than
    ``limit + 1``: a result over ``limit`` means "over ``limit``"."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            return 1
    except OSError:
        return 0
    count = 0
    stack = [path]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    folder = entry.is_dir(follow_symlinks=False)
                except OSError:
                    folder = False
                if folder:
                    stack.append(entry.path)
                    continue
                count += 1
                if count > limit:
                    return count
    return count


def is_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def size(path: str) -> int | None:
    """A regular file's size (``None``: not there, or not a regular file)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def current_branch(root: str) -> str | None:
    """The branch ``HEAD`` names, read from ``.git/HEAD`` (a worktree's ``.git`` file followed);
    ``None`` when detached or unreadable. Two small reads, no git process."""
    git = os.path.join(root, ".git")
    try:
        if os.path.isfile(git):
            with open(git, encoding="utf-8", errors="replace") as f:
                line = f.read(4096).strip()
            if not line.startswith("gitdir:"):
                return None
            git = os.path.join(root, line[len("gitdir:"):].strip())
        with open(os.path.join(git, "HEAD"), encoding="utf-8", errors="replace") as f:
            head = f.read(4096).strip()
    except OSError:
        return None
    prefix = "ref: refs/heads/"
    return head[len(prefix):] if head.startswith(prefix) else None
