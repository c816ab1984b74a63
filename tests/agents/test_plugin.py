"""Takeback's Claude Code plugin (``server/takeback/plugins/claude-code/takeback``, listed by the repository's
``.claude-plugin/marketplace.json``).

Without Claude Code: its JSON files are what Claude Code reads, its hooks and MCP server run the
plugin's launcher; the launcher (a POSIX sh script, run for real) finds ``takeback`` through
``TAKEBACK_BIN``, then PATH (never itself, never a relative PATH folder), and when there is none
says so in one line and lets a hook pass; and a person who has both the plugin and ``takeback
install claude`` gets every event recorded once: the settings' command lines and the plugin's are
both run, as Claude Code runs them, on Claude Code's real captured payloads.

Live (the real Claude Code 2.1.197, offline, as in ``test_live.py``): the plugin loaded with
``--plugin-dir`` records the two-turn scenario with its steps; ``/takeback:log`` hands the model
the timeline; with the plugin installed from this repository's marketplace (``claude plugin
marketplace add`` + ``claude plugin install``) *and* ``takeback install claude``, a turn is
recorded once; the plugin's MCP server plans and carries out an undo.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agents.test_live import ClaudeCode, _offline_ready
from cli.conftest import Takeback, isolated_env
from core.support import full_state
from helpers import git, git_state, make_repo
from takeback.install.bundled import claude_plugin_dir

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
PLUGIN = claude_plugin_dir()
LAUNCHER = PLUGIN / "bin" / "takeback"
TAKEBACK = Path(sys.executable).parent / "takeback"
PAYLOADS = json.loads((ROOT / "tests" / "cli" / "hook_payloads" / "claude.json").read_text())["payloads"]
PLUGIN_EVENTS = {"SessionStart": None, "UserPromptSubmit": None, "PreToolUse": "*", "PostToolUse": "*", "Stop": None, "SessionEnd": None}


def _json(path: Path) -> dict:
    data = json.loads(path.read_text())
    assert isinstance(data, dict), path
    return data


def _frontmatter(path: Path) -> tuple[dict[str, str], str]:
    text = path.read_text()
    match = re.match(r"---\n(.*?)\n---\n(.*)", text, re.S)
    assert match, f"{path} has no frontmatter"
    fields = dict(line.split(": ", 1) for line in match.group(1).splitlines())
    return fields, match.group(2)


# --- the files -------------------------------------------------------------------------------


def test_manifests_name_the_plugin_and_point_at_its_folder() -> None:
    plugin = _json(PLUGIN / ".claude-plugin" / "plugin.json")
    market = _json(ROOT / ".claude-plugin" / "marketplace.json")
    assert plugin["name"] == "takeback" and re.fullmatch(r"[a-z0-9-]+", plugin["name"])
    project = (ROOT / "pyproject.toml").read_text()
    assert f'version = "{plugin["version"]}"' in project, "the plugin's version is Takeback's"
    assert market["name"] and market["owner"]["name"]
    [entry] = market["plugins"]
    assert entry["name"] == plugin["name"] and entry["version"] == plugin["version"]
    assert entry["source"].startswith("./") and (ROOT / entry["source"]).resolve() == PLUGIN.resolve()


def test_hooks_run_the_launcher_for_the_events_install_writes() -> None:
    from takeback.install.agents import CLAUDE_EVENTS

    hooks = _json(PLUGIN / "hooks" / "hooks.json")["hooks"]
    assert {e: [g.get("matcher") for g in groups] for e, groups in hooks.items()} == {
        e: [m] for e, m in CLAUDE_EVENTS.items()
    }, "the plugin listens to exactly what 'takeback install claude' writes"
    for groups in hooks.values():
        [hook] = groups[0]["hooks"]
        assert hook == {"type": "command", "command": '"${CLAUDE_PLUGIN_ROOT}/bin/takeback" hook claude'}
    assert PLUGIN_EVENTS == CLAUDE_EVENTS


def test_mcp_server_runs_the_launcher() -> None:
    servers = _json(PLUGIN / ".mcp.json")["mcpServers"]
    assert servers == {"takeback": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/takeback", "args": ["mcp", "--agent", "claude"]}}


def test_launcher_is_executable_in_git_and_is_posix_sh() -> None:
    rel = str(LAUNCHER.relative_to(ROOT))
    assert git(ROOT, "ls-files", "-s", rel).split()[0] == "100755", "git must keep the launcher executable"
    assert LAUNCHER.stat().st_mode & stat.S_IXUSR
    assert LAUNCHER.read_text().startswith("#!/bin/sh\n# takeback-plugin-launcher")
    dash = shutil.which("dash") or shutil.which("sh")
    assert dash and subprocess.run([dash, "-n", str(LAUNCHER)]).returncode == 0


def test_commands_run_only_takeback_and_allow_just_that() -> None:
    names = sorted(p.stem for p in (PLUGIN / "commands").glob("*.md"))
    assert names == ["log", "redo", "show", "undo"]
    for path in (PLUGIN / "commands").glob("*.md"):
        fields, body = _frontmatter(path)
        assert 10 < len(fields["description"]) <= 90, path
        allowed = [a.strip() for a in fields["allowed-tools"].split(",")]
        for command in re.findall(r"!`([^`]*)`", body):
            assert command.startswith("takeback ") and not re.search(r"[;&|$<>]", command), command
            assert any(a == f"Bash({command})" or (a.endswith(":*)") and command.startswith(a[5:-3])) for a in allowed), (
                f"{path.name}: {command!r} is not in allowed-tools {allowed}")
        for tool in (a for a in allowed if a.startswith("mcp__")):
            assert re.fullmatch(r"mcp__plugin_takeback_takeback__(undo|redo|show_turn|diff_turn)", tool), tool
    for name in ("undo", "redo"):
        fields, body = _frontmatter(PLUGIN / "commands" / f"{name}.md")
        assert f"!`takeback {name} --dry-run`" in body and "confirm_token" in body and "(yes / no)" in body


# --- the launcher ----------------------------------------------------------------------------


def _launch(args: list[str], env: dict[str, str], cwd: Path, stdin: bytes = b"",
            launcher: Path = LAUNCHER) -> subprocess.CompletedProcess:
    return subprocess.run([str(launcher), *args], env=env, cwd=cwd, input=stdin, capture_output=True, timeout=60)


def _installed_copy(tmp_path: Path) -> Path:
    """The plugin as Claude Code installs it: copied into its plugin cache, away from this clone
    (whose .venv the launcher would otherwise find as its last resort)."""
    copy = tmp_path / "claude-config" / "plugins" / "cache" / "takeback" / "takeback" / "0.1.0"
    shutil.copytree(PLUGIN, copy)
    return copy / "bin" / "takeback"


def _bare_env(tmp_path: Path, path: str) -> dict[str, str]:
    env = isolated_env(tmp_path / "env")
    env.pop("TAKEBACK_BIN", None)
    env["PATH"] = path
    return env


def test_launcher_uses_takeback_bin(tmp_path: Path) -> None:
    env = {**_bare_env(tmp_path, "/usr/bin:/bin"), "TAKEBACK_BIN": str(TAKEBACK)}
    proc = _launch(["--version"], env, tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith(b"takeback "), proc


def test_launcher_finds_takeback_on_path_and_skips_itself(tmp_path: Path) -> None:
    copy = tmp_path / "other-plugin-copy"
    copy.mkdir()
    shutil.copy2(LAUNCHER, copy / "takeback")  # an older copy of the plugin, earlier on PATH
    env = _bare_env(tmp_path, f"{LAUNCHER.parent}:{copy}:{TAKEBACK.parent}:/usr/bin:/bin")
    proc = _launch(["--version"], env, tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith(b"takeback ") and proc.stderr == b"", proc


def test_launcher_without_takeback_lets_a_hook_pass_and_says_so_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    env = _bare_env(tmp_path, "/usr/bin:/bin")
    launcher = _installed_copy(tmp_path)
    payload = json.dumps({**PAYLOADS["UserPromptSubmit"], "cwd": str(repo)}).encode()
    hook = _launch(["hook", "claude"], env, repo, payload, launcher)
    assert hook.returncode == 0 and hook.stdout == b"", hook
    [line] = hook.stderr.decode().splitlines()
    assert line.startswith("takeback (Claude Code plugin): takeback was not found") and "TAKEBACK_BIN" in line
    other = _launch(["mcp"], env, repo, launcher=launcher)
    assert other.returncode == 127 and len(other.stderr.decode().splitlines()) == 1, other
    wrong = _launch(["--version"], {**env, "TAKEBACK_BIN": str(tmp_path / "nope")}, repo, launcher=launcher)
    assert wrong.returncode == 127 and "TAKEBACK_BIN=" in wrong.stderr.decode(), wrong


def test_launcher_never_runs_a_takeback_from_a_relative_path_folder(tmp_path: Path) -> None:
    """A cloned repository's own ``takeback`` file must not run because PATH holds "." or ""."""
    repo = make_repo(tmp_path / "repo")
    planted = repo / "takeback"
    planted.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\n")
    planted.chmod(0o755)
    launcher = _installed_copy(tmp_path)
    for path in (".:/usr/bin:/bin", ":/usr/bin:/bin", "bin:/usr/bin:/bin"):
        proc = _launch(["--version"], _bare_env(tmp_path, path), repo, launcher=launcher)
        assert proc.returncode == 127 and not (tmp_path / "ran").exists(), (path, proc)


