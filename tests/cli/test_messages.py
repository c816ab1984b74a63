"""What the person reads when something cannot be done as asked: global flags after the
command name, an empty --workspace, conflict advice that can be followed, a turn ended by undo
or a second begin, turns dropped by retention, files that cannot be written."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import write_files, write_user_config

from .conftest import Snapshot, Takeback, expect_error, expect_ok, isolated_env
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
        "where it overlaps your later edits (undoable)\n"
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
    forced = tb("undo", "--on-conflict", "force")
    assert forced.code == 10 and forced.text.startswith("PARTIAL: undo of #1 done as #2: 2 files changed (written over "), str(forced)
    assert "made.txt: forced: the file is removed, and with it what was changed in it since (+1 -1)" in forced.text
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


@pytest.fixture
def unprivileged(tmp_path: Path) -> Iterator[Takeback]:
    """A CLI runner over a plain folder, as a user the file permissions apply to: root may write
    anywhere, so when the tests run as root the CLI runs as 'nobody' (in a folder it owns)."""
    if os.geteuid() != 0:
        yield Takeback(_plain_folder(tmp_path), isolated_env(tmp_path / "env"))
        return
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: no unprivileged user to run the CLI as")
    base = Path(tempfile.mkdtemp(prefix="takeback-messages-"))  # outside root's private pytest folder
    try:
        base.chmod(0o755)
        tb = Takeback(_plain_folder(base), isolated_env(base / "env"), prefix=NOBODY)
        tb.env.pop("COVERAGE_PROCESS_CONFIG", None)  # nobody may not write root's coverage data: not measured
        subprocess.run(["chown", "-R", "65534:65534", str(base)], check=True)
        yield tb
    finally:
        shutil.rmtree(base, ignore_errors=True)


NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")


def _plain_folder(base: Path) -> Path:
    folder = base / "ws"
    write_files(folder, {"ro/a.txt": "one\n", "b.txt": "keep\n"})
    return folder


def _temporaries(root: Path) -> list[str]:
    return [str(p) for p in root.rglob(".takeback-tmp-*")]


def test_a_read_only_folder_stops_the_undo_and_skip_finishes_the_rest(unprivileged: Takeback) -> None:
    tb, ws = unprivileged, unprivileged.cwd
    turn(tb, {"ro/a.txt": "two\n", "b.txt": "agent\n", "ro/new.txt": "new\n"}, "writes into ro")
    (ws / "ro").chmod(0o555)
    try:
        reason = "permission denied: folder ro/ is read-only; make it writable and run this again"
        snap = Snapshot(tb)
        preview, stopped = tb("--json", "undo", "--dry-run"), tb("undo")
        snap.assert_unchanged()  # by default nothing is written, as for a conflict
        assert preview.code == stopped.code == 11, str(stopped)
        assert preview.json()["skipped"] == [{"path": "ro/a.txt", "reason": reason}, {"path": "ro/new.txt", "reason": reason}]
        assert stopped.text.startswith(
            "REFUSED: undo of #1 refused: cannot change ro/a.txt (permission denied: folder ro/ is read-only); "
            "ro/new.txt (permission denied: folder ro/ is read-only); nothing was written\n"
        ), stopped.text
        assert stopped.text.endswith(
            "next: nothing was written; 'takeback undo --on-conflict skip' takes back the other 1 file and leaves "
            "ro/a.txt, ro/new.txt as they are, or fix what stands in the way and run 'takeback undo' again\n"
        ), stopped.text
        done = tb("undo", "--on-conflict", "skip")  # the way out the answer gave
        assert done.code == 10 and done.err == "", str(done)
        assert f"  skipped ro/a.txt: {reason}\n" in done.text
        assert done.text.endswith(
            "next: ro/a.txt, ro/new.txt skipped: once what stands in the way is fixed, 'takeback revert 1' takes "
            "them back too; 'takeback redo' brings turn #1 back\n"
        )
        assert (ws / "b.txt").read_text() == "keep\n"
        assert (ws / "ro/a.txt").read_text() == "two\n" and (ws / "ro/new.txt").exists()
        assert _temporaries(ws) == []
    finally:
        (ws / "ro").chmod(0o755)
    expect_ok(tb("revert", "1"))  # the advice, followed
    assert (ws / "ro/a.txt").read_text() == "one\n" and not (ws / "ro/new.txt").exists()
    assert (ws / "b.txt").read_text() == "keep\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a file owned by another user (made as root)")
def test_a_file_only_its_owner_may_replace_stops_the_undo_before_any_write(unprivileged: Takeback) -> None:
    tb, ws = unprivileged, unprivileged.cwd
    shared = ws / "shared"  # like /tmp: anyone may add files, only a file's owner may replace it
    shared.mkdir()
    (shared / "a.txt").write_text("root's\n")
    os.chown(shared, 0, 0)
    shared.chmod(0o1777)
    os.chown(shared / "a.txt", 0, 0)
    tb.ok("begin")
    write_files(ws, {"b.txt": "agent\n", "shared/a.txt": "agent's\n"})  # written in place: the owner stays root
    tb.ok("end")
    snap = Snapshot(tb)
    human, as_json = tb("undo"), tb("--json", "undo")
    snap.assert_unchanged()
    reason = "permission denied: shared/a.txt belongs to another user, and only a file's owner may replace it in its folder (sticky bit)"
    assert human.code == as_json.code == 11 and human.err == "", str(human)
    assert as_json.json()["skipped"] == [{"path": "shared/a.txt", "reason": reason}]
    assert "'takeback undo --on-conflict skip' takes back the other 1 file" in human.text
    assert (ws / "b.txt").read_text() == "agent\n" and _temporaries(ws) == []
    assert [e["kind"] for e in tb.json("log")] == ["turn"] and tb.json("status")["last_recovery"] is None
    done = tb("--json", "undo", "--on-conflict", "skip")
    assert done.code == 10 and done.json()["skipped"] == [{"path": "shared/a.txt", "reason": reason}], str(done)
    assert (ws / "b.txt").read_text() == "keep\n" and (shared / "a.txt").read_text() == "agent's\n"


def test_a_turn_dropped_by_retention_is_reported_as_dropped(tb: Takeback) -> None:
    write_user_config(tb.env["XDG_CONFIG_HOME"], "[retention]\nmax_entries = 2\n")  # the person's setting
    for i in range(4):
        turn(tb, {"src/app.py": f"version {i}\n"}, f"turn {i + 1}")
    report = tb.json("gc")
    assert report["removed_entries"] == 2
    assert [(s["first"], s["last"], s["why"]) for s in report["dropped"]] == [(1, 2, "keeping the newest 2 entries")]
    turn(tb, {"src/app.py": "version 5\n"}, "turn 5")
    turn(tb, {"src/app.py": "version 6\n"}, "turn 6")
    assert tb.ok("gc").text.splitlines()[1:] == ["  dropped #3–#4: keeping the newest 2 entries"]
    snap = Snapshot(tb)
    for args in (("show", "1"), ("revert", "2"), ("--json", "diff", "#1")):
        result = expect_error(
            tb(*args), 3,
            r"^takeback: error: turn #[12] was dropped by retention on \d{4}-\d\d-\d\d \(keeping the newest 2 entries\); "
            r"the store no longer holds it$",
        )
    assert result.json()["error"] == "not-found"
    expect_error(tb("show", "9"), 3, r"no turn #9 in this workspace.s timeline")
    snap.assert_unchanged()
