"""Retention: gc with a small policy drops the oldest entries, keeps the numbers of the rest,
shrinks the store, and the entries left still undo exactly."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from takeback.engine.engine import Engine
from takeback.errors import NotFound

from .support import batch, full_state, open_engine


@pytest.fixture(params=["git", "plain"])
def ws_kind(request: pytest.FixtureRequest) -> str:
    return request.param


def _noise(seed: int, size: int = 40_000) -> bytes:
    return random.Random(seed).randbytes(size)  # incompressible, so the store size shows it


def _age_store(engine: Engine, seconds: float = 7200) -> None:
    """Make every stored object look ``seconds`` old (gc must not depend on objects' times)."""
    past = time.time() - seconds
    for folder, _dirs, files in os.walk(engine.store.path / "objects.git" / "objects"):
        for name in files:
            os.utime(os.path.join(folder, name), (past, past))


def _ten_turns(engine: Engine, ws: Path) -> list:
    states = [full_state(ws)]
    for i in range(10):
        batch(engine, ws, {f"data/blob{i}.bin": _noise(i), "log.txt": f"turn {i}\n"}, label=f"turn {i}")
        states.append(full_state(ws))
    return states


def test_gc_drops_old_entries_keeps_numbers_and_undo(ws: Path, ws_kind: str) -> None:
    engine = open_engine(ws, retention={"max_entries": 3, "max_age_days": 365}, git_scanner=ws_kind != "git-walk")
    states = _ten_turns(engine, ws)
    size_before = engine.status().store_bytes
    _age_store(engine)

    report = engine.gc()
    assert (report.removed_entries, report.kept_entries) == (7, 3)
    assert report.removed_objects > 0
    assert report.bytes_after < report.bytes_before
    assert report.bytes_before - report.bytes_after > 7 * 30_000  # the dropped turns' blobs are gone
    status = engine.status()
    assert status.store_bytes < size_before and status.entries == 3
    assert [e.number for e in engine.entries()] == [10, 9, 8]
    with pytest.raises(NotFound, match=r"^turn #1 was dropped by retention on \d{4}-\d\d-\d\d \(keeping the newest 3 entries\); the store no longer holds it$"):
        engine.entry("1")

    reopened = Engine(ws, engine.config)  # a fresh process reads the same shortened timeline
    assert [(e.number, e.label) for e in reopened.entries()] == [(10, "turn 9"), (9, "turn 8"), (8, "turn 7")]
    for expected in (states[9], states[8], states[7]):
        result = reopened.undo()
        assert result.applied and result.verdict == "safe"
        assert full_state(ws) == expected
    entry, _ = batch(reopened, ws, {"after-gc.txt": "new\n"})
    assert entry.number == 14
    reopened.redo()  # undoes are entries too: redo of #13 brings turn #8 back
    assert (ws / "data/blob7.bin").read_bytes() == _noise(7)


def test_gc_right_after_writing_keeps_everything_the_kept_entries_name(ws: Path) -> None:
    """gc straight after the turns were written (no object is old) keeps what is named."""
    engine = open_engine(ws, retention={"max_entries": 2})
    _ten_turns(engine, ws)
    report = engine.gc()
    assert report.removed_entries == 8
    for entry in engine.entries():  # what is kept is complete
        for change in entry.files:
            if change.after:
                assert engine.store.has(change.after.oid)


def test_gc_by_age_keeps_the_last_entry_and_the_open_turn(ws: Path) -> None:
    engine = open_engine(ws, retention={"max_age_days": 0})
    _ten_turns(engine, ws)
    engine.begin_turn(label="still open")
    (ws / "open.txt").write_text("o\n")
    report = engine.gc()
    assert report.kept_entries == 1
    (entry,) = engine.entries()
    assert entry.number == 11 and entry.state == "open"
    engine.end_turn()
    assert [f.path for f in engine.entry("11").files] == ["open.txt"]
    engine.undo()
    assert not (ws / "open.txt").exists()


def test_gc_by_bytes(ws: Path) -> None:
    engine = open_engine(ws, retention={"max_bytes": 150_000})
    _ten_turns(engine, ws)
    _age_store(engine)
    report = engine.gc()
    assert report.removed_entries >= 6
    assert engine.status().store_bytes <= 150_000 or report.kept_entries == 1
    numbers = [e.number for e in engine.entries()]
    assert numbers == list(range(10, 10 - len(numbers), -1))


def test_engine_opened_before_gc_sees_the_new_timeline(ws: Path) -> None:
    engine = open_engine(ws, retention={"max_entries": 4})
    _ten_turns(engine, ws)
    other = Engine(ws, engine.config)
    assert len(other.entries()) == 10
    engine.gc()
    assert [e.number for e in other.entries()] == [10, 9, 8, 7]
    assert other.undo().target_number == 10
    assert [e.number for e in engine.entries()] == [11, 10, 9, 8, 7]


def test_automatic_gc_keeps_the_store_bounded(ws: Path) -> None:
    engine = open_engine(ws, retention={"max_entries": 5})
    for i in range(30):
        batch(engine, ws, {"log.txt": f"turn {i}\n"})
    entries = engine.entries()
    assert len(entries) <= 5 * 1.1 + 10 + 1
    assert entries[0].number == 30
    numbers = [e.number for e in entries]
    assert numbers == sorted(numbers, reverse=True) and len(set(numbers)) == len(numbers)


def test_cached_timeline_after_gc_by_another_process(ws: Path) -> None:
    """Opening reads a cached timeline; after a gc rewrote the log the cache must not be trusted."""
    engine = open_engine(ws, retention={"max_entries": 100_000, "max_age_days": 365})
    for i in range(60):
        batch(engine, ws, {"log.txt": f"turn {i}\n"})
    Engine(ws, engine.config)  # replays 60 commits: writes the cache
    assert (engine.store.path / "timeline.json").exists()
    small = open_engine(ws, retention={"max_entries": 4})
    small.gc()
    fresh = Engine(ws, engine.config)
    assert [e.number for e in fresh.entries()] == [60, 59, 58, 57]
    assert fresh.undo().target_number == 60
    assert (ws / "log.txt").read_text() == "turn 58\n"


def test_turns_that_changed_nothing_do_not_count_toward_max_entries(ws: Path) -> None:
    """Prompts answered in words (turns that changed no file) between real turns: the policy's
    count keeps the newest three turns that changed something, and the empty ones among them."""
    engine = open_engine(ws, retention={"max_entries": 3, "max_age_days": 365})
    for i in range(4):
        batch(engine, ws, {f"f{i}.txt": f"{i}\n"}, label=f"real {i}")
        engine.begin_turn(label=f"explain {i}")
        engine.end_turn()
    numbers = {e.label: e.number for e in engine.entries()}
    report = engine.gc()
    kept = {e.label for e in engine.entries()}
    assert kept == {"real 1", "explain 1", "real 2", "explain 2", "real 3", "explain 3"}, kept
    assert [(s.first, s.last) for s in report.dropped] == [(numbers["real 0"], numbers["explain 0"])]
    assert [e.empty_turn for e in engine.entries() if e.label.startswith("explain")] == [True, True, True]