# --- recorded once ---------------------------------------------------------------------------


class Claude:
    """Runs hook command lines the way Claude Code does: ``bash -c LINE`` in the project, with
    ``${CLAUDE_PLUGIN_ROOT}`` replaced and the variables Claude Code sets, the payload on stdin."""

    def __init__(self, repo: Path, env: dict[str, str], plugin: Path = PLUGIN) -> None:
        self.repo, self.plugin = repo, plugin
        self.env = {**env, "CLAUDECODE": "1", "CLAUDE_PROJECT_DIR": str(repo), "CLAUDE_PLUGIN_ROOT": str(plugin)}

    def run(self, line: str, payload: dict) -> None:
        line = line.replace("${CLAUDE_PLUGIN_ROOT}", str(self.plugin))
        proc = subprocess.run(["bash", "-c", line], cwd=self.repo, env=self.env, input=json.dumps(payload).encode(),
                              capture_output=True, timeout=60)
        assert proc.returncode == 0 and proc.stdout == b"", (line, proc)

    def fire(self, event: str, lines: list[str], **changes: object) -> None:
        """One event: every hook line of it, one after the other (Claude Code runs them side by side)."""
        raw = json.dumps(PAYLOADS[event]).replace("<OUT>/repo", str(self.repo))
        payload = {**json.loads(raw), **changes}
        for line in lines:
            self.run(line, payload)


