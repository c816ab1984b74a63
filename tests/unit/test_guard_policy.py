"""The guard's policy (``guard/policy.py``): the person's rules applied to the classifier's verdict.

The property its users rely on: with the default rules, the policy asks about exactly the corpus
commands the classifier finds not undoable (tests/unit/guard_corpus.tsv), and lets every other one
through; an agent that cannot ask gets the person's ``cannot_ask`` instead. Then the rules one by
one: deny/ask/allow patterns (matched as written and as the program's words), per-class answers,
the strictest winning.
"""

from __future__ import annotations

import pytest

from takeback.guard.classify import classify_command
from takeback.guard.decide import ACTIONS, stricter
from takeback.guard.policy import Rules, decide

from .test_guard_classify import CASES, workspace

EVERY = frozenset(ACTIONS)
DENY_ONLY = frozenset(("allow", "deny"))
NOTHING = frozenset(("allow",))


def _decide(command: str, rules: Rules | None = None, abilities: frozenset[str] = EVERY):
    return decide(classify_command(command, workspace()), command, rules or Rules(), abilities)


def test_with_the_default_rules_the_guard_asks_about_exactly_what_cannot_be_taken_back() -> None:
    ws = workspace()
    asked = 0
    for expected, command in CASES:
        verdict = classify_command(command, ws)
        decision = decide(verdict, command, Rules(), EVERY)
        if expected == "undoable":
            assert decision.action == "allow" and decision.line == "", command
        else:
            asked += 1
            assert decision.action == "ask", command
            assert decision.effect == verdict.effect
            assert decision.line.startswith("Takeback could not take this back: ") and "\n" not in decision.line
        where_cannot_ask = decide(verdict, command, Rules(cannot_ask="deny"), DENY_ONLY)
        assert where_cannot_ask.action == ("allow" if expected == "undoable" else "deny"), command
        assert decide(verdict, command, Rules(), DENY_ONLY).action == "allow"  # warn where it can only deny: let through
    assert asked >= 150


def test_an_agent_that_cannot_ask_gets_what_the_person_chose() -> None:
    warned = _decide("git reset --hard", abilities=frozenset(("allow", "warn", "deny")))
    assert (warned.action, warned.wanted) == ("warn", "ask")
    denied = _decide("git reset --hard", Rules(cannot_ask="deny"), frozenset(("allow", "warn", "deny")))
    assert (denied.action, denied.wanted) == ("deny", "ask")
    assert denied.line.startswith("Takeback's guard refused it: this resets the branch")
    assert _decide("git reset --hard", abilities=NOTHING).action == "allow"


def test_the_persons_patterns() -> None:
    push = Rules(deny=("git push --force*",))
    assert _decide("git push --force origin main", push).action == "deny"
    assert _decide('cd src && "git" push --force', push).action == "deny"  # as the program's words, quotes gone
    assert _decide("git push origin main", push).action == "allow"
    assert "this matches your guard rule deny = 'git push --force*' (git push --force)" in _decide("git push --force", push).line
    ask = Rules(ask=("npm publish*",))
    assert _decide("npm test && npm publish", ask).action == "ask"  # an undoable call asks when a pattern says so
    allow = Rules(allow=("rm -rf node_modules",))
    assert _decide("rm -rf node_modules", allow).action == "allow"
    both = _decide("rm -rf node_modules && git reset --hard", allow)
    assert both.action == "ask" and "resets the branch" in both.line and "node_modules" not in both.line
    assert _decide("rm -rf node_modules", Rules(allow=("rm *",), deny=("rm -rf *",))).action == "deny"  # deny wins


def test_per_class_answers_the_strictest_winning() -> None:
    rules = Rules(effects={"system": "allow", "git-refs": "deny", "ignored-files": "warn"})
    assert _decide("sudo apt install jq", rules).action == "allow"
    assert _decide("rm .env", rules).action == "warn"
    assert _decide("rm .env && git reset --hard", rules).action == "deny"
    assert _decide("sudo apt install jq && rm .env", rules).effect == "ignored-files"


@pytest.mark.parametrize(("a", "b", "strict"), [("allow", "deny", "deny"), ("ask", "warn", "ask"), ("warn", "warn", "warn")])
def test_stricter(a: str, b: str, strict: str) -> None:
    assert stricter(a, b) == strict == stricter(b, a)  # type: ignore[arg-type]
