"""Hooks that come through Takeback's Claude Code plugin step aside for the person's own.

The plugin's launcher (``server/takeback/plugins/claude-code/takeback/bin/takeback``) runs ``takeback hook
claude`` with ``TAKEBACK_VIA=claude-plugin:<pid>`` (checked by ``via.py``). Claude Code runs the
plugin's hooks *and* the hooks in its settings files, so a person who also ran ``takeback install
claude`` would have every event reach Takeback twice (two turns per prompt). Rule: a call
through the plugin records nothing when one of the settings files Claude Code reads runs a real
``takeback hook claude`` for the same event (and a matcher that takes this tool). The settings'
hook records it, once.

The repository is not trusted (promise 8): its files must not be able to switch recording off.
So a settings line counts only when it is exactly ``TAKEBACK hook claude`` and TAKEBACK really
is Takeback: this very one (what ``takeback install`` writes, the same file), or, in the
person's own files (managed, ``~/.claude/settings.json``), another install's ``takeback``
console script outside the project. In the project's files (``.claude/settings.json``,
``.claude/settings.local.json``, which a clone brings) only this very Takeback counts, in an
entry as install writes it (no ``timeout``) under a plain matcher. Then stepping aside never
loses an event: the settings' line runs the same Takeback with the same payload. A stale path,
``true -m takeback hook claude``, a line with a redirection or a script inside the repository
is no Takeback hook: the plugin keeps recording. When a settings file sets ``disableAllHooks``
(or the managed one ``allowManagedHooksOnly``) only the managed file's hooks count, as Claude
Code then runs only those. Stdlib only, read only for calls that came through the plugin.
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

from .via import via_plugin

_MANAGED = {
    "linux": Path("/etc/claude-code/managed-settings.json"),
    "darwin": Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
}


def settings_files(project: str | None, env: Mapping[str, str]) -> list[tuple[Path, bool]]:
    """The settings files Claude Code takes hooks from, each with whether it is the person's own:
    managed and the person's (yes), the project's shared and personal ones (no: files in the
    repository, which a clone brings; so is a "person's" file that a ``CLAUDE_CONFIG_DIR`` or
    ``HOME`` puts inside the project). ``env``: the hook's environment."""
    config = env.get("CLAUDE_CONFIG_DIR")
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    person = (Path(config).expanduser() if config else home / ".claude") / "settings.json"
    inside = project is not None and Path(os.path.realpath(person)).is_relative_to(os.path.realpath(project))
    files = [(_MANAGED.get(sys.platform, _MANAGED["linux"]), True), (person, not inside)]
    if project:
        files += [(Path(project) / ".claude" / name, False) for name in ("settings.json", "settings.local.json")]
    return files


def steps_aside(agent: str, payload: dict, env: Mapping[str, str]) -> bool:
    """Whether this call, which came through the plugin, is recorded by the person's own hook."""
    if agent != "claude" or not via_plugin(env):
        return False
    event = payload.get("hook_event_name")
    tool = payload.get("tool_name") if isinstance(payload.get("tool_name"), str) else None
    project = env.get("CLAUDE_PROJECT_DIR") or (payload.get("cwd") if isinstance(payload.get("cwd"), str) else None)
    if not isinstance(event, str):
        return False
    files = settings_files(project, env)
    docs = [(doc, own) for path, own in files if (doc := _read(path)) is not None]
    managed = _read(files[0][0]) or {}
    if managed.get("allowManagedHooksOnly") is True or any(d.get("disableAllHooks") is True for d, _ in docs):
        # Claude Code then runs the managed file's hooks only (none if it disables them itself),
        # and a repository's disableAllHooks must not leave the plugin stepping aside for nobody.
        docs = [] if managed.get("disableAllHooks") is True else [(managed, True)]
    return any(_runs_takeback(doc, own, event, tool, project, env.get("PATH")) for doc, own in docs)


def _read(path: Path) -> dict | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # nested too deeply: a repository's file must not stop every hook
        return None
    return doc if isinstance(doc, dict) else None


def _runs_takeback(doc: dict, own: bool, event: str, tool: str | None, project: str | None, search: str | None) -> bool:
    hooks = doc.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    for group in groups if isinstance(groups, list) else []:
        if not isinstance(group, dict) or not _matches(group.get("matcher"), tool, own):
            continue
        entries = group.get("hooks")
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or entry.get("type", "command") != "command":
                continue
            if not own and set(entry) - {"type", "command"}:
                continue  # a repository's entry is counted only as install writes it (no timeout to cut it short)
            if _real_hook(entry.get("command"), project, search, own):
                return True
    return False


def _matches(matcher: object, tool: str | None, own: bool = True) -> bool:
    """Claude Code's matcher: empty or ``*`` takes every tool, ``A|B`` names tools, else a regex
    (the person's files only: Python's regexes are not JavaScript's, so a repository's regex
    could seem to take a tool that Claude Code does not give it)."""
    if tool is None or matcher in (None, "", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    if re.fullmatch(r"[\w|]+", matcher):
        return tool in matcher.split("|")
    if not own:
        return False
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False


def _real_hook(line: object, project: str | None, search: str | None, own: bool = True) -> bool:
    """``line`` is exactly ``TAKEBACK hook claude`` (nothing added: no redirection, no other
    command) and TAKEBACK really is Takeback: this very one (the words ``takeback install``
    writes), or, in the person's own files, another install's ``takeback`` console script outside
    the project (``search``: the hook's ``PATH``)."""
    from ..install.command import hook_argv, takeback_argv

    try:
        words = shlex.split(line) if isinstance(line, str) else None
    except ValueError:
        return False
    # as install writes it now, and as an earlier install wrote it (``TAKEBACK hook claude``)
    these = (hook_argv("claude"), [*takeback_argv(), "hook", "claude"])
    if words is None or not words or all(words[1:] != this[1:] for this in these) and words[1:] != ["hook", "claude"]:
        return False
    found = shutil.which(words[0], path=search) if os.sep not in words[0] else words[0]
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        return False
    if any(words[1:] == this[1:] and _same_program(found, this) for this in these):
        return True  # this Takeback, as install writes it (or wrote it)
    if not own or words[1:] != ["hook", "claude"]:
        return False
    real = Path(os.path.realpath(found))
    if project:
        top = Path(os.path.realpath(project))
        if real == top or top in real.parents:
            return False
    return _is_console_script(real)


def _same_program(found: str, this: list[str]) -> bool:
    """``found`` is this Takeback's executable: the same console script (through any link), or
    for ``python -m takeback`` or ``python -S …/takeback`` the same interpreter path (not its
    target: every virtualenv's python links to one interpreter, and another one may not have
    Takeback). Both exist: ``found``
    was just checked, ``this[0]`` is what runs this process (``takeback_argv``)."""
    if this[1:2] in (["-m"], ["-S"]):
        return os.path.abspath(found) == os.path.abspath(this[0])
    return os.path.samefile(found, this[0])


def _is_console_script(path: Path) -> bool:
    """A ``takeback`` console script as pip, pipx and uv write it (never the plugin's launcher,
    which would step aside too, nor a program that only carries the name)."""
    try:
        with open(path, "rb") as f:
            head = f.read(400)
    except OSError:
        return False
    return head.startswith(b"#!") and b"from takeback.launch import main" in head
