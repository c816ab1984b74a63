"""The later notices of a revert ("turn #14 also changed src/app.py after it") are found through
the timeline's per-path index, never by walking every later checkpoint: a revert 1,000 entries
back costs what one 10 back costs (issue 18). One rule, two ways to state it: the index's answer
is what a walk of every later applied checkpoint finds, over random histories, and a revert far
back reads no later checkpoint of another file. Real git repositories in temp folders, the
in-process engine."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from helpers import make_repo
from takeback.core.models import BatchChange
from takeback.core.timeline import Timeline
from takeback.engine import narrow

from .support import open_engine

PATHS = ["a.txt", "b.txt", "sub/c.txt", "sub/d.txt", "e.txt"]


def _walked(timeline: Timeline, checkpoint_id: str, paths: set[str]) -> list[str]:
    """The later checkpoints touching ``paths``, by the walk of every later one."""
    return [cp.id for cp in timeline.checkpoints_after(checkpoint_id) if any(c.path in paths for c in cp.changes)]


@pytest.mark.parametrize("seed", range(6))
def test_the_index_finds_what_the_walk_finds(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    for n in range(30):
        touched = rng.sample(PATHS, rng.randint(1, 3))
        changes = [BatchChange(path=p, after=f"{p} {n} {rng.random()}\n".encode()) for p in touched]
        engine.apply_batch(changes, label=f"turn {n}")
        if rng.random() < 0.2:
            engine.undo()  # an operation's checkpoint, and a turn no longer applied
    timeline = engine.timeline
    for _ in range(40):
        cp_id = rng.choice(timeline.checkpoint_seq)
        paths = set(rng.sample(PATHS, rng.randint(1, 4)))
        found = [cp.id for _state, cp in narrow._touching_after(timeline, cp_id, paths)]
        assert found == _walked(timeline, cp_id, paths)
    engine.close()


def test_a_revert_far_back_reads_no_later_change_of_other_files(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    engine.apply_batch([BatchChange(path="far.txt", after=b"far\n")], label="the one")
    for n in range(60):
        engine.apply_batch([BatchChange(path=f"other{n % 7}.txt", after=f"{n}\n".encode())], label=f"turn {n}")
    engine.apply_batch([BatchChange(path="far.txt", after=b"far\nlater\n")], label="later")
    engine.close()
    engine = open_engine(ws)  # a fresh process's engine: the later entries from the log or the cache
    read: list[str] = []
    walked = type(engine.timeline).checkpoints_after

    def counting(self: Timeline, checkpoint_id: str) -> list:
        read.append(checkpoint_id)
        return walked(self, checkpoint_id)

    type(engine.timeline).checkpoints_after = counting  # type: ignore[method-assign]
    try:
        result = engine.revert("#1", dry_run=True, on_conflict="markers")
    finally:
        type(engine.timeline).checkpoints_after = walked  # type: ignore[method-assign]
    assert read == []
    assert any("#62" in notice and "far.txt" in notice for notice in result.notices), result.notices
    engine.close()
