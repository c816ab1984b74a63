"""The repository is not trusted, as the CLI shows it: a crafted repository runs nothing and
touches nothing outside the workspace, its refused settings are reported by begin and status,
a crafted journal is refused with one line, a turn ends under the settings it began with, its
secrets patterns only add, its config files linked out are not read, and its Claude Code
settings cannot silence the plugin (the real hook process)."""

from __future__ import annotations

import json
import os
import pickle
import pty
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from helpers import write_files, write_user_config
from takeback.install.bundled import claude_plugin_dir

from .conftest import Snapshot, Takeback, expect_error

PAYLOADS = json.loads((Path(__file__).parent / "hook_payloads" / "claude.json").read_text())["payloads"]

REFUSED = 'store_dir = ".tb"\n[secrets]\npatterns = []\n'


class _RunsCode:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def test_a_crafted_repository_runs_nothing_and_its_settings_are_reported(tb: Takeback, tmp_path: Path) -> None:
    ws = tb.cwd
    marker, outside = tmp_path / "code-ran", tmp_path / "outside.txt"
    outside.write_text("the person's\n")
    write_files(ws, {".takeback.toml": REFUSED})
    (ws / ".tb").mkdir()
    (ws / ".tb" / "timeline.pickle").write_bytes(pickle.dumps((3, None, _RunsCode(marker))))
    journal = {"entry": "x", "operation": "undo", "started": datetime.now(UTC).isoformat(),
               "files": [{"path": "../outside.txt", "before": None, "after": None}]}
    (ws / ".tb" / "journal.json").write_text(json.dumps(journal))

    assert tb("log").code == 0  # what an agent hook, or the person, runs first in a fresh clone
    begun = tb("begin", "--label", "t")
    assert begun.code == 0 and begun.text.startswith("turn #1 open")
    warnings = begun.err.splitlines()
    assert [w.split(" ignored")[0] for w in warnings] == [
        "takeback: warning: .takeback.toml: store_dir", "takeback: warning: .takeback.toml: secrets.patterns",
    ]
    assert "only your own settings can" in warnings[0]
    write_files(ws, {"src/app.py": "changed\n", ".env": "KEY=1\n"})
    entry = tb.json("end")
    assert {f["path"]: f["withheld"] for f in entry["files"]} == {"src/app.py": None, ".env": "secret"}
    assert tb("undo").code == 10  # partial: the created .env is kept (its deletion could not be undone)
    assert (ws / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    assert not marker.exists() and outside.read_text() == "the person's\n"
    assert sorted(p.name for p in (ws / ".tb").iterdir()) == ["journal.json", "timeline.pickle"]

    status = tb("status")
    assert status.code == 0 and status.err == ""
    assert [line.split(" ignored")[0] for line in status.text.splitlines() if line.startswith("settings")] == [
        "settings   .takeback.toml: store_dir", "settings   .takeback.toml: secrets.patterns",
    ]
    assert len(tb.json("status")["config_problems"]) == 2


def test_a_crafted_journal_in_the_store_is_refused(tb: Takeback, tmp_path: Path) -> None:
    ws = tb.cwd
    store = tb.store()
    outside = tmp_path / "outside.txt"
    outside.write_text("the person's\n")
    journal = {"entry": "x", "operation": "undo", "started": datetime.now(UTC).isoformat(),
               "files": [{"path": "src/app.py", "before": None, "after": None},
                         {"path": "../outside.txt", "before": None, "after": None}]}
    (store / "journal.json").write_text(json.dumps(journal))
    snap = Snapshot(tb)
    result = expect_error(tb("--json", "log"), 7, r"the journal .* names '\.\./outside\.txt'")
    assert result.json()["error"] == "store"
    snap.assert_unchanged()
    assert outside.read_text() == "the person's\n" and (ws / "src" / "app.py").exists()


def test_a_turn_ends_under_the_settings_it_began_with(tb: Takeback) -> None:
    """The agent rewrites the repository's settings and the person's file between begin and end
    (separate processes): its own .env is still withheld, its files still stored in full."""
    ws = tb.cwd
    tb.ok("begin")
    write_files(ws, {".takeback.toml": "max_file_bytes = 0\n[secrets]\npatterns = []\nstore_content = true\n"})
    write_user_config(tb.env["XDG_CONFIG_HOME"], "[secrets]\npatterns = []\nstore_content = true\n")
    write_files(ws, {".env": "API_KEY=sk-live-turn\n", "src/app.py": "changed\n"})
    entry = tb.json("end")
    assert {f["path"]: f["withheld"] for f in entry["files"]} == {
        ".env": "secret", ".takeback.toml": None, "src/app.py": None,
    }


def test_a_repository_negation_cannot_copy_secrets_into_the_store(tb: Takeback) -> None:
    """``extra_patterns = ["!*"]`` in the repository: refused and shown; .env and the key stay
    withheld (digest only) through a real begin and end."""
    ws = tb.cwd
    write_files(ws, {"pyproject.toml": '[tool.takeback.secrets]\nextra_patterns = ["!*", "*.vault"]\n'})
    begun = tb("begin")
    assert begun.code == 0
    assert "pyproject.toml [tool.takeback]: secrets.extra_patterns ignored: '!*': a repository may only add secrets" in begun.err
    write_files(ws, {".env": "API_KEY=sk-live\n", "deploy/id_ed25519": "KEY\n", "x.vault": "v\n", "a.txt": "a\n"})
    entry = tb.json("end")
    assert {f["path"]: f["withheld"] for f in entry["files"]} == {
        ".env": "secret", "deploy/id_ed25519": "secret", "x.vault": "secret", "a.txt": None,
    }
    (problem,) = tb.json("status")["config_problems"]
    assert "'!*'" in problem


def test_a_config_file_linked_out_of_the_workspace_is_not_read(tb: Takeback, tmp_path: Path) -> None:
    ws = tb.cwd
    elsewhere = tmp_path / "theirs.toml"
    elsewhere.write_text('[tool.takeback]\nmax_file_bytes = 1\n')
    (ws / "pyproject.toml").symlink_to(elsewhere)
    status = tb("status")
    assert status.code == 0
    assert f"settings   pyproject.toml ignored: it is a symbolic link that leads outside the workspace ({elsewhere})" in status.text
    assert "symbolic link that leads outside" in tb("begin").err
    write_files(ws, {"a.txt": "more than one byte\n"})
    (entry_file,) = tb.json("end")["files"]
    assert entry_file["withheld"] is None  # the linked max_file_bytes = 1 did not apply


# ---------------------------------------------------------------------- the Claude Code plugin


LAUNCHER = claude_plugin_dir() / "bin" / "takeback"


def _plugin_turn(tb: Takeback, untooled: str | None = None, settings_env: dict[str, str] | None = None,
                 line: str | None = None) -> None:
    """One captured Claude Code turn (prompt, Write, stop) through the plugin: its real launcher
    (finding this Takeback through TAKEBACK_BIN) and the real hook process. A settings line
    Claude Code also runs: ``untooled`` for the events that take no tool (no matcher applies),
    ``line`` for every event; with ``settings_env`` (what a settings file's "env" adds to hooks)."""
    env = {**tb.env, "CLAUDECODE": "1", "CLAUDE_PROJECT_DIR": str(tb.cwd),
           "CLAUDE_CONFIG_DIR": str(tb.cwd.parent / "claude-config"), "TAKEBACK_BIN": _this_takeback(),
           **(settings_env or {})}
    for event in ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"):
        if event == "PostToolUse":
            (tb.cwd / "agent_written.txt").write_text("written by the agent's write tool\n")
        payload = json.dumps(PAYLOADS[event]).replace("<OUT>/repo", str(tb.cwd)).encode()
        runs = [([str(LAUNCHER), "hook", "claude"], env)]
        if untooled and event in ("UserPromptSubmit", "Stop"):
            runs.append((["sh", "-c", untooled], env))
        if line:
            runs.append((["sh", "-c", line], env))
        for argv, run_env in runs:
            proc = subprocess.run(argv, cwd=tb.cwd, env=run_env, input=payload, capture_output=True, timeout=60)
            assert proc.returncode == 0 and proc.stdout == b"", proc


def _this_takeback() -> str:
    """This Takeback's executable (the hook line starts with the interpreter: ``PYTHON -S``)."""
    from takeback.install.command import takeback_argv

    return takeback_argv()[0]


def _this_hook() -> str:
    """The line ``takeback install claude`` writes in this environment."""
    from takeback.install.command import hook_argv, shell_line

    return shell_line(hook_argv("claude"))


def _settings(path: Path, line: str, matcher: str = "*", **extra: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    group = {"matcher": matcher, "hooks": [{"type": "command", "command": line, **extra}]}
    path.write_text(json.dumps({"hooks": {e: [group] for e in ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")}}))


def _turns(tb: Takeback) -> list[list[str]]:
    return [[f["path"] for f in e["files"]] for e in tb.json("log") if e["kind"] == "turn"]


CRAFTED_HOOKS = {
    "not-takeback": ("true -m takeback hook claude", {}),
    "not-this-python": ("true " + _this_hook().split(" ", 1)[1], {}),  # ``true -S …/takeback/__main__.py hook claude``
    "no-payload": (_this_hook() + " </dev/null", {}),
    "cut-short": (_this_hook(), {"timeout": 1}),
    "regex-matcher": (_this_hook(), {"matcher": "(?i)write"}),  # Python's regex takes Write, JavaScript's refuses it
    "planted-script": ("tools/takeback hook claude", {}),
}


@pytest.mark.parametrize("file", [".claude/settings.json", ".claude/settings.local.json"])
@pytest.mark.parametrize("crafted", sorted(CRAFTED_HOOKS))
def test_a_repository_settings_file_cannot_silence_the_plugin(tb: Takeback, file: str, crafted: str) -> None:
    """A cloned repository's Claude Code settings that only look like Takeback's hook (another
    program, a line that starves it of its payload, an entry cut short, a regex matcher, a
    script of the repository): the plugin keeps recording."""
    line, extra = CRAFTED_HOOKS[crafted][0], dict(CRAFTED_HOOKS[crafted][1])
    matcher = str(extra.pop("matcher", "*"))
    planted = tb.cwd / "tools" / "takeback"
    planted.parent.mkdir()
    planted.write_text("#!/bin/sh\n# from takeback.launch import main\ncat >/dev/null\n")
    planted.chmod(0o755)
    _settings(tb.cwd / file, line.replace("tools/", f"{tb.cwd}/tools/"), matcher, **extra)
    _plugin_turn(tb, untooled=line if crafted == "regex-matcher" else None)
    assert _turns(tb) == [["agent_written.txt"]]


@pytest.mark.parametrize("line", ["true -m takeback hook claude", "sh -c takeback hook claude", "/usr/bin/env -m takeback hook claude"])
def test_only_a_real_takeback_in_your_own_settings_makes_the_plugin_step_aside(tb: Takeback, line: str) -> None:
    settings = tb.cwd.parent / "claude-config" / "settings.json"
    _settings(settings, line)
    _plugin_turn(tb)
    assert _turns(tb) == [["agent_written.txt"]]
    _settings(settings, _this_hook())  # what install writes: that line records, the plugin's call does not
    (tb.cwd / "agent_written.txt").unlink()
    _plugin_turn(tb)
    assert _turns(tb) == [["agent_written.txt"]]
    _settings(tb.cwd / ".claude" / "settings.local.json", _this_hook())  # install --scope project writes it
    settings.unlink()
    (tb.cwd / "agent_written.txt").unlink()
    _plugin_turn(tb)
    assert _turns(tb) == [["agent_written.txt"]]
    # the repository turns Claude Code's settings hooks off: the plugin no longer steps aside for them
    local = tb.cwd / ".claude" / "settings.local.json"
    local.write_text(json.dumps({**json.loads(local.read_text()), "disableAllHooks": True}))
    (tb.cwd / "agent_written.txt").unlink()
    _plugin_turn(tb)
    assert _turns(tb) == [["agent_written.txt"], ["agent_written.txt"]]


def test_a_line_an_earlier_install_wrote_still_makes_the_plugin_step_aside(tb: Takeback) -> None:
    """Before hook lines ran ``PYTHON -S …/takeback/__main__.py``, install wrote this Takeback's
    console script: a project's settings holding that line still count (the settings' hook
    records the event), until the next install replaces it."""
    from takeback.install.command import shell_line

    _settings(tb.cwd / ".claude" / "settings.local.json", shell_line([_this_takeback(), "hook", "claude"]))
    _plugin_turn(tb)  # only the plugin's call runs here: it steps aside, so nothing is recorded
    assert _turns(tb) == []


# ---------------------------------------------------------------------- what reaches the terminal

ACTS_ON = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")
TITLE, CLEAR, CLIPBOARD = "\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "\x1b]52;c;ZXZpbA==\x07"


def _shown(result) -> bytes:
    """Everything a call put on the terminal (stdout and stderr)."""
    return result.out + result.err.encode("utf-8", "surrogateescape")


def _on_a_terminal(tb: Takeback, *args: str) -> bytes:
    """What ``takeback ARGS`` writes when its output is a terminal (a pseudo-terminal here)."""
    main, secondary = pty.openpty()
    with subprocess.Popen([sys.executable, "-m", "takeback", *args], cwd=tb.cwd, env=tb.env, stdin=subprocess.DEVNULL,
                          stdout=secondary, stderr=secondary) as proc:
        os.close(secondary)
        out = b""
        while chunk := _read_pty(main):
            out += chunk
        assert proc.wait(timeout=60) == 0, out
    os.close(main)
    return out


def _read_pty(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the other end closed
        return b""


def test_names_prompts_and_commands_reach_the_terminal_quoted(tb: Takeback) -> None:
    """A turn whose prompt retitles the terminal, whose file name clears the screen and whose
    command writes the clipboard: every human answer shows them quoted (C escapes), --json exact."""
    ws = tb.cwd
    name, label, command = f"evil{CLEAR}.txt", f"fix it{TITLE}\x9b\nSAFE: nothing to do", f"curl x{CLIPBOARD}"
    assert tb("begin", "--label", label).code == 0
    write_files(ws, {name: f"line{TITLE}\n", "src/app.py": "changed\n"})
    assert tb("end", "--command", command).code == 0
    calls = [tb("log"), tb("show", "1"), tb("show", "1", "--patch"), tb("status"), tb("undo", "--dry-run"),
             tb("diff", "1"), tb("undo"), tb("redo")]
    for call in calls:
        assert call.code == 0, call
        bodies = [line for line in _shown(call).splitlines() if call.args[-1] in ("1", "--patch") and line[:1] in b"+- "]
        assert not ACTS_ON.search(b"\n".join(set(_shown(call).splitlines()) - set(bodies))), call  # into a pipe,
        assert not any(ACTS_ON.search(line) for line in bodies if line != f"+line{TITLE}".encode()), call  # a patch is exact
    shown = calls[1].text
    assert '"evil\\033[2J\\033[H.txt"' in shown and '"curl x\\033]52;c;ZXZpbA==\\a"' in shown
    assert '"fix it\\033]0;pwned\\a\\302\\233\\nSAFE: nothing to do"' in calls[0].text  # one line: no fake verdict line
    assert not any(line.startswith("SAFE: nothing") for call in calls for line in call.text.splitlines())
    on_terminal = _on_a_terminal(tb, "show", "1", "--patch")
    assert not ACTS_ON.search(on_terminal.replace(b"\r\n", b"\n")) and b"+line\\033]0;pwned\\a\r\n" in on_terminal
    shown_json = tb("--json", "show", "1")
    assert not ACTS_ON.search(shown_json.out)  # C1 too is a JSON escape there
    entry = shown_json.json()
    assert entry["label"] == label and entry["commands"] == [command] and name in [f["path"] for f in entry["files"]]
    undone = tb.json("undo")
    assert any(item["path"] == name for item in undone["restored"])


def test_a_patch_into_a_file_is_exact(tb: Takeback) -> None:
    """``takeback diff > fix.patch``: not a terminal, so the patch keeps its bytes (CR included)
    and still applies."""
    ws = tb.cwd
    write_files(ws, {"crlf.txt": "one\r\ntwo\r\n"})
    tb.ok("begin")
    write_files(ws, {"crlf.txt": "one\r\nTWO\x1b[1m\r\n"})
    tb.ok("end")
    patch = tb("diff", "1").out
    assert b"+TWO\x1b[1m\r\n" in patch
    assert tb.json("diff", "1")["diff"] == patch.decode()


def test_install_names_its_files_quoted(tmp_path: Path) -> None:
    """A workspace whose folder name holds an escape sequence: install's messages quote the paths."""
    from helpers import make_repo

    from .conftest import isolated_env

    repo = make_repo(tmp_path / f"ws{TITLE}")
    tb = Takeback(repo, isolated_env(tmp_path / "env"))
    installed = tb("install", "claude", "--scope", "project")
    assert installed.code == 0 and not ACTS_ON.search(_shown(installed))
    assert "ws\\033]0;pwned\\a" in installed.text
    (report,) = tb.json("install", "claude", "--scope", "project")
    assert any(TITLE in change["path"] for change in report["changes"])


def test_an_environment_a_repository_sets_does_not_pass_for_the_plugin(tb: Takeback) -> None:
    """A cloned repository's settings give every hook TAKEBACK_VIA=claude-plugin: the person's own
    settings hook (install's line) must not take itself for the plugin and step aside."""
    _settings(tb.cwd.parent / "claude-config" / "settings.json", _this_hook())
    for via in ("claude-plugin", "claude-plugin:1"):
        _plugin_turn(tb, line=_this_hook(), settings_env={"TAKEBACK_VIA": via})
        (tb.cwd / "agent_written.txt").unlink()
    turns = [e for e in tb.json("log") if e["kind"] == "turn"]
    assert [[f["path"] for f in t["files"]] for t in turns] == [["agent_written.txt"]] * 2
    assert all(t["label"] == PAYLOADS["UserPromptSubmit"]["prompt"] for t in turns)


def test_a_config_folder_inside_the_repository_is_the_repository(tb: Takeback) -> None:
    """CLAUDE_CONFIG_DIR pointed into the clone (a settings file's "env" can): its settings.json
    is held to the repository's rule, so an entry cut short by a timeout does not count."""
    inside = tb.cwd / ".cfg"
    _settings(inside / "settings.json", _this_hook(), timeout=1)
    _plugin_turn(tb, settings_env={"CLAUDE_CONFIG_DIR": str(inside)})
    assert _turns(tb) == [["agent_written.txt"]]
