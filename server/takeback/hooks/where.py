"""The workspace a hook records into: the agent's project folder (``Event.folders``, else the
hook's current folder), resolved to the top of the git work tree that holds it, so a hook run
from a subfolder or in a linked git worktree records into that work tree's workspace; a folder
in no work tree is its own workspace. Found by looking for ``.git`` upward."""

from __future__ import annotations

import os


def workspace_for(folders: list[str], cwd: str | None = None) -> str:
    """``cwd``: the hook's current folder (default: this process's), which relative folders are
    taken from."""
    cwd = cwd or os.getcwd()
    start = next((f for f in folders if os.path.isdir(os.path.join(cwd, f))), None) or cwd
    folder = os.path.normpath(os.path.join(cwd, start))
    candidate = folder
    while True:
        if os.path.exists(os.path.join(candidate, ".git")):  # a folder (a repository) or a file (a worktree, a submodule)
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return folder
        candidate = parent
