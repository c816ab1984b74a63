"""The engine's words for what it cannot do as asked: conflict advice that only offers what can
work for each conflict (and works when followed), conflict markers in the file's own line
endings, an open turn ended by an operation or a second begin, turns dropped by retention,
and files the person's permissions keep Takeback from writing."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from helpers import make_repo
from takeback.core.models import RecordEnvelope
from takeback.errors import NotFound

from .support import assert_result_shape, batch, nothing_written, open_engine

TEXT = "".join(f"line {i:02d}\n" for i in range(1, 11))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "ws", {"lines.txt": TEXT, "logo.bin": b"\x89PNG\x00\x01", "other.txt": "other\n"})


@pytest.fixture
def engine(ws: Path):
    return open_engine(ws)


def _binary_and_created_conflicts(engine, ws: Path) -> None:
    """Turn #1 changes a binary file, creates new.txt and edits a text line; the person then
    changes all three in ways that overlap, and edits other.txt (a clean file for #1's undo)."""
    batch(engine, ws, {
        "logo.bin": b"\x89PNG\x00\x02", "lines.txt": TEXT.replace("line 05", "agent"), "other.txt": "agent\n",
        "new.txt": "agent's\n",
    })
    (ws / "logo.bin").write_bytes(b"\x89PNG\x00\x03")
    (ws / "lines.txt").write_text(TEXT.replace("line 05", "person"))
    (ws / "new.txt").write_text("the person's since\n")


def test_markers_are_offered_only_where_they_can_be_written(ws: Path, engine) -> None:
    _binary_and_created_conflicts(engine, ws)
    with nothing_written(engine, ws):
        result = engine.undo()
    assert_result_shape(result)
    conflicts = {c.path: c for c in result.conflicts}
    assert sorted(conflicts) == ["lines.txt", "logo.bin", "new.txt"]
    assert [p for p, c in conflicts.items() if c.markers_possible] == ["lines.txt"]
    assert conflicts["logo.bin"].binary
    assert "'takeback undo --on-conflict markers' writes conflict markers into it" in conflicts["lines.txt"].advice
    for path in ("logo.bin", "new.txt"):
        advice = conflicts[path].advice
        assert advice.startswith("conflict markers cannot be written into it"), advice
        assert "--on-conflict markers" not in advice
        assert "'takeback undo --on-conflict force'" in advice
        assert advice.endswith("or leave it as it is ('takeback undo --on-conflict skip' changes only the clean files)")
    assert "(it is binary)" in conflicts["logo.bin"].advice
    assert result.next_action == (
        "nothing was written; choose: 'takeback undo --on-conflict skip' changes only the 1 clean file; "
        "'takeback undo --on-conflict markers' writes conflict markers into lines.txt (the others cannot take "
        "markers) to resolve by hand; 'takeback undo --on-conflict force' puts back the starting content where it "
        "overlaps your later edits (undoable)"
    )

    # Followed: markers go where they can; the others are left, with a way out that works.
    marked = engine.undo(on_conflict="markers")
    assert (marked.verdict, marked.applied) == ("partial", True)
    conflicts = {c.path: c for c in marked.conflicts}
    assert conflicts["lines.txt"].markers_written and "<<<<<<<" in (ws / "lines.txt").read_text()
    assert not conflicts["logo.bin"].markers_written and (ws / "logo.bin").read_bytes() == b"\x89PNG\x00\x03"
    assert (ws / "other.txt").read_text() == "other\n"
    assert "it is left as it is" in conflicts["new.txt"].advice
    assert marked.next_action.startswith(
        "logo.bin, new.txt left in conflict: 'takeback revert 1 --on-conflict force' puts back the starting content"
    )
    assert "resolve the conflict markers in lines.txt" in marked.next_action

    # ... and that way out does what it says: the binary and the created file go back.
    forced = engine.revert("1", on_conflict="force")
    assert forced.applied and forced.verdict == "partial", forced  # written over the later edits: not safe
    assert "written over later edits in lines.txt, logo.bin, new.txt" in forced.message
    assert (ws / "logo.bin").read_bytes() == b"\x89PNG\x00\x01" and not (ws / "new.txt").exists()


def test_markers_asked_where_none_can_be_written_change_nothing_and_say_what_can(ws: Path, engine) -> None:
    batch(engine, ws, {"logo.bin": b"\x89PNG\x00\x02"})
    (ws / "logo.bin").write_bytes(b"\x89PNG\x00\x03")
    with nothing_written(engine, ws):
        result = engine.undo(on_conflict="markers")
    assert (result.verdict, result.applied) == ("refused", False)
    assert "markers" not in result.next_action
    assert "'takeback undo --on-conflict force'" in result.next_action
    with nothing_written(engine, ws):
        assert "markers" not in engine.revert("1").next_action


def test_markers_follow_the_files_line_endings(ws: Path, engine) -> None:
    crlf = TEXT.replace("\n", "\r\n")
    (ws / "lines.txt").write_bytes(crlf.encode())
    batch(engine, ws, {"lines.txt": crlf.replace("line 05", "agent")})
    (ws / "lines.txt").write_bytes(crlf.replace("line 05", "person").encode())
    result = engine.undo(on_conflict="markers")
    assert result.conflicts[0].markers_written
    content = (ws / "lines.txt").read_bytes()
    assert content.count(b"\r\n") == content.count(b"\n"), content  # no bare LF anywhere
    assert b"<<<<<<< current\r\nperson\r\n=======\r\nline 05\r\n>>>>>>> before #1\r\n" in content


def test_an_operation_that_ends_the_open_turn_says_so(ws: Path, engine) -> None:
    batch(engine, ws, {"other.txt": "turn one\n"})
    engine.begin_turn(label="two")
    (ws / "lines.txt").write_text("made during turn two\n")
    with nothing_written(engine, ws, objects=False):  # a preview stores what the open turn changed
        preview = engine.undo(dry_run=True)
    assert preview.notices == ["turn #2 is open; carrying out this undo ends it first"]
    done = engine.undo()
    assert done.applied and done.target_number == 2
    assert done.notices == [
        "turn #2 was still open; undo ended it first (what changed on disk during it is recorded as its changes)"
    ]
    assert engine.entry("2").state == "reverted"

    engine.begin_turn(label="three, empty")
    revert = engine.revert("1")  # not the open turn's: still, it is ended first
    assert revert.notices[0].startswith("turn #4 was still open; revert ended it first")
    assert engine.entry("4").state == "applied"
    assert engine.redo(dry_run=True).notices == []  # nothing is open now


def test_a_second_begin_says_it_ended_the_open_turn(ws: Path, engine) -> None:
    first = engine.begin_turn(label="one")
    assert first.notices == []
    (ws / "other.txt").write_text("during one\n")
    second = engine.begin_turn(label="two")
    assert second.notices == [
        "turn #1 was still open; this begin ended it first (what changed on disk until now is recorded as its changes)"
    ]
    assert [f.path for f in engine.entry("1").files] == ["other.txt"]
    assert engine.entry("2").notices == []  # the notice belongs to that answer, not to turn #2


def _records(engine) -> list[str]:
    chain = engine.store.commit_chain(engine.store.head())
    return [r.type for oid in chain for r in RecordEnvelope.model_validate_json(engine.store.read_meta(oid)).records]


def test_a_turn_dropped_by_retention_is_named_as_dropped_with_when_and_why(ws: Path) -> None:
    engine = open_engine(ws, retention={"max_entries": 3, "max_age_days": 365})
    for i in range(6):
        batch(engine, ws, {"other.txt": f"turn {i}\n"}, label=f"turn {i}")
    engine.gc()
    today = datetime.now().strftime("%Y-%m-%d")
    dropped = f"turn #2 was dropped by retention on {today} (keeping the newest 3 entries); the store no longer holds it"
    with nothing_written(engine, ws):
        for call in (lambda: engine.entry("2"), lambda: engine.revert("#2"), lambda: engine.restore("#2.1"),
                     lambda: engine.record_check("2", "tests", "passed")):
            with pytest.raises(NotFound) as raised:
                call()
            assert raised.value.message == dropped
        with pytest.raises(NotFound, match=r"^no turn #7 in this workspace's timeline \(it has 3 entries\)$"):
            engine.entry("7")  # never existed: still 'no turn'

    # A later gc for another reason keeps what the first one said, in one record at the log's tip.
    aged = open_engine(ws, retention={"max_entries": 3, "max_age_days": 0})
    aged.gc()
    reopened = open_engine(ws)  # another process reads it from the log
    with pytest.raises(NotFound, match=r"^turn #1 was dropped by retention on .* \(keeping the newest 3 entries\)"):
        reopened.entry("1")
    with pytest.raises(NotFound, match=r"^turn #5 was dropped by retention on .* \(older than 0 days\)"):
        reopened.entry("5")
    assert [e.number for e in reopened.entries()] == [6]
    assert _records(reopened).count("dropped") == 1 and _records(reopened)[-1] == "dropped"
    batch(reopened, ws, {"other.txt": "after\n"})
    assert reopened.entries()[0].number == 7  # numbers go on after the dropped ones
