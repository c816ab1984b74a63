"""The timeline keeps its newest operation (``Entries.newest_operation``) instead of walking every
entry back to it, which made ``unsaved`` (asked by every operation) cost more the longer the
history since the last operation (issue 18). One rule, two ways to state it: over random
timelines (turns, undo and redo, some of them through an editor, reverts, retention drops, the
cache saved and the store opened again between any two steps), the kept answer is what the walk
of ``newest_first`` finds, on the engine that did it all and on one opened from its pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import make_repo
from takeback.core.merge import Version
from takeback.core.timeline import FoldedEntry, Timeline
from takeback.engine.engine import Engine

from .support import open_engine
from .test_timeline_pages import BIG, STEP, _step, _try, _turn, small_pages  # noqa: F401  (the fixture)


def walked(timeline: Timeline, mark: str) -> tuple[FoldedEntry | None, list[FoldedEntry]]:
    """The newest operation done and the entries after it, by the walk of every entry."""
    newer: list[FoldedEntry] = []
    for state in timeline.newest_first(mark):
        if state.begun.kind != "turn" and state.operation is not None:
            return state, newer[::-1]
        newer.append(state)
    return None, []


def _ids(found: tuple[FoldedEntry | None, list[FoldedEntry]]) -> tuple[str | None, list[str]]:
    op, after = found
    return (op.begun.entry if op else None), [s.begun.entry for s in after]


def _through_editor(engine: Engine, ws: Path, undo: bool) -> None:
    """An undo or redo whose files are open in an editor, which takes them (their disk kept)."""
    overlay = {str(p): Version(p.read_bytes(), 0o100644) for p in ws.glob("f*.txt")}
    call = engine.undo if undo else engine.redo
    _try(lambda: call(overlay=overlay, editor=lambda writes: True, on_conflict="abort"))


EDITOR_STEPS = st.lists(
    st.one_of(STEP, st.tuples(st.just("editor undo"), st.just(0)), st.tuples(st.just("editor redo"), st.just(0))),
    min_size=8, max_size=30,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=EDITOR_STEPS)
def test_the_kept_newest_operation_is_what_the_walk_finds(tmp_path_factory: pytest.TempPathFactory, steps: list) -> None:
    ws = make_repo(tmp_path_factory.mktemp("ws"))
    engine = open_engine(ws, retention=BIG)
    for i in range(6):
        _turn(engine, ws, i)
    for i, (step, arg) in enumerate(steps, 6):
        if step.startswith("editor"):
            _through_editor(engine, ws, step == "editor undo")
        else:
            engine = _step(engine, ws, i, step, arg)
        for mark in ("editor", "undo"):
            assert _ids(engine.timeline.newest_operation(mark)) == _ids(walked(engine.timeline, mark)), (step, mark)
    engine.history.save_cache()
    for mark in ("editor", "undo"):  # opened from its pages: the older ones read only as the walk reads them
        paged, walking = open_engine(ws, retention=BIG), open_engine(ws, retention=BIG)
        assert _ids(paged.timeline.newest_operation(mark)) == _ids(walked(walking.timeline, mark)), mark
        assert paged.timeline.is_whole == walking.timeline.is_whole, mark


def test_a_long_history_after_the_operation_is_not_walked(tmp_path: Path) -> None:
    """``unsaved`` reads no entry before the newest operation and walks none after it."""
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, retention=BIG)
    for i in range(30):
        _turn(engine, ws, i)
    engine.undo(on_conflict="abort")
    op = engine.timeline.last_entry()
    for i in range(30, 60):
        _turn(engine, ws, i)
    walks: list[str | None] = []
    original = Timeline.newest_first

    def counting(self: Timeline, mark: str | None = None):  # type: ignore[no-untyped-def]
        walks.append(mark)
        return original(self, mark)

    Timeline.newest_first = counting  # type: ignore[method-assign]
    try:
        assert engine.unsaved() == []
        found, after = engine.timeline.newest_operation("editor")
    finally:
        Timeline.newest_first = original  # type: ignore[method-assign]
    assert walks == []
    assert found is op and len(after) == 30
