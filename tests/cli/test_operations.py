"""undo, redo, revert and restore from the command line: dry runs that write nothing and show
the patch, every --on-conflict way out, exit codes by verdict, and the user's git state left
alone throughout."""

from __future__ import annotations

import os
import re
import time

import pytest

from helpers import git_state, tree_state, write_files
from takeback.workspace.birth import born_ns

from .conftest import Snapshot, Takeback, expect_error, expect_ok

RESULT_FIELDS = {
    "operation", "verdict", "applied", "dry_run", "on_conflict", "target", "target_number", "entry",
    "restored", "skipped", "conflicts", "next_action", "next", "message", "notices", "patch",
}
LINES = "".join(f"line {i}\n" for i in range(1, 21))


def turn(tb: Takeback, files: dict[str, str | bytes], label: str, delete: tuple[str, ...] = ()) -> None:
    """One bracketed agent turn that writes ``files`` and deletes ``delete``."""
    tb.ok("begin", "--label", label)
    write_files(tb.cwd, files)
    for rel in delete:
        (tb.cwd / rel).unlink()
    tb.ok("end")


def test_undo_and_redo_round_trip(tb: Takeback) -> None:
    ws = tb.cwd
    git_before = git_state(ws)
    start = tree_state(ws)
    tb.ok("begin", "--label", "agent work")
    write_files(ws, {"src/app.py": "def main():\n    return 2\n", "src/new.py": "NEW = 1\n", "logo.bin": b"\x00\x01\xff"})
    (ws / "src/new.py").chmod(0o755)
    (ws / "src/util.py").unlink()
    tb.ok("end")
    after_turn = tree_state(ws)
    write_files(ws, {"README.md": "# demo\nthe person's line\n", "notes.txt": "untracked, the person's\n"})
    person = {"README.md": (ws / "README.md").read_bytes(), "notes.txt": (ws / "notes.txt").read_bytes()}

    snap = Snapshot(tb)
    human, as_json, summary, stat = tb.many(("undo", "--dry-run", "--patch"), ("--json", "undo", "--dry-run"),
                                            ("undo", "--dry-run"), ("undo", "--dry-run", "--stat"))
    snap.assert_unchanged()
    # by default a summary: each file with its +/- lines, no diff
    short = expect_ok(summary).text
    assert short.startswith("SAFE: dry run: undo of #1 would change 4 files\n") and "diff --git" not in short
    assert "  write   src/app.py  +1 -1\n" in short
    assert re.search(r"^ src/app.py +\| +2 \+-$", expect_ok(stat).text, re.M) and " 4 files changed, 3 insertions(+), 2 deletions(-)\n" in stat.text
    text = expect_ok(human).text
    assert text.startswith("SAFE: dry run: undo of #1 would change 4 files\n")
    assert "diff --git a/src/app.py b/src/app.py" in text and "-    return 2\n+    return 1\n" in text
    assert "diff --git a/src/util.py b/src/util.py\nnew file mode 100644" in text
    assert "Binary file logo.bin would change" in text
    assert text.endswith("next: run it without --dry-run to carry it out\n")
    data = expect_ok(as_json).json()
    assert set(data) == RESULT_FIELDS
    assert (data["operation"], data["verdict"], data["applied"], data["dry_run"], data["entry"]) == ("undo", "safe", False, True, None)
    assert data["target_number"] == 1 and data["patch"] in text
    assert {o["path"]: o["action"] for o in data["restored"]} == {
        "logo.bin": "delete", "src/app.py": "write", "src/new.py": "delete", "src/util.py": "create",
    }

    text = tb.ok("undo").text
    assert text.splitlines()[0] == "SAFE: undo of #1 done as #2: 4 files changed"
    assert re.search(r"^  create  src/util\.py  \+2 -0$", text, re.M)
    assert text.endswith("next: 'takeback redo' brings turn #1 back\n")
    assert tree_state(ws) == {**start, **person}

    data = tb.json("redo")
    assert (data["operation"], data["verdict"], data["applied"], data["target_number"]) == ("redo", "safe", True, 2)
    assert data["entry"]["number"] == 3 and data["entry"]["kind"] == "redo"
    assert data["next_action"] == "'takeback undo' takes turn #1 away again"
    assert tree_state(ws) == {**after_turn, **person}
    assert os.access(ws / "src/new.py", os.X_OK)  # the executable bit comes back too

    tb.ok("undo")
    assert tree_state(ws) == {**start, **person}
    snap = Snapshot(tb)
    expect_error(tb("undo"), 4, r"nothing to undo: no applied agent turn is left on the timeline")
    snap.assert_unchanged()
    log = tb.ok("log").text.splitlines()
    assert [line[:28] for line in log] == [
        "  #4    undo    applied     ", "  #3    redo    applied     ", "↶ #2    undo    reverted    ",
        "↶ #1    turn    reverted    ",
    ]
    assert git_state(ws) == git_before


