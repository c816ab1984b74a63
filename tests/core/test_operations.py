"""Undo, redo, revert, restore and their conflict handling, table-driven where the shape allows.

Every operation result is checked for its verdict, restored/skipped/conflict lists and next
action; conflicts by default write nothing; each conflict option is recorded and undoable.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import make_repo, write_files
from takeback.core.models import BatchChange
from takeback.errors import InvalidInput, NotFound, NothingToDo

from .support import assert_result_shape, batch, full_state, nothing_written, open_engine

LINES = [f"line {i:02d}\n" for i in range(1, 15)]


def text(**changes: str) -> str:
    """The 14-line file with some lines replaced: text(l2="two") changes line 2."""
    out = list(LINES)
    for key, value in changes.items():
        out[int(key[1:]) - 1] = value + "\n"
    return "".join(out)


@pytest.fixture(params=["git", "plain"])
def kind(request) -> str:
    return request.param


@pytest.fixture
def ws(kind: str, tmp_path: Path) -> Path:
    files = {"lines.txt": text(), "other.txt": "other\n", "keep/me.txt": "kept\n"}
    if kind == "git":
        return make_repo(tmp_path / "ws", files)
    folder = tmp_path / "plain"
    folder.mkdir()
    write_files(folder, files)
    return folder


@pytest.fixture
def engine(ws: Path):
    return open_engine(ws)


def bracket(engine, ws: Path, files: dict[str, str | None], label: str | None = None):
    engine.begin_turn(label=label)
    for path, content in files.items():
        if content is None:
            (ws / path).unlink()
        else:
            write_files(ws, {path: content})
    return engine.end_turn()


def read(ws: Path, path: str) -> str | None:
    p = ws / path
    return p.read_text() if p.exists() else None


# ---------------------------------------------------------------------- undo / redo


def test_undo_redo_walk_back_and_forth(ws: Path, engine) -> None:
    states = [full_state(ws)]
    batch(engine, ws, {"lines.txt": text(l2="t1")}, label="one")
    states.append(full_state(ws))
    bracket(engine, ws, {"new.txt": "t2\n", "other.txt": None}, label="two")
    states.append(full_state(ws))
    batch(engine, ws, {"lines.txt": text(l2="t1", l9="t3"), "new.txt": "t3\n"}, label="three")
    states.append(full_state(ws))

    for expected, target in ((states[2], 3), (states[1], 2), (states[0], 1)):
        result = engine.undo()
        assert_result_shape(result)
        assert (result.operation, result.verdict, result.applied, result.target_number) == ("undo", "safe", True, target)
        assert result.entry is not None and result.entry.kind == "undo" and result.entry.target_number == target
        assert engine.entry(str(target)).state == "reverted"
        assert full_state(ws) == expected
    with nothing_written(engine, ws):
        with pytest.raises(NothingToDo, match="nothing to undo"):
            engine.undo()

    for expected in states[1:]:
        result = engine.redo()
        assert_result_shape(result)
        assert result.applied and result.verdict == "safe" and result.entry.kind == "redo"
        assert full_state(ws) == expected
    with nothing_written(engine, ws):
        with pytest.raises(NothingToDo, match="nothing to redo"):
            engine.redo()
    assert [e.state for e in engine.entries() if e.kind == "turn"] == ["applied"] * 3


def test_undo_redo_repeated_many_times(ws: Path, engine) -> None:
    before = full_state(ws)
    batch(engine, ws, {"lines.txt": text(l5="agent"), "made.bin": b"\x00\xffdata"})
    after = full_state(ws)
    numbers = []
    for _ in range(5):
        numbers.append(engine.undo().entry.number)
        assert full_state(ws) == before
        numbers.append(engine.redo().entry.number)
        assert full_state(ws) == after
    assert numbers == list(range(2, 12))
    assert engine.entry("1").state == "applied"
    assert engine.status().undo_target == 1


def test_undo_ends_an_open_turn_first(ws: Path, engine) -> None:
    before = full_state(ws)
    engine.begin_turn(label="open")
    (ws / "lines.txt").write_text(text(l1="agent"))
    result = engine.undo()
    assert result.applied and result.target_number == 1
    assert full_state(ws) == before
    assert engine.entry("1").state == "reverted"
    assert engine.status().open_turn is None


def test_undo_skips_turns_that_were_not_applied(ws: Path, engine) -> None:
    batch(engine, ws, {"other.txt": "applied\n"})
    engine.record_batch([BatchChange(path="lines.txt", after=b"refused by the editor\n")], applied=False)
    assert engine.entry("2").state == "not-applied"
    result = engine.undo()
    assert result.target_number == 1 and read(ws, "other.txt") == "other\n"
    with pytest.raises(NothingToDo, match="never applied"):
        engine.revert("2")


def test_redo_after_new_turn_keeps_the_new_turn(ws: Path, engine) -> None:
    batch(engine, ws, {"lines.txt": text(l2="t1")})
    engine.undo()
    batch(engine, ws, {"other.txt": "t3\n"})
    result = engine.redo()
    assert result.applied and result.verdict == "safe"
    assert read(ws, "lines.txt") == text(l2="t1") and read(ws, "other.txt") == "t3\n"


# ---------------------------------------------------------------------- revert of a middle turn


def test_revert_middle_turn_keeps_later_turns_and_person_edits(ws: Path, engine) -> None:
    batch(engine, ws, {"lines.txt": text(l2="turn one"), "one.txt": "one\n"}, label="one")
    bracket(engine, ws, {"lines.txt": text(l2="turn one", l12="turn two")}, label="two")
    # the person edits another line of the same file and a file of their own
    write_files(ws, {"lines.txt": text(l2="turn one", l7="person", l12="turn two"), "mine.txt": "person's\n"})
    bracket(engine, ws, {"three.txt": "three\n"}, label="three")

    result = engine.revert("1")
    assert_result_shape(result)
    assert (result.operation, result.verdict, result.applied, result.target_number) == ("revert", "safe", True, 1)
    assert {o.path: (o.action, o.merged) for o in result.restored} == {"lines.txt": ("write", True), "one.txt": ("delete", False)}
    assert read(ws, "lines.txt") == text(l7="person", l12="turn two")
    assert read(ws, "one.txt") is None
    assert read(ws, "mine.txt") == "person's\n" and read(ws, "three.txt") == "three\n"
    one = engine.entry("1")
    assert one.state == "reverted" and one.reverted_by == result.entry.id
    assert [engine.entry(n).state for n in ("2", "3")] == ["applied", "applied"]

    with pytest.raises(NothingToDo, match="already reverted by #4; run .takeback revert 4. to bring it back"):
        engine.revert("1")

    # the revert is an entry of its own: redo brings turn one back, keeping everything else
    redo = engine.redo()
    assert redo.applied and redo.target_number == 4
    assert read(ws, "lines.txt") == text(l2="turn one", l7="person", l12="turn two")
    assert read(ws, "one.txt") == "one\n"
    assert engine.entry("1").state == "applied" and engine.entry("4").state == "reverted"


def _unique_prefix(entry_id: str, others: list[str]) -> str:
    """The shortest prefix (12 characters at least) of entry_id that no other id starts with."""
    for length in range(12, len(entry_id) + 1):
        if not any(other.startswith(entry_id[:length]) for other in others):
            return entry_id[:length]
    raise AssertionError(f"{entry_id} is not unique")


def test_revert_by_id_prefix_and_last(ws: Path, engine) -> None:
    first, _ = batch(engine, ws, {"a.txt": "a\n"})
    second, _ = batch(engine, ws, {"b.txt": "b\n"})
    # Ids made in one millisecond share all but their last characters (ULIDs are monotonic).
    assert engine.revert(_unique_prefix(first.id, [second.id]).lower()).target_number == 1
    assert engine.revert("last").target_number == 2
    assert read(ws, "a.txt") is None and read(ws, "b.txt") is None


def test_ambiguous_id_prefix_names_the_entries_it_matches(ws: Path, engine) -> None:
    first, _ = batch(engine, ws, {"a.txt": "a\n"})
    second, _ = batch(engine, ws, {"b.txt": "b\n"})
    common = os.path.commonprefix([first.id, second.id])
    assert len(common) >= 4  # ids share their first 4 characters for 12 days
    with nothing_written(engine, ws), pytest.raises(InvalidInput) as raised:
        engine.revert(common)
    message = str(raised.value)
    assert f"#1 ({first.id})" in message and f"#2 ({second.id})" in message, message
    assert "give more of the id, or the number" in message


def test_created_file_removed_only_if_unchanged(ws: Path, engine) -> None:
    batch(engine, ws, {"a.txt": "made by agent\n", "b.txt": "made by agent\n"})
    (ws / "b.txt").write_text("made by agent\nand edited by the person\n")

    with nothing_written(engine, ws):
        result = engine.revert("1")
    assert_result_shape(result)
    assert (result.verdict, result.applied, result.restored) == ("refused", False, [])
    assert [(c.path, c.reason) for c in result.conflicts] == [("b.txt", "changed since, so it is not removed")]

    result = engine.revert("1", on_conflict="skip")
    assert_result_shape(result)
    assert (result.verdict, result.applied) == ("partial", True)
    assert [o.path for o in result.restored] == ["a.txt"] and [c.path for c in result.conflicts] == ["b.txt"]
    assert read(ws, "a.txt") is None
    assert read(ws, "b.txt") == "made by agent\nand edited by the person\n"
    assert engine.entry("1").state == "partial"


def test_deleted_files_come_back(ws: Path, engine) -> None:
    original = full_state(ws)
    bracket(engine, ws, {"other.txt": None, "keep/me.txt": None})
    (ws / "lines.txt").write_text(text(l3="person"))
    result = engine.undo()
    assert {o.path: o.action for o in result.restored} == {"other.txt": "create", "keep/me.txt": "create"}
    assert read(ws, "other.txt") == "other\n" and read(ws, "keep/me.txt") == "kept\n"
    assert read(ws, "lines.txt") == text(l3="person")
    assert full_state(ws)[1] == original[1]


def test_deleted_file_recreated_by_the_person_is_a_conflict(ws: Path, engine) -> None:
    bracket(engine, ws, {"other.txt": None})
    (ws / "other.txt").write_text("person wrote a new one\n")
    with nothing_written(engine, ws):
        result = engine.undo()
    assert result.verdict == "refused" and [c.reason for c in result.conflicts] == ["created on both sides with different content"]


# ---------------------------------------------------------------------- restore


def test_restore_to_a_checkpoint(ws: Path, engine) -> None:
    batch(engine, ws, {"lines.txt": text(l1="t1")})
    after_one = full_state(ws)
    engine.begin_turn(label="two")
    _, cp_first = batch(engine, ws, {"lines.txt": text(l1="t1", l3="t2a")})
    mid_two = full_state(ws)
    batch(engine, ws, {"two.txt": "two\n"})
    engine.end_turn()
    bracket(engine, ws, {"other.txt": None, "lines.txt": text(l1="t1", l3="t2a", l14="t3")})
    write_files(ws, {"mine.txt": "the person's own file\n"})
    end = full_state(ws)

    result = engine.restore("#1")
    assert_result_shape(result)
    assert (result.operation, result.verdict, result.applied, result.target_number) == ("restore", "safe", True, 1)
    expect = (dict(after_one[0], **{"mine.txt": b"the person's own file\n"}), dict(after_one[1], **{"mine.txt": 0o100644}))
    assert full_state(ws) == expect
    assert [engine.entry(n).state for n in ("1", "2", "3")] == ["applied", "reverted", "reverted"]
    assert result.entry.kind == "restore"

    # the restore is undoable: redo puts back everything it took away
    engine.redo()
    assert full_state(ws) == end
    assert [engine.entry(n).state for n in ("1", "2", "3")] == ["applied", "applied", "applied"]

    # a checkpoint in the middle of a turn
    result = engine.restore("#2.1")
    assert result.applied and result.target_number == 2
    assert full_state(ws) == (dict(mid_two[0], **{"mine.txt": b"the person's own file\n"}), dict(mid_two[1], **{"mine.txt": 0o100644}))
    assert engine.entry("2").state == "partial"
    with pytest.raises(NothingToDo, match="nothing to restore"):
        engine.restore(engine.entries()[0].checkpoints[-1].id)


def test_restore_to_just_before_a_step(ws: Path, engine) -> None:
    """``#N.(k-1)`` is the state just before step k of turn N; ``#N.0`` the state the turn started
    from (the last checkpoint before it, whichever entry holds it). The person's unrecorded
    file is kept."""
    batch(engine, ws, {"lines.txt": text(l1="t1")})
    with pytest.raises(NotFound, match="nothing was recorded before turn #1"):
        engine.restore("#1.0")
    after_one = read(ws, "lines.txt")
    engine.begin_turn(label="three steps", bracket=False)
    for k in (1, 2, 3):
        batch(engine, ws, {"lines.txt": text(l1="t1", l3=f"step {k}"), f"s{k}.txt": f"{k}\n"})
    engine.end_turn()
    write_files(ws, {"mine.txt": "the person's own file\n"})

    result = engine.restore("#2.2")  # just before step 3
    assert result.applied and result.target_number == 2
    assert read(ws, "lines.txt") == text(l1="t1", l3="step 2") and read(ws, "s3.txt") is None
    engine.redo()  # the restore is taken back: step 3 is back
    assert read(ws, "s3.txt") == "3\n"

    result = engine.restore("#2.0")  # just before step 1: the state turn #2 started from
    assert result.applied and result.target_number == 1
    assert read(ws, "lines.txt") == after_one
    assert [read(ws, f"s{k}.txt") for k in (1, 2, 3)] == [None, None, None]
    assert read(ws, "mine.txt") == "the person's own file\n"
    assert engine.entry("2").state == "reverted"
    empty = engine.begin_turn(label="empty", bracket=False)
    with pytest.raises(NotFound, match="has 0 checkpoints"):
        engine.restore(f"#{empty.number}.0")


def test_restore_last_green(ws: Path, engine) -> None:
    batch(engine, ws, {"lines.txt": text(l1="t1")})
    engine.record_check(None, "tests", "failed", command="pytest", exit_code=1)
    engine.record_check("1", "tests", "passed", command="pytest", exit_code=0)  # later result wins
    green = full_state(ws)
    batch(engine, ws, {"lines.txt": text(l1="t1", l2="t2")})
    engine.record_check("last", "tests", "failed", exit_code=1)
    engine.begin_turn()
    (ws / "t3.txt").write_text("three\n")
    engine.end_turn()
    assert engine.entry("1").checks_passed is True and engine.entry("2").checks_passed is False

    result = engine.restore("last-green")
    assert_result_shape(result)
    assert result.applied and result.target_number == 1
    assert full_state(ws) == green
    engine.undo()  # undo now targets the last applied turn, #1, not the restore
    assert read(ws, "lines.txt") == text()


def test_restore_last_green_without_checks(ws: Path, engine) -> None:
    batch(engine, ws, {"a.txt": "a\n"})
    engine.record_check(None, "lint", "error")
    with nothing_written(engine, ws):
        with pytest.raises(NothingToDo, match="no applied entry has passing checks"):
            engine.restore("last-green")


# ---------------------------------------------------------------------- conflicts


def _conflicted(engine, ws: Path):
    """Turn #1 edits line 5 of lines.txt and creates clean.txt; the person then edits line 5 too."""
    batch(engine, ws, {"lines.txt": text(l5="agent"), "clean.txt": "clean\n", "other.txt": "agent other\n"})
    (ws / "lines.txt").write_text(text(l5="person", l10="person too"))


