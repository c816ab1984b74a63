"""How each agent's pre-tool hook carries out the guard's ``Decision``: the bytes the hook prints
on stdout and its exit status (``answer``), and which actions that agent's hook can carry out at
all (``abilities``: always "allow"; "warn", "ask", "deny" where it can). The policy
(``guard/policy.py``) chooses within ``abilities``; an action outside them is carried out as the
nearest one the agent has (``_carried``): ask → deny, deny → warn, warn → allow.

Allow prints nothing and exits 0 for every agent: an explicit "allow" would skip the agent's own
permission prompt (Claude Code, Cursor, Copilot CLI), and Codex refuses it. The line (one line,
what Takeback could not take back) is quoted for a terminal (``core/terminal.quote_text``)
before it goes into the answer: the agents show it as it comes.

Established from each agent's own source or documentation, on the versions pinned here
(shared/notes/agents-testing.md); docs/agents.md, "The guard, per agent", has the details:

| Agent (pre-tool event) | ask | deny | warn | answer (stdout JSON, exit 0 unless said) |
|---|---|---|---|---|
| Claude Code 2.1.197 (PreToolUse) | yes | yes | yes | hookSpecificOutput.permissionDecision(+Reason); warn: additionalContext |
| Codex 0.169.0 (PreToolUse) | no (refused) | yes | yes | as Claude Code, deny only; systemMessage is a warning entry |
| Gemini CLI 0.61.0 (BeforeTool) | no (``gemini -p`` hangs on it) | yes | person | decision deny + reason + systemMessage |
| Copilot CLI 1.0.102 (preToolUse) | yes | yes | model | permissionDecision(+Reason); warn: additionalContext |
| Cursor (beforeShellExecution, beforeMCPExecution) | yes | yes | no | permission + user_message + agent_message |
| OpenCode 1.18.33 (tool.execute.before) | no | yes | no | {"action": "deny", "message"}: the plugin throws |
| Qwen Code 0.15.10 (PreToolUse) | no ("ask" blocks) | yes | no | deny as Claude Code |
| Cline 3.36+ (PreToolUse) | no | yes | model | cancel + errorMessage; warn: contextModification |
| Windsurf (pre_run_command, pre_write_code) | no | yes | no | the line, exit 2 |
| Kiro | no pre-tool hook | | | |
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..core.terminal import quote_text
from ..guard.decide import Action, Decision
from .agents import event_kind

_FALLBACK = "Takeback could not take this call back"  # a deny or an ask must give a reason (Codex refuses an empty one)

_ABILITIES: dict[str, frozenset[str]] = {
    "claude": frozenset({"allow", "warn", "ask", "deny"}),
    "codex": frozenset({"allow", "warn", "deny"}),
    "gemini": frozenset({"allow", "warn", "deny"}),  # its "ask" waits forever in ``gemini -p`` (observed live)
    "copilot": frozenset({"allow", "warn", "ask", "deny"}),
    "cursor": frozenset({"allow", "ask", "deny"}),
    "opencode": frozenset({"allow", "deny"}),
    "qwen": frozenset({"allow", "deny"}),
    "cline": frozenset({"allow", "warn", "deny"}),
    "windsurf": frozenset({"allow", "deny"}),
    "kiro": frozenset({"allow"}),
}
_ALLOW_ONLY = frozenset({"allow"})
# What an action falls back to where the agent lacks it, in order.
_FALLBACKS: dict[str, tuple[Action, ...]] = {
    "ask": ("deny", "warn", "allow"),
    "deny": ("warn", "allow"),
    "warn": ("allow",),
    "allow": (),
}


def abilities(agent: str, event_name: str | None) -> frozenset[str]:
    """Which of allow / warn / ask / deny ``agent``'s hook can carry out for ``event_name``
    (None: its pre-tool event). Only "allow" for any other event, and for an unknown agent."""
    if event_name is not None and event_kind(agent, event_name) != "pre_tool":
        return _ALLOW_ONLY
    return _ABILITIES.get(agent, _ALLOW_ONLY)


def answer(agent: str, event_name: str | None, decision: Decision) -> tuple[bytes, int]:
    """What ``agent``'s hook prints on stdout and the status it exits with, to carry out
    ``decision`` for ``event_name`` (None: its pre-tool event)."""
    action = _carried(decision.action, abilities(agent, event_name))
    if action == "allow":
        return b"", 0
    line = quote_text(" ".join(decision.line.split())) or _FALLBACK
    body, status = _WRITERS[agent](action, line)
    if isinstance(body, bytes):
        return body, status
    return (json.dumps(body, ensure_ascii=True) + "\n").encode(), status


def _carried(action: Action, can: frozenset[str]) -> Action:
    """``action`` if the agent can carry it out, else the nearest one it can."""
    if action in can:
        return action
    return next((a for a in _FALLBACKS[action] if a in can), "allow")


_Body = dict | bytes


def _claude(action: Action, line: str) -> tuple[_Body, int]:
    """Claude Code, Codex and Qwen Code: ``hookSpecificOutput`` (``hookEventName`` is required;
    Codex rejects unknown keys, "ask" and "allow", and a deny without a reason). A warn is a
    ``systemMessage`` (the person) and ``additionalContext`` (the model), and no decision: the
    agent's own permission flow goes on as usual."""
    specific: dict[str, str] = {"hookEventName": "PreToolUse"}
    if action == "warn":
        specific["additionalContext"] = line
    else:
        specific["permissionDecision"] = action
        specific["permissionDecisionReason"] = line
    return {"systemMessage": line, "hookSpecificOutput": specific}, 0


