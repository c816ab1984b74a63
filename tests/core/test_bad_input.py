"""Bad input: each case checks the error class, its message and that nothing was written
(workspace, the user's git state, the log head and every file of the store)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from takeback.core.models import BatchChange
from takeback.engine.engine import Engine
from takeback.errors import InvalidInput, NotFound, NothingToDo, StateError, TakebackError

from .support import batch, nothing_written, open_engine


@pytest.fixture(params=["git"])
def ws_kind(request: pytest.FixtureRequest) -> str:
    """Input checking does not depend on the folder kind; a repository also lets every
    'nothing written' check cover the user's git state."""
    return request.param


@pytest.fixture
def two_turns(ws: Path, engine) -> Engine:
    batch(engine, ws, {"a.txt": "a\n"}, label="one")
    batch(engine, ws, {"b.txt": "b\n"}, label="two")
    return engine


def common_prefix(engine: Engine) -> str:
    ids = [e.id for e in engine.entries()]
    prefix = os.path.commonprefix(ids)
    assert len(prefix) >= 4, ids
    return prefix


SPECS = [
    ("#99", NotFound, "no turn #99 in this workspace's timeline (it has 2 entries)"),
    ("99", NotFound, "no turn #99 in this workspace's timeline (it has 2 entries)"),
    ("nope", NotFound, "no turn matches 'nope': use a number like 17 or #17, a turn id, or 'last'"),
    ("#x1", NotFound, "no turn matches '#x1'"),
    ("ZZZZZZZZZZ", NotFound, "no turn matches 'ZZZZZZZZZZ'"),
    ("   ", InvalidInput, "empty turn: give a number like 17 or #17, a turn id, or 'last'"),
    ("PREFIX", InvalidInput, "is ambiguous: it matches #1 ("),
]

CALLS: dict[str, Callable[[Engine, str], object]] = {
    "revert": lambda e, s: e.revert(s),
    "revert-dry": lambda e, s: e.revert(s, dry_run=True),
    "restore": lambda e, s: e.restore(s),
    "entry": lambda e, s: e.entry(s),
    "diff": lambda e, s: e.diff(s),
    "file_at": lambda e, s: e.file_at(s, "a.txt"),
    "check": lambda e, s: e.record_check(s, "tests", "passed"),
}


@pytest.mark.parametrize("spec,error,message", SPECS, ids=[s[0].strip() or "blank" for s in SPECS])
def test_unknown_turn_specs(spec: str, error: type, message: str, ws: Path, two_turns: Engine) -> None:
    engine = two_turns
    if spec == "PREFIX":
        spec = common_prefix(engine)
    for name, call in CALLS.items():
        if name == "restore" and (spec.strip() == "" or "ambiguous" in message):
            continue  # a restore takes checkpoint ids: covered below
        with nothing_written(engine, ws):
            with pytest.raises(error) as caught:
                call(engine, spec)
        assert message in str(caught.value), name
        assert isinstance(caught.value, TakebackError) and caught.value.message == str(caught.value)


def test_last_with_no_turn(ws: Path, engine) -> None:
    with nothing_written(engine, ws):
        with pytest.raises(NotFound, match="there is no turn yet in this workspace"):
            engine.revert("last")
        with pytest.raises(NotFound, match="there is no turn yet"):
            engine.record_check(None, "tests", "passed")


@pytest.mark.parametrize(
    "spec,error,message",
    [
        ("#1.5", NotFound, "turn #1 has 1 checkpoints, not 5"),
        ("#1.0", NotFound, "nothing was recorded before turn #1"),  # #N.0: where turn N started
        ("#7", NotFound, "no turn #7"),
        ("nope", NotFound, "no turn matches 'nope'"),
    ],
)
def test_unknown_checkpoints(spec: str, error: type, message: str, ws: Path, two_turns: Engine) -> None:
    with nothing_written(two_turns, ws):
        with pytest.raises(error, match=message):
            two_turns.restore(spec)


def test_ambiguous_checkpoint_prefix(ws: Path, two_turns: Engine) -> None:
    ids = sorted(cp.id for e in two_turns.entries() for cp in e.checkpoints)  # #1.1's, then #2.1's
    prefix = os.path.commonprefix(ids)
    with nothing_written(two_turns, ws):
        with pytest.raises(InvalidInput) as raised:
            two_turns.restore(prefix)
    assert str(raised.value) == (
        f"checkpoint id prefix {prefix} is ambiguous: it matches #1.1 ({ids[0]}), #2.1 ({ids[1]}); give more of the id, or #N.k"
    )


def test_nothing_to_undo_or_redo(ws: Path, engine) -> None:
    with nothing_written(engine, ws):
        with pytest.raises(NothingToDo, match="nothing to undo: no applied agent turn is left on the timeline"):
            engine.undo()
        with pytest.raises(NothingToDo, match="nothing to redo: no undo, revert or restore is waiting to be re-applied"):
            engine.redo()
        with pytest.raises(NothingToDo, match="nothing to undo"):
            engine.undo(dry_run=True)
    batch(engine, ws, {"a.txt": "a\n"})
    with nothing_written(engine, ws):
        with pytest.raises(NothingToDo, match="nothing to redo"):
            engine.redo()
        with pytest.raises(NothingToDo, match="nothing to restore: no change was recorded after checkpoint"):
            engine.restore("#1")
    engine.undo()
    with nothing_written(engine, ws):
        with pytest.raises(NothingToDo, match="nothing to undo"):
            engine.undo()
        with pytest.raises(NothingToDo, match=r"turn #1 is already reverted by #2; run 'takeback revert 2' to bring it back"):
            engine.revert("1")


