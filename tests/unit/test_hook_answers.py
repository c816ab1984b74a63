"""Each agent's answer to the guard's Decision (``hooks/answers.py``): for every agent and
action, the bytes are what that agent's hook reader takes (read here as its source reads them:
the checks below mirror Claude Code's, Codex's, Gemini CLI's and Qwen Code's parsers of the
pinned versions, and Copilot CLI's, Cursor's, Cline's and Windsurf's documented formats), the
line is in them, an allow prints nothing, and nothing from a command reaches a terminal
unquoted. The pre-tool events of the payloads captured from the real agents
(tests/cli/hook_payloads/) are the ones the guard answers. OpenCode's plugin, run by the real
node, throws the guard's deny into OpenCode and nothing else.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

from takeback.guard.decide import ACTIONS, Decision
from takeback.hooks.agents import AGENTS, event_kind, parse
from takeback.hooks.answers import abilities, answer
from takeback.install.opencode import plugin_source

CAPTURED = Path(__file__).parent.parent / "cli" / "hook_payloads"
LINE = "this deletes 3 ignored files Takeback does not hold: .env, data/app.db, build/ (412 files)"
PRE_TOOL = {
    "claude": "PreToolUse", "codex": "PreToolUse", "qwen": "PreToolUse", "gemini": "BeforeTool", "copilot": "preToolUse",
    "cursor": "beforeShellExecution", "opencode": "tool.execute.before", "cline": "PreToolUse", "windsurf": "pre_run_command",
}
CAN = {  # what the agent's pre-tool hook can carry out (docs/agents.md, "The guard, per agent")
    "claude": {"allow", "warn", "ask", "deny"},
    "codex": {"allow", "warn", "deny"},
    "gemini": {"allow", "warn", "deny"},  # "ask" hangs gemini -p (observed live)
    "copilot": {"allow", "warn", "ask", "deny"},
    "cursor": {"allow", "ask", "deny"},
    "opencode": {"allow", "deny"},
    "qwen": {"allow", "deny"},
    "cline": {"allow", "warn", "deny"},
    "windsurf": {"allow", "deny"},
    "kiro": {"allow"},
}
# Codex 0.169.0's pre-tool-use.command.output schema (additionalProperties: false at both levels).
CODEX_TOP = {"continue", "decision", "hookSpecificOutput", "reason", "stopReason", "suppressOutput", "systemMessage"}
CODEX_SPECIFIC = {"additionalContext", "hookEventName", "permissionDecision", "permissionDecisionReason", "updatedInput"}


def _read_claude_like(agent: str, data: dict) -> tuple[str, list[str]]:
    """(what the agent does, the texts it shows) as Claude Code 2.1.197, Codex 0.169.0 and Qwen
    Code 0.15.10 read a PreToolUse answer."""
    specific = data["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"  # Claude Code refuses an answer naming another event
    if agent == "codex":
        assert set(data) <= CODEX_TOP and set(specific) <= CODEX_SPECIFIC
        assert specific.get("permissionDecision") in (None, "deny"), "Codex refuses ask and a bare allow"
        assert "permissionDecisionReason" not in specific or specific.get("permissionDecision")
    if agent == "qwen":
        assert "systemMessage" not in data  # Qwen Code only logs it
    decision = specific.get("permissionDecision")
    texts = [specific.get("permissionDecisionReason", ""), specific.get("additionalContext", ""), data.get("systemMessage", "")]
    if decision is None:
        return ("warn" if any(texts) else "allow"), texts
    assert decision in ("ask", "deny")
    assert specific["permissionDecisionReason"].strip(), "a deny needs a reason (Codex)"
    return decision, texts


def _read(agent: str, stdout: bytes, status: int) -> tuple[str, list[str]]:
    """What ``agent`` does with its hook's answer, and the texts it shows the person or the model."""
    if not stdout:
        assert status == 0
        return "allow", []
    if agent == "windsurf":
        assert status == 2  # Windsurf blocks a pre-hook by its exit status only
        return "deny", [stdout.decode()]
    assert status == 0  # every other agent reads JSON on stdout after exit 0
    assert stdout.endswith(b"\n") and stdout.count(b"\n") == 1
    data = json.loads(stdout)
    if agent in ("claude", "codex", "qwen"):
        return _read_claude_like(agent, data)
    if agent == "gemini":  # Gemini CLI 0.61.0's DefaultHookOutput: decision, reason, systemMessage
        assert data.get("decision") in (None, "ask", "deny")
        return data.get("decision") or "warn", [data.get("reason", ""), data["systemMessage"]]
    if agent == "copilot":
        assert data.get("permissionDecision") in (None, "ask", "deny")
        return data.get("permissionDecision") or "warn", [data.get("permissionDecisionReason", ""), data.get("additionalContext", "")]
    if agent == "cursor":
        assert data["permission"] in ("ask", "deny")
        return data["permission"], [data["user_message"], data["agent_message"]]
    if agent == "opencode":  # Takeback's own plugin (install/opencode.py)
        assert data["action"] == "deny"
        return "deny", [data["message"]]
    if agent == "cline":
        assert isinstance(data["cancel"], bool)
        return ("deny" if data["cancel"] else "warn"), [data.get("errorMessage", ""), data.get("contextModification", "")]
    raise AssertionError(f"no reader for {agent}")


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("action", ACTIONS)
def test_each_action_is_carried_out_as_the_agent_reads_it(agent: str, action: str) -> None:
    stdout, status = answer(agent, PRE_TOOL.get(agent), Decision(action, LINE))  # type: ignore[arg-type]
    done, texts = _read(agent, stdout, status)
    if action in CAN[agent]:
        assert done == action
    else:  # the nearest the agent can do: ask → deny, deny → warn, warn → allow
        assert done == next(a for a in {"ask": ("deny", "warn", "allow"), "deny": ("warn", "allow"), "warn": ("allow",)}[action]
                            if a in CAN[agent])
    if done != "allow":
        assert any(LINE in text for text in texts), texts


