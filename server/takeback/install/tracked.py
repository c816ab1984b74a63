"""Whether git tracks a file that ``install --scope project`` would change.

A project's config file that git tracks is the team's, not the person's, even where the agent
calls it personal (a committed ``.claude/settings.local.json``): Takeback's entries hold this
machine's paths and would reach everyone at the next commit. ``install`` therefore refuses to
change a tracked file unless ``--force`` is given (as ``git add`` wants ``-f`` for an ignored
file, and ``pre-commit install`` wants ``--overwrite`` for a hook it did not write), and then
says how to keep the change out of commits. The index is read with libgit2 (pygit2, already
Takeback's git library); a folder that is not in a repository tracks nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidInput


class TrackedFile(InvalidInput):
    """A file of the repository's history that install would change without ``--force``."""

    code = "tracked-file"


def tracked(paths: list[Path], root: Path) -> list[Path]:
    """Those of ``paths`` (absolute, inside ``root``'s repository) that its index holds."""
    import pygit2

    found = pygit2.discover_repository(str(root))
    if found is None:
        return []
    try:
        repo = pygit2.Repository(found)
        index, workdir = repo.index, repo.workdir
    except pygit2.GitError:  # an index git cannot read either: it names no file as tracked
        return []
    if workdir is None:  # a bare repository: no work tree, no file of one is tracked
        return []
    top = Path(workdir).resolve()
    # a path outside the work tree (a core.worktree elsewhere) is named "../…": never in the index
    return [path for path in paths if Path(os.path.relpath(path.parent.resolve() / path.name, top)).as_posix() in index]


def refuse(paths: list[Path], root: Path) -> None:
    """Raise ``TrackedFile`` naming the first of ``paths`` git tracks."""
    if paths:
        shown = ", ".join(str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in paths)
        raise TrackedFile(
            f"{shown} is tracked by git (the team's file, not only yours): Takeback's entries would reach "
            "everyone at the next commit; run again with --force to write it anyway; nothing was written"
        )


def note(path: Path, root: Path) -> str:
    """What install says after writing a tracked file with ``--force``."""
    name = path.relative_to(root) if path.is_relative_to(root) else path
    return (f"{name} is tracked by git: Takeback's entries show in git diff; "
            f"'git update-index --skip-worktree {path}' keeps them out of your commits")
