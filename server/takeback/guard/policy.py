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

from . import line
from .classify import Finding, Verdict, Workspace
from .decide import ACTIONS, ALLOW, Action, Decision, stricter
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


def decide(verdict: Verdict, command: str | None, rules: Rules, abilities: frozenset[str],
           ws: Workspace | None = None) -> Decision:
    """The action for a call the classifier read as ``verdict`` (``command``: its shell line, if
    any), by the person's ``rules``, for an agent able to carry out ``abilities`` (``ws``: the
    workspace it was classified against, to word what is left once the person's patterns allowed
    some of it)."""
    commands = parse(command).commands if command else ()
    by_rule = _by_pattern(commands, rules)
    if by_rule is not None and by_rule[0] == "deny":
        return _able("deny", by_rule[1], "rule", abilities, rules)
    allowed = {cmd.text for cmd in commands if _matches(cmd, rules.allow)}
    findings = [f for f in verdict.findings if f.text not in allowed]
    action: Action = "allow"
    effect = "workspace"
    for finding in findings:
        wanted = rules.effect(finding.effect)
        if ACTIONS.index(wanted) > ACTIONS.index(action):
            action, effect = wanted, finding.effect
    reason = _reason(verdict, findings, command, ws)
    if by_rule is not None and ACTIONS.index(by_rule[0]) > ACTIONS.index(action):
        action, effect, reason = by_rule[0], "rule", by_rule[1]
    if action == "allow":
        return ALLOW
    return _able(action, reason, effect, abilities, rules)


def _by_pattern(commands: Sequence[Command], rules: Rules) -> tuple[Action, str] | None:
    """The strictest of the person's deny/ask patterns a simple command matches, with why."""
    for action, patterns in (("deny", rules.deny), ("ask", rules.ask)):
        for cmd in commands:
            pattern = _matches(cmd, patterns)
            if pattern is not None:
                return action, f"matches your guard rule {action} = {pattern!r} ({_flat(cmd.text)})"  # type: ignore[return-value]
    return None


def _matches(cmd: Command, patterns: Sequence[str]) -> str | None:
    if not patterns:
        return None
    spellings = (_flat(cmd.text), " ".join(w.text for w in cmd.words))
    return next((p for p in patterns for s in spellings if fnmatch.fnmatchcase(s, p)), None)


def _reason(verdict: Verdict, findings: list[Finding], command: str | None, ws: Workspace | None) -> str:
    if len(findings) == len(verdict.findings) or not findings:
        return verdict.reason
    if ws is not None:
        return line.one_line(findings, command, ws.root, ws.count_files)
    return "; ".join(line.clean(f.reason) for f in findings)


def _line(action: Action, reason: str) -> str:
    """The one line: what the call does that Takeback could not take back ("this …")."""
    reason = _flat(reason)
    if action == "deny":
        return f"Takeback's guard refused it: this {reason}. The person can run it, or change the guard's rules (docs/guard.md)"
    return f"Takeback could not take this back: this {reason}"


def _able(wanted: Action, reason: str, effect: str, abilities: frozenset[str], rules: Rules) -> Decision:
    """``wanted`` as this agent can carry it out (ask → the person's ``cannot_ask``; warn → deny
    or allow, whichever the agent can; deny → warn where it cannot refuse)."""
    action = wanted
    if action == "ask" and "ask" not in abilities:
        action = rules.cannot_ask if rules.cannot_ask in ("warn", "deny") else "warn"
    if action == "warn" and "warn" not in abilities:
        action = "deny" if rules.cannot_ask == "deny" and "deny" in abilities else "allow"
    if action == "deny" and "deny" not in abilities:
        action = "warn" if "warn" in abilities else "allow"
    text = _line("ask" if action != "deny" else "deny", reason)
    return Decision(action, text, effect, wanted=None if action == wanted else wanted)


def _flat(text: str) -> str:
    """One line, no control characters (the adapters quote it for a terminal)."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


__all__ = ["EFFECTS", "Rules", "decide", "stricter"]