@pytest.mark.parametrize("op", ["undo", "revert"])
def test_conflict_default_aborts_and_writes_nothing(ws: Path, engine, op: str) -> None:
    _conflicted(engine, ws)
    call = {"undo": lambda: engine.undo(), "revert": lambda: engine.revert("1")}[op]
    with nothing_written(engine, ws):
        result = call()
    assert_result_shape(result)
    assert (result.verdict, result.applied, result.restored) == ("refused", False, [])
    (conflict,) = result.conflicts
    assert (conflict.path, conflict.hunks, conflict.markers_written) == ("lines.txt", 1, False)
    assert "overlapping edits in 1 place" in conflict.reason
    assert "nothing was written" in result.message
    for option in ("--on-conflict skip", "--on-conflict markers", "--on-conflict force"):
        assert option in result.next_action
    assert engine.entry("1").state == "applied"


def test_restore_conflict(ws: Path, engine) -> None:
    batch(engine, ws, {"other.txt": "first\n"})
    batch(engine, ws, {"lines.txt": text(l5="agent")})
    (ws / "lines.txt").write_text(text(l5="person"))
    with nothing_written(engine, ws):
        result = engine.restore("#1")
    assert result.verdict == "refused" and [c.path for c in result.conflicts] == ["lines.txt"]
    assert "restore" in result.next_action and "--on-conflict" in result.next_action