def _plugin_lines(event: str) -> list[str]:
    return [h["command"] for g in _json(PLUGIN / "hooks" / "hooks.json")["hooks"][event] for h in g["hooks"]]


def _settings_lines(settings: Path, event: str) -> list[str]:
    if not settings.exists():
        return []
    groups = _json(settings).get("hooks", {}).get(event, [])
    return [h["command"] for g in groups for h in g["hooks"]]


def _one_turn(claude: Claude, settings: list[Path]) -> None:
    """The captured turn: a prompt, the Write tool's call, the stop; each event's hooks all run."""
    def lines(event: str) -> list[str]:
        return [*_plugin_lines(event), *(line for s in settings for line in _settings_lines(s, event))]

    claude.fire("UserPromptSubmit", lines("UserPromptSubmit"))
    claude.fire("PreToolUse", lines("PreToolUse"))
    (claude.repo / "agent_written.txt").write_text("written by the agent's write tool\n")
    claude.fire("PostToolUse", lines("PostToolUse"))
    claude.fire("Stop", lines("Stop"))


def _recorded(tb: Takeback) -> list[dict]:
    turns = [e for e in tb.json("log") if e["kind"] == "turn"]
    return [{"label": t["label"], "files": [f["path"] for f in t["files"]], "steps": [c["label"] for c in t["checkpoints"]]}
            for t in turns]