def _qwen(action: Action, line: str) -> tuple[_Body, int]:
    """Qwen Code shows no ``systemMessage`` of a PreToolUse hook (only its debug log): the deny's
    reason goes to the model as the tool's error."""
    body, status = _claude(action, line)
    assert isinstance(body, dict)
    body.pop("systemMessage")
    return body, status


def _gemini(action: Action, line: str) -> tuple[_Body, int]:
    """Gemini CLI: top-level ``decision`` ("ask" forces its confirmation, which shows the
    ``systemMessage``; "deny" sends ``reason`` to the model); ``systemMessage`` is shown to the person."""
    if action == "warn":
        return {"systemMessage": line}, 0
    return {"decision": action, "reason": line, "systemMessage": line}, 0


def _copilot(action: Action, line: str) -> tuple[_Body, int]:
    """Copilot CLI: top-level ``permissionDecision`` / ``permissionDecisionReason``; a warn is
    ``additionalContext`` (into the conversation: the model reads it)."""
    if action == "warn":
        return {"additionalContext": line}, 0
    return {"permissionDecision": action, "permissionDecisionReason": line}, 0


def _cursor(action: Action, line: str) -> tuple[_Body, int]:
    """Cursor: ``permission`` with ``user_message`` (the person) and ``agent_message`` (the model)."""
    return {"permission": action, "user_message": line, "agent_message": line}, 0


def _opencode(action: Action, line: str) -> tuple[_Body, int]:
    """OpenCode: read by Takeback's own plugin (``install/opencode.py``), which throws an Error
    with the message from ``tool.execute.before``: OpenCode fails the tool call with it."""
    return {"action": action, "message": line}, 0


def _cline(action: Action, line: str) -> tuple[_Body, int]:
    """Cline: ``cancel`` with ``errorMessage``; a warn is ``contextModification`` (the model)."""
    if action == "warn":
        return {"cancel": False, "contextModification": line}, 0
    return {"cancel": True, "errorMessage": line}, 0


def _windsurf(action: Action, line: str) -> tuple[_Body, int]:
    """Windsurf: a pre-hook blocks by exiting 2; the line is its output (shown with ``show_output``)."""
    return (line + "\n").encode(), 2


_WRITERS: dict[str, Callable[[Action, str], tuple[_Body, int]]] = {
    "claude": _claude,
    "codex": _claude,
    "qwen": _qwen,
    "gemini": _gemini,
    "copilot": _copilot,
    "cursor": _cursor,
    "opencode": _opencode,
    "cline": _cline,
    "windsurf": _windsurf,
}
