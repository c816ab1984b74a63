"""What the Claude Code plugin reads in the settings files to step aside, and when it does not.

Each test runs a captured Claude Code turn (prompt, Write, stop) the way Claude Code does when
both the plugin and a settings hook are there: the plugin's real launcher (``bin/takeback``,
finding this Takeback through TAKEBACK_BIN) for every event, and the settings' command line, in
a shell, for the events Claude Code would run it for (its matcher taking the tool). What is
asserted is the timeline afterwards: the turn is recorded exactly once, with its one step; the
plugin never steps aside for a line that would not record the event itself, nor records what
that line already records. The settings files are real files, some of them unreadable (a
folder in the file's place, JSON with comments), read by the real hook process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from takeback.install.bundled import claude_plugin_dir

from .conftest import Takeback

LAUNCHER = claude_plugin_dir() / "bin" / "takeback"
CLAUDE = json.loads((Path(__file__).parent / "hook_payloads" / "claude.json").read_text())["payloads"]
EVENTS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")


def install_line() -> str:
    """The line ``takeback install claude`` writes for this Takeback."""
    from takeback.install.command import hook_argv, shell_line

    return shell_line(hook_argv("claude"))


def this_takeback() -> str:
    """This Takeback's executable (what the plugin's launcher is pointed at: the hook line's first
    word is the interpreter, ``PYTHON -S …/__main__.py hook claude``)."""
    from takeback.install.command import takeback_argv

    return takeback_argv()[0]


def persons_settings(tb: Takeback) -> Path:
    return tb.cwd.parent / "claude-config" / "settings.json"


def write_settings(path: Path, groups: list[dict[str, Any]], events: Iterable[str] = EVENTS) -> None:
    """Claude Code settings whose ``events`` each hold ``groups``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": {event: groups for event in events}}))


def one_turn(tb: Takeback, line: str | None = None, runs_for: Iterable[str] = EVENTS, *, plugin_bin: str | None = None,
             env: dict[str, str] | None = None, payload: dict[str, Any] | None = None,
             argv_event: bool = False) -> None:
    """One Claude Code turn through the plugin's launcher; ``line`` (the settings' hook) is run
    too for the events in ``runs_for``, as Claude Code runs it. ``payload``: fields to set
    (None: to leave out) in every event's payload; ``argv_event``: the event named on the
    command line as well; ``env``: the hook's environment on top of Claude Code's."""
    hook_env = {**tb.env, "CLAUDECODE": "1", "CLAUDE_PROJECT_DIR": str(tb.cwd),
                "CLAUDE_CONFIG_DIR": str(persons_settings(tb).parent),
                "TAKEBACK_BIN": plugin_bin or this_takeback(), **(env or {})}
    hook_env = {k: v for k, v in hook_env.items() if v}
    for event in EVENTS:
        if event == "PostToolUse":
            (tb.cwd / "agent_written.txt").write_text("written by the agent's write tool\n")
        data = json.loads(json.dumps(CLAUDE[event]).replace("<OUT>/repo", str(tb.cwd)))
        for key, value in (payload or {}).items():
            data.pop(key) if value is None else data.__setitem__(key, value)
        runs = [[str(LAUNCHER), "hook", "claude", *([event] if argv_event else [])]]
        if line is not None and event in runs_for:
            runs.append(["sh", "-c", line])
        for argv in runs:
            proc = subprocess.run(argv, cwd=tb.cwd, env=hook_env, input=json.dumps(data).encode(),
                                  capture_output=True, timeout=60)
            assert proc.returncode == 0 and proc.stdout == b"", proc


def recorded(tb: Takeback) -> list[tuple[str, list[str]]]:
    """Each turn on the timeline: its label and its checkpoints' labels."""
    return [(e["label"], [c["label"] for c in e["checkpoints"]]) for e in tb.json("log") if e["kind"] == "turn"]


ONCE = [(CLAUDE["UserPromptSubmit"]["prompt"], ["Write agent_written.txt"])]
"""The turn, recorded once, with its one step."""


# ---------------------------------------------------------------------- Claude Code's matchers