def test_revert_a_middle_turn_keeps_later_edits(tb: Takeback) -> None:
    ws = tb.cwd
    write_files(ws, {"big.txt": LINES})
    git_before = git_state(ws)
    turn(tb, {"big.txt": LINES.replace("line 2\n", "line 2 by turn 1\n")}, "one")
    turn(tb, {"big.txt": (ws / "big.txt").read_text().replace("line 10\n", "line 10 by turn 2\n"),
              "added.txt": "from turn 2\n"}, "two")
    turn(tb, {"big.txt": (ws / "big.txt").read_text().replace("line 19\n", "line 19 by turn 3\n")}, "three")
    write_files(ws, {"big.txt": (ws / "big.txt").read_text().replace("line 15\n", "line 15 by the person\n")})
    with_everything = tree_state(ws)

    result = tb.ok("revert", "#2")
    lines = result.text.splitlines()
    assert lines[0] == "SAFE: revert of #2 done as #4: 2 files changed"
    assert sorted(lines[1:3]) == ["  delete  added.txt  +0 -1", "  write   big.txt  +1 -1 (merged with later edits)"]
    big = (ws / "big.txt").read_text()
    assert "line 10\n" in big and "by turn 2" not in big
    for kept in ("line 2 by turn 1", "line 19 by turn 3", "line 15 by the person"):
        assert kept in big
    assert not (ws / "added.txt").exists()
    assert result.text.endswith("next: 'takeback revert 4' takes this revert back\n")

    states = {e["number"]: e["state"] for e in tb.json("log")}
    assert states == {1: "applied", 2: "reverted", 3: "applied", 4: "applied"}
    tb.ok("revert", "4")  # every operation can itself be undone
    assert tree_state(ws) == with_everything
    assert git_state(ws) == git_before


def test_undo_removes_the_emptied_folder_a_turn_made_in_a_files_place(tb: Takeback) -> None:
    """The agent turns the tracked src/util.py into a folder, writes into it and empties it
    again: undo removes the empty folder and writes the file back (SAFE); redo deletes it again."""
    ws = tb.cwd
    git_before = git_state(ws)
    start = tree_state(ws)
    tb.ok("begin", "--label", "file to folder, emptied")
    time.sleep(0.03)  # the file system's clock is coarse: a folder made within a tick of begin is the person's
    (ws / "src/util.py").unlink()
    write_files(ws, {"src/util.py/deep/tmp.py": "scratch\n"})
    (ws / "src/util.py/deep/tmp.py").unlink()
    tb.ok("end")
    result = tb("--json", "undo")
    if born_ns(ws) is None:  # the folder's birth is unknown: it stays, and the file is skipped
        assert result.json()["verdict"] == "partial" and (ws / "src/util.py").is_dir()
        return
    data = expect_ok(result).json()
    assert data["verdict"] == "safe" and data["skipped"] == [], data
    assert [(o["path"], o["action"]) for o in data["restored"]] == [("src/util.py", "create")]
    assert tree_state(ws) == start and (ws / "src/util.py").is_file()
    data = tb.json("redo")
    assert data["verdict"] == "safe" and not (ws / "src/util.py").exists()
    assert tb.json("undo")["verdict"] == "safe" and tree_state(ws) == start
    assert git_state(ws) == git_before


