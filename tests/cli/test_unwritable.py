"""An undo that finds a file it cannot write does what a conflict does: by default nothing is
written and the answer names the file, the reason and the way out; ``--on-conflict skip`` takes
back the rest and lists the file as skipped with its reason. Seen before any write (an
immutable file, a read-only mount over a folder or over the file itself); a write that fails
anyway half-way (a mount point the planner cannot tell) is rolled back.

Real failures, as root (permission bits do not stop root): ``chattr +i`` and read-only bind
mounts, through the real CLI process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import Snapshot, Takeback, expect_error, expect_ok
from .test_operations import turn

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("chattr") is None, reason="needs root (chattr, mount) to make a file unwritable for root"
)

APP, UTIL = "def main():\n    return 1\n", "def helper(x):\n    return x * 2\n"
AGENT = {"src/app.py": "def main():\n    return 2\n", "src/util.py": "def helper(x):\n    return x * 3\n", "README.md": "# agent\n"}


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[None]:
    subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@contextlib.contextmanager
def mounted(source: Path, target: Path, read_only: bool) -> Iterator[None]:
    """``source`` bind-mounted over ``target`` (a folder or a file), read-only if asked."""
    subprocess.run(["mount", "--bind", *(["-o", "ro"] if read_only else []), str(source), str(target)], check=True)
    try:
        yield
    finally:
        subprocess.run(["umount", str(target)], check=True)


def _stopped(tb: Takeback, path: str, reason: str) -> None:
    """The default undo (and its dry run) writes nothing, names the file, why, and the way out."""
    snap = Snapshot(tb)
    human, as_json, dry = tb("undo"), tb("--json", "undo"), tb("--json", "undo", "--dry-run")
    snap.assert_unchanged()
    assert human.code == as_json.code == dry.code == 11, str(human)  # REFUSED: nothing was written
    assert human.text.startswith(f"REFUSED: undo of #1 refused: cannot change {path} ({reason.split('; ')[0]}); nothing was written\n"), human.text
    assert f"  skipped {path}: {reason}\n" in human.text
    assert human.text.endswith(
        f"next: nothing was written; 'takeback undo --on-conflict skip' takes back the other 2 files and leaves {path} "
        "as it is, or fix what stands in the way and run 'takeback undo' again\n"
    ), human.text
    for data in (as_json.json(), dry.json()):
        assert (data["applied"], data["verdict"], data["restored"]) == (False, "refused", [])
        assert data["skipped"] == [{"path": path, "reason": reason}]


def _skipped(tb: Takeback, path: str, reason: str) -> None:
    """``--on-conflict skip`` takes back the other files and lists this one with its reason."""
    done = tb("--json", "undo", "--on-conflict", "skip")
    assert done.code == 10, str(done)  # PARTIAL
    data = done.json()
    assert data["applied"] is True and data["skipped"] == [{"path": path, "reason": reason}]
    assert sorted(r["path"] for r in data["restored"]) == sorted(set(AGENT) - {path})
    assert f"{path} skipped: once what stands in the way is fixed, 'takeback revert 1' takes them back too" in data["next_action"]


def test_an_immutable_file_stops_the_undo_and_skip_takes_back_the_rest(tb: Takeback) -> None:
    ws = tb.cwd
    turn(tb, AGENT, "agent")
    reason = "permission denied: src/app.py is immutable (chattr +i); 'chattr -i' it and run this again"
    with immutable(ws / "src/app.py"):
        _stopped(tb, "src/app.py", reason)
        _skipped(tb, "src/app.py", reason)
        assert (ws / "src/app.py").read_text() == AGENT["src/app.py"]
    assert (ws / "src/util.py").read_text() == UTIL and (ws / "README.md").read_text() == "# demo\n"
    expect_ok(tb("revert", "1"))  # the way out the answer gave, once the file can be written
    assert (ws / "src/app.py").read_text() == APP


def test_a_folder_on_a_read_only_mount_stops_the_undo(tb: Takeback) -> None:
    ws = tb.cwd
    turn(tb, {"src/app.py": AGENT["src/app.py"], "src/new.py": "NEW = 1\n", "README.md": "# agent\n"}, "agent")
    reason = "permission denied: folder src/ is on a read-only mount; remount it read-write and run this again"
    with mounted(ws / "src", ws / "src", read_only=True):
        snap = Snapshot(tb)
        stopped = tb("--json", "undo")
        snap.assert_unchanged()
        assert stopped.code == 11 and stopped.json()["skipped"] == [
            {"path": "src/app.py", "reason": reason}, {"path": "src/new.py", "reason": reason},
        ]
        assert "'takeback undo --on-conflict skip' takes back the other 1 file" in stopped.json()["next_action"]
        done = tb("--json", "undo", "--on-conflict", "skip")
        assert done.code == 10 and [r["path"] for r in done.json()["restored"]] == ["README.md"]
    assert (ws / "README.md").read_text() == "# demo\n" and (ws / "src/new.py").exists()


def test_a_file_replaced_by_a_read_only_mount_stops_the_undo(tb: Takeback, tmp_path: Path) -> None:
    ws = tb.cwd
    turn(tb, AGENT, "agent")
    other = tmp_path / "other.py"
    other.write_text(AGENT["src/util.py"])  # what the person sees there: the agent's content
    reason = "permission denied: src/util.py is on a read-only mount; remount it read-write (or unmount it) and run this again"
    with mounted(other, ws / "src/util.py", read_only=True):
        _stopped(tb, "src/util.py", reason)
        _skipped(tb, "src/util.py", reason)
    assert (ws / "src/app.py").read_text() == APP and other.read_text() == AGENT["src/util.py"]


def test_a_write_that_fails_half_way_is_rolled_back_and_named(tb: Takeback, tmp_path: Path) -> None:
    """A file with a file system mounted over it from the same disk looks writable; its rename
    fails only when tried, after src/app.py was written: that write is put back."""
    ws = tb.cwd
    turn(tb, AGENT, "agent")
    other = tmp_path / "other.py"
    other.write_text(AGENT["src/util.py"])
    with mounted(other, ws / "src/util.py", read_only=False):
        snap = Snapshot(tb)
        assert tb("--json", "undo", "--dry-run").code == 0  # nothing the planner can see stands in the way
        failed = tb("undo")
        snap.assert_unchanged()
        expect_error(
            failed, 9,
            r"^takeback: error: cannot write src/util\.py: device or resource busy; nothing was written "
            r"\(files already written were put back\)$",
        )
        assert list(ws.rglob(".takeback-tmp-*")) == []
    assert (ws / "src/app.py").read_text() == AGENT["src/app.py"]  # written first, then put back
    assert [e["kind"] for e in tb.json("log")] == ["turn"] and tb.json("status")["last_recovery"] is None