@pytest.mark.parametrize(("matcher", "takes_write"), [
    ("Edit|Write", True),  # tool names
    ("Wri.*", True),  # a regex, in the person's own file: read as one
    ("^Edit$", False),
    ("(unclosed", False),  # not a regex at all: Claude Code runs it for no tool
    (7, False),  # not a matcher
])
def test_a_matcher_in_your_own_settings_is_read_as_claude_code_reads_it(tb: Takeback, matcher: object,
                                                                        takes_write: bool) -> None:
    """The plugin steps aside for the tool events only when the settings' matcher takes the tool:
    otherwise Claude Code does not run that hook for it, and the step would be lost."""
    write_settings(persons_settings(tb), [{"matcher": matcher, "hooks": [{"type": "command", "command": install_line()}]}])
    one_turn(tb, install_line(), runs_for=EVENTS if takes_write else ("UserPromptSubmit", "Stop"))
    assert recorded(tb) == ONCE


def test_entries_that_are_not_commands_are_passed_over(tb: Takeback) -> None:
    """A group holding a prompt hook, then Takeback's command: the command still counts."""
    prompt_hook = {"type": "prompt", "prompt": "Is this safe?"}
    write_settings(persons_settings(tb), [{"matcher": "*", "hooks": [prompt_hook, {"type": "command", "command": install_line()}]}])
    one_turn(tb, install_line())
    assert recorded(tb) == ONCE


def test_a_line_the_shell_cannot_split_is_not_a_takeback_hook(tb: Takeback) -> None:
    write_settings(persons_settings(tb), [{"hooks": [{"type": "command", "command": install_line() + " 'unclosed"}]}])
    one_turn(tb)  # the line fails in the shell: only the plugin records
    assert recorded(tb) == ONCE


# ---------------------------------------------------------------------- which program the line runs


def console_script(path: Path, body: str | None = None) -> Path:
    """An executable ``takeback`` as pip writes it (``body``: something else under that name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body or (
        f"#!{sys.executable}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom takeback.launch import main\n"
        "if __name__ == '__main__':\n    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        "    sys.exit(main())\n"
    ))
    path.chmod(0o755)
    return path


def test_another_installs_console_script_in_your_own_settings_counts(tb: Takeback, tmp_path: Path) -> None:
    """``~/.claude/settings.json`` runs the ``takeback`` of another virtualenv (outside the
    project): it is Takeback, it records the event, so the plugin steps aside."""
    other = console_script(tmp_path / "other-venv" / "bin" / "takeback")
    line = f"{other} hook claude"
    write_settings(persons_settings(tb), [{"hooks": [{"type": "command", "command": line}]}])
    one_turn(tb, line)
    assert recorded(tb) == ONCE


@pytest.mark.parametrize("where", ["inside-the-project", "not-a-console-script", "gone"])
def test_a_takeback_that_may_not_be_one_does_not_silence_the_plugin(tb: Takeback, tmp_path: Path, where: str) -> None:
    """A ``takeback`` inside the repository (which a clone could plant), a program that only
    carries the name, or one that is gone (its virtualenv deleted): the plugin keeps recording,
    even from your own settings."""
    if where == "inside-the-project":
        program = console_script(tb.cwd / "tools" / "bin" / "takeback")
    elif where == "gone":
        program = tmp_path / "deleted-venv" / "bin" / "takeback"
    else:
        program = console_script(tmp_path / "bin" / "takeback", "#!/bin/sh\ncat >/dev/null\n")
    write_settings(persons_settings(tb), [{"hooks": [{"type": "command", "command": f"{program} hook claude"}]}])
    one_turn(tb)  # the line is not run: what the plugin does alone is what is asserted
    assert recorded(tb) == ONCE


def python_without_a_console_script(tmp_path: Path) -> Path:
    """A virtualenv's ``python`` with no ``takeback`` beside it (Takeback reached through the
    same packages), so this Takeback's hook line is ``/abs/python -m takeback hook claude``."""
    venv = tmp_path / "bare-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
    home = Path(os.path.realpath(sys.executable)).parent
    (venv / "pyvenv.cfg").write_text(f"home = {home}\ninclude-system-site-packages = false\n")
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    target = venv / site.relative_to(Path(sys.prefix))
    target.parent.mkdir(parents=True)
    target.symlink_to(site)
    return venv / "bin" / "python"


