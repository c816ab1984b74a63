"""The workspace a hook records into: the agent's project folder (``Event.folders``, else the
hook's current folder), resolved to the top of the git work tree that holds it, so a hook run
from a subfolder or in a linked git worktree records into that work tree's workspace; a folder
in no work tree is its own workspace. Found by looking for ``.git`` upward (stdlib only)."""

from __future__ import annotations

import os
from pathlib import Path


def workspace_for(folders: list[str], cwd: str | None = None) -> Path:
    start = next((f for f in folders if os.path.isdir(f)), None) or cwd or os.getcwd()
    folder = Path(os.path.abspath(start))
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():  # a folder (a repository) or a file (a linked worktree, a submodule)
            return candidate
    return folder
