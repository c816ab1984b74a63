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


def test_conflict_advice_offers_markers_only_where_they_can_go(tb: Takeback) -> None:
    write_files(tb.cwd, {"logo.bin": b"\x89PNG\x00\x01"})
    turn(tb, {"logo.bin": b"\x89PNG\x00\x02", "made.txt": "agent's\n"}, "binary and created")
    write_files(tb.cwd, {"logo.bin": b"\x89PNG\x00\x03", "made.txt": "the person's since\n"})
    snap = Snapshot(tb)
    human, as_json = tb("undo"), tb("--json", "undo")
    snap.assert_unchanged()
    assert human.code == as_json.code == 11
    text = human.text
    assert "markers" not in text.split("next: ")[1]
    assert text.endswith(
        "next: nothing was written; choose: 'takeback undo --on-conflict force' puts back the starting content "
        "over your later edits (undoable)\n"
    )
    assert (
        "  conflict logo.bin: binary file changed since; it cannot be merged\n"
        "           conflict markers cannot be written into it (it is binary); 'takeback undo --on-conflict force'"
    ) in text
    assert "  conflict made.txt: changed since, so it is not removed\n" in text
    data = as_json.json()
    assert [(c["path"], c["markers_possible"]) for c in data["conflicts"]] == [("logo.bin", False), ("made.txt", False)]
    assert all("--on-conflict markers" not in c["advice"] for c in data["conflicts"])

    # Asking for markers anyway writes nothing and says what does work.
    snap = Snapshot(tb)
    refused = tb("undo", "--on-conflict", "markers")
    snap.assert_unchanged()
    assert refused.code == 11 and "next: nothing was written; choose: 'takeback undo --on-conflict force'" in refused.text
    # The advice, followed, works.
    expect_ok(tb("undo", "--on-conflict", "force"))
    assert (tb.cwd / "logo.bin").read_bytes() == b"\x89PNG\x00\x01" and not (tb.cwd / "made.txt").exists()


def test_undo_and_begin_say_when_they_end_the_open_turn(tb: Takeback) -> None:
    tb.ok("begin", "--label", "one")
    write_files(tb.cwd, {"src/app.py": "during one\n"})
    second = tb.ok("begin", "--label", "two").text
    assert second.splitlines() == [
        "note: turn #1 was still open; this begin ended it first (what changed on disk until now is recorded as its changes)",
        second.splitlines()[1],
    ]
    assert second.splitlines()[1].startswith("turn #2 open (")
    write_files(tb.cwd, {"src/util.py": "during two\n"})
    data = tb.json("undo")
    assert data["notices"] == [
        "turn #2 was still open; undo ended it first (what changed on disk during it is recorded as its changes)"
    ]
    tb.ok("begin", "--label", "three")
    text = tb.ok("undo").text
    assert text.splitlines()[1] == (
        "  note    turn #4 was still open; undo ended it first (what changed on disk during it is recorded as its changes)"
    )
    assert tb.json("log", "--limit", "1")[0]["kind"] == "undo"
    begun = tb.json("begin", "--label", "five")
    assert begun["notices"] == []
