"""Reading never makes a store: ``status``, ``log``, ``show``, ``diff``, ``cat`` and a dry run in
a workspace where nothing was ever recorded answer without making one (issue 19, §2), in a git
repository and in a plain folder; the first command that records makes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Takeback, expect_error

READS = [("show", "1"), ("diff", "1"), ("cat", "1", "notes.txt"), ("undo", "--dry-run"), ("redo", "--dry-run"),
         ("revert", "1", "--dry-run"), ("restore", "1", "--dry-run")]


def _stores(tb: Takeback) -> list[Path]:
    home = Path(tb.env["TAKEBACK_HOME"])
    return sorted(home.rglob("objects.git")) if home.exists() else []


@pytest.mark.parametrize("runner", ["tb", "plain_tb"])
def test_reading_commands_in_an_unrecorded_workspace_make_no_store(runner: str, request: pytest.FixtureRequest) -> None:
    tb: Takeback = request.getfixturevalue(runner)

    status = tb.json("status")
    assert status["store_made"] is False and status["entries"] == 0 and status["undo_target"] is None
    assert status["git_repository"] is (runner == "tb")
    printed = tb.ok("status").text
    assert f"store      none yet: the first recorded turn makes it at {status['store']}" in printed
    assert tb.json("log") == []
    assert "No turns recorded yet" in tb.ok("log").text
    for words in READS:
        expect_error(tb(*words), 4, r"nothing is recorded for .* yet: it has no store \(.*\); the first recorded turn")
    data = tb("--json", "show", "1").json()
    assert data["error"] == "no-store"
    assert _stores(tb) == [], "a reading command made a store"
    assert not Path(status["store"]).exists()

    tb.ok("begin", "--label", "first")  # the first command that records makes it
    assert Path(status["store"]).is_dir()
    assert tb.json("status")["store_made"] is True
