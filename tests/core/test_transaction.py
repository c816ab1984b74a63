"""Transactions (engine/transaction.py): every change to the timeline is one log commit, a
change that fails publishes nothing and leaves the open turns open, calls made inside a
transaction join it, and a transaction that lets the lock go for an editor notices when the
log moved meanwhile."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from helpers import write_files
from takeback.core.clock import new_id, now
from takeback.core.models import BatchChange, Check, CheckRecorded, RecordEnvelope
from takeback.errors import StateError, StoreError, TakebackError
from takeback.storage.store import Store
from takeback.workspace.files import Workspace

from .support import batch, open_engine


def _log(engine) -> list[list[str]]:
    """The record types of each log commit, oldest first."""
    head = engine.store.head()
    chain = engine.store.commit_chain(head, None) if head else []
    return [[r.type for r in RecordEnvelope.model_validate_json(engine.store.read_meta(oid)).records] for oid in chain]


def _open_files(engine) -> list[str]:
    return sorted(p.name for p in (engine.store.path / "brackets").iterdir())


def test_ending_every_open_turn_is_one_log_commit(ws: Path, engine) -> None:
    engine.begin_turn(label="first session", session="s1", bracket=False)
    engine.begin_turn(label="second session", session="s2", bracket=False)
    batch(engine, ws, {"a.txt": "a\n"}, session="s1")
    batch(engine, ws, {"b.txt": "b\n"}, session="s2")
    before = len(_log(engine))
    ended = engine.end_turn()
    assert ended.notices and "also ended turn #1" in ended.notices[0]
    assert len(_log(engine)) == before + 1 and _log(engine)[-1] == ["end", "end"]
    assert _open_files(engine) == []
    assert [(e.number, e.state) for e in engine.entries()] == [(2, "applied"), (1, "applied")]


def test_calls_inside_a_transaction_join_it_and_publish_once(ws: Path, engine) -> None:
    entry, _ = batch(engine, ws, {"a.txt": "a\n"})
    before = len(_log(engine))
    with engine.transaction():
        engine.record_check(entry.id, "tests", "failed", exit_code=1)
        engine.record_check(entry.id, "tests", "passed", exit_code=0)
        assert engine.entry(entry.id).checks_passed is True  # what was added is seen at once
        assert len(_log(engine)) == before  # and published only at the end
    assert len(_log(engine)) == before + 1 and _log(engine)[-1] == ["check", "check"]
    other = open_engine(ws)  # another process reads what the log holds
    assert [c.status for c in other.entry(entry.id).checks] == ["failed", "passed"]


def test_a_transaction_that_raises_publishes_nothing_and_the_turn_stays_open(ws: Path, engine) -> None:
    engine.begin_turn(label="open")
    write_files(ws, {"made.txt": "by the agent\n"})
    head = engine.store.head()
    with pytest.raises(RuntimeError, match="half-way"), engine.transaction():
        engine.end_turn()  # its end is added to this transaction, its file waits for the publish
        assert engine.status().open_turn is None
        raise RuntimeError("the caller failed half-way")
    assert engine.store.head() == head and _open_files(engine) == ["open-turn"]
    assert engine.status().open_turn.label == "open"  # the timeline is folded again from the log
    assert [f.path for f in engine.end_turn().files] == ["made.txt"]
    assert _log(engine)[-1] == ["begin", "checkpoint", "end"]


def test_a_failed_publish_loses_no_turn(ws: Path, engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk refuses the log commit (the system edge): the turn's begin, which lived only in
    its file, is not lost; ending it again works once the disk does."""
    engine.begin_turn(label="open")
    write_files(ws, {"made.txt": "by the agent\n"})
    real = Store.append

    def refuse(self, *args, **kwargs):
        raise StoreError("cannot write to the store: No space left on device")

    monkeypatch.setattr(Store, "append", refuse)
    with pytest.raises(StoreError, match="No space left"):
        engine.end_turn()
    assert engine.store.head() is None and _open_files(engine) == ["open-turn"]
    assert engine.status().open_turn.label == "open"
    monkeypatch.setattr(Store, "append", real)
    assert [f.path for f in open_engine(ws).end_turn().files] == ["made.txt"]
    assert [(e.number, e.label, e.state) for e in engine.entries()] == [(1, "open", "applied")]


def test_letting_the_lock_go_publishes_first_and_notices_a_moved_log(ws: Path, engine) -> None:
    entry, _ = batch(engine, ws, {"a.txt": "a\n"})
    other = open_engine(ws)
    check = CheckRecorded(id=new_id(), at=now(), entry=entry.id, check=Check(name="lint", status="passed"))
    with engine.transaction() as tx:
        tx.add(check)
        with tx.released():
            assert _log(other)[-1] == ["check"]  # published before the lock was let go
            with pytest.raises(StateError, match="let go while an editor is asked"):
                engine.entries()  # nothing of this thread runs in between
            other.record_check(entry.id, "tests", "passed")  # another process writes meanwhile
        assert tx.moved
        with pytest.raises(StateError, match="the timeline changed while the editor was asked"):
            tx.check_unmoved()
    with engine.transaction() as tx:
        with tx.released():
            pass
        assert not tx.moved
        tx.check_unmoved()
    assert [c.name for c in engine.entry(entry.id).checks] == ["lint", "tests"]


def test_a_batch_the_disk_refuses_is_published_as_not_applied(ws: Path, engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch's record is published before its files are written; when the disk refuses a
    write (the system edge), the files are rolled back and the batch is marked not applied in
    the log, although the transaction it ran in ends with the error."""
    write_files(ws, {"a.txt": "before\n"})
    real = Workspace.write

    def full(self, rel, content, mode, **kwargs):
        if rel == "b.txt":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, rel, content, mode, **kwargs)

    monkeypatch.setattr(Workspace, "write", full)
    changes = [BatchChange(path="a.txt", after=b"after\n"), BatchChange(path="b.txt", after=b"new\n")]
    with pytest.raises(TakebackError, match="cannot write b.txt: no space left on device; nothing was written"):
        engine.apply_batch(changes, label="agent edit")
    monkeypatch.setattr(Workspace, "write", real)
    assert (ws / "a.txt").read_text() == "before\n" and not (ws / "b.txt").exists()
    entry = open_engine(ws).entry("last")  # what the log holds, read by another process
    assert entry.label == "agent edit" and entry.state == "not-applied"
    assert entry.checkpoints[0].applied is False
