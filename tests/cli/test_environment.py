"""Errors and surroundings: the documented exit statuses with one line on stderr and nothing
written; a missing workspace; a folder that is not a git repository; a busy or broken store;
and GIT_DIR inherited from a git hook, which must never lead a write into the user's repository."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from helpers import git, git_state, make_repo, tree_state, write_files, write_user_config

from .conftest import Snapshot, Takeback, expect_error, expect_ok
from .test_operations import turn


def dot_git(repo: Path) -> dict[str, bytes]:
    """Every file under .git with its bytes: stricter than git_state (objects, logs, locks)."""
    out = {}
    for folder, _dirs, files in os.walk(repo / ".git"):
        for name in files:
            path = Path(folder) / name
            out[str(path.relative_to(repo))] = path.read_bytes()
    return out


def test_errors_on_an_empty_timeline(tb: Takeback) -> None:
    # These calls also open a new store side by side (they once raced creating it).
    snap = Snapshot(tb)
    results = tb.many(
        ("undo",), ("--json", "undo"), ("redo",), ("--json", "end"), ("restore", "last-green"),
        ("show", "last"), ("revert", "1"), ("check", "--", "touch", "ran.txt"), ("log", "--limit", "0"),
        ("frobnicate",), ("--json", "undo", "--on-conflict", "never"), ("show",),
    )
    snap.assert_unchanged()
    expected = [
        (4, r"^takeback: error: nothing to undo: no applied agent turn is left on the timeline$"),
        (4, r"nothing to undo"),
        (4, r"nothing to redo: no undo, revert or restore is waiting to be re-applied"),
        (5, r"no turn is open: start one with 'takeback begin'"),
        (4, r"no applied entry has passing checks"),
        (3, r"there is no turn yet in this workspace"),
        (3, r"no turn #1 in this workspace's timeline \(it has 0 entries\)"),
        (3, r"there is no turn yet"),
        (2, r"--limit must be 1 or more"),
        (2, r"invalid choice: 'frobnicate'.*\(see 'takeback --help'\)"),
        (2, r"argument --on-conflict: invalid choice: 'never'"),
        (2, r"the following arguments are required: turn"),
    ]
    for result, (code, match) in zip(results, expected):
        expect_error(result, code, match)
    assert results[1].json() == {"error": "nothing-to-do", "message": "nothing to undo: no applied agent turn is left on the timeline"}
    assert results[3].json()["error"] == "state"
    assert results[10].json()["error"] == "usage"
    assert not (tb.cwd / "ran.txt").exists()
    human, as_json = tb.many(("log",), ("--json", "log"))
    assert expect_ok(human).text == "No turns recorded yet. Start one with 'takeback begin --label \"...\"'.\n"
    assert expect_ok(as_json).json() == []


def test_errors_that_depend_on_the_timeline(tb: Takeback) -> None:
    ws = tb.cwd
    turn(tb, {"src/app.py": "v1\n"}, "one")
    tb.ok("undo")
    tb.ok("begin", "--label", "two")
    snap = Snapshot(tb)
    reverted, not_open = tb.many(("revert", "1"), ("end", "--turn", "1"))
    snap.assert_unchanged()
    expect_error(reverted, 4, r"turn #1 is already reverted by #2; run 'takeback revert 2' to bring it back")
    expect_error(not_open, 5, r"turn 1 is not the open turn \(#3 is\)")
    assert tb.json("end", "--turn", "#3")["state"] == "applied"

    # a folder where the undo must put a file back: by default nothing is written; with skip,
    # the dry run and the run agree that the file is skipped (the folder and what is in it
    # stay); the other files are taken back
    app_before = (ws / "src/app.py").read_text()
    turn(tb, {"src/app.py": "v2\n", "src/util.py": "changed\n"}, "three", delete=("README.md",))
    (ws / "README.md").mkdir()
    (ws / "README.md" / "inside.txt").write_text("the person's\n")
    snap = Snapshot(tb)
    stopped = tb("--json", "undo")
    snap.assert_unchanged()
    assert stopped.code == 11 and [s["path"] for s in stopped.json()["skipped"]] == ["README.md"], str(stopped)
    for args in (("undo", "--dry-run", "--on-conflict", "skip"), ("undo", "--on-conflict", "skip")):
        result = tb("--json", *args)
        assert result.code == 10, str(result)  # PARTIAL
        outcome = result.json()
        assert outcome["verdict"] == "partial"
        assert [r["path"] for r in outcome["restored"]] == ["src/app.py", "src/util.py"]
        (skipped,) = outcome["skipped"]
        assert skipped["path"] == "README.md" and skipped["reason"].startswith("a folder is in the way")
        if "--dry-run" in args:
            snap.assert_unchanged()
    assert (ws / "README.md" / "inside.txt").read_text() == "the person's\n"
    assert (ws / "src/app.py").read_text() == app_before


def test_missing_workspace_and_a_file_as_workspace(tb: Takeback, tmp_path: Path) -> None:
    missing = tmp_path / "does-not-exist"
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("x\n")
    human, as_json, file_ws, begin = tb.many(
        ("--workspace", str(missing), "log"), ("--json", "-C", str(missing), "status"),
        ("--workspace", str(a_file), "status"), ("--workspace", str(missing), "begin"),
    )
    expect_error(human, 2, rf"^takeback: error: workspace {missing} is not a folder$")
    assert expect_error(as_json, 2).json()["error"] == "invalid-input"
    expect_error(file_ws, 2, r"is not a folder")
    expect_error(begin, 2, r"is not a folder")
    assert not missing.exists()
    assert not Path(tb.env["TAKEBACK_HOME"]).exists()  # no store was created for it


def test_a_folder_that_is_not_a_git_repository(plain_tb: Takeback) -> None:
    tb = plain_tb
    ws = tb.cwd
    start = tree_state(ws)
    # a prompt cut in the middle of a UTF-8 character (head -c in a hook) is still a fine label
    tb.ok("begin", "--label", os.fsdecode("plain café".encode()[:-1]))
    write_files(ws, {"notes.txt": "one\ntwo\nthree\n", "sub/new.txt": "new\n", "sub/.gitignore": "*.log\n",
                     "sub/ignored.log": "ignored\n"})
    entry = tb.json("end", "--command", os.fsdecode(b"make \xff"))
    assert (entry["label"], entry["commands"]) == ("plain caf\ufffd", ["make \ufffd"])
    assert [(f["path"], f["kind"]) for f in entry["files"]] == [
        ("notes.txt", "modified"), ("sub/.gitignore", "added"), ("sub/new.txt", "added"),
    ]
    assert entry["head"] is None
    text = tb.ok("status").text
    assert f"workspace  {ws.resolve()}  (not a git repository)" in text
    assert tb.json("status")["git_repository"] is False
    tb.ok("undo")
    assert tree_state(ws) == {**start, "sub/ignored.log": b"ignored\n"}
    assert not (ws / ".git").exists()


def test_git_dir_from_a_hook_never_reaches_the_users_repository(tb: Takeback, tmp_path: Path) -> None:
    ws = tb.cwd
    write_files(ws, {"untracked.txt": "the person's\n"})
    git(ws, "add", "README.md")  # an index that differs from HEAD
    before_git, before_dot_git = git_state(ws), dot_git(ws)
    # what git exports to a hook it runs (relative GIT_DIR, as in a pre-commit hook)
    hook_env = {**tb.env, "GIT_DIR": ".git", "GIT_INDEX_FILE": ".git/index", "GIT_WORK_TREE": str(ws),
                "GIT_PREFIX": "", "GIT_EDITOR": ":"}
    tb.ok("begin", "--label", "from a hook", env=hook_env)
    write_files(ws, {"src/app.py": "hooked\n", "src/new.py": "new\n"})
    entry = tb.json("end", env=hook_env)
    assert [f["path"] for f in entry["files"]] == ["src/app.py", "src/new.py"]
    tb.ok("undo", env=hook_env)
    tb.ok("redo", env=hook_env)
    tb.ok("check", "--", "git", "status", "--short", env=hook_env)
    tb.ok("gc", env=hook_env)
    assert git_state(ws) == before_git
    assert dot_git(ws) == before_dot_git

    # GIT_DIR naming another repository: that one is untouched, and the workspace is still scanned
    other = make_repo(tmp_path / "other")
    other_before = dot_git(other)
    decoy = {**tb.env, "GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other)}
    tb.ok("begin", env=decoy)
    write_files(ws, {"src/util.py": "changed\n"})
    assert [f["path"] for f in tb.json("end", env=decoy)["files"]] == ["src/util.py"]
    assert dot_git(other) == other_before
    assert dot_git(ws) == before_dot_git


def test_a_busy_store_and_a_broken_store(tb: Takeback, tmp_path: Path) -> None:
    write_user_config(tb.env["XDG_CONFIG_HOME"], "lock_timeout = 1.0\n")
    tb.ok("begin")  # the store is made by the first command that records
    tb.ok("end")
    store = tb.store()
    snap = Snapshot(tb)
    fd = os.open(store / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        expect_error(tb("begin"), 8, rf"the store {store} is locked by another Takeback process for more than 1 s")
    finally:
        os.close(fd)
    snap.assert_unchanged()

    not_a_folder = tmp_path / "store-is-a-file"
    not_a_folder.write_text("")
    result = tb("--json", "status", env={**tb.env, "TAKEBACK_STORE_DIR": str(not_a_folder)})
    assert expect_error(result, 7, rf"cannot open the store at {not_a_folder}").json()["error"] == "store"


def test_one_store_keeps_one_workspace(tb: Takeback, tmp_path: Path) -> None:
    """Two workspaces given the same store folder: the second is refused (an undo there would
    write the first one's changes), and the first one's history is untouched. A workspace that
    moved takes its store along."""
    shared = tmp_path / "shared-store"
    env = {**tb.env, "TAKEBACK_STORE_DIR": str(shared)}
    tb.ok("begin", "--label", "first", env=env)
    write_files(tb.cwd, {"a.txt": "a\n"})
    tb.ok("end", env=env)
    other = make_repo(tmp_path / "other")
    snap = Snapshot(tb)
    refused = tb("--json", "log", "--workspace", str(other), env=env)
    assert expect_error(refused, 7, rf"the store {shared} belongs to the workspace {tb.cwd}, not {other}").json()["error"] == "store"
    snap.assert_unchanged()
    assert [e["label"] for e in tb.json("log", env=env)] == ["first"]

    moved = tmp_path / "moved"
    tb.cwd.rename(moved)
    entries = tb.json("log", "--workspace", str(moved), env=env, cwd=tmp_path)
    assert [e["label"] for e in entries] == ["first"]
    assert tb.json("status", "--workspace", str(moved), env=env, cwd=tmp_path)["workspace"] == str(moved)