def test_on_conflict_skip_is_recorded_and_undoable(ws: Path, engine) -> None:
    _conflicted(engine, ws)
    before = full_state(ws)
    result = engine.revert("1", on_conflict="skip")
    assert_result_shape(result)
    assert (result.verdict, result.applied, result.on_conflict) == ("partial", True, "skip")
    assert sorted(o.path for o in result.restored) == ["clean.txt", "other.txt"]
    assert [c.path for c in result.conflicts] == ["lines.txt"]
    assert read(ws, "lines.txt") == text(l5="person", l10="person too")
    assert read(ws, "clean.txt") is None and read(ws, "other.txt") == "other\n"
    op = result.entry
    assert op.kind == "revert" and op.verdict == "partial" and engine.entry("1").state == "partial"
    assert "left in conflict: lines.txt (as it was)" in engine.entry(str(op.number)).notices

    # revert the operation's own entry: the clean files come back
    back = engine.revert(str(op.number))
    assert back.applied and back.verdict == "safe"
    assert full_state(ws) == before
    assert engine.entry("1").state == "applied" and engine.entry(str(op.number)).state == "reverted"


def test_on_conflict_markers_is_recorded_and_undoable(ws: Path, engine) -> None:
    _conflicted(engine, ws)
    before = full_state(ws)
    result = engine.revert("1", on_conflict="markers")
    assert_result_shape(result)
    assert result.applied and result.verdict == "partial"
    (conflict,) = result.conflicts
    assert conflict.path == "lines.txt" and conflict.markers_written
    content = read(ws, "lines.txt")
    assert content.count("<<<<<<<") == 1 and content.count(">>>>>>>") == 1 and "=======" in content
    assert "person\n" in content and "line 05\n" in content and "person too\n" in content
    assert "resolve the conflict markers in lines.txt" in result.next_action
    assert read(ws, "clean.txt") is None
    # what happened to the file stays findable: show of the operation says it
    assert "conflict markers written in lines.txt: resolve them by hand" in engine.entry(str(result.entry.number)).notices

    back = engine.redo()
    assert back.applied and back.target_number == result.entry.number
    assert full_state(ws) == before


