"""The flush after the answer (``workspace/settling.py``): a process that answers first (the
resident, the language server: ``Engine.defer_upkeep``) leaves the ``syncfs`` of a big
operation's files rewritten in place for its upkeep, the journal kept until then; whoever finds
that journal first (the same process's next operation, another process's open or operation)
flushes and removes it, reporting nothing unless a file had to be rolled.

``TAKEBACK_SYNCFS_FROM=1`` sends these small operations the way a 5,000-file one goes.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from takeback.engine.engine import Engine
from takeback.workspace import files, settling

from .support import open_engine
from .test_big_operations import _big_turn, _contents


@pytest.fixture
def flushes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every ``syncfs`` any engine makes (the real one runs too)."""
    monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")
    real = files.syncfs
    made: list[str] = []
    monkeypatch.setattr(files, "syncfs", lambda folder: made.append(folder) or real(folder))
    return made


def _answering_first(ws: Path) -> Engine:
    engine = open_engine(ws, long_lived=True)
    engine.defer_upkeep()
    return engine


def _journal(engine: Engine) -> tuple[bool, bool]:
    """Whether the journal, and the mark of an answered operation, are in the store."""
    return (engine.store.path / "journal.json").exists(), (engine.store.path / settling.MARKER).exists()


def test_an_engine_that_answers_first_flushes_the_files_in_its_upkeep(tmp_path: Path, flushes: list[str]) -> None:
    ws, before, after = _big_turn(tmp_path)
    engine = _answering_first(ws)
    assert engine.undo().applied and _contents(ws, before) == before
    assert flushes == [] and _journal(engine) == (True, True), "flushed before the answer"
    engine.upkeep()
    assert len(flushes) == 1 and _journal(engine) == (False, False)
    assert engine.status().last_recovery is None
    assert engine.redo().applied and _contents(ws, after) == after
    engine.close()  # closing flushes too
    assert len(flushes) == 2 and _journal(engine) == (False, False)


def test_its_next_operation_flushes_the_last_one_first(tmp_path: Path, flushes: list[str]) -> None:
    ws, before, after = _big_turn(tmp_path)
    engine = _answering_first(ws)
    assert engine.undo().applied
    assert engine.redo().applied and _contents(ws, after) == after
    assert len(flushes) == 1 and _journal(engine) == (True, True)  # the undo's, before the redo's journal
    engine.upkeep()
    assert len(flushes) == 2 and _journal(engine) == (False, False)


def test_an_engine_that_answers_after_flushes_before_as_always(tmp_path: Path, flushes: list[str]) -> None:
    ws, before, _after = _big_turn(tmp_path)
    engine = open_engine(ws)
    assert engine.undo().applied and _contents(ws, before) == before
    assert len(flushes) == 1 and _journal(engine) == (False, False)


def test_a_file_that_goes_through_a_rename_is_flushed_before_it_answers(tmp_path: Path, flushes: list[str]) -> None:
    ws, before, _after = _big_turn(tmp_path)
    os.link(ws / "pkg/core/src/f1.py", tmp_path / "other-link")  # a second link: not rewritten in place
    engine = _answering_first(ws)
    assert engine.undo().applied and _contents(ws, before) == before
    assert len(flushes) == 2 and _journal(engine) == (False, False)


def test_another_process_finds_the_journal_of_an_answered_operation_and_reports_nothing(
    tmp_path: Path, flushes: list[str]
) -> None:
    """Opened between the answer and the upkeep (or after the first process died there):
    every file holds the operation's after-side, so it flushes them and removes the journal,
    and no recovery is reported; the first process's upkeep then leaves alone what is not its own."""
    ws, before, _after = _big_turn(tmp_path)
    first = _answering_first(ws)
    assert first.undo().applied
    other = Engine(ws)
    assert other.last_recovery is None and other.status().last_recovery is None
    assert flushes and _journal(other) == (False, False)  # (its folders flushed too, as every recovery does)
    assert other.entry("1").state == "reverted" and _contents(ws, before) == before
    first.upkeep()
    assert _journal(first) == (False, False) and _contents(ws, before) == before


def test_a_file_a_power_cut_left_torn_after_the_answer_is_rolled_forward_and_reported(
    tmp_path: Path, flushes: list[str]
) -> None:
    """The cut came after the answer, before the flush: a file rewritten in place holds zeros
    where its new bytes were lost. The next open rolls it forward and says so."""
    ws, before, _after = _big_turn(tmp_path)
    engine = _answering_first(ws)
    assert engine.undo().applied
    torn = "pkg/core/src/f3.py"
    (ws / torn).write_bytes(b"\0" * len(before[torn].encode()))
    reopened = Engine(ws)
    report = reopened.last_recovery
    assert report is not None and report.action == "rolled-forward" and report.left == []
    assert _contents(ws, before) == before and _journal(reopened) == (False, False)


def test_an_edit_made_after_the_answer_is_kept_and_not_reported(tmp_path: Path, flushes: list[str]) -> None:
    ws, before, _after = _big_turn(tmp_path)
    engine = _answering_first(ws)
    assert engine.undo().applied
    edited = "pkg/core/src/f4.py"
    (ws / edited).write_text(before[edited] + "# the person's line\n")
    reopened = Engine(ws)
    assert reopened.last_recovery is None and _journal(reopened) == (False, False)
    assert (ws / edited).read_text() == before[edited] + "# the person's line\n"


def test_another_process_s_operation_recovers_the_journal_and_never_writes_over_it(
    tmp_path: Path, flushes: list[str]
) -> None:
    """A second long-lived engine (the language server beside the resident) starts an operation
    while the first one's journal waits for its flush: it flushes and removes that journal first
    (its files were all the first operation's), then writes its own."""
    ws, before, after = _big_turn(tmp_path)
    first = _answering_first(ws)
    second = open_engine(ws, long_lived=True)
    assert first.undo().applied
    assert second.redo().applied and _contents(ws, after) == after
    assert len(flushes) >= 2 and _journal(second) == (False, False)  # the first one's files, then its own
    assert second.status().last_recovery is None
    first.upkeep()
    assert _journal(first) == (False, False) and _contents(ws, after) == after
    assert first.undo().applied and _contents(ws, before) == before


def test_a_flush_that_fails_after_the_answer_leaves_the_journal_for_the_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flushes: list[str]
) -> None:
    ws, before, _after = _big_turn(tmp_path)
    engine = _answering_first(ws)
    assert engine.undo().applied

    def dying(folder: str) -> bool:
        raise OSError(errno.EIO, os.strerror(errno.EIO), folder)

    with monkeypatch.context() as patched:
        patched.setattr(files, "syncfs", dying)
        engine.upkeep()
    assert _journal(engine) == (True, True)
    reopened = Engine(ws)
    assert reopened.last_recovery is None and _journal(reopened) == (False, False)
    assert _contents(ws, before) == before