ONE_TURN = [{"label": "Create the file agent_written.txt, then run: echo generated > gen.txt",
             "files": ["agent_written.txt"], "steps": ["Write agent_written.txt"]}]


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Takeback, Claude, Path]:
    repo = make_repo(tmp_path / "repo")
    env = _bare_env(tmp_path, f"{TAKEBACK.parent}:/usr/bin:/bin")
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "claude-config")
    return Takeback(repo, env), Claude(repo, env), Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json"


def test_the_plugin_alone_records_the_turn(setup: tuple[Takeback, Claude, Path]) -> None:
    tb, claude, settings = setup
    _one_turn(claude, [settings])
    assert _recorded(tb) == ONE_TURN


@pytest.mark.parametrize("scope", ["user", "project"])
def test_plugin_and_install_record_each_event_once(setup: tuple[Takeback, Claude, Path], scope: str) -> None:
    tb, claude, settings = setup
    assert tb("install", "claude", "--scope", scope).code == 0
    files = [settings, claude.repo / ".claude" / "settings.json", claude.repo / ".claude" / "settings.local.json"]
    assert sum(len(_settings_lines(f, "UserPromptSubmit")) for f in files) == 1
    _one_turn(claude, files)
    assert _recorded(tb) == ONE_TURN
    tb.ok("uninstall", "claude", "--scope", scope)  # the plugin alone records again
    (claude.repo / "agent_written.txt").unlink()
    _one_turn(claude, files)
    assert [t["files"] for t in _recorded(tb)] == [["agent_written.txt"], ["agent_written.txt"]]


def test_a_narrower_matcher_leaves_the_other_tools_to_the_plugin(setup: tuple[Takeback, Claude, Path]) -> None:
    tb, claude, settings = setup
    assert tb("install", "claude").code == 0
    doc = _json(settings)
    for event in ("PreToolUse", "PostToolUse"):
        doc["hooks"][event][0]["matcher"] = "Bash|Edit"  # the person narrowed it: Write is not theirs
    settings.write_text(json.dumps(doc))
    _one_turn(claude, [settings])
    assert _recorded(tb) == ONE_TURN


def test_settings_that_cannot_record_do_not_silence_the_plugin(setup: tuple[Takeback, Claude, Path]) -> None:
    """A stale path (the virtualenv is gone), or a ``takeback`` inside the repository, is no
    Takeback hook: the plugin keeps recording (the stale line fails in Claude Code on its own)."""
    tb, claude, settings = setup
    planted = claude.repo / "tools" / "takeback"
    planted.parent.mkdir()
    planted.write_text("#!/bin/sh\ncat >/dev/null\n")
    planted.chmod(0o755)
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": f"{shlex.quote(str(tb.cwd.parent / 'gone' / 'takeback'))} hook claude"}]}]}}))
    (claude.repo / ".claude").mkdir()
    (claude.repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": f"{planted} hook claude"}]}]}}))
    _one_turn(claude, [])  # only the plugin's lines run: the others would fail or do nothing
    assert _recorded(tb) == ONE_TURN


def test_a_call_that_steps_aside_stays_light(setup: tuple[Takeback, Claude, Path]) -> None:
    """It reads the settings and stops: neither the engine nor pydantic is loaded."""
    tb, claude, settings = setup
    assert tb("install", "claude").code == 0
    probe = ("import os, sys; from takeback.cli import main; "
             "os.environ['TAKEBACK_VIA'] = os.environ['TAKEBACK_VIA'].replace('PID', str(os.getpid())); "  # as the launcher sets it
             "main(['hook', 'claude']); print(sorted(m for m in ('pydantic', 'takeback.engine.engine') if m in sys.modules))")
    payload = json.dumps(PAYLOADS["UserPromptSubmit"]).replace("<OUT>/repo", str(claude.repo))
    for via, loaded in (("claude-plugin:PID", "[]"), ("", "['pydantic', 'takeback.engine.engine']")):
        env = {**claude.env, "TAKEBACK_VIA": via, "TAKEBACK_RESIDENT": "0"}  # the work done in this very process
        proc = subprocess.run([sys.executable, "-c", probe], cwd=claude.repo, env=env,
                              input=payload.encode(), capture_output=True, timeout=60)
        assert proc.stdout.decode().strip() == loaded, (via, proc)
    assert [t["label"] for t in _recorded(tb)] == [ONE_TURN[0]["label"]], "the call without the marker recorded"


def test_install_says_when_the_plugin_is_enabled_too(setup: tuple[Takeback, Claude, Path]) -> None:
    tb, _, settings = setup
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"enabledPlugins": {"takeback@takeback": True}}))
    [report] = tb.json("install", "claude")
    assert any("plugin is enabled" in step and "recorded once" in step for step in report["next_steps"]), report
    tb.ok("uninstall", "claude")
    settings.write_text(json.dumps({"enabledPlugins": {"takeback@takeback": False}}))
    [report] = tb.json("install", "claude")
    assert not any("plugin" in step for step in report["next_steps"]), report


