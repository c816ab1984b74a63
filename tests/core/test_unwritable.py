"""What the planner learns from the disk before any write, for a file it could not change
(``Workspace.unwritable``): an append-only file, a folder on a tmpfs remounted read-only, a
file with another file system mounted over it. Each stops a default undo with nothing written,
and is skipped with its reason under ``skip``. Real failures, made as root."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import make_repo

from .support import nothing_written, open_engine

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("chattr") is None, reason="needs root (chattr, mount) to make a file unwritable for root"
)


def _run(*args: str) -> None:
    subprocess.run(args, check=True)


@contextlib.contextmanager
def _tmpfs(where: Path) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    _run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where))
    try:
        yield where
    finally:
        _run("umount", str(where))


def _turn(ws: Path, engine, files: dict[str, str]) -> None:  # noqa: ANN001 - the engine
    engine.begin_turn(label="agent")
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    engine.end_turn()


def _stops_then_skips(ws: Path, engine, path: str, why: str) -> None:  # noqa: ANN001
    with nothing_written(engine, ws, objects=False):
        stopped = engine.undo()
    assert (stopped.applied, stopped.verdict, stopped.restored) == (False, "refused", [])
    assert [(s.path, why in s.reason) for s in stopped.skipped] == [(path, True)], stopped.skipped
    assert "'takeback undo --on-conflict skip' takes back the other 1 file" in stopped.next_action
    done = engine.undo(on_conflict="skip")
    assert (done.applied, done.verdict, [s.path for s in done.skipped]) == (True, "partial", [path])
    assert (ws / "b.txt").read_text() == "b0\n"


def test_an_append_only_file(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"a.txt": "a0\n", "b.txt": "b0\n"})
    engine = open_engine(ws)
    _turn(ws, engine, {"a.txt": "a1\n", "b.txt": "b1\n"})
    _run("chattr", "+a", str(ws / "a.txt"))
    try:
        _stops_then_skips(ws, engine, "a.txt", "a.txt is append-only (chattr +a)")
    finally:
        _run("chattr", "-a", str(ws / "a.txt"))
    assert (ws / "a.txt").read_text() == "a1\n"


def test_a_folder_on_a_tmpfs_remounted_read_only(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"b.txt": "b0\n", "README.md": "r\n"})
    engine = open_engine(ws)
    with _tmpfs(ws / "gen"):
        _turn(ws, engine, {"gen/out.txt": "generated\n", "b.txt": "b1\n"})
        _run("mount", "-o", "remount,ro", str(ws / "gen"))
        _stops_then_skips(ws, engine, "gen/out.txt", "folder gen/ is on a read-only mount")
        assert (ws / "gen/out.txt").read_text() == "generated\n"


def test_a_file_with_another_file_system_mounted_over_it(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"a.txt": "a0\n", "b.txt": "b0\n"})
    engine = open_engine(ws)
    _turn(ws, engine, {"a.txt": "a1\n", "b.txt": "b1\n"})
    with _tmpfs(tmp_path / "elsewhere") as elsewhere:
        (elsewhere / "a.txt").write_text("a1\n")
        _run("mount", "--bind", str(elsewhere / "a.txt"), str(ws / "a.txt"))
        try:
            _stops_then_skips(ws, engine, "a.txt", "a.txt is a mount point")
        finally:
            _run("umount", str(ws / "a.txt"))