def test_each_way_out_of_a_conflict(tb: Takeback) -> None:
    ws = tb.cwd
    git_before = git_state(ws)
    turn(tb, {"src/app.py": "def main():\n    return 2\n", "src/util.py": "def helper(x):\n    return x * 3\n"}, "agent")
    write_files(ws, {"src/app.py": "def main():\n    return 42  # the person's\n"})
    person = tree_state(ws)

    # abort (the default): nothing written, exit 11, every way out named
    snap = Snapshot(tb)
    human, as_json, dry_markers = tb.many(
        ("revert", "1"), ("--json", "revert", "1", "--on-conflict", "abort"),
        ("revert", "1", "--on-conflict", "markers", "--dry-run", "--patch"),
    )
    snap.assert_unchanged()
    assert human.code == 11 and human.err == ""
    lines = human.text.splitlines()
    assert lines[0] == "REFUSED: revert of #1 refused: 1 file changed since in ways that overlap; nothing was written"
    assert lines[1] == "  conflict src/app.py: overlapping edits in 1 place"
    for way in ("--on-conflict skip", "--on-conflict markers", "--on-conflict force"):
        assert way in lines[-1]
    data = as_json.json()
    assert as_json.code == 11 and set(data) == RESULT_FIELDS
    assert (data["verdict"], data["applied"], data["restored"]) == ("refused", False, [])
    assert [(c["path"], c["markers_written"]) for c in data["conflicts"]] == [("src/app.py", False)]
    # a dry run with markers shows the markers it would write, and writes nothing (exit 10: partial)
    assert dry_markers.code == 10
    assert "+<<<<<<< current\n" in dry_markers.text and "+>>>>>>> before #1\n" in dry_markers.text

    # skip: only the clean file is reverted; exit 10 (partial)
    skipped = tb("revert", "1", "--on-conflict", "skip")
    assert skipped.code == 10 and skipped.text.startswith("PARTIAL: revert of #1 done as #2: 1 file changed")
    assert (ws / "src/util.py").read_text() == "def helper(x):\n    return x * 2\n"
    assert (ws / "src/app.py").read_bytes() == person["src/app.py"]
    tb.ok("revert", "2")
    assert tree_state(ws) == person

    # markers: both sides written into the file for the person to resolve; exit 10
    marked = tb("--json", "revert", "1", "--on-conflict", "markers")
    data = marked.json()
    assert marked.code == 10 and (data["verdict"], data["applied"], data["entry"]["number"]) == ("partial", True, 4)
    app = (ws / "src/app.py").read_text()
    assert "<<<<<<< current\n" in app and "return 42  # the person's" in app and ">>>>>>> before #1\n" in app
    assert data["next_action"].startswith("resolve the conflict markers in src/app.py")
    tb.ok("revert", "4")
    assert tree_state(ws) == person

    # force: the turn's starting content over the person's edit, PARTIAL (exit 10: it wrote over
    # a later edit, and says which), and undoable
    forcing = tb("revert", "1", "--on-conflict", "force")
    forced = forcing.text
    assert forcing.code == 10 and forced.splitlines()[0].startswith("PARTIAL: ")
    assert "written over later edits in src/app.py" in forced.splitlines()[0]
    assert "your whole version is in this operation's checkpoint" in forced
    assert (ws / "src/app.py").read_text() == "def main():\n    return 1\n"
    assert (ws / "src/util.py").read_text() == "def helper(x):\n    return x * 2\n"
    tb.ok("revert", "6")
    assert tree_state(ws) == person
    assert git_state(ws) == git_before


def test_operations_while_a_turn_is_open(tb: Takeback) -> None:
    ws = tb.cwd
    turn(tb, {"one.txt": "one\n"}, "one")
    tb.ok("begin", "--label", "two")
    write_files(ws, {"two.txt": "two\n"})
    # the preview shows what undo will do (take back the open turn) and records nothing
    snap = Snapshot(tb)
    preview = tb.json("undo", "--dry-run")
    snap.assert_unchanged()
    assert preview["target_number"] == 2 and preview["restored"] == [
        {"path": "two.txt", "action": "delete", "additions": 0, "deletions": 1, "merged": False, "renamed_from": None}
    ]
    assert tb.json("revert", "2", "--dry-run")["restored"] == preview["restored"]
    assert tb.json("status")["open_turn"]["number"] == 2
    # undo ends the open turn and takes back that turn, not the one before
    data = tb.json("undo")
    assert data["target_number"] == 2
    assert (ws / "one.txt").exists() and not (ws / "two.txt").exists()
    assert tb.json("status")["undo_target"] == 1

    # a revert made while the agent's turn is open is not recorded as the agent's work
    tb.ok("begin", "--label", "four")
    write_files(ws, {"four.txt": "four\n"})
    tb.ok("revert", "1")
    assert not (ws / "one.txt").exists()
    assert [f["path"] for f in tb.json("show", "4")["files"]] == ["four.txt"]
    expect_error(tb("end"), 5, "no turn is open")


