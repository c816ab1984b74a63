"""The files Takeback ships beside its code (package data, in the wheel and the sdist alike):
the Claude Code plugin, found through ``importlib.resources`` so a wheel installed anywhere (a
pipx or uv tool environment, a virtual environment) finds its own copy, never a clone's."""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

CLAUDE_PLUGIN = ("plugins", "claude-code", "takeback")
"""The Claude Code plugin, below the package: ``.claude-plugin/plugin.json``, ``hooks/``,
``commands/``, ``.mcp.json`` and the launcher ``bin/takeback``."""

CLAUDE_PLUGIN_FILES = (
    ".claude-plugin/plugin.json", ".mcp.json", "README.md", "bin/takeback", "hooks/hooks.json",
    "commands/log.md", "commands/redo.md", "commands/show.md", "commands/undo.md",
)
"""Every file of the plugin: a wheel that lacks one is broken (tests/packaging checks them)."""


def claude_plugin_dir() -> Path:
    """The folder of this Takeback's Claude Code plugin (for ``claude --plugin-dir``). Takeback is
    installed as plain files (a wheel is unpacked, never imported from a zip), so the folder is
    a real one and stays after this call."""
    resource = files("takeback").joinpath(*CLAUDE_PLUGIN)
    with as_file(resource) as path:
        return Path(path)
