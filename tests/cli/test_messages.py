"""What the person reads when something cannot be done as asked: global flags after the
command name, an empty --workspace, conflict advice that can be followed, a turn ended by undo
or a second begin, turns dropped by retention, files that cannot be written."""

from __future__ import annotations

from pathlib import Path

from helpers import write_files

from .conftest import Snapshot, Takeback, expect_error, expect_ok
from .test_operations import turn


def test_global_flags_go_before_or_after_the_command(tb: Takeback, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    turn(tb, {"src/app.py": "changed\n"}, "one")
    before, after, mixed = tb.many(
        ("--json", "status"), ("status", "--json"), ("-C", str(tb.cwd), "log", "--limit", "1", "--json"),
    )
    assert expect_ok(before).json()["workspace"] == expect_ok(after).json()["workspace"] == str(tb.cwd.resolve())
    assert [e["number"] for e in expect_ok(mixed).json()] == [1]
    # --workspace after the name wins over the current folder, as it does before it.
    moved = tb.ok("status", "--json", "--workspace", str(tb.cwd), cwd=elsewhere).json()
    assert moved["workspace"] == str(tb.cwd.resolve()) and moved["turns"] == 1
    # A flag given before the name is not reset by the command's own parsing.
    assert tb.ok("-C", str(tb.cwd), "--json", "show", "1", cwd=elsewhere).json()["number"] == 1
    # Errors after the name answer in JSON too.
    data = expect_error(tb("show", "9", "--json"), 3, r"no turn #9").json()
    assert data["error"] == "not-found"
    # What follows 'check --' is the command's, not Takeback's.
    result = tb("check", "--json", "--", "sh", "-c", 'test "$1" = --json', "sh", "--json")
    assert expect_ok(result).json()["status"] == "passed"


def test_an_empty_workspace_is_refused_not_taken_for_the_current_folder(tb: Takeback) -> None:
    snap = Snapshot(tb)
    for args in (("--workspace", "", "status"), ("status", "-C", ""), ("--json", "-C", " ", "begin")):
        result = expect_error(tb(*args), 2, r"--workspace is empty: give a folder, or leave the option out")
        if "--json" in args:
            assert result.json()["error"] == "invalid-input"
    snap.assert_unchanged()
    assert tb.json("status")["turns"] == 0