def test_restore_checkpoints(tb: Takeback) -> None:
    ws = tb.cwd
    start = tree_state(ws)
    turn(tb, {"src/app.py": "v1\n"}, "one")
    turn(tb, {"src/app.py": "v2\n", "extra.txt": "two\n"}, "two")
    turn(tb, {"src/app.py": "v3\n"}, "three")
    entries = {e["number"]: e for e in tb.json("log")}
    cp1 = entries[1]["checkpoints"][0]["id"]

    snap = Snapshot(tb)
    by_id, by_prefix, by_turn = tb.many(
        ("--json", "restore", cp1, "--dry-run"), ("--json", "restore", cp1[:-4].lower(), "--dry-run"),
        ("--json", "restore", "#1", "--dry-run"),
    )
    snap.assert_unchanged()
    expected = expect_ok(by_id).json()
    assert (expected["operation"], expected["dry_run"], expected["target_number"]) == ("restore", True, 1)
    assert {o["path"]: o["action"] for o in expected["restored"]} == {"src/app.py": "write", "extra.txt": "delete"}
    assert "-v3\n+v1\n" in expected["patch"]
    for other in (by_prefix, by_turn):
        assert expect_ok(other).json() == expected

    text = tb.ok("restore", "#1.1").text
    assert text.startswith("SAFE: restore of #1 done as #4: 2 files changed\n")
    assert (ws / "src/app.py").read_text() == "v1\n" and not (ws / "extra.txt").exists()
    log = tb.json("log")
    states = {e["number"]: e["state"] for e in log}
    assert states == {1: "applied", 2: "reverted", 3: "reverted", 4: "applied"}
    assert log[0]["label"] == "restore to checkpoint 1.1 of turn #1"  # the number the person types, not an id
    tb.ok("redo")
    assert (ws / "src/app.py").read_text() == "v3\n" and (ws / "extra.txt").read_text() == "two\n"
    assert set(tree_state(ws)) == set(start) | {"extra.txt"}
    expect_error(tb("restore", "#5"), 4, r"nothing to restore: no change was recorded after checkpoint")
    expect_error(tb("restore", "1.5"), 3, r"turn #1 has 1 checkpoints, not 5")


@pytest.mark.parametrize("kind", ["git", "plain"])
def test_a_file_set_aside_is_named_by_end_show_and_json(kind: str, tb: Takeback, plain_tb: Takeback) -> None:
    """A name that is not valid UTF-8, a FIFO where a file was: the turn ends (exit 0), each is
    a note."""
    runner = tb if kind == "git" else plain_tb
    victim = "README.md" if kind == "git" else "notes.txt"  # committed / there before
    runner.ok("begin", "--label", "odd files")
    (runner.cwd / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"odd name\n")
    (runner.cwd / victim).unlink()
    os.mkfifo(runner.cwd / victim)
    (runner.cwd / "ok.txt").write_text("recorded\n")
    ended = runner.ok("end")
    expected = [
        "caf\\xe9.txt: not recorded, its name is not valid UTF-8 (rename it to have it recorded)",
        f"{victim}: not recorded, it is a FIFO, not a file",
    ]
    for note in expected:
        assert f"note   {note}" in ended.text
        assert f"note   {note}" in runner.ok("show", "last").text
    shown = runner.json("show", "last")
    assert sorted(shown["notices"]) == sorted(expected)
    assert [f["path"] for f in shown["files"]] == ["ok.txt"]
    runner.ok("begin")
    runner.ok("end")
    runner.ok("undo")


def test_an_undo_of_a_rename_reads_as_a_rename(tb: Takeback) -> None:
    turn(tb, {"src/old_name.py": "def f():\n    return 1\n"}, "add")
    turn(tb, {"src/new_name.py": "def f():\n    return 1\n"}, "rename", delete=("src/old_name.py",))
    assert "renamed" in tb.ok("show", "2").text
    preview = tb.ok("undo", "--dry-run").text
    assert "  rename  src/new_name.py → src/old_name.py  +0 -0\n" in preview, preview
    assert "delete  src/new_name.py" not in preview  # the rename's line says it
    data = tb.json("undo")
    assert {(o["path"], o["action"], o["renamed_from"]) for o in data["restored"]} == {
        ("src/old_name.py", "create", "src/new_name.py"), ("src/new_name.py", "delete", None)}
    assert (tb.cwd / "src/old_name.py").exists() and not (tb.cwd / "src/new_name.py").exists()