def test_on_conflict_force_is_recorded_and_undoable(ws: Path, engine) -> None:
    _conflicted(engine, ws)
    before = full_state(ws)
    result = engine.undo(on_conflict="force")
    assert_result_shape(result)
    assert result.applied and result.verdict == "partial"  # it wrote over the person's edit: not safe
    assert "written over later edits in lines.txt" in result.message
    assert engine.entry("1").state == "reverted"  # yet every path of the turn was taken back
    shown = engine.entry(str(result.entry.number)).notices
    assert shown == ["written over later edits in lines.txt (forced; taking this operation back restores them)"]
    (conflict,) = result.conflicts
    assert conflict.path == "lines.txt" and conflict.reason.startswith("forced:")
    # the turn's starting content where it overlaps the person's edit (line 5); the person's
    # unrelated later edit (line 10) stays, as git's -X theirs keeps it
    assert read(ws, "lines.txt") == text(l10="person too")
    assert read(ws, "clean.txt") is None

    # the person's version is kept in the operation's checkpoint: revert of the undo restores it
    back = engine.revert(str(result.entry.number))
    assert back.applied
    assert full_state(ws) == before


def test_bad_on_conflict_writes_nothing(ws: Path, engine) -> None:
    _conflicted(engine, ws)
    from takeback.errors import InvalidInput

    with nothing_written(engine, ws):
        with pytest.raises(InvalidInput, match="on-conflict must be one of abort, skip, markers, force, not 'theirs'"):
            engine.revert("1", on_conflict="theirs")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- dry runs


