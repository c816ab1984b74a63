"""Crash safety: a revert of ~300 files killed with SIGKILL half-way leaves, once the engine is
opened again (recovery runs on open), the workspace all-before or all-after — never a mix, never
a stray temporary file — and `status().last_recovery` says what recovery did."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import git_state, make_repo
from takeback.engine.engine import Engine

from .support import full_state, open_engine

FILES = 300
SIZE = 16 * 1024

CHILD = r"""
import sys
from takeback.engine.engine import Engine
engine = Engine(sys.argv[1])
print("ready", flush=True)
result = getattr(engine, sys.argv[2])()
print(result.verdict, result.applied, flush=True)
"""


def _content(i: int, version: int) -> bytes:
    line = f"file {i:03d} version {version} ".encode()
    return (line * (SIZE // len(line) + 1))[:SIZE] + b"\n"


def _workspace(tmp_path: Path) -> Path:
    files = {f"pkg{i % 10}/mod{i:03d}.txt": _content(i, 0) for i in range(FILES)}
    return make_repo(tmp_path / "ws", files)


def _run_child(ws: Path, op: str, journal: Path, rng: random.Random, window: float | None) -> tuple[bool, float]:
    """Run ``op`` in a child; kill it ``rng``-chosen time after its journal appears.
    Answers whether the journal existed at the moment of the kill, and how long the write took."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(ws), op],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    try:
        assert proc.stdout.readline().strip() == b"ready", proc.stderr.read().decode()
        deadline = time.monotonic() + 60
        while not journal.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.0002)
        started = time.monotonic()
        if window is None:  # calibration: let it finish
            proc.wait(timeout=120)
            assert proc.returncode == 0, proc.stderr.read().decode()
            return False, time.monotonic() - started
        time.sleep(rng.uniform(0, window))
        mid_way = journal.exists()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        return mid_way, 0.0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_sigkill_during_a_300_file_revert(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    engine = open_engine(ws)
    before = full_state(ws)
    engine.begin_turn(label="rewrite everything")
    for i in range(FILES):
        (ws / f"pkg{i % 10}/mod{i:03d}.txt").write_bytes(_content(i, 1))
    for i in range(20):
        (ws / f"new/gen{i:02d}.txt").parent.mkdir(exist_ok=True)
        (ws / f"new/gen{i:02d}.txt").write_bytes(_content(i, 2))
    entry = engine.end_turn()
    assert len(entry.files) == FILES + 20
    after = full_state(ws)
    git_before = git_state(ws)
    journal = engine.store.path / "journal.json"

    # calibration: how long the workspace writes of one undo take here
    _, took = _run_child(ws, "undo", journal, random.Random(0), None)
    assert full_state(ws) == before
    Engine(ws).redo()
    assert full_state(ws) == after

    rng = random.Random(20260)
    recovered = []
    window = took * 0.5
    for attempt in range(10):
        state = full_state(ws)
        op = "undo" if state == after else "redo"
        killed_at = time.time()
        mid_way, _ = _run_child(ws, op, journal, rng, window)
        if mid_way and not recovered:
            # what a kill between creating a temporary file and renaming it leaves (it happens
            # in a few percent of kills): recovery must remove it too
            (ws / "pkg3" / ".takeback-tmp-killedwriter").write_bytes(b"half a file")
        reopened = Engine(ws)  # recovery runs here
        now = full_state(ws)
        assert now in (before, after), f"attempt {attempt}: the workspace is a mix of before and after"
        stray = [p for p in now[0] if ".takeback-tmp" in p]
        assert not stray, stray
        assert not journal.exists()
        report = reopened.status().last_recovery
        if mid_way:
            assert reopened.last_recovery is not None, f"attempt {attempt}: killed mid-way but nothing was recovered"
            assert report is not None and report.at.timestamp() >= killed_at
            assert report.operation == op and len(report.paths) == FILES + 20
            expected = {"rolled-back": state, "rolled-forward": before if state == after else after}[report.action]
            assert now == expected, f"attempt {attempt}: {report.action} did not give the expected side"
            recovered.append(report.action)
        else:
            window /= 2  # this machine is faster than the calibration run: kill sooner
        # the timeline agrees with the files: turn #1 is applied exactly when its content is there
        assert reopened.entry("1").state == ("applied" if now == after else "reverted")
        assert git_state(ws) == git_before
        if len(recovered) >= 3:
            break
    assert recovered, "no kill landed while files were being written; make the files bigger"

    # and the engine still works afterwards
    final = Engine(ws)
    if full_state(ws) == after:
        final.undo()
        assert full_state(ws) == before
    else:
        final.redo()
        assert full_state(ws) == after


def _turn_that_removes_folder_b(tmp_path: Path):
    """Turn #1 edits a.txt and z.txt and removes b/c.txt with its folder b."""
    ws = make_repo(tmp_path / "ws", {"a.txt": "a0\n", "b/c.txt": "c0\n", "z.txt": "z0\n"})
    engine = open_engine(ws)
    engine.begin_turn()
    (ws / "a.txt").write_text("a1\n")
    (ws / "b/c.txt").unlink()
    (ws / "b").rmdir()
    (ws / "z.txt").write_text("z1\n")
    engine.end_turn()
    return ws, engine


def test_failure_half_way_rolls_back_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails after others succeeded (the disk fills up on the second file): the
    files already written are put back, nothing is recorded, the error says why."""
    import errno

    from takeback.errors import CannotWrite
    from takeback.workspace.files import Workspace

    from .support import nothing_written

    ws, engine = _turn_that_removes_folder_b(tmp_path)
    real_write = Workspace.write

    def disk_full_on_b(self: Workspace, rel: str, *args, **kwargs) -> None:  # the system edge: the disk
        if rel == "b/c.txt":
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(self, rel, *args, **kwargs)

    monkeypatch.setattr(Workspace, "write", disk_full_on_b)
    with nothing_written(engine, ws, objects=False):
        with pytest.raises(CannotWrite) as raised:
            engine.undo()
    assert raised.value.message.startswith("cannot write b/c.txt: no space left on device; nothing was written")
    assert not (engine.store.path / "journal.json").exists()
    assert engine.entry("1").state == "applied"
    monkeypatch.setattr(Workspace, "write", real_write)
    assert engine.undo().applied
    assert (ws / "a.txt").read_text() == "a0\n" and (ws / "b/c.txt").read_text() == "c0\n"


def test_a_file_where_a_folder_must_come_back_is_skipped_and_said(tmp_path: Path) -> None:
    """The person made ``b`` a file where the turn removed folder ``b``: by default the undo
    stops and writes nothing; with skip it takes back the rest, skips ``b/c.txt`` with the
    reason, and leaves the person's file alone; the dry run said exactly that."""
    ws, engine = _turn_that_removes_folder_b(tmp_path)
    (ws / "b").write_text("the person made b a file\n")
    stopped = engine.undo()
    assert (stopped.verdict, stopped.applied, [s.path for s in stopped.skipped]) == ("refused", False, ["b/c.txt"])
    for dry_run in (True, False):
        result = engine.undo(dry_run=dry_run, on_conflict="skip")
        assert result.verdict == "partial" and result.applied is not dry_run
        assert [r.path for r in result.restored] == ["a.txt", "z.txt"]
        assert [(s.path, s.reason.split(";")[0]) for s in result.skipped] == [("b/c.txt", "b is a file where a folder must be")]
    assert (ws / "b").read_text() == "the person made b a file\n"
    assert (ws / "a.txt").read_text() == "a0\n" and (ws / "z.txt").read_text() == "z0\n"


def test_a_torn_journal_is_set_aside_and_said(tmp_path: Path) -> None:
    """An empty journal (what a power cut leaves of one that was never flushed) no longer
    blocks every command: it is moved aside, kept, and ``status`` says so and what to check."""
    from takeback.core import render

    ws, engine = _turn_that_removes_folder_b(tmp_path)
    journal = engine.store.path / "journal.json"
    journal.write_bytes(b"")
    reopened = Engine(ws)
    report = reopened.status().last_recovery
    assert report is not None and report.action == "set-aside" and report.journal_kept
    assert not journal.exists() and (engine.store.path / report.journal_kept).read_bytes() == b""
    assert "could not be used" in report.problems[0] and "git status" in report.problems[0]
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        render.print_status(reopened.status())
    assert "interrupted operation set-aside" in out.getvalue() and report.journal_kept in out.getvalue()
    assert reopened.undo().applied  # every command works again
    assert (ws / "b/c.txt").read_text() == "c0\n"


def test_recovery_leaves_a_path_whose_content_it_cannot_read_and_says_why(tmp_path: Path) -> None:
    """A journal naming content the store does not hold (what a journal written before its
    objects could leave): recovery does not stop on it, leaves that file as it is, rolls the
    others, and the report says why."""
    import json
    from datetime import UTC, datetime

    from takeback.core.models import MODE_FILE

    ws, engine = _turn_that_removes_folder_b(tmp_path)
    now = {rel: (ws / rel).read_bytes() for rel in ("a.txt", "z.txt")}
    item = lambda rel, before_oid: {  # noqa: E731
        "path": rel,
        "before": {"oid": before_oid, "mode": MODE_FILE, "size": 3},
        "after": {"oid": engine.store.hash_blob(now[rel]), "mode": MODE_FILE, "size": len(now[rel])},
    }
    doc = {"entry": "01NOTINTHELOG00000000000000", "operation": "undo", "started": datetime.now(UTC).isoformat(),
           "files": [item("a.txt", "0" * 40), item("z.txt", engine.store.hash_blob(b"z0\n"))]}
    (engine.store.path / "journal.json").write_text(json.dumps(doc))
    reopened = Engine(ws)  # does not raise
    report = reopened.last_recovery
    assert report is not None and report.action == "rolled-back" and report.left == ["a.txt"]
    assert report.problems[0].startswith("a.txt left as it was: it could not be read (object 0000")
    assert (ws / "a.txt").read_bytes() == now["a.txt"] and (ws / "z.txt").read_text() == "z0\n"
    assert not (engine.store.path / "journal.json").exists()