@pytest.mark.parametrize("agent", AGENTS)
def test_abilities_always_allow_and_ask_only_where_the_agent_asks(agent: str) -> None:
    assert abilities(agent, None) == CAN[agent]
    if agent in PRE_TOOL:
        assert abilities(agent, PRE_TOOL[agent]) == CAN[agent]
    assert "allow" in abilities(agent, None)


@pytest.mark.parametrize("agent", AGENTS)
def test_an_allow_prints_nothing_and_exits_0(agent: str) -> None:
    assert answer(agent, None, Decision("allow")) == (b"", 0)
    assert answer(agent, None, Decision("allow", LINE)) == (b"", 0)  # a line without a decision is not a warning


def test_other_events_and_unknown_agents_can_only_allow() -> None:
    assert abilities("claude", "UserPromptSubmit") == {"allow"}
    assert abilities("claude", "PostToolUse") == {"allow"}
    assert abilities("cursor", "afterShellExecution") == {"allow"}
    assert abilities("gemini", "PreCompress") == {"allow"}
    assert abilities("nobody", None) == {"allow"}
    assert answer("claude", "Stop", Decision("deny", LINE)) == (b"", 0)
    assert answer("nobody", None, Decision("deny", LINE)) == (b"", 0)


@pytest.mark.parametrize("event", ["beforeShellExecution", "beforeMCPExecution"])
def test_cursor_answers_both_of_its_pre_tool_events(event: str) -> None:
    assert abilities("cursor", event) == CAN["cursor"]
    assert json.loads(answer("cursor", event, Decision("ask", LINE))[0])["permission"] == "ask"


@pytest.mark.parametrize("event", ["pre_run_command", "pre_write_code"])
def test_windsurf_blocks_both_of_its_pre_tool_events(event: str) -> None:
    assert answer("windsurf", event, Decision("deny", LINE)) == (LINE.encode() + b"\n", 2)


HOSTILE = [
    "this deletes \x1b]0;pwned\x07 and \x1b[2J",  # a window title and a cleared screen
    "rm -rf build/\nTakeback: all good",  # a second, forged line
    "git reset --hard \u202eevil\u202c",  # Trojan Source reordering
    "echo \x9b31m red",  # a C1 control sequence introducer
]


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("line", HOSTILE)
def test_nothing_from_a_command_reaches_a_terminal_unquoted(agent: str, line: str) -> None:
    for action in ("warn", "ask", "deny"):
        stdout, status = answer(agent, None, Decision(action, line))  # type: ignore[arg-type]
        assert stdout.isascii() and b"\x1b" not in stdout
        if not stdout:
            continue
        _, texts = _read(agent, stdout, status)
        for text in texts:
            # as the agent shows it, after its JSON decoding: one line, nothing a terminal acts on
            assert "\n" not in text.rstrip("\n")
            assert not any(unicodedata.category(c) == "Cc" or "\u202a" <= c <= "\u202e" for c in text.rstrip("\n")), text