@pytest.mark.parametrize("op", ["undo", "redo", "revert", "restore"])
def test_dry_run_writes_nothing_and_returns_a_patch(ws: Path, engine, op: str) -> None:
    batch(engine, ws, {"other.txt": "first\n"})
    batch(engine, ws, {"lines.txt": text(l5="agent"), "made.txt": "made\n", "keep/me.txt": None})
    if op == "redo":
        engine.undo()
    call = {
        "undo": lambda: engine.undo(dry_run=True),
        "redo": lambda: engine.redo(dry_run=True),
        "revert": lambda: engine.revert("2", dry_run=True),
        "restore": lambda: engine.restore("#1", dry_run=True),
    }[op]
    with nothing_written(engine, ws):
        result = call()
    assert_result_shape(result)
    assert result.dry_run and not result.applied and result.entry is None
    assert result.verdict == "safe"
    expected = {"lines.txt", "made.txt", "keep/me.txt"}
    assert {o.path for o in result.restored} == expected
    patch = result.patch or ""
    for path in expected:
        assert f"a/{path}" in patch or f"b/{path}" in patch
    if op == "redo":
        assert "+line 05 agent" not in patch and "+agent" in patch
    else:
        assert "-agent" in patch and "+line 05" in patch


# ---------------------------------------------------------------------- operations on operations


