"""Finding the git repository and work tree a workspace is in, as git finds them, and keeping
that answer in a long-lived process while nothing that decides it changed.

``work_tree(root)`` asks libgit2 (a ``.git`` file or symlink, ``core.worktree``, a linked
worktree all name the work tree). Opening a repository to ask takes 0.15-0.25 ms, and a shell
step's begin and end each asked (the resident process, 100,000 files). ``KeptWorkTree`` keeps
the answer under the stamps of what decides it, hand-written because nothing else knows which
files those are:

* which folder from the workspace up holds the first ``.git`` (looked for again each time: a
  repository made or removed in a folder between moves it), and each folder's identity up to
  it and to the work tree (a folder replaced, or swapped for a symlink, is another);
* the ``.git`` entry itself: a folder's identity (git rewrites files inside it all the time,
  which decides nothing here), a ``.git`` file's or symlink's stamp (rewritten in place to name
  another git folder);
* the git folder's ``config``, ``config.worktree`` and ``commondir``, and the common folder's
  ``config`` (``core.worktree``, ``core.bare``).

A stamp whose time is within ``RACY_NS`` of now may hide a second change in the same clock
tick (git's "racily clean" entries): such an answer is not kept. An answer of None (no work
tree) is never kept: a folder outside git is walked, and its scan costs far more than this.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pygit2

from .. import gitenv
from ..workspace.files import file_stamp

RACY_NS = 50_000_000  # a file system's clock ticks every few ms; a change this recent is not trusted yet


def work_tree(root: Path) -> tuple[str, str] | None:
    """The git folder and the work tree git itself uses for ``root``, or None when ``root`` is
    in no work tree. The work tree is found from ``root`` as git finds it, not guessed from the
    git folder's place: a ``.git`` file (``git init --separate-git-dir``, ``git worktree add``,
    submodules), a ``.git`` symlink (Android's ``repo``) and ``core.worktree`` all name it."""
    try:
        repo = pygit2.Repository(str(root))
    except pygit2.GitError:
        return None
    if repo.is_bare or not repo.workdir:
        return None
    workdir = os.path.realpath(repo.workdir)
    inside = str(root) == workdir or str(root).startswith(workdir.rstrip(os.sep) + os.sep)
    return (repo.path, workdir) if inside else None  # core.worktree elsewhere: root is not in it


class KeptWorkTree:
    """``work_tree(root)`` for one workspace, asked again only when a stamp that decides it
    moved (the module's docstring)."""

    def __init__(self) -> None:
        self._kept: tuple[Path, tuple, tuple[str, str]] | None = None  # (root, stamps, answer)
        self.asked = 0  # times libgit2 was asked (the tests count them)

    def get(self, root: Path) -> tuple[str, str] | None:
        kept = self._kept
        if kept is not None and kept[0] == root and (now := _stamps(root, kept[2])) is not None and now[0] == kept[1]:
            return kept[2]
        self._kept = None
        self.asked += 1
        found = work_tree(root)
        if found is not None and (now := _stamps(root, found)) is not None and time.time_ns() - now[1] >= RACY_NS:
            self._kept = (root, now[0], found)
        return found


def _stamps(root: Path, found: tuple[str, str]) -> tuple[tuple, int] | None:
    """The stamps of what decides ``found`` for ``root`` (the folders, their identities, the
    ``.git`` entry's stamp, the git files' ``file_stamp``), and the newest change time among
    them; None when a folder on the way is gone."""
    git_dir, workdir = found
    folders: list[str] = []
    folder = str(root)
    holder = None  # the first folder from root up that holds a .git
    while True:
        folders.append(folder)
        if holder is None and os.path.lexists(os.path.join(folder, ".git")):
            holder = folder
        if holder is not None and len(folder) <= len(workdir):  # at or above the work tree (an ancestor of root)
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    if holder is None:
        return None
    try:
        identities = tuple((st.st_dev, st.st_ino) for st in map(os.stat, folders))
        entry = os.lstat(os.path.join(holder, ".git"))
    except OSError:
        return None
    common = gitenv.common_dir(git_dir)
    files = [file_stamp(os.path.join(git_dir, n)) for n in ("config", "config.worktree", "commondir")]
    files.append(file_stamp(os.path.join(common, "config")))
    times = [t for stamp in files if stamp is not None for t in stamp[2:]]  # (inode, size, mtime, ctime)
    if stat.S_ISDIR(entry.st_mode):
        entry_stamp: tuple = (entry.st_mode, entry.st_ino)
    else:
        entry_stamp = (entry.st_mode, entry.st_ino, entry.st_size, entry.st_mtime_ns, entry.st_ctime_ns)
        times += [entry.st_mtime_ns, entry.st_ctime_ns]
    return (tuple(folders), identities, entry_stamp, tuple(files)), max(times, default=0)
