"""Two processes recording into the same workspace at once (a CLI call while the server runs):
no checkpoint is lost, numbers stay unique, and the store stays readable."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pygit2

from helpers import git_state, make_repo
from takeback.engine.engine import Engine

CHILD = r"""
import os, sys, time
from pathlib import Path
from takeback.engine.engine import Engine
from takeback.core.models import BatchChange
ws, tag, count, mode, go = sys.argv[1:6]
engine = Engine(ws)
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(int(count)):
    path = f"{tag}/{i:02d}.txt"
    content = f"{tag} {i}\n".encode()
    if mode == "batch":
        engine.record_batch([BatchChange(path=path, after=content, before=None)], label=f"{tag}-{i}")
    else:
        engine.begin_turn(label=f"{tag}-{i}")
        target = Path(ws) / path
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(content)
        engine.end_turn()
print("done", flush=True)
"""


def _race(ws: Path, tmp_path: Path, jobs: list[tuple[str, int, str]]) -> None:
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(ws), tag, str(n), mode, str(go)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for tag, n, mode in jobs
    ]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == b"ready", proc.stderr.read().decode()
        go.write_text("go")
        for proc in procs:
            out, err = proc.communicate(timeout=240)
            assert proc.returncode == 0, err.decode()
            assert out.strip() == b"done"
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _store_readable(engine: Engine) -> None:
    repo = pygit2.Repository(str(engine.store.path / "objects.git"))
    count = 0
    for oid in repo.odb:
        repo.odb.read(oid)
        count += 1
    assert count > 0
    fsck = subprocess.run(
        ["git", "--git-dir", str(engine.store.path / "objects.git"), "fsck", "--strict", "--no-dangling"],
        capture_output=True, env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    )
    assert fsck.returncode == 0, fsck.stderr.decode()


def test_two_processes_record_batches_at_once(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    Engine(ws)  # create the store before the race
    state = git_state(ws)
    started = time.monotonic()
    _race(ws, tmp_path, [("alpha", 30, "batch"), ("beta", 30, "batch")])
    engine = Engine(ws)
    entries = engine.entries()
    assert sorted(e.number for e in entries) == list(range(1, 61))
    recorded = sorted(f.path for e in entries for f in e.files)
    expected = sorted(f"{tag}/{i:02d}.txt" for tag in ("alpha", "beta") for i in range(30))
    assert recorded == expected
    for tag in ("alpha", "beta"):
        mine = [e for e in reversed(entries) if e.label.startswith(tag)]
        assert [e.label for e in mine] == [f"{tag}-{i}" for i in range(30)]  # each writer's order kept
    for entry in entries:
        assert engine.file_at(entry.id, entry.files[0].path) == f"{entry.label.replace('-', ' ')}\n".encode()
    _store_readable(engine)
    assert git_state(ws) == state
    assert time.monotonic() - started < 120


def test_batches_while_another_process_brackets_turns(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    Engine(ws)
    _race(ws, tmp_path, [("edits", 30, "batch"), ("shell", 15, "bracket")])
    engine = Engine(ws)
    entries = engine.entries()
    assert sorted(e.number for e in entries) == list(range(1, len(entries) + 1))
    assert all(e.state == "applied" for e in entries) and engine.status().open_turn is None
    checkpoint_paths = sorted(p for e in entries for cp in e.checkpoints for p in cp.paths)
    # every batch is a checkpoint somewhere (alone, or inside the bracket turn open at the time)
    assert [p for p in checkpoint_paths if p.startswith("edits/")] == [f"edits/{i:02d}.txt" for i in range(30)]
    shell = sorted(f.path for e in entries for f in e.files if f.path.startswith("shell/"))
    assert shell == [f"shell/{i:02d}.txt" for i in range(15)]
    _store_readable(engine)
