"""`takeback install` / `takeback uninstall` against real config files in temp homes: for every
agent, configs that already hold the person's own hooks and settings (JSON indented by 2 and 4
spaces, Codex's TOML with comments) keep all of it and their layout; a second install changes
nothing; uninstall puts the bytes back exactly, or takes out only Takeback's entries when the
person changed the file in between; each agent's home variable is honoured; project scope
writes the personal file; the command lines written run this Takeback from any folder."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from .conftest import Takeback, expect_error, expect_ok

AGENTS = ("claude", "codex", "gemini", "copilot", "cursor", "opencode", "qwen")
HOME_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME", "QWEN_HOME")

EVENTS = {
    "claude": ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"],
    "codex": ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"],
    "gemini": ["BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"],
    "qwen": ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"],
    "copilot": ["userPromptSubmitted", "preToolUse", "postToolUse", "agentStop", "sessionEnd"],
    "cursor": ["beforeSubmitPrompt", "beforeShellExecution", "afterShellExecution", "beforeMCPExecution", "afterMCPExecution",
               "afterFileEdit", "stop"],
}
TOOL_MATCHER = {"claude": "*", "codex": "*", "gemini": ".*", "qwen": ".*"}
SESSION_START = {"claude": "SessionStart", "codex": "SessionStart", "gemini": "SessionStart", "copilot": "sessionStart"}
"""The session-start event install writes for the agents that have one (it records nothing: the
workspace is made ready before the first prompt); EVENTS are the turn's events."""


def installed_events(agent: str) -> list[str]:
    """Every event install writes for ``agent``, in the order it writes them."""
    return [*([SESSION_START[agent]] if agent in SESSION_START else []), *EVENTS[agent]]


def user_file(agent: str, env: dict[str, str]) -> Path:
    """Where the agent keeps the user's hooks (OpenCode: opencode.json), given ``env``."""
    home = Path(env["HOME"])
    return {
        "claude": Path(env.get("CLAUDE_CONFIG_DIR", home / ".claude")) / "settings.json",
        "codex": Path(env.get("CODEX_HOME", home / ".codex")) / "hooks.json",
        "gemini": Path(env.get("GEMINI_CLI_HOME", home)) / ".gemini" / "settings.json",
        "copilot": Path(env.get("COPILOT_HOME", home / ".copilot")) / "settings.json",
        "cursor": home / ".cursor" / "hooks.json",
        "opencode": Path(env["XDG_CONFIG_HOME"]) / "opencode" / "opencode.json",
        "qwen": Path(env.get("QWEN_HOME", home / ".qwen")) / "settings.json",
    }[agent]


