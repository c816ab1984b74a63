"""Verify after apply: an operation reads back every file it wrote, created or deleted before it
is recorded, and when another program wrote to one of them in between, it puts its own writes
back through the journal, keeps the other program's bytes, records nothing and says so.

The other program is a real process, started at the one moment it can slip in: when the
operation flushes the workspace's folder, after every file is written and before the read-back
(``os.fsync`` of that folder is the hook, a system edge as in test_journal_faults.py).
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import make_repo, write_files
from takeback.errors import ChangedMeanwhile, StaleContent

from .support import open_engine

FIRST = {"a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c0\n"}
TURNED = {"a.txt": "a turned\n", "b.txt": "b turned\n", "c.txt": "c turned\n", "new/d.txt": "d made\n"}
OTHER = b"another program's bytes\n"
WRITER = "import os, sys; os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True); open(sys.argv[1], 'wb').write(sys.argv[2].encode())"


def _files(ws: Path) -> dict[str, str | None]:
    return {name: (ws / name).read_text() if (ws / name).exists() else None for name in TURNED}


@contextlib.contextmanager
def another_program(monkeypatch: pytest.MonkeyPatch, ws: Path, rel: str) -> Iterator[list[str]]:
    """When the operation first flushes the workspace's folder (its files all written), another
    process writes ``OTHER`` to ``rel``; the list it yields says it did (the hook ran)."""
    real = os.fsync
    done: list[str] = []

    def fsync(fd: int) -> None:
        real(fd)
        if not done and stat.S_ISDIR(os.fstat(fd).st_mode) and os.readlink(f"/proc/self/fd/{fd}") == str(ws):
            done.append(rel)
            subprocess.run([sys.executable, "-c", WRITER, str(ws / rel), OTHER.decode()], check=True)

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", fsync)
        yield done


def _turned(tmp_path: Path):  # type: ignore[no-untyped-def]
    ws = make_repo(tmp_path / "ws", dict(FIRST))
    engine = open_engine(ws)
    engine.begin_turn(label="agent")
    write_files(ws, TURNED)
    engine.end_turn()
    return ws, engine


def test_a_file_written_by_another_program_during_an_undo_is_kept_and_the_rest_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, engine = _turned(tmp_path)
    with another_program(monkeypatch, ws, "b.txt") as done, pytest.raises(ChangedMeanwhile) as stopped:
        engine.undo()
    assert done == ["b.txt"]
    error = stopped.value
    assert isinstance(error, StaleContent) and error.code == "changed-meanwhile" and error.exit_status == 6
    assert error.rpc_code == -32006
    assert error.message == (
        "undo stopped: another program wrote to b.txt while the undo was writing (the disk did not hold what it "
        "wrote); the files it wrote were put back and nothing was recorded; run it again once the other program is "
        "done; b.txt was left as another program made it (not put back: it holds neither side)"
    )
    assert _files(ws) == {**TURNED, "b.txt": OTHER.decode()}  # the undo's other writes put back, the other bytes kept
    assert not (engine.store.path / "journal.json").exists() and not list(ws.rglob(".takeback-tmp-*"))
    assert [e.kind for e in engine.entries()] == ["turn"]  # nothing recorded
    assert open_engine(ws).last_recovery is None  # nothing left for the next open to do


def test_a_file_an_undo_deleted_that_another_program_made_again_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The undo deletes new/d.txt (the turn made it); another program writes it again before the
    read-back: absent was planned, so the undo stops, and the file and its folder stay."""
    ws, engine = _turned(tmp_path)
    with another_program(monkeypatch, ws, "new/d.txt") as done, pytest.raises(ChangedMeanwhile) as stopped:
        engine.undo()
    assert done and "another program wrote to new/d.txt while" in stopped.value.message
    assert stopped.value.message.endswith("; new/d.txt was left as another program made it (not put back: it holds neither side)")
    assert _files(ws) == {**TURNED, "new/d.txt": OTHER.decode()}
    assert [e.kind for e in engine.entries()] == ["turn"]


def test_an_undo_no_one_disturbs_reads_back_and_is_recorded(tmp_path: Path) -> None:
    ws, engine = _turned(tmp_path)
    result = engine.undo()
    assert result.applied and result.verdict == "safe"
    assert _files(ws) == {**FIRST, "new/d.txt": None} and not (ws / "new").exists()
    assert [e.kind for e in engine.entries()] == ["undo", "turn"]  # newest first
