"""The person's rules, applied: a verdict (``classify.py``) and the call's command line become
one ``Decision`` (``decide.py``) — allow, warn, ask or deny — for an agent that can carry out
some of those actions.

``Rules`` is plain data (the hooks build it from the config's ``guard`` table; the guard imports
nothing of Takeback). In order:

1. a simple command of the line that matches one of the person's ``deny`` patterns denies the
   call, one that matches an ``ask`` pattern asks at least (also for a call that is undoable);
2. what the classifier found on a simple command that matches an ``allow`` pattern is dropped
   (the person said that command is fine: ``docker compose *``);
3. what is left is weighed by its effect class (``effects``: allow, warn, ask or deny; every class
   asks by default), the strictest winning;
4. an agent that cannot ask gets ``cannot_ask`` (warn or deny) instead, one that cannot warn
   either gets what it can (deny, else allow: the step still records what was lost).

A pattern is a shell-style glob (``fnmatch``: ``*``, ``?``, ``[…]``) matched against the whole
simple command twice: as written (``FOO=1 sudo rm -rf x``) and as the words the program gets once
quotes and wrappers are gone (``rm -rf x``), so ``"git" push --force`` cannot slip past
``git push --force*``. Hand-written: no library matches command lines against person-written globs.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field

from .classify import Verdict
from .decide import ALLOW, ACTIONS, Action, Decision, stricter
from .shell import Command, parse

EFFECTS = ("git-refs", "outside-workspace", "ignored-files", "system", "unknown", "guard")


@dataclass(frozen=True)
class Rules:
    effects: dict[str, Action] = field(default_factory=dict)  # effect class → action (missing: "ask")
    allow: tuple[str, ...] = ()  # command patterns whose findings are dropped
    ask: tuple[str, ...] = ()  # command patterns that ask, even when undoable
    deny: tuple[str, ...] = ()  # command patterns that deny
    cannot_ask: Action = "warn"  # what "ask" becomes where the agent cannot ask: "warn" or "deny"

    def effect(self, name: str) -> Action:
        return self.effects.get(name, "ask")


def decide(verdict: Verdict, command: str | None, rules: Rules, abilities: frozenset[str]) -> Decision:
    """The action for a call the classifier read as ``verdict`` (``command``: its shell line, if
    any), by the person's ``rules``, for an agent able to carry out ``abilities``."""
    commands = parse(command).commands if command else ()
    by_rule = _by_pattern(commands, rules)
    if by_rule is not None and by_rule[0] == "deny":
        return _able(Decision("deny", _line("deny", by_rule[1]), "rule"), abilities, rules)
    allowed = {cmd.text for cmd in commands if _matches(cmd, rules.allow)}
    findings = [f for f in verdict.findings if f.text not in allowed]
    action: Action = "allow"
    effect = "workspace"
    for finding in findings:
        wanted = rules.effect(finding.effect)
        if ACTIONS.index(wanted) > ACTIONS.index(action):
            action, effect = wanted, finding.effect
    reason = _reason(verdict, findings)
    if by_rule is not None and ACTIONS.index(by_rule[0]) > ACTIONS.index(action):
        action, effect, reason = by_rule[0], "rule", by_rule[1]
    if action == "allow":
        return ALLOW
    return _able(Decision(action, _line(action, reason), effect), abilities, rules)


def _by_pattern(commands: Sequence[Command], rules: Rules) -> tuple[Action, str] | None:
    """The strictest of the person's deny/ask patterns a simple command matches, with why."""
    for action, patterns in (("deny", rules.deny), ("ask", rules.ask)):
        for cmd in commands:
            pattern = _matches(cmd, patterns)
            if pattern is not None:
                return action, f"{_flat(cmd.text)}: matches your guard rule {action} = {pattern!r}"  # type: ignore[return-value]
    return None


def _matches(cmd: Command, patterns: Sequence[str]) -> str | None:
    if not patterns:
        return None
    spellings = (_flat(cmd.text), " ".join(w.text for w in cmd.words))
    return next((p for p in patterns for s in spellings if fnmatch.fnmatchcase(s, p)), None)


def _reason(verdict: Verdict, findings: list) -> str:
    if len(findings) == len(verdict.findings):
        return verdict.reason
    first = findings[0] if findings else None
    if first is None:
        return ""
    more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
    return f"{_flat(first.text)}: {first.reason}{more}"


def _line(action: Action, reason: str) -> str:
    reason = _flat(reason)
    if action == "deny":
        return f"Takeback's guard refused this: {reason}. The person can run it, or change the guard's rules (docs/guard.md)"
    return f"Takeback could not take this back: {reason}"


def _able(decision: Decision, abilities: frozenset[str], rules: Rules) -> Decision:
    """``decision`` as this agent can carry it out (ask → the person's ``cannot_ask``; warn → deny
    or allow, whichever the agent can)."""
    action = decision.action
    if action == "ask" and "ask" not in abilities:
        action = rules.cannot_ask if rules.cannot_ask in ("warn", "deny") else "warn"
    if action == "warn" and "warn" not in abilities:
        action = "deny" if rules.cannot_ask == "deny" and "deny" in abilities else "allow"
    if action == "deny" and "deny" not in abilities:
        action = "warn" if "warn" in abilities else "allow"
    if action == decision.action:
        return decision
    line = decision.line if action != "deny" else _line("deny", decision.line.split(": ", 1)[-1])
    return Decision(action, line, decision.effect, wanted=decision.action)


def _flat(text: str) -> str:
    """One line, no control characters (the adapters quote it for a terminal)."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


__all__ = ["EFFECTS", "Rules", "decide", "stricter"]