def persons_config(agent: str) -> dict[str, Any]:
    """A config the person already has: their own hook on one of Takeback's events, and settings."""
    if agent == "copilot":
        return {"model": "mine", "hooks": {"preToolUse": [{"type": "command", "bash": "./audit.sh", "timeoutSec": 5}]}}
    if agent == "cursor":
        return {"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}], "beforeReadFile": [{"command": "./r.sh"}]}}
    if agent == "opencode":
        return {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "plugin": ["opencode-wakatime"]}
    first_tool_event = EVENTS[agent][1]
    return {
        "theme": "dark",
        "hooks": {
            first_tool_event: [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check.sh"}]}],
            "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        },
        "zeta": {"nested": [1, 2, {"x": None}]},
    }


def ours(agent: str, doc: dict[str, Any]) -> dict[str, list[str]]:
    """Takeback's hook command lines in ``doc``, by event."""
    found: dict[str, list[str]] = {}
    for event, items in doc.get("hooks", {}).items():
        for item in items:
            for entry in item.get("hooks", [item]):
                line = entry.get("bash") or entry.get("command")
                if isinstance(line, str) and f" hook {agent}" in line:
                    found.setdefault(event, []).append(line)
    return found


@pytest.fixture
def env(tb: Takeback) -> dict[str, str]:
    for name in HOME_VARS:
        tb.env.pop(name, None)
    return tb.env


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every file and folder below ``folder`` (folders as None)."""
    out: dict[str, bytes | None] = {}
    for path in sorted(folder.rglob("*")):
        out[str(path.relative_to(folder))] = path.read_bytes() if path.is_file() else None
    return out


def homes(env: dict[str, str]) -> dict[str, dict[str, bytes | None]]:
    return {name: tree(Path(env[name])) for name in ("HOME", "XDG_CONFIG_HOME") if Path(env[name]).exists()}


@pytest.mark.parametrize("indent", [2, 4])
@pytest.mark.parametrize("agent", [a for a in AGENTS if a != "opencode"])
def test_install_merges_hooks_beside_the_persons_own(tb: Takeback, env: dict[str, str], agent: str, indent: int) -> None:
    path = user_file(agent, env)
    path.parent.mkdir(parents=True, exist_ok=True)
    mine = persons_config(agent)
    original = json.dumps(mine, indent=indent).encode() + b"\n"
    path.write_bytes(original)

    expect_ok(tb("install", agent))
    text = path.read_text()
    doc = json.loads(text)
    # The person's settings and hooks are all there, in their order, and the indentation is theirs.
    assert list(doc)[: len(mine)] == list(mine)
    for key, value in mine.items():
        if key != "hooks":
            assert doc[key] == value
    for event, items in mine["hooks"].items():
        assert doc["hooks"][event][: len(items)] == items
    assert list(doc["hooks"])[: len(mine["hooks"])] == list(mine["hooks"])
    assert text.splitlines()[1].startswith(" " * indent + '"') and not text.splitlines()[1].startswith(" " * (indent + 1))
    # One Takeback hook per event, naming the agent (and, for Copilot, the event).
    found = ours(agent, doc)
    assert sorted(found) == sorted(installed_events(agent)) and all(len(lines) == 1 for lines in found.values())
    for event, (line,) in found.items():
        assert shlex.split(line)[-2:] == (["copilot", event] if agent == "copilot" else ["hook", agent])
    if agent in TOOL_MATCHER:
        groups = [g for g in doc["hooks"][EVENTS[agent][1]] if ours(agent, {"hooks": {"e": [g]}})]
        assert [g["matcher"] for g in groups] == [TOOL_MATCHER[agent]]
        assert all("matcher" not in g for g in doc["hooks"][EVENTS[agent][0]])
        assert agent not in SESSION_START or all("matcher" not in g for g in doc["hooks"][SESSION_START[agent]])

    expect_ok(tb("install", agent))
    assert path.read_text() == text, "a second install changed the file"

    expect_ok(tb("uninstall", agent))
    assert path.read_bytes() == original


@pytest.mark.parametrize("agent", AGENTS)
def test_uninstall_after_the_person_edited_removes_only_takebacks_entries(tb: Takeback, env: dict[str, str], agent: str) -> None:
    path = user_file(agent, env)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(persons_config(agent), indent=4) + "\n")
    expect_ok(tb("install", agent, "--mcp"))
    doc = json.loads(path.read_text())
    doc["added_later"] = {"by": "the person"}
    path.write_text(json.dumps(doc, indent=4) + "\n")

    result = expect_ok(tb("--json", "uninstall", agent))
    after = json.loads(path.read_text())
    assert after == {**persons_config(agent), "added_later": {"by": "the person"}}
    assert "cleaned" in [c["action"] for c in result.json()[0]["changes"]]
    assert " hook " not in path.read_text() and "takeback" not in path.read_text()


def test_uninstall_restores_exactly_what_was_there_before_install_all(tb: Takeback, env: dict[str, str]) -> None:
    # Odd but valid layouts: tabs, no final newline, compact arrays, a BOM-less UTF-8 name.
    claude = user_file("claude", env)
    claude.parent.mkdir(parents=True)
    claude.write_bytes(b'{\n\t"permissions": {"allow": ["Bash(ls)"]},\n\t"name": "J\xc3\xb6rg"\n}')
    codex_toml = Path(env["HOME"]) / ".codex" / "config.toml"
    codex_toml.parent.mkdir(parents=True)
    codex_toml.write_text('# my codex\nmodel = "gpt-5.5"  # the one I like\n\n[projects."/src/x"]\ntrust_level = "trusted"\n')
    before = homes(env)

    expect_ok(tb("install", *AGENTS, "--mcp"))
    installed = homes(env)
    assert installed != before
    expect_ok(tb("install", *AGENTS, "--mcp"))
    assert homes(env) == installed, "a second install changed something"
    assert "\t\"hooks\": {\n\t\t\"SessionStart\"" in claude.read_text()
    toml_text = codex_toml.read_text()
    assert toml_text.startswith('# my codex\nmodel = "gpt-5.5"  # the one I like\n')
    assert tomllib.loads(toml_text)["mcp_servers"]["takeback"]["args"][-3:] == ["mcp", "--agent", "codex"]

    expect_ok(tb("uninstall", "all"))
    assert homes(env) == before


def test_codex_toml_edited_after_install_keeps_the_persons_lines(tb: Takeback, env: dict[str, str]) -> None:
    toml = Path(env["HOME"]) / ".codex" / "config.toml"
    toml.parent.mkdir(parents=True)
    toml.write_text("# comment\n[features]\nhooks = true\n")
    expect_ok(tb("install", "codex", "--mcp"))
    toml.write_text(toml.read_text() + '\n[mcp_servers.other]\ncommand = "other"  # mine\n')
    expect_ok(tb("uninstall", "codex"))
    assert toml.read_text() == '# comment\n[features]\nhooks = true\n\n[mcp_servers.other]\ncommand = "other"  # mine\n'


def test_each_agents_home_variable_is_honoured(tb: Takeback, env: dict[str, str], tmp_path: Path) -> None:
    for name in HOME_VARS:
        env[name] = str(tmp_path / name.lower())
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    home_before = tree(Path(env["HOME"]))
    expect_ok(tb("install", *AGENTS))
    for agent in AGENTS:
        doc = json.loads(user_file(agent, env).read_text())
        assert ours(agent, doc) or doc["plugin"], agent
    assert user_file("codex", env).parent == tmp_path / "codex_home"
    # Only Cursor, which has no home variable, writes under HOME.
    assert set(tree(Path(env["HOME"]))) - set(home_before) == {".cursor", ".cursor/hooks.json"}


def test_mcp_registers_takeback_mcp_with_each_agent(tb: Takeback, env: dict[str, str]) -> None:
    result = tb.json("install", *AGENTS, "--mcp")
    home = Path(env["HOME"])
    def argv(entry: dict[str, Any]) -> list[str]:
        return entry["command"] if isinstance(entry["command"], list) else [entry["command"], *entry["args"]]
    entries = {
        "claude": json.loads((home / ".claude.json").read_text())["mcpServers"]["takeback"],
        "gemini": json.loads(user_file("gemini", env).read_text())["mcpServers"]["takeback"],
        "qwen": json.loads(user_file("qwen", env).read_text())["mcpServers"]["takeback"],
        "copilot": json.loads((home / ".copilot" / "mcp-config.json").read_text())["mcpServers"]["takeback"],
        "cursor": json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["takeback"],
        "opencode": json.loads(user_file("opencode", env).read_text())["mcp"]["takeback"],
        "codex": tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["takeback"],
    }
    for agent, entry in entries.items():
        words = argv(entry)
        assert words[-3:] == ["mcp", "--agent", agent] and Path(words[0]).is_absolute(), agent
        run = subprocess.run([*words[:-3], "--version"], capture_output=True, text=True, env=env)
        assert run.returncode == 0 and run.stdout.startswith("takeback "), agent
    assert [r["agent"] for r in result] == list(AGENTS)
    assert all(r["next_steps"] for r in result)
    codex = next(r for r in result if r["agent"] == "codex")
    assert any("trust" in step for step in codex["next_steps"])


def test_the_command_written_runs_this_takeback_from_a_subfolder(tb: Takeback, env: dict[str, str]) -> None:
    expect_ok(tb("install", "claude", "copilot"))
    sub = tb.cwd / "src"
    bare_env = {k: v for k, v in env.items() if k != "PATH"} | {"PATH": "/usr/bin:/bin"}
    for agent in ("claude", "copilot"):
        for event, (line,) in ours(agent, json.loads(user_file(agent, env).read_text())).items():
            head = line[: line.index(" hook ")]
            run = subprocess.run(["sh", "-c", f"{head} --version"], cwd=sub, env=bare_env, capture_output=True, text=True)
            assert run.returncode == 0 and run.stdout.startswith("takeback "), (line, run.stderr)
    has_hook = subprocess.run(["sh", "-c", f"{head} hook --help"], capture_output=True, env=bare_env).returncode == 0
    if has_hook:  # once `takeback hook` exists: the whole line, with a real payload, says nothing and exits 0
        payload = json.dumps({"hook_event_name": "SessionEnd", "session_id": "s1", "cwd": str(tb.cwd), "reason": "other"})
        line = ours("claude", json.loads(user_file("claude", env).read_text()))["SessionEnd"][0]
        run = subprocess.run(["sh", "-c", line], cwd=sub, env=bare_env, input=payload, capture_output=True, text=True)
        assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


def test_project_scope_writes_claudes_personal_file_from_a_subfolder(tb: Takeback, env: dict[str, str]) -> None:
    shared = tb.cwd / ".claude" / "settings.json"
    shared.parent.mkdir()
    shared.write_text('{\n  "hooks": {}\n}\n')
    homes_before = homes(env)
    result = tb.json("install", "claude", "--scope", "project", cwd=tb.cwd / "src")
    personal = tb.cwd / ".claude" / "settings.local.json"
    assert list(ours("claude", json.loads(personal.read_text()))) == installed_events("claude")
    assert shared.read_text() == '{\n  "hooks": {}\n}\n'
    assert homes(env) == homes_before, "project scope wrote into the home folder"
    assert [c["path"] for c in result[0]["changes"]] == [str(personal)]
    expect_ok(tb("uninstall", "claude", "--scope", "project", cwd=tb.cwd / "src"))
    assert not personal.exists() and shared.exists()


def test_project_scope_with_C_writes_into_that_very_folder(tb: Takeback, env: dict[str, str]) -> None:
    # Claude Code reads .claude/ from the folder it is started in (seen live: started in a
    # subfolder, it did not run the hooks in the repository top's settings.local.json).
    package = tb.cwd / "src"
    tb.json("install", "claude", "--scope", "project", "-C", str(package))
    assert (package / ".claude" / "settings.local.json").is_file()
    assert not (tb.cwd / ".claude").exists()
    expect_ok(tb("uninstall", "claude", "--scope", "project", "-C", str(package)))
    assert not (package / ".claude").exists()
    expect_error(tb("install", "claude", "--scope", "project", "-C", str(tb.cwd / "nope")), 2, r"nope is not a folder")


@pytest.mark.parametrize(
    "agent, files",
    [
        ("codex", [".codex/hooks.json", ".codex/config.toml"]),
        ("gemini", [".gemini/settings.json"]),
        ("qwen", [".qwen/settings.json"]),
        ("copilot", [".github/hooks/takeback.json"]),
        ("cursor", [".cursor/hooks.json", ".cursor/mcp.json"]),
        ("opencode", ["opencode.json", ".opencode/takeback-plugin.js"]),
    ],
)
def test_project_scope_for_other_agents(tb: Takeback, env: dict[str, str], agent: str, files: list[str]) -> None:
    before = tree(tb.cwd)
    result = tb.json("install", agent, "--scope", "project", "--mcp")
    for name in files:
        assert (tb.cwd / name).is_file(), name
    assert any("git" in step for step in result[0]["next_steps"]), "a file of the repository is not pointed out"
    if agent == "copilot":
        assert json.loads((tb.cwd / files[0]).read_text())["version"] == 1
        assert any("--trust-folder" in step for step in result[0]["next_steps"])
    expect_ok(tb("uninstall", agent, "--scope", "project"))
    assert tree(tb.cwd) == before


def _plugin_copy(plugin: Path, folder: Path, argv: list[str], limit_ms: int | None = None) -> Path:
    """The installed plugin, running ``argv`` instead of Takeback (and waiting ``limit_ms``)."""
    source = plugin.read_text()
    start = source.index("const TAKEBACK = ") + len("const TAKEBACK = ")
    source = source[:start] + json.dumps(argv) + source[source.index(";", start):]
    if limit_ms is not None:
        start = source.index("const LIMIT_MS = ") + len("const LIMIT_MS = ")
        source = source[:start] + str(limit_ms) + source[source.index(";", start):]
    copy = folder / f"plugin-{len(list(folder.glob('plugin-*')))}.mjs"
    copy.write_text(source)
    return copy


def _drive(copy: Path, folder: Path, steps: str) -> subprocess.CompletedProcess:
    """Load the plugin copy as OpenCode does and run ``steps`` (JavaScript, ``h`` the hooks)."""
    driver = folder / "drive.mjs"
    driver.write_text(
        f"import {{ Takeback }} from {json.dumps(copy.as_uri())};\n"
        "const h = await Takeback({ directory: '/w', worktree: '/w' });\n" + steps
    )
    return subprocess.run(["node", str(driver)], capture_output=True, text=True, timeout=60)


def test_opencode_plugin_is_registered_and_loads(tb: Takeback, env: dict[str, str], tmp_path: Path) -> None:
    config = user_file("opencode", env)
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps(persons_config("opencode"), indent=2) + "\n")
    expect_ok(tb("install", "opencode"))
    doc = json.loads(config.read_text())
    plugin = config.parent / "takeback-plugin.js"
    assert doc["plugin"] == ["opencode-wakatime", plugin.as_uri()]
    assert doc["autoupdate"] is False and list(doc) == list(persons_config("opencode"))
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    # Drive each hook as OpenCode does; every event must reach the command, as JSON on stdin,
    # and nothing may throw. A stand-in records what it is given, and when it starts and ends.
    record, events = tmp_path / "calls.jsonl", tmp_path / "events.txt"
    stand_in = tmp_path / "takeback"
    stand_in.write_text(
        f'#!/bin/sh\necho "start $3" >> {events}\nprintf \'%s\\t\' "$@" >> {record}\ncat >> {record}\necho >> {record}\n'
        f'sleep 0.2\necho "end $3" >> {events}\n'
    )
    stand_in.chmod(0o755)
    run = _drive(_plugin_copy(plugin, tmp_path, [str(stand_in)]), tmp_path, (
        "await h['chat.message']({ sessionID: 'ses_1' }, { message: { id: 'msg_1' }, parts: [{ type: 'text', text: 'Fix it' }, { type: 'text', text: 'x', synthetic: true }] });\n"
        # OpenCode runs the calls of one response side by side
        "await Promise.all([\n"
        "  h['tool.execute.before']({ tool: 'write', sessionID: 'ses_1', callID: 'c1' }, { args: { filePath: '/w/a.txt', content: 'x' } }),\n"
        "  h['tool.execute.before']({ tool: 'bash', sessionID: 'ses_1', callID: 'c2' }, { args: { command: 'make' } }),\n"
        "]);\n"
        "await h['tool.execute.after']({ tool: 'write', sessionID: 'ses_1', callID: 'c1' }, { title: 'a.txt', output: 'ok' });\n"
        "await h['tool.execute.after']({ tool: 'bash', sessionID: 'ses_1', callID: 'c2', args: { command: 'make' } }, { title: 'make', output: '' });\n"
        "await h['tool.execute.before'](undefined, undefined);\n"  # no call, and nothing thrown into OpenCode
        # OpenCode does not wait for event handlers, and 'opencode run' exits after session.idle:
        # dispose, which it waits for, must see the last call through.
        "h.event({ event: { type: 'file.edited', properties: {} } });\n"
        "h.event({ event: { type: 'session.idle', properties: { sessionID: 'ses_1' } } });\n"
        "await h.dispose();\n"
        "process.exit(0);\n"
    ))
    assert run.returncode == 0, run.stderr
    calls = [line.split("\t") for line in record.read_text().splitlines()]
    names = ["chat.message", "tool.execute.before", "tool.execute.before", "tool.execute.after", "tool.execute.after", "session.idle"]
    assert [c[:3] for c in calls] == [["hook", "opencode", e] for e in names]
    assert events.read_text().split("\n")[:-1] == [f"{when} {e}" for e in names for when in ("start", "end")], "one at a time, in order"
    payloads = [json.loads(c[-1]) for c in calls]
    assert payloads[0] == {"hook_event_name": "chat.message", "cwd": "/w", "worktree": "/w", "session_id": "ses_1", "message_id": "msg_1", "prompt": "Fix it"}
    assert [(p["call_id"], p["tool_input"]) for p in payloads[1:5]] == [
        ("c1", {"filePath": "/w/a.txt", "content": "x"}), ("c2", {"command": "make"}),
        ("c1", {"filePath": "/w/a.txt", "content": "x"}), ("c2", {"command": "make"}),
    ]
    assert payloads[-1]["session_id"] == "ses_1"


def test_opencode_plugin_ends_a_hook_that_never_returns(tb: Takeback, env: dict[str, str], tmp_path: Path) -> None:
    expect_ok(tb("install", "opencode"))
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    stuck = tmp_path / "takeback"
    stuck.write_text("#!/bin/sh\nexec sleep 600\n")
    stuck.chmod(0o755)
    copy = _plugin_copy(user_file("opencode", env).parent / "takeback-plugin.js", tmp_path, [str(stuck)], limit_ms=300)
    run = _drive(copy, tmp_path, (
        "await h['tool.execute.before']({ tool: 'bash', sessionID: 's', callID: 'c' }, { args: { command: 'x' } });\n"
        "await h.dispose();\nconsole.log('OpenCode went on');\n"
    ))
    assert (run.returncode, run.stdout) == (0, "OpenCode went on\n"), run.stderr
    gone = _drive(_plugin_copy(user_file("opencode", env).parent / "takeback-plugin.js", tmp_path, [str(tmp_path / "missing")]), tmp_path,
                  "await h['chat.message']({ sessionID: 's' }, { parts: [] });\nconsole.log('OpenCode went on');\n")
    assert (gone.returncode, gone.stdout) == (0, "OpenCode went on\n"), gone.stderr


def test_opencode_install_says_when_opencode_will_fetch_its_plugin_package(tb: Takeback, env: dict[str, str]) -> None:
    folder = user_file("opencode", env).parent
    said = tb.json("install", "opencode")[0]["next_steps"]
    assert any("@opencode-ai/plugin" in s and str(folder) in s and "70 s" in s for s in said), said
    # What OpenCode's own install leaves there (npm's node_modules/ and lock): nothing to say.
    (folder / "node_modules" / "@opencode-ai" / "plugin").mkdir(parents=True)
    lock = {"name": "opencode", "lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": "1.18.33"}}}}
    (folder / "package-lock.json").write_text(json.dumps(lock))
    said = tb.json("install", "opencode")[0]["next_steps"]
    assert not any("@opencode-ai/plugin" in s for s in said), said
    lock["packages"][""] = {"dependencies": {"left-pad": "1.3.0"}}
    (folder / "package-lock.json").write_text(json.dumps(lock))
    assert any("@opencode-ai/plugin" in s for s in tb.json("install", "opencode")[0]["next_steps"])


def test_unknown_agent_is_refused_in_one_line(tb: Takeback, env: dict[str, str]) -> None:
    before = homes(env)
    expect_error(tb("install", "claude", "vim"), 2, r"invalid choice: 'vim'")
    expect_error(tb("--json", "uninstall", "emacs"), 2, r"invalid choice: 'emacs'")
    assert homes(env) == before


def test_a_config_that_is_not_json_is_left_alone_and_nothing_is_written(tb: Takeback, env: dict[str, str]) -> None:
    broken = user_file("gemini", env)
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b'{\n  // my settings\n  "theme": "dark",\n}\n')
    before = homes(env)
    expect_error(tb("install", "all"), 2, rf"{broken} is not valid JSON \(line 2\).*nothing was written")
    assert homes(env) == before
    expect_error(tb("--json", "uninstall", "gemini"), 2, r"is not valid JSON")
    assert homes(env) == before


def test_uninstall_with_nothing_installed_changes_nothing(tb: Takeback, env: dict[str, str]) -> None:
    claude = user_file("claude", env)
    claude.parent.mkdir(parents=True)
    claude.write_text(json.dumps(persons_config("claude"), indent=2))
    before = homes(env)
    result = tb.json("uninstall", "all")
    assert homes(env) == before
    assert {c["action"] for r in result for c in r["changes"]} == {"unchanged"}


def test_human_output_names_files_and_next_steps(tb: Takeback, env: dict[str, str]) -> None:
    out = expect_ok(tb("install", "codex")).text
    assert f"created   {user_file('codex', env)}" in out
    assert "hooks: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionEnd" in out
    assert "next: Codex runs new hooks only once you trust them" in out
    again = expect_ok(tb("install", "codex")).text
    assert f"unchanged {user_file('codex', env)}" in again
    gone = expect_ok(tb("uninstall", "codex")).text
    assert f"removed   {user_file('codex', env)}" in gone
    assert not os.path.exists(user_file("codex", env).parent)


@pytest.mark.parametrize("link", [".claude", ".claude/settings.local.json"])
def test_project_scope_never_follows_a_repository_link_out_of_it(tb: Takeback, env: dict[str, str], tmp_path: Path, link: str) -> None:
    # A cloned repository could ship its config path as a link to a file of the person's.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "settings.local.json").write_text('{"precious": true}\n')
    target = outside if link == ".claude" else outside / "settings.local.json"
    (tb.cwd / ".claude").mkdir(exist_ok=link != ".claude")
    if link == ".claude":
        (tb.cwd / ".claude").rmdir()
    (tb.cwd / link).symlink_to(target)
    before = tree(outside), tree(tb.cwd)
    for command in ("install", "uninstall"):
        expect_error(tb(command, "claude", "--scope", "project"), 2, r"leads out of the repository.*nothing was written")
    assert (tree(outside), tree(tb.cwd)) == before


@pytest.mark.parametrize(
    "agent, name, content, match",
    [
        ("claude", "home/.claude/settings.json", '{"hooks": ["not", "an object"]}', r'"hooks" is not an object'),
        ("cursor", "home/.cursor/hooks.json", '{"version": 1, "hooks": {"stop": {"command": "x"}}}', r'"stop" is not a list'),
        ("gemini", "home/.gemini/settings.json", '{"mcpServers": {"takeback": {"command": "npx", "args": ["other"]}}}', r"already has an MCP server named 'takeback' that is not Takeback's"),
        ("opencode", "xdg-config/opencode/takeback-plugin.js", "export const Mine = 1;\n", r"exists and is not Takeback's plugin"),
        ("codex", "home/.codex/config.toml", "# mine\nmodel = \n", r"config.toml is not valid TOML"),
        ("codex", "home/.codex/config.toml", '[mcp_servers.takeback]\ncommand = "npx"\n', r"already has its own \[mcp_servers.takeback\]"),
    ],
)
def test_a_config_in_a_shape_the_agent_would_not_read_is_refused(tb: Takeback, env: dict[str, str], agent: str, name: str, content: str, match: str) -> None:
    path = Path(env["HOME"]).parent / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    before = homes(env)
    expect_error(tb("install", agent, "--mcp"), 2, match + r".*nothing was written")
    assert homes(env) == before


@pytest.mark.parametrize(
    "agent, settings, said",
    [
        ("claude", {"disableAllHooks": True}, "disableAllHooks = true"),
        ("gemini", {"hooksConfig": {"enabled": False}}, "hooksConfig.enabled = false"),
    ],
)
def test_install_says_when_the_persons_settings_switch_hooks_off(tb: Takeback, env: dict[str, str], agent: str, settings: dict, said: str) -> None:
    path = user_file(agent, env)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(settings))
    steps = tb.json("install", agent)[0]["next_steps"]
    assert said in steps[0] and "will not run Takeback's" in steps[0]
    assert json.loads(path.read_text())[next(iter(settings))] == settings[next(iter(settings))], "the person's setting was changed"
    path.write_text(json.dumps({}))
    assert not any("switches every hook off" in s for s in tb.json("install", agent)[0]["next_steps"])


def test_all_agents_in_project_scope_leave_the_repository_as_it_was(tb: Takeback, env: dict[str, str]) -> None:
    from helpers import git_state

    before = tree(tb.cwd), git_state(tb.cwd)
    result = tb.json("install", *AGENTS, "--scope", "project", "--mcp")
    assert [r["agent"] for r in result] == list(AGENTS)
    written = {c["path"] for r in result for c in r["changes"]}
    assert all(Path(p).is_file() for p in written)
    assert tb.json("install", *AGENTS, "--scope", "project", "--mcp") == [
        {**r, "changes": [{**c, "action": "unchanged"} for c in r["changes"]]} for r in result
    ]
    expect_ok(tb("uninstall", "all", "--scope", "project"))
    assert (tree(tb.cwd), git_state(tb.cwd)) == before


# --------------------------------------------------------------------------- links and tracked files


def _dotfiles(env: dict[str, str], tmp_path: Path, agents: tuple[str, ...]) -> dict[Path, tuple[str, bytes]]:
    """Each agent's user file kept in a dotfiles folder and linked into place the way GNU stow
    does (a relative link); Codex's config.toml too. Returns link → (what it reads, bytes)."""
    linked: dict[Path, tuple[str, bytes]] = {}
    paths = [(a, user_file(a, env)) for a in agents] + [("codex", Path(env["HOME"]) / ".codex" / "config.toml")]
    for n, (agent, path) in enumerate(paths):
        kept = tmp_path / "dotfiles" / f"{n}-{path.name}"
        kept.parent.mkdir(parents=True, exist_ok=True)
        data = b'# mine\nmodel = "m"\n' if path.suffix == ".toml" else json.dumps(persons_config(agent), indent=3).encode()
        kept.write_bytes(data)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(os.path.relpath(kept, path.parent))
        linked[path] = (os.readlink(path), data)
    return linked


def test_a_config_that_is_a_symbolic_link_is_written_through_and_the_link_stays(tb: Takeback, env: dict[str, str], tmp_path: Path) -> None:
    linked = _dotfiles(env, tmp_path, AGENTS)
    dotfiles = tmp_path / "dotfiles"
    result = tb.json("install", "all", "--mcp")
    for path, (target, data) in linked.items():
        assert path.is_symlink() and os.readlink(path) == target, f"{path} is no longer the same link"
        assert path.read_bytes() != data, f"{path}'s target did not get Takeback's entries"
    assert ours("claude", json.loads(user_file("claude", env).read_text()))
    assert "[mcp_servers.takeback]" in (Path(env["HOME"]) / ".codex" / "config.toml").read_text()
    said = {c["path"]: c["what"] for r in result for c in r["changes"]}
    assert "written through the symbolic link" in said[str(user_file("claude", env))]
    assert sorted(p.name for p in dotfiles.iterdir()) == sorted(os.path.basename(t) for t, _ in linked.values()), "a stray file"

    expect_ok(tb("uninstall", "all"))
    for path, (target, data) in linked.items():
        assert path.is_symlink() and os.readlink(path) == target, f"uninstall replaced the link {path}"
        assert path.read_bytes() == data, f"{path}'s target is not back to its bytes"


def test_a_config_folder_that_is_a_link_keeps_its_files_in_the_linked_folder(tb: Takeback, env: dict[str, str], tmp_path: Path) -> None:
    # stow "folds" a whole folder into one link when nothing else lives there.
    kept = tmp_path / "dotfiles" / "claude"
    kept.mkdir(parents=True)
    (kept / "settings.json").write_text('{"theme": "dark"}\n')
    (Path(env["HOME"]) / ".claude").symlink_to(kept)
    expect_ok(tb("install", "claude"))
    assert (Path(env["HOME"]) / ".claude").is_symlink()
    assert ours("claude", json.loads((kept / "settings.json").read_text()))
    expect_ok(tb("uninstall", "claude"))
    assert (kept / "settings.json").read_text() == '{"theme": "dark"}\n'
    assert sorted(p.name for p in kept.iterdir()) == ["settings.json"]


@pytest.mark.parametrize("kind", ["dangling", "folder", "same-file"])
def test_a_link_that_cannot_be_written_through_is_refused_naming_it(tb: Takeback, env: dict[str, str], tmp_path: Path, kind: str) -> None:
    claude = user_file("claude", env)
    claude.parent.mkdir(parents=True)
    if kind == "dangling":
        claude.symlink_to(tmp_path / "dotfiles" / "gone.json")
        match = rf"{claude} is a symbolic link to .*gone.json, which does not exist"
    elif kind == "folder":
        (tmp_path / "dotfiles").mkdir()
        claude.symlink_to(tmp_path / "dotfiles")
        match = rf"{claude} is a symbolic link to .*dotfiles, which is not a file"
    else:
        shared = tmp_path / "shared.json"
        shared.write_text("{}\n")
        claude.symlink_to(shared)
        qwen = user_file("qwen", env)
        qwen.parent.mkdir(parents=True)
        qwen.symlink_to(shared)
        match = r"lead to the same file .*shared.json"
    before = homes(env), tree(tmp_path / "dotfiles") if (tmp_path / "dotfiles").exists() else None
    expect_error(tb("install", "all"), 2, match + r".*nothing was written")
    assert (homes(env), tree(tmp_path / "dotfiles") if (tmp_path / "dotfiles").exists() else None) == before
    assert claude.is_symlink()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a read-only file system needs root")
def test_a_link_into_a_read_only_store_is_refused_naming_it(tb: Takeback, env: dict[str, str], tmp_path: Path) -> None:
    # home-manager links ~/.claude/settings.json into /nix/store, which is mounted read-only.
    store = tmp_path / "nix-store"
    store.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(store)], check=True)
    try:
        (store / "settings.json").write_text('{"theme": "nix"}\n')
        subprocess.run(["mount", "-o", "remount,ro", str(store)], check=True)
        claude = user_file("claude", env)
        claude.parent.mkdir(parents=True)
        claude.symlink_to(store / "settings.json")
        before = homes(env)
        expect_error(tb("install", "claude"), 2, rf"{claude} is a symbolic link to .*, which cannot be written.*nothing was written")
        assert homes(env) == before and claude.is_symlink()
        assert (store / "settings.json").read_text() == '{"theme": "nix"}\n'
    finally:
        subprocess.run(["umount", str(store)], check=True)


def test_project_scope_refuses_a_link_inside_the_repository(tb: Takeback, env: dict[str, str]) -> None:
    # .claude/settings.local.json → settings.json would put personal hooks in the team's file.
    team = tb.cwd / ".claude" / "settings.json"
    team.parent.mkdir()
    team.write_text("{}\n")
    (tb.cwd / ".claude" / "settings.local.json").symlink_to("settings.json")
    before = tree(tb.cwd)
    expect_error(tb("install", "claude", "--scope", "project"), 2, r"settings.local.json is a symbolic link within the repository.*nothing was written")
    assert tree(tb.cwd) == before


def _committed(tb: Takeback, name: str, text: str) -> Path:
    """``name`` in ``tb``'s repository with ``text``, committed (so git tracks it)."""
    from helpers import git

    path = tb.cwd / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(tb.cwd, "add", name)
    git(tb.cwd, "commit", "-qm", f"the team's {name}")
    return path


def test_project_scope_asks_for_force_before_changing_a_file_git_tracks(tb: Takeback, env: dict[str, str]) -> None:
    from helpers import git, git_state

    local = _committed(tb, ".claude/settings.local.json", '{\n  "permissions": {"allow": ["Bash(make)"]}\n}\n')
    before = tree(tb.cwd), git_state(tb.cwd)
    expect_error(tb("install", "claude", "--scope", "project"), 2,
                 r"\.claude/settings\.local\.json is tracked by git .*--force.*nothing was written")
    assert (tree(tb.cwd), git_state(tb.cwd)) == before

    result = tb.json("install", "claude", "--scope", "project", "--force")
    assert ours("claude", json.loads(local.read_text()))
    steps = result[0]["next_steps"]
    assert any("is tracked by git" in s and "--skip-worktree" in s for s in steps), steps
    assert git(tb.cwd, "status", "--porcelain") == " M .claude/settings.local.json\n"
    expect_ok(tb("uninstall", "claude", "--scope", "project"))
    assert (tree(tb.cwd), git_state(tb.cwd)) == before
    assert git(tb.cwd, "status", "--porcelain") == ""


def test_project_scope_needs_no_force_when_only_the_teams_file_is_tracked(tb: Takeback, env: dict[str, str]) -> None:
    team = _committed(tb, ".claude/settings.json", "{}\n")
    result = tb.json("install", "claude", "--scope", "project")
    assert ours("claude", json.loads((tb.cwd / ".claude" / "settings.local.json").read_text()))
    assert not any("tracked by git" in s for s in result[0]["next_steps"])
    assert team.read_text() == "{}\n"


# --------------------------------------------------------------------------- install all: the agents found


def _fake_program(folder: Path, name: str) -> None:
    """An agent's program as PATH shows it: an empty executable file (``install`` only looks for it)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("")
    (folder / name).chmod(0o755)


def test_install_all_configures_only_the_agents_found_and_says_why_it_skipped_the_rest(
    tb: Takeback, env: dict[str, str], tmp_path: Path
) -> None:
    _fake_program(tmp_path / "bin", "claude")  # Claude Code: its program on PATH, no ~/.claude yet
    (Path(env["HOME"]) / ".codex").mkdir()  # Codex: its config folder, no program
    _fake_program(tb.cwd / "here", "gemini")  # a relative PATH folder (the repository's own file) does not count
    env["PATH"] = os.pathsep.join([str(tmp_path / "bin"), "here", os.path.dirname(shutil.which("git") or "/usr/bin/git")])

    result = tb.json("install", "all")
    assert [(r["agent"], r["skipped"]) for r in result] == [
        ("claude", None),
        ("codex", None),
        ("gemini", "not found: no `gemini` on PATH and no ~/.gemini"),
        ("copilot", "not found: no `copilot` on PATH and no ~/.copilot"),
        ("cursor", "not found: no `cursor` or `cursor-agent` on PATH and no ~/.cursor"),
        ("opencode", f"not found: no `opencode` on PATH and no {env['XDG_CONFIG_HOME']}/opencode"),
        ("qwen", "not found: no `qwen` on PATH and no ~/.qwen"),
    ]
    assert ours("claude", json.loads(user_file("claude", env).read_text()))
    assert ours("codex", json.loads(user_file("codex", env).read_text()))
    assert all(r["changes"] == [] for r in result if r["skipped"])
    assert not (Path(env["HOME"]) / ".gemini").exists() and not (Path(env["HOME"]) / ".cursor").exists()

    text = tb("install", "all").text
    assert "Claude Code (claude, user scope): installed\n" in text
    assert "Gemini CLI (gemini): skipped, not found: no `gemini` on PATH and no ~/.gemini\n" in text

    # named, an agent is installed into whether it is found or not
    assert tb.json("install", "qwen")[0]["skipped"] is None and user_file("qwen", env).is_file()


def test_install_all_with_no_agent_found_writes_nothing_and_says_so(tb: Takeback, env: dict[str, str], tmp_path: Path) -> None:
    env["PATH"] = os.path.dirname(shutil.which("git") or "/usr/bin/git")
    before = homes(env)
    expect_error(tb("install", "all", "--mcp"), 4, r"install all found no agent on this machine.*takeback install claude.*nothing was written")
    assert homes(env) == before


# --------------------------------------------------------------------------- a file the team shares


def test_project_scope_mcp_says_when_the_teams_file_holds_a_path_of_yours(tb: Takeback, env: dict[str, str]) -> None:
    """``.mcp.json`` is committed and shared: a path of this person's (the venv's takeback) in it
    is pointed out, with the personal alternative (``--scope user``)."""
    env["PATH"] = os.path.dirname(shutil.which("git") or "/usr/bin/git")  # no takeback on PATH
    [report] = tb.json("install", "claude", "--scope", "project", "--mcp")
    entry = json.loads((tb.cwd / ".mcp.json").read_text())["mcpServers"]["takeback"]
    assert Path(entry["command"]).is_absolute() and entry["args"] == ["mcp", "--agent", "claude"]
    [said] = [s for s in report["next_steps"] if s.startswith(".mcp.json is a file your team shares")]
    assert f"a path of yours ({entry['command']})" in said
    assert "'takeback install claude --mcp' (--scope user: " + str(Path(env["HOME"]) / ".claude.json") in said


def test_project_scope_mcp_writes_a_portable_takeback_when_path_finds_this_one(tb: Takeback, env: dict[str, str], tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "takeback"
    if not script.is_file():
        pytest.skip("Takeback runs as 'python -m takeback' here: no console script for PATH to find")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "takeback").symlink_to(script)  # the person's ~/.local/bin link to it
    env["PATH"] = os.pathsep.join([str(tmp_path / "bin"), os.path.dirname(shutil.which("git") or "/usr/bin/git")])
    [report] = tb.json("install", "claude", "--scope", "project", "--mcp")
    entry = json.loads((tb.cwd / ".mcp.json").read_text())["mcpServers"]["takeback"]
    assert entry == {"type": "stdio", "command": "takeback", "args": ["mcp", "--agent", "claude"]}
    assert any("starts the MCP server as 'takeback', found on PATH" in s for s in report["next_steps"])
    assert not any("a path of yours" in s for s in report["next_steps"])
    # what it runs, looked up as the agent looks it up, is Takeback
    ran = subprocess.run([shutil.which("takeback", path=env["PATH"]) or "takeback", "--version"], capture_output=True, text=True, env=env)
    assert ran.returncode == 0 and ran.stdout.startswith("takeback ")
    # the user scope is the person's own file: always the absolute path
    expect_ok(tb("install", "claude", "--mcp"))
    mine = json.loads((Path(env["HOME"]) / ".claude.json").read_text())["mcpServers"]["takeback"]
    assert Path(mine["command"]).is_absolute()
    expect_ok(tb("uninstall", "claude", "--scope", "project"))
    assert not (tb.cwd / ".mcp.json").exists()
