"""Hooks that come through Takeback's Claude Code plugin step aside for the person's own.

The plugin's launcher (``plugins/claude-code/takeback/bin/takeback``) runs ``takeback hook
claude`` with ``TAKEBACK_VIA=claude-plugin``. Claude Code runs the plugin's hooks *and* the hooks
in its settings files, so a person who also ran ``takeback install claude`` would have every
event reach Takeback twice (two turns per prompt). Rule: a call through the plugin records
nothing when one of the settings files Claude Code reads runs a real ``takeback hook claude`` for
the same event (and a matcher that takes this tool). The settings' hook records it, once.

Only an existing executable outside the project counts: a stale path (a deleted virtualenv) or a
script inside the repository cannot switch the plugin's recording off. Stdlib only, read only
for calls that came through the plugin.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

VIA = "TAKEBACK_VIA"
PLUGIN = "claude-plugin"

_MANAGED = {
    "linux": Path("/etc/claude-code/managed-settings.json"),
    "darwin": Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
}


def via_plugin(env: Mapping[str, str]) -> bool:
    return env.get(VIA) == PLUGIN


def settings_files(project: str | None, env: Mapping[str, str]) -> list[Path]:
    """The settings files Claude Code takes hooks from: managed, the person's, the project's
    shared and personal ones (``env``: the hook's environment)."""
    config = env.get("CLAUDE_CONFIG_DIR")
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    files = [
        _MANAGED.get(sys.platform, _MANAGED["linux"]),
        (Path(config).expanduser() if config else home / ".claude") / "settings.json",
    ]
    if project:
        files += [Path(project) / ".claude" / "settings.json", Path(project) / ".claude" / "settings.local.json"]
    return files


def steps_aside(agent: str, payload: dict, env: Mapping[str, str]) -> bool:
    """Whether this call, which came through the plugin, is recorded by the person's own hook."""
    if agent != "claude" or not via_plugin(env):
        return False
    event = payload.get("hook_event_name")
    tool = payload.get("tool_name") if isinstance(payload.get("tool_name"), str) else None
    project = env.get("CLAUDE_PROJECT_DIR") or (payload.get("cwd") if isinstance(payload.get("cwd"), str) else None)
    return isinstance(event, str) and any(_runs_takeback(f, event, tool, project, env.get("PATH")) for f in settings_files(project, env))


def _runs_takeback(path: Path, event: str, tool: str | None, project: str | None, search: str | None) -> bool:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    for group in groups if isinstance(groups, list) else []:
        if not isinstance(group, dict) or not _matches(group.get("matcher"), tool):
            continue
        entries = group.get("hooks")
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("type", "command") == "command" and _real_hook(entry.get("command"), project, search):
                return True
    return False


def _matches(matcher: object, tool: str | None) -> bool:
    """Claude Code's matcher: empty or ``*`` takes every tool, ``A|B`` names tools, else a regex."""
    if tool is None or matcher in (None, "", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    if re.fullmatch(r"[\w|]+", matcher):
        return tool in matcher.split("|")
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False


def _real_hook(line: object, project: str | None, search: str | None) -> bool:
    """``line`` runs ``takeback hook claude`` with an executable that exists outside the project
    (``search``: the hook's ``PATH``)."""
    from ..install.command import is_hook_line

    if not is_hook_line(line, "claude"):
        return False
    first = shlex.split(str(line))[0]
    found = shutil.which(first, path=search) if os.sep not in first else (first if os.access(first, os.X_OK) else None)
    if found is None or not os.path.isfile(found):
        return False
    real = Path(os.path.realpath(found))
    if _is_launcher(real):  # the plugin's own launcher, copied into settings: it would step aside too
        return False
    if project:
        top = Path(os.path.realpath(project))
        if real == top or top in real.parents:
            return False
    return True


def _is_launcher(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = b"".join(f.readline(200) for _ in range(3))
    except OSError:
        return False
    return b"takeback-plugin-launcher" in head
