"""A write that asks an editor lets the store's lock go while it waits (``handoff.py``): another
process (here a second engine, which holds its own lock file description, as a process would)
works meanwhile without waiting, and the write goes on only if nothing moved."""

from __future__ import annotations

from pathlib import Path

import pytest

from takeback.core.merge import Version
from takeback.core.models import BatchChange
from takeback.engine.transaction import MOVED
from takeback.errors import StaleContent, StateError

from .support import open_engine

APP = b"def main():\n    return 1\n"


def editor_that(do):
    calls = []

    def editor(writes):
        calls.append(writes)
        do()
        return True

    editor.calls = calls  # type: ignore[attr-defined]
    return editor


def test_other_processes_work_while_the_editor_is_asked(repo: Path) -> None:
    engine = open_engine(repo, lock_timeout=0.5)
    other = open_engine(repo, lock_timeout=0.5)
    seen = []
    changes = [BatchChange(path="src/app.py", before=APP, after=b"agent\n"), BatchChange(path="new.txt", after=b"n\n")]
    editor = editor_that(lambda: seen.append([e.number for e in other.entries()]))
    entry, _cp, applied = engine.apply_through(changes, editor=editor, in_editor=["src/app.py"], label="agent")
    assert applied and seen == [[]]  # the other engine read the store while the editor worked
    assert [[(rel, v.content) for rel, v in writes] for writes in editor.calls] == [[("src/app.py", b"agent\n")]]
    assert (repo / "new.txt").read_bytes() == b"n\n"  # written on disk after the editor applied
    assert (repo / "src/app.py").read_bytes() == APP  # the editor's part is the editor's
    assert entry.state == "applied"

    # the undo asks the editor too (app.py open in it)
    overlay = {"src/app.py": Version(b"agent\n", 0o100644)}
    result = engine.undo(overlay=overlay, editor=editor_that(lambda: seen.append(other.status().entries)))
    assert result.applied and seen[-1] == 1 and not (repo / "new.txt").exists()


def test_a_turn_begun_meanwhile_refuses_the_write(repo: Path) -> None:
    engine = open_engine(repo, lock_timeout=0.5)
    other = open_engine(repo, lock_timeout=0.5)
    changes = [BatchChange(path="src/app.py", before=APP, after=b"agent\n"), BatchChange(path="new.txt", after=b"n\n")]
    editor = editor_that(lambda: other.begin_turn(label="hook"))
    with pytest.raises(StateError, match=MOVED):
        engine.apply_through(changes, editor=editor, in_editor=["src/app.py"])
    assert not (repo / "new.txt").exists()
    assert [(e.number, e.state) for e in engine.entries()] == [(1, "open")]  # only the other's turn


def test_a_file_changed_on_disk_meanwhile_refuses_the_write(repo: Path) -> None:
    engine = open_engine(repo)
    engine.apply_batch([BatchChange(path="src/util.py", after=b"agent\n"), BatchChange(path="src/app.py", after=b"agent\n")])
    overlay = {"src/app.py": Version(b"agent\n", 0o100644)}  # open in the editor
    editor = editor_that(lambda: (repo / "src/util.py").write_bytes(b"the person saved this\n"))
    with pytest.raises(StaleContent, match="src/util.py changed on disk while the editor was asked"):
        engine.undo(overlay=overlay, editor=editor)
    assert editor.calls and (repo / "src/util.py").read_bytes() == b"the person saved this\n"
    assert [e.kind for e in engine.entries()] == ["turn"]


def test_a_refusal_records_the_batch_as_not_applied(repo: Path) -> None:
    engine = open_engine(repo)
    changes = [BatchChange(path="src/app.py", before=APP, after=b"agent\n"), BatchChange(path="new.txt", after=b"n\n")]
    entry, _cp, applied = engine.apply_through(changes, editor=lambda writes: False, in_editor=["src/app.py"])
    assert not applied and entry.state == "not-applied" and not (repo / "new.txt").exists()
