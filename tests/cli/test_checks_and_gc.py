"""check -- COMMAND (pass, fail, missing command, exit codes), restore last-green, gc and the
retention policy, the turns that changed nothing (left out of log, not counted by retention),
and where the store lives when configured."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import write_files, write_user_config

from .conftest import Snapshot, Takeback, expect_error, expect_ok
from .test_operations import turn


def test_checks_record_pass_and_fail_and_restore_last_green(tb: Takeback) -> None:
    ws = tb.cwd
    # with no turn yet there is nothing to record on: the command must not even run
    expect_error(tb("check", "--", "touch", "ran.txt"), 3, r"there is no turn yet in this workspace")
    assert not (ws / "ran.txt").exists()

    turn(tb, {"src/app.py": "v1\n"}, "one")
    assert tb.ok("check", "--name", "tests", "--", "true").text == "check tests: passed (exit 0) recorded on turn #1\n"
    turn(tb, {"src/app.py": "v2\n", "src/extra.py": "x\n"}, "two")
    failed = tb("--json", "check", "--name", "tests", "--", "sh", "-c", "echo from-the-check; exit 3")
    assert failed.code == 12
    assert failed.json() == {"turn": 2, "name": "tests", "status": "failed", "exit_code": 3, "ran_on": "end", "differs": []}
    assert failed.err == "from-the-check\n"  # with --json the command's own output goes to stderr
    human = tb("check", "--name", "tests", "--", "sh", "-c", "echo from-the-check; exit 3")
    assert (human.code, human.err) == (12, "")
    assert human.text == "from-the-check\ncheck tests: failed (exit 3) recorded on turn #2\n"

    missing = tb("check", "--turn", "#1", "--", "no-such-command-for-takeback")
    assert (missing.code, missing.err) == (12, "")
    assert missing.text.startswith("check no-such-command-for-takeback: error (exit 127) recorded on turn #1\n  note: ")

    snap = Snapshot(tb)
    bad_turn, no_command, show, log, no_green = tb.many(
        ("check", "--turn", "9", "--", "touch", "ran.txt"),
        ("check",),
        ("show", "2"),
        ("log",),
        ("--json", "restore", "last-green", "--dry-run"),
    )
    snap.assert_unchanged()
    expect_error(bad_turn, 3, r"no turn #9")
    assert not (ws / "ran.txt").exists()
    expect_error(no_command, 2, r"check needs a command after '--'")
    assert "  check  tests: failed (exit 3)" in expect_ok(show).text
    lines = expect_ok(log).text.splitlines()
    # #1: its 'no-such…' check errored, but on #2's files: it does not count for #1
    assert "checks:FAILED" in lines[0] and "checks:passed" in lines[1]
    assert expect_ok(no_green).json()["target_number"] == 1  # #1's tests passed on its own files

    # a check speaks for the files it ran on: run now, with #2's files on disk, it cannot make #1
    # green, and it says so
    other = tb.ok("check", "--turn", "1", "--name", "no-such-command-for-takeback", "--", "true").text
    assert other == (
        "check no-such-command-for-takeback: passed (exit 0) recorded on turn #1\n"
        "  note: the files on disk were not turn #1's end state (src/app.py differs): the check does not count "
        "for #1, and no entry is green by it\n"
    )
    assert tb.json("restore", "last-green", "--dry-run")["target_number"] == 1  # as before it

    # the bug this guards against: #2 broke the tests, undo took it back, the tests pass. That
    # pass belongs to the state the undo left (#3), never to the reverted #2
    tb.ok("undo")
    assert tb.ok("check", "--name", "tests", "--", "true").text == "check tests: passed (exit 0) recorded on undo #3 (of #2)\n"
    entries = {e["number"]: e for e in tb.json("log")}
    assert (entries[2]["state"], entries[2]["checks_passed"], entries[3]["checks_passed"]) == ("reverted", False, True)
    turn(tb, {"src/app.py": "v3 broken\n"}, "three")
    text = tb.ok("restore", "last-green").text
    assert text.startswith("SAFE: restore of #3 done as #5: 1 file changed")
    assert (ws / "src/app.py").read_text() == "v1\n" and not (ws / "src/extra.py").exists()


def test_gc_applies_the_retention_policy(tb: Takeback) -> None:
    ws = tb.cwd
    write_user_config(tb.env["XDG_CONFIG_HOME"], "[retention]\nmax_entries = 1\n")
    for i in (1, 2):
        turn(tb, {"src/app.py": f"v{i}\n"}, f"turn {i}")
    data = tb.json("gc")
    assert set(data) == {"removed_entries", "removed_objects", "bytes_before", "bytes_after", "kept_entries", "dropped"}
    assert (data["removed_entries"], data["kept_entries"]) == (1, 1)
    assert [(s["first"], s["last"], s["why"]) for s in data["dropped"]] == [(1, 1, "keeping the newest entry")]
    status, log, again = tb.many(("--json", "status"), ("--json", "log"), ("gc",))
    # numbers stay stable after retention: #2 is still #2
    assert [(e["number"], e["label"]) for e in expect_ok(log).json()] == [(2, "turn 2")]
    status = expect_ok(status).json()
    assert status["retention"]["max_entries"] == 1 and status["entries"] == 1 and status["store_bytes"] > 0
    assert re.fullmatch(
        r"dropped 0 entries and \d+ objects; store \d+\.\d KiB → \d+\.\d KiB; 1 entries kept\n", expect_ok(again).text
    )


def test_store_dir_overrides(tb: Takeback, tmp_path: Path) -> None:
    ws = tb.cwd
    custom = tmp_path / "custom-store"
    env = {**tb.env, "TAKEBACK_STORE_DIR": str(custom)}
    assert tb.json("status", env=env)["store"] == str(custom)
    assert not custom.exists()  # reading makes no store ...
    tb.ok("gc", env=env)
    assert (custom / "objects.git").is_dir()  # ... the first command that writes makes it there

    # a store inside the workspace (the person's choice, for this folder) is never recorded as the
    # agent's work
    write_user_config(tb.env["XDG_CONFIG_HOME"], f'[workspaces."{ws}"]\nstore_dir = ".takeback-store"\n')
    assert tb.json("status")["store"] == str((ws / ".takeback-store").resolve())
    tb.ok("begin")
    write_files(ws, {"src/app.py": "changed\n"})
    entry = tb.json("end")
    assert [f["path"] for f in entry["files"]] == ["src/app.py"]
    assert not (Path(tb.env["TAKEBACK_HOME"]) / "stores").exists()


def test_a_check_command_that_may_not_be_run_is_recorded_as_an_error_126(tb: Takeback) -> None:
    turn(tb, {"src/app.py": "v1\n"}, "one")
    (tb.cwd / "not-executable.sh").write_text("#!/bin/sh\nexit 0\n")  # mode 644: even root may not run it
    refused = tb("check", "--", "./not-executable.sh")
    assert (refused.code, refused.err) == (12, "")
    assert refused.text == "check not-executable.sh: error (exit 126) recorded on turn #1\n"
    assert [(c["name"], c["status"], c["exit_code"]) for c in tb.json("show", "1")["checks"]] == [("not-executable.sh", "error", 126)]


def test_a_size_limit_no_store_can_meet_drops_all_but_the_newest_entry_and_stops(tb: Takeback) -> None:
    write_user_config(tb.env["XDG_CONFIG_HOME"], "[retention]\nmax_bytes = 1\n")
    for i in (1, 2, 3):
        turn(tb, {"src/app.py": f"v{i}\n"}, f"turn {i}")
    data = tb.json("gc")
    assert (data["removed_entries"], data["kept_entries"]) == (2, 1) and data["bytes_after"] > 1
    assert {s["why"] for s in data["dropped"]} == {"the store was over its size limit of 1 bytes"}
    assert [(e["number"], e["label"]) for e in tb.json("log")] == [(3, "turn 3")]
    assert tb.ok("undo").code == 0 and (tb.cwd / "src/app.py").read_text() == "v2\n"


def test_log_leaves_out_the_turns_that_changed_nothing_unless_asked(tb: Takeback) -> None:
    tb.ok("begin", "--label", "explain this function")
    tb.ok("end")
    assert tb.ok("log").text == (
        "No turn has changed a file yet (1 turn that changed no file left out: 'takeback log --all' lists them).\n")
    tb.ok("begin", "--label", "add a file")
    write_files(tb.cwd, {"a.txt": "a\n"})
    tb.ok("end")
    tb.ok("begin", "--label", "what does this do?")
    tb.ok("end")
    lines = tb.ok("log").text.splitlines()
    assert len(lines) == 2 and "add a file" in lines[0]
    assert lines[1] == "(2 turns that changed no file left out: 'takeback log --all' lists them)"
    assert [line.split()[0] for line in tb.ok("log", "--all").text.splitlines()] == ["#3", "#2", "#1"]
    assert [line.split()[0] for line in tb.ok("log", "--limit", "1").text.splitlines()] == ["#2"]
    assert [e["number"] for e in tb.json("log")] == [3, 2, 1]  # --json: every entry, for scripts