# --- live: the real Claude Code --------------------------------------------------------------


@pytest.fixture
def live(tmp_path: Path) -> ClaudeCode:
    why = _offline_ready()
    if why:
        pytest.skip(why)
    claude = ClaudeCode(tmp_path)
    if not claude.binary.exists():
        pytest.fail(f"{claude.binary} is missing: scripts/setup-agents.sh installs it (the README's test command runs it)")
    return claude


def _live_env(claude: ClaudeCode, tmp_path: Path, path: str) -> dict[str, str]:
    env = {**_bare_env(tmp_path, path), **claude.env()}
    env["MCP_CONNECTION_NONBLOCKING"] = "0"  # start the plugin's MCP server before the first prompt
    return env


def _claude(claude: ClaudeCode, env: dict[str, str], repo: Path, script: Path, *args: str,
            prompts: list[str] | None = None) -> list[dict]:
    """One ``claude -p`` run offline; its JSON output lines. ``prompts``: streamed, one by one."""
    run_env = dict(env)
    if prompts is not None:
        feed = script.with_suffix(".stdin")
        feed.write_text("".join(json.dumps({"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": p}]}, "parent_tool_use_id": None, "session_id": ""}) + "\n" for p in prompts))
        run_env["TB_OFFLINE_STDIN"] = str(feed)
        args = ("--input-format", "stream-json", "--output-format", "stream-json", "--verbose", *args)
    else:
        args = ("--output-format", "json", *args)
    proc = subprocess.run(
        ["unshare", "-n", sys.executable, str(HERE / "offline.py"), str(script), "150", "--", str(claude.binary), "-p", *args],
        cwd=repo, env=run_env, capture_output=True, timeout=240,
    )
    assert proc.returncode == 0, f"claude exited {proc.returncode}\n{proc.stdout.decode()[-3000:]}\n{proc.stderr.decode()[-3000:]}"
    return [json.loads(line) for line in proc.stdout.decode().splitlines() if line.startswith("{")]


def _sent(requests: Path) -> list[list[dict]]:
    """The conversations Claude Code sent the model (the ones that offered tools: the turns)."""
    bodies = [json.loads(line)["body"] for line in requests.read_text().splitlines()]
    return [b["messages"] for b in bodies if b.get("tools")]


def _text(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content if isinstance(b, dict))