@pytest.mark.parametrize("agent", ["claude", "codex", "qwen", "gemini", "copilot", "cursor", "opencode", "cline"])
def test_an_empty_line_still_gives_a_reason(agent: str) -> None:
    stdout, status = answer(agent, None, Decision("deny", "  "))
    done, texts = _read(agent, stdout, status)
    assert done == "deny" and any(t.strip() for t in texts)


# ------------------------------------------------------------------ the parse map

@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "copilot", "opencode", "qwen"])
def test_the_captured_pre_tool_events_are_the_ones_the_guard_answers(agent: str) -> None:
    payloads = json.loads((CAPTURED / f"{agent}.json").read_text())["payloads"]
    pre_tool = [name for name in payloads if event_kind(agent, name) == "pre_tool"]
    assert pre_tool == [PRE_TOOL[agent]]
    for name in payloads:
        assert abilities(agent, name) == (CAN[agent] if name in pre_tool else {"allow"})


def test_cursor_mcp_calls_are_steps_bracketed_like_a_command() -> None:
    base = {"conversation_id": "c", "workspace_roots": ["/w"], "tool_name": "database_query",
            "tool_input": "{\"query\": \"DROP TABLE users\"}", "url": "http://localhost:3000"}
    before = parse("cursor", None, {**base, "hook_event_name": "beforeMCPExecution"}, {})
    after = parse("cursor", None, {**base, "hook_event_name": "afterMCPExecution", "result_json": "{}"}, {})
    assert before is not None and after is not None
    assert (before.kind, before.tool, before.command, before.paths) == ("pre_tool", "database_query", "", None)
    assert (after.kind, after.tool, after.command) == ("post_tool", "database_query", "")
    shell = parse("cursor", None, {"hook_event_name": "beforeShellExecution", "conversation_id": "c", "command": "ls"}, {})
    assert shell is not None and (shell.tool, shell.command) == ("shell", "ls")


# ------------------------------------------------------------------ OpenCode's plugin, in the real node

_PROBE = """
const { Takeback } = await import(process.argv[1]);
const hooks = await Takeback({ directory: "/w", worktree: "/w" });
const out = {};
try {
  await hooks["tool.execute.before"]({ tool: "bash", sessionID: "s", callID: "c" }, { args: { command: "rm -rf build" } });
  out.before = "allowed";
} catch (error) {
  out.before = error instanceof Error ? "Error: " + error.message : "threw a non-Error";
}
try {
  await hooks["tool.execute.after"]({ tool: "bash", sessionID: "s", callID: "c" }, { title: "", output: "" });
  out.after = "went on";
} catch {
  out.after = "threw";
}
await hooks.dispose();
console.log(JSON.stringify(out));
"""


def _plugin_run(tmp_path: Path, printed: bytes) -> dict:
    """OpenCode's plugin, with a ``takeback`` that prints ``printed`` for every event, run by node."""
    fake = tmp_path / "takeback"
    (tmp_path / "answer").write_bytes(printed)
    fake.write_text(f"#!/bin/sh\ncat >/dev/null\ncat {tmp_path / 'answer'}\n")
    fake.chmod(0o755)
    plugin = tmp_path / "plugin.mjs"
    plugin.write_text(plugin_source([str(fake)]))
    done = subprocess.run(["node", "--input-type=module", "-e", _PROBE, str(plugin)], capture_output=True, timeout=60, check=True)
    return json.loads(done.stdout)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_opencode_plugin_throws_the_guard_deny_and_nothing_else(tmp_path: Path) -> None:
    deny = answer("opencode", "tool.execute.before", Decision("deny", LINE))[0]
    assert _plugin_run(tmp_path, deny) == {"before": f"Error: {LINE}", "after": "went on"}
    allowed = answer("opencode", "tool.execute.before", Decision("allow"))[0]
    assert _plugin_run(tmp_path, allowed) == {"before": "allowed", "after": "went on"}
    assert _plugin_run(tmp_path, b"not json") == {"before": "allowed", "after": "went on"}