def test_end_without_open_turn(ws: Path, two_turns: Engine) -> None:
    with nothing_written(two_turns, ws):
        with pytest.raises(StateError, match="no turn is open: start one with 'takeback begin'"):
            two_turns.end_turn()


def test_end_names_the_wrong_turn(ws: Path, two_turns: Engine) -> None:
    two_turns.begin_turn()
    (ws / "c.txt").write_text("c\n")
    with nothing_written(two_turns, ws):
        with pytest.raises(StateError, match=r"turn 1 is not the open turn \(#3 is\)"):
            two_turns.end_turn(turn="1")
    assert two_turns.status().open_turn.number == 3


def test_batch_naming_a_closed_turn(ws: Path, two_turns: Engine) -> None:
    with nothing_written(two_turns, ws):
        with pytest.raises(StateError, match="turn 1 is not open; batches can only join an open turn"):
            two_turns.record_batch([BatchChange(path="c.txt", after=b"c\n")], turn="1")


@pytest.mark.parametrize("op", ["undo", "redo", "revert", "restore"])
@pytest.mark.parametrize("open_turn", [False, True], ids=["closed", "open-turn"])
def test_bad_on_conflict(op: str, open_turn: bool, ws: Path, two_turns: Engine) -> None:
    engine = two_turns
    engine.undo()
    if open_turn:
        engine.begin_turn()
        (ws / "during.txt").write_text("written during the open turn\n")
    call = {
        "undo": lambda: engine.undo(on_conflict="yolo"),
        "redo": lambda: engine.redo(on_conflict="yolo"),
        "revert": lambda: engine.revert("1", on_conflict="yolo"),
        "restore": lambda: engine.restore("#1", on_conflict="yolo"),
    }[op]
    with nothing_written(engine, ws):
        with pytest.raises(InvalidInput, match="on-conflict must be one of abort, skip, markers, force, not 'yolo'"):
            call()
    if open_turn:
        assert engine.status().open_turn is not None


def test_empty_and_duplicate_batches(ws: Path, two_turns: Engine) -> None:
    with nothing_written(two_turns, ws):
        with pytest.raises(InvalidInput, match="an edit batch needs at least one file change"):
            two_turns.record_batch([])
        with pytest.raises(InvalidInput, match="an edit batch needs at least one file change"):
            two_turns.apply_batch([])
        with pytest.raises(InvalidInput, match="an edit batch names the same path twice"):
            two_turns.record_batch([BatchChange(path="x.txt", after=b"1"), BatchChange(path="./x.txt", after=b"2")])


@pytest.mark.parametrize(
    "name,status,message",
    [
        ("tests", "green", "check status 'green' is not one of passed, failed, error, skipped"),
        ("tests", "PASSED", "check status 'PASSED' is not one of passed, failed, error, skipped"),
        ("tests", "", "check status '' is not one of passed, failed, error, skipped"),
        ("", "passed", "a check needs a name"),
    ],
)
def test_bad_checks(name: str, status: str, message: str, ws: Path, two_turns: Engine) -> None:
    with nothing_written(two_turns, ws):
        with pytest.raises(InvalidInput, match=message):
            two_turns.record_check("1", name, status)
    assert two_turns.entry("1").checks == []


def test_bad_side_for_file_at(ws: Path, two_turns: Engine) -> None:
    with nothing_written(two_turns, ws):
        with pytest.raises(InvalidInput, match="side must be 'before' or 'after', not 'middle'"):
            two_turns.file_at("1", "a.txt", "middle")
        with pytest.raises(NotFound, match="turn #1 did not change b.txt"):
            two_turns.file_at("1", "b.txt")
        with pytest.raises(NotFound, match="turn #2 did not change a.txt"):
            two_turns.diff("2", "a.txt")


def test_workspace_that_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for target in (tmp_path / "missing", tmp_path / "file"):
        with pytest.raises(InvalidInput, match=f"workspace {target} is not a folder"):
            Engine(target)
    assert not (tmp_path / "missing").exists()
    assert not any(Path(os.environ["TAKEBACK_HOME"]).glob("**/*")) if Path(os.environ["TAKEBACK_HOME"]).exists() else True


def test_set_applied_unknown_checkpoint(ws: Path, two_turns: Engine) -> None:
    with nothing_written(two_turns, ws):
        with pytest.raises(NotFound, match="no checkpoint 01ABCDEF"):
            two_turns.set_applied("01ABCDEF", False)


def test_nothing_to_undo_in_a_plain_folder(plain: Path) -> None:
    engine = open_engine(plain)
    with nothing_written(engine, plain):
        with pytest.raises(NothingToDo, match="nothing to undo"):
            engine.undo()
        with pytest.raises(NotFound, match="no turn #1 "):
            engine.revert("#1")
