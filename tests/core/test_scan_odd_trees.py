"""The scanner on trees out of the ordinary, through the engine's public API on real folders:
a checkout on a file system that keeps no birth times (ramfs) cannot tell whether a file shown by
dropped ignore rules is the turn's, so it leaves it out with a notice and undo keeps it; a
SHA-256 repository, which git reads but libgit2 cannot open, is walked and its turns are undone
exactly, the person's git untouched.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import git, make_repo, write_files

from .support import full_state, open_engine


@pytest.fixture
def ramfs(tmp_path: Path) -> Iterator[Path]:
    """A folder on ramfs: a file system whose files have no birth time."""
    if os.geteuid() != 0:
        pytest.skip("mounting a file system needs root")
    mnt = tmp_path / "ramfs"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "ramfs", "ramfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.parametrize("kind", ["git", "plain"])
def test_without_birth_times_files_shown_by_dropped_rules_are_left_out_and_kept(ramfs: Path, kind: str) -> None:
    files = {"README.md": "# demo\n", ".gitignore": "*.db\n"}
    if kind == "git":
        ws = make_repo(ramfs / "ws", files)
    else:
        ws = ramfs / "ws"
        write_files(ws, files)
    (ws / "local.db").write_text("the person's data\n")
    engine = open_engine(ws, git_scanner=kind == "git")
    engine.begin_turn(label="turn")
    (ws / ".gitignore").write_text("# nothing ignored\n")
    (ws / "made.txt").write_text("the agent's\n")
    entry = engine.end_turn()

    assert [f.path for f in entry.files] == [".gitignore"]
    for name in ("local.db", "made.txt"):
        assert f"{name}: ignored when the turn began and visible now; whether it existed before the turn is not known, " \
               "so it is not recorded (undo leaves it)" in entry.notices, entry.notices
    assert engine.undo().applied
    assert (ws / ".gitignore").read_text() == "*.db\n"
    assert (ws / "local.db").read_text() == "the person's data\n"
    assert (ws / "made.txt").read_text() == "the agent's\n"


def test_a_sha256_repository_is_walked_and_undone_exactly(tmp_path: Path) -> None:
    """libgit2 (pygit2) cannot open a SHA-256 repository; git can. The scanner walks the tree."""
    ws = tmp_path / "ws"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(ws))
    write_files(ws, {"README.md": "# demo\n", "src/app.py": "x = 1\n", ".gitignore": "*.log\n"})
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "first")
    (ws / "run.log").write_text("ignored\n")
    git_before = (git(ws, "status", "--porcelain", "--ignored"), git(ws, "log", "--all", "--format=%H"))

    engine = open_engine(ws)
    start = full_state(ws)
    engine.begin_turn(label="turn")
    (ws / "src/app.py").write_text("x = 2\n")
    (ws / "new.txt").write_text("new\n")
    (ws / "README.md").unlink()
    end = full_state(ws)
    entry = engine.end_turn()

    assert {f.path: f.kind for f in entry.files} == {"src/app.py": "modified", "new.txt": "added", "README.md": "deleted"}
    result = engine.undo()
    assert result.applied and result.verdict == "safe", result
    assert full_state(ws) == start
    assert (git(ws, "status", "--porcelain", "--ignored"), git(ws, "log", "--all", "--format=%H")) == git_before
    assert engine.redo().applied
    assert full_state(ws) == end