def test_revert_of_an_undo_and_of_a_redo(ws: Path, engine) -> None:
    before = full_state(ws)
    batch(engine, ws, {"lines.txt": text(l1="agent")})
    after = full_state(ws)
    undo = engine.undo().entry
    revert_undo = engine.revert(str(undo.number))
    assert full_state(ws) == after and engine.entry("1").state == "applied"
    engine.revert(str(revert_undo.entry.number))
    assert full_state(ws) == before and engine.entry("1").state == "reverted"
    redo = engine.redo()
    assert full_state(ws) == after
    engine.revert(str(redo.entry.number))
    assert full_state(ws) == before


def test_dry_run_while_a_bracket_turn_is_open_does_not_mislead(ws: Path, engine) -> None:
    """The open turn's changes on disk are only recorded when it ends: a dry run of undo (or of
    a revert of that turn) must preview that turn with what its bracket sees now — not answer
    for a different turn or with half the changes — and record nothing."""
    batch(engine, ws, {"other.txt": "earlier turn\n"})
    engine.begin_turn(label="open")
    (ws / "lines.txt").write_text(text(l1="shell"))
    for call in (lambda: engine.undo(dry_run=True), lambda: engine.revert("2", dry_run=True)):
        with nothing_written(engine, ws, objects=False):
            result = call()
        assert_result_shape(result)
        assert result.dry_run and not result.applied and result.target_number == 2
        assert [o.path for o in result.restored] == ["lines.txt"]
        assert "-shell" in (result.patch or "")
        assert engine.status().open_turn is not None
    result = engine.undo()
    assert result.target_number == 2 and read(ws, "lines.txt") == text()
    assert read(ws, "other.txt") == "earlier turn\n"


def test_dry_run_of_an_open_turn_without_bracket(ws: Path, engine) -> None:
    engine.begin_turn(bracket=False)
    batch(engine, ws, {"lines.txt": text(l2="edit")})
    with nothing_written(engine, ws):
        result = engine.undo(dry_run=True)
    assert result.target_number == 1 and [o.path for o in result.restored] == ["lines.txt"]


def test_restore_preview_during_an_open_turn_counts_its_changes_on_disk(ws: Path, engine) -> None:
    """A dry run of a restore while a bracketed turn is open lists the files the turn changed
    on disk (not yet recorded), exactly as the restore itself then takes them back."""
    batch(engine, ws, {"lines.txt": text(l1="t1")})
    after_one = full_state(ws)
    engine.begin_turn(label="open")
    write_files(ws, {"shell.txt": "written by a command\n", "lines.txt": text(l1="t1", l9="shell")})
    during = full_state(ws)

    preview = engine.restore("#1", dry_run=True)
    assert not preview.applied and preview.verdict == "safe"
    assert sorted(r.path for r in preview.restored) == ["lines.txt", "shell.txt"]
    assert full_state(ws) == during and engine.entry("2").state == "open"

    done = engine.restore("#1")
    assert sorted(r.path for r in done.restored) == sorted(r.path for r in preview.restored)
    assert full_state(ws) == after_one
    assert engine.entry("2").state == "reverted"