@pytest.mark.timeout(600)
def test_live_plugin_records_two_turns_and_log_shows_them(live: ClaudeCode, tmp_path: Path) -> None:
    """``--plugin-dir``, nothing installed: the launcher finds ``takeback`` on PATH."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n", "notes.md": "the person's notes\n"})
    env = _live_env(live, tmp_path, f"{TAKEBACK.parent}:/usr/bin:/bin")
    tb = Takeback(repo, env)
    git0 = git_state(repo)
    tools = live.tools(repo)
    script, requests = tmp_path / "script.json", tmp_path / "requests.jsonl"
    script.write_text(json.dumps({"requests": str(requests), "turns": {
        "/takeback:": [{"text": "(the timeline, as shown)"}],
        "first task": [
            {"calls": [tools["write"]("agent.txt", "written by the agent\n")]},
            {"before": {str(repo / "notes.md"): "the person's notes\nand a line typed while the agent thinks\n"},
             "calls": [tools["shell"]("echo generated > gen.txt && echo 'more, by the shell' >> README.md")]},
            {"text": "done"},
        ],
        "second task": [{"calls": [tools["write"]("second.txt", "the second turn's file\n")]}, {"text": "done"}],
    }}))
    plugin = ("--plugin-dir", str(PLUGIN))
    _claude(live, env, repo, script, "Do the first task", "--dangerously-skip-permissions", *plugin)
    _claude(live, env, repo, script, "Now the second task", "--dangerously-skip-permissions", "--continue", *plugin)

    turns = [e for e in tb.json("log") if e["kind"] == "turn"]
    assert [t["number"] for t in turns] == [2, 1], turns
    second, first = turns
    assert "first task" in first["label"] and "second task" in second["label"]
    assert first["agent"] == "claude" and first["session"] and first["session"] == second["session"]
    assert {f["path"]: f["kind"] for f in first["files"]} == {"agent.txt": "added", "gen.txt": "added", "README.md": "modified"}
    assert [f["path"] for f in second["files"]] == ["second.txt"]
    assert [c["label"] for c in first["checkpoints"]][0] == "Write agent.txt" and len(first["checkpoints"]) == 2

    # /takeback:log in the default permission mode: its allowed-tools let `takeback log` run.
    [result] = _claude(live, env, repo, script, "/takeback:log", "--continue", *plugin)
    assert result["result"] == "(the timeline, as shown)" and not result["is_error"], result
    asked = _text(_sent(requests)[-1][-1])
    assert "<command-name>/takeback:log</command-name>" in asked, asked
    lines = [line for line in asked.splitlines() if re.match(r"\s+#\d", line)]
    assert len(lines) == 2 and "#2" in lines[0] and "Now the second task" in lines[0] and "Do the first task" in lines[1], asked
    assert git_state(repo) == git0


@pytest.mark.timeout(600)
def test_live_undo_command_shows_the_plan_asks_and_undoes_through_the_mcp_server(live: ClaudeCode, tmp_path: Path) -> None:
    """One session, three prompts typed one after the other: the task, ``/takeback:undo`` (the
    model sees Takeback's dry run and asks), "yes" (the plugin's MCP server plans, and carries the
    plan out with its token). Takeback is not on PATH: TAKEBACK_BIN, in Claude Code's "env"
    setting as docs/agents.md says, names it."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n"})
    env = _live_env(live, tmp_path, "/usr/bin:/bin")
    settings = Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"env": {"TAKEBACK_BIN": str(TAKEBACK)}}))
    tb = Takeback(repo, env)
    before, git0 = full_state(repo), git_state(repo)
    undo = "mcp__plugin_takeback_takeback__undo"
    script, requests = tmp_path / "script.json", tmp_path / "requests.jsonl"
    script.write_text(json.dumps({"requests": str(requests), "turns": {
        "/takeback:undo": [{"text": "Undo turn #1? (yes / no)"}],
        "yes, undo it": [
            {"calls": [{"tool": undo, "input": {}}]},
            {"calls": [{"tool": undo, "input": {"confirm_token": {"$from_result": r"(tb1-[A-Za-z0-9_-]+)"}}}]},
            {"text": "Undone."},
        ],
        "first task": [{"calls": [live.tools(repo)["write"]("agent.txt", "written by the agent\n")]}, {"text": "done"}],
    }}))
    out = _claude(live, env, repo, script, "--permission-mode", "default", "--allowedTools", f"Write {undo}",
                  "--plugin-dir", str(PLUGIN), prompts=["Do the first task", "/takeback:undo", "yes, undo it"])
    assert [r["result"] for r in out if r["type"] == "result"] == ["done", "Undo turn #1? (yes / no)", "Undone."], out

    conversations = _sent(requests)
    asked = next(_text(c[-1]) for c in conversations if "<command-name>/takeback:undo</command-name>" in _text(c[-1]))
    assert "SAFE: dry run: undo of #1 would change 1 file" in asked and "delete  agent.txt" in asked, asked
    assert re.search(r"#1\s+turn\s+applied.*Do the first task", asked), asked
    results = [json.dumps(c[-1]["content"]) for c in conversations if "tool_result" in json.dumps(c[-1]["content"])]
    assert '\\"dry_run\\":true' in results[-2] and '\\"status\\":\\"planned\\"' in results[-2], results[-2]
    assert '\\"status\\":\\"done\\"' in results[-1], results[-1]

    log = tb.json("log")
    assert log[0]["kind"] == "undo" and log[0]["target_number"] == 1, log[0]
    assert [e["state"] for e in log if e["number"] == 1] == ["reverted"]
    assert full_state(repo) == before and git_state(repo) == git0


