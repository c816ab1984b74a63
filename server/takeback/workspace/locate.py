"""Which workspace a folder belongs to, when no workspace is named: the same answer for an
agent's hooks, the CLI and the MCP server, so a command run from a subfolder sees the turns the
agent's hooks recorded from there.

Inside a git work tree (``.git`` found upward: a repository, or the file of a linked worktree or
a submodule), it is the nearest folder from ``folder`` up to the work tree's top that already
has a Takeback store (an editor may keep a workspace on a subfolder), else the top itself.
Outside one, it is the folder itself: nothing above it is taken. A named workspace
(``--workspace``, an editor's workspace folders) is used as it is; this is only the default.
Cost: a few ``stat`` calls per folder up to the top.

Where to start from, for a process an agent started (its hooks, its MCP server): the agent's
project folder, which some agents put in the environment of every process they start
(``PROJECT_FOLDER_VARIABLES``), else the process's current folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PROJECT_FOLDER_VARIABLES = {"claude": "CLAUDE_PROJECT_DIR", "gemini": "GEMINI_PROJECT_DIR", "qwen": "QWEN_PROJECT_DIR"}
"""The variable each agent sets to its project folder for the hooks and the MCP servers it
starts (Claude Code gives ``CLAUDE_PROJECT_DIR`` to stdio MCP servers since 2.1.141)."""


def project_folder(agent: str | None, env: Mapping[str, str]) -> str | None:
    """The project folder ``agent`` put in ``env`` (a process it started), or None."""
    value = env.get(PROJECT_FOLDER_VARIABLES.get(agent or "", ""))
    return value or None


def workspace_root(folder: str) -> str:
    """The workspace ``folder`` belongs to (see the module's docstring), an absolute path."""
    start = os.path.normpath(os.path.abspath(folder))
    chain = []
    candidate = start
    while True:
        chain.append(candidate)
        if os.path.exists(os.path.join(candidate, ".git")):
            break
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start  # in no git work tree: the folder is its own workspace
        candidate = parent
    if len(chain) > 1:
        from ..config import default_store_dir  # here: the CLI's light paths (the plugin's step-aside) import this module

        for inner in chain[:-1]:
            if default_store_dir(Path(inner)).is_dir():
                return inner
    return chain[-1]
