"""The rules an Entry carries for every client (the CLI, the language server's clients, MCP):
which checks failed, whether its checks passed, whether its steps are shown. Clients show them
and never work them out again (docs/protocol.md)."""

from __future__ import annotations

from takeback.core.models import Check, Checkpoint, Entry
from takeback.lsp.protocol import to_wire

from .build import START


def _entry(checkpoints: list[Checkpoint] | None = None, checks: list[Check] | None = None, **extra) -> Entry:
    return Entry(id="e", number=1, kind=extra.pop("kind", "turn"), label=extra.pop("label", "the prompt"),
                 created_at=START, checkpoints=checkpoints or [], checks=checks or [], **extra)


def _one(label: str | None, bracket: bool = False, **extra) -> Entry:
    return _entry([Checkpoint(id="c", at=START, label=label, paths=["a"], bracket=bracket)], **extra)


def test_the_latest_run_of_each_named_check_decides() -> None:
    assert _entry().checks_passed is None and _entry().failed_checks == []
    again = _entry(checks=[Check(name="tests", status="failed"), Check(name="tests", status="passed")])
    assert again.checks_passed is True and again.failed_checks == []
    mixed = _entry(checks=[Check(name="lint", status="error"), Check(name="tests", status="passed"),
                           Check(name="docs", status="skipped"), Check(name="types", status="failed")])
    assert mixed.checks_passed is False and mixed.failed_checks == ["lint", "types"]


def test_which_turns_show_their_steps() -> None:
    assert not _one(None).shows_steps  # one unnamed checkpoint
    assert not _one("changes on disk", bracket=True).shows_steps  # a bracket (begin … end)
    assert not _one("the prompt").shows_steps  # a step recorded as a turn of its own
    assert _one("Edit src/app.py").shows_steps  # one tool call
    assert _one("rename + helper").shows_steps  # one named batch of an agent extension
    assert not _one("undo of #3", kind="undo").shows_steps  # operations have no steps
    assert not _entry().shows_steps
    two = _entry([Checkpoint(id="a", at=START, paths=["a"]), Checkpoint(id="b", at=START, paths=["b"])])
    assert two.shows_steps


def test_the_rules_are_sent_on_the_wire_and_in_the_clis_json() -> None:
    entry = _one("Edit src/app.py", checks=[Check(name="tests", status="failed")])
    wire = to_wire(entry)
    assert (wire["showsSteps"], wire["checksPassed"], wire["failedChecks"]) == (True, False, ["tests"])
    assert wire["checkpoints"][0]["bracket"] is False
    dumped = entry.model_dump(mode="json")
    assert (dumped["shows_steps"], dumped["checks_passed"], dumped["failed_checks"]) == (True, False, ["tests"])
