"""The workspace a hook records into: the agent's project folder (``Event.folders``, else the
hook's current folder), resolved as every adapter resolves a folder (``workspace/locate.py``: the
top of the git work tree that holds it, or a subfolder of it that has a store), so a hook run
from a subfolder or in a linked git worktree records into that work tree's workspace; a folder
in no work tree is its own workspace."""

from __future__ import annotations

import os

from ..workspace.locate import workspace_root


def workspace_for(folders: list[str], cwd: str | None = None) -> str:
    """``cwd``: the hook's current folder (default: this process's), which relative folders are
    taken from."""
    cwd = cwd or os.getcwd()
    start = next((f for f in folders if os.path.isdir(os.path.join(cwd, f))), None) or cwd
    return workspace_root(os.path.join(cwd, start))