@pytest.mark.timeout(600)
def test_live_marketplace_plugin_and_takeback_install_record_once(live: ClaudeCode, tmp_path: Path) -> None:
    """The way a person installs it: this repository as a marketplace, the plugin from it; and
    ``takeback install claude`` as well. One turn is recorded once; after ``takeback uninstall
    claude`` the plugin's hooks (which stepped aside) record the next one."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n"})
    env = _live_env(live, tmp_path, f"{TAKEBACK.parent}:/usr/bin:/bin")
    tb = Takeback(repo, env)
    for command in (["plugin", "marketplace", "add", str(ROOT)], ["plugin", "install", "takeback@takeback"]):
        proc = subprocess.run(["unshare", "-n", str(live.binary), *command], cwd=repo, env=env, capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=120)
        assert proc.returncode == 0, (command, proc)
    assert tb("install", "claude").code == 0
    settings = _json(Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json")
    assert settings["enabledPlugins"] == {"takeback@takeback": True} and len(settings["hooks"]["UserPromptSubmit"]) == 1
    installed = _json(Path(env["CLAUDE_CONFIG_DIR"]) / "plugins" / "installed_plugins.json")["plugins"]["takeback@takeback"]
    copy = Path(installed[0]["installPath"])
    assert copy != PLUGIN and (copy / "bin" / "takeback").stat().st_mode & stat.S_IXUSR

    tools = live.tools(repo)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": {
        "first task": [{"calls": [tools["write"]("one.txt", "1\n")]}, {"calls": [tools["shell"]("echo 2 > two.txt")]},
                       {"text": "done"}],
        "second task": [{"calls": [tools["write"]("three.txt", "3\n")]}, {"text": "done"}],
    }}))
    _claude(live, env, repo, script, "Do the first task", "--dangerously-skip-permissions")
    assert _recorded(tb) == [{"label": "Do the first task", "files": ["one.txt", "two.txt"],
                              "steps": ["Write one.txt", "Bash: echo 2 > two.txt"]}]
    tb.ok("uninstall", "claude")
    _claude(live, env, repo, script, "Now the second task", "--dangerously-skip-permissions", "--continue")
    assert [(t["label"], t["files"]) for t in _recorded(tb)] == [
        ("Now the second task", ["three.txt"]), ("Do the first task", ["one.txt", "two.txt"])]


def test_live_claude_code_validates_the_plugin_and_the_marketplace(live: ClaudeCode, tmp_path: Path) -> None:
    env = _live_env(live, tmp_path, "/usr/bin:/bin")
    for target in (PLUGIN, ROOT):
        proc = subprocess.run(["unshare", "-n", str(live.binary), "plugin", "validate", str(target)], env=env,
                              capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
        assert proc.returncode == 0 and b"Validation passed" in proc.stdout, proc
