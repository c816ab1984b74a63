"""PLACEHOLDER (the answers helper's module replaces it): Claude Code's format only."""

from __future__ import annotations

import json

from ..guard.decide import Decision


def abilities(agent: str, event_name: str | None) -> frozenset[str]:
    return frozenset(("allow", "ask", "deny", "warn")) if agent in ("claude", "qwen") else frozenset(("allow",))


def answer(agent: str, event_name: str | None, decision: Decision) -> tuple[bytes, int]:
    if decision.action == "allow":
        return b"", 0
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision.action if decision.action != "warn" else "allow",
           "permissionDecisionReason": decision.line}}
    return json.dumps(out).encode(), 0