def test_a_python_m_takeback_line_counts_only_for_the_same_interpreter(tb: Takeback, tmp_path: Path) -> None:
    """Installed from a Python with no console script, the line is ``PYTHON -S
    …/takeback/__main__.py hook claude`` (as from any Python): the plugin (run by that same
    Python) steps aside for exactly that interpreter path."""
    from takeback.install.command import entry_file

    python = python_without_a_console_script(tmp_path)
    wrapper = console_script(tmp_path / "wrapper" / "run-takeback", f'#!/bin/sh\nexec {python} -m takeback "$@"\n')
    proc = subprocess.run([str(python), "-m", "takeback", "--json", "install", "claude"], cwd=tb.cwd, capture_output=True,
                          env={**tb.env, "CLAUDE_CONFIG_DIR": str(persons_settings(tb).parent)}, timeout=60)
    assert proc.returncode == 0, proc
    settings = json.loads(persons_settings(tb).read_text())
    (line,) = {h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]}
    assert line == f"{python} -S {entry_file()} hook claude"
    one_turn(tb, line, plugin_bin=str(wrapper))
    assert recorded(tb) == ONCE


# ---------------------------------------------------------------------- payloads and environments


def test_without_a_project_folder_your_own_settings_still_count(tb: Takeback) -> None:
    """No CLAUDE_PROJECT_DIR and no ``cwd`` in the payload: the person's settings are read all
    the same (the hook's folder finds the workspace)."""
    write_settings(persons_settings(tb), [{"hooks": [{"type": "command", "command": install_line()}]}])
    one_turn(tb, install_line(), env={"CLAUDE_PROJECT_DIR": ""}, payload={"cwd": None})
    assert recorded(tb) == ONCE


def test_an_event_named_only_on_the_command_line_is_recorded_by_the_plugin(tb: Takeback) -> None:
    """A payload without ``hook_event_name`` (its event given on the command line): the
    settings' line could not read it, so the plugin records it."""
    write_settings(persons_settings(tb), [{"hooks": [{"type": "command", "command": install_line()}]}])
    one_turn(tb, install_line(), payload={"hook_event_name": None}, argv_event=True)
    assert recorded(tb) == ONCE
    assert tb.json("status")["hook_failures"] == 4  # the settings' line, one per event: no event name


def test_only_claude_codes_events_step_aside(tb: Takeback) -> None:
    """The launcher run for another agent's hook (``bin/takeback hook codex``) records as usual."""
    write_settings(persons_settings(tb), [{"hooks": [{"type": "command", "command": install_line()}]}])
    codex = json.loads((Path(__file__).parent / "hook_payloads" / "codex.json").read_text())["payloads"]
    env = {**tb.env, "CLAUDE_CONFIG_DIR": str(persons_settings(tb).parent), "TAKEBACK_BIN": this_takeback()}
    data = json.dumps(codex["UserPromptSubmit"]).replace("<OUT>/repo", str(tb.cwd)).encode()
    proc = subprocess.run([str(LAUNCHER), "hook", "codex"], cwd=tb.cwd, env=env, input=data, capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == b"", proc
    assert [label for label, _ in recorded(tb)] == [codex["UserPromptSubmit"]["prompt"]]


@pytest.mark.parametrize("damage", ["a-folder", "comments", "not-an-object", "too-deep"])
def test_settings_that_cannot_be_read_do_not_count(tb: Takeback, damage: str) -> None:
    """A settings file Claude Code cannot use either (a folder in its place, JSON with comments,
    a list, arrays nested deeper than Python reads): it holds no hook, so the plugin records."""
    settings = tb.cwd / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    if damage == "a-folder":
        settings.mkdir()
    elif damage == "comments":
        settings.write_text('{\n  // mine\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": %s}]}]}\n}\n'
                            % json.dumps(install_line()))
    elif damage == "too-deep":  # read, it failed every hook: a repository's file stopped the plugin recording
        settings.write_text("[" * 100_000 + "]" * 100_000)
    else:
        settings.write_text(json.dumps([{"hooks": {}}]))
    one_turn(tb)
    assert recorded(tb) == ONCE
