"""A turn's begin waits in the open turn's file and is published with the turn's first record
(brackets.py): nothing reaches the log at begin, every process still sees the open turn, and
what the log ends up holding is what it held when begin published at once."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import git, write_files
from takeback.core.models import RecordEnvelope
from takeback.engine import brackets

from .support import batch, open_engine


def _log(engine) -> list[list[str]]:
    """The record types of each log commit, oldest first."""
    head = engine.store.head()
    chain = engine.store.commit_chain(head, None) if head else []
    return [[r.type for r in RecordEnvelope.model_validate_json(engine.store.read_meta(oid)).records] for oid in chain]


def test_begin_publishes_nothing_and_end_publishes_the_turn_at_once(ws: Path, engine) -> None:
    engine.begin_turn(label="first")
    assert engine.store.head() is None and _log(engine) == []
    other = open_engine(ws)  # another process opening the store
    assert other.status().open_turn.label == "first"
    assert [(e.number, e.state) for e in other.entries()] == [(1, "open")]
    write_files(ws, {"made.txt": "by a shell command\n"})
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["made.txt"]
    assert _log(engine) == [["begin", "checkpoint", "end"]]
    assert list((engine.store.path / "brackets").iterdir()) == []
    assert [(e.number, e.state) for e in other.entries()] == [(1, "applied")]


def test_a_batch_in_the_open_turn_publishes_its_begin(ws: Path, engine) -> None:
    engine.begin_turn(label="mixed")
    batch(engine, ws, {"src/app.py": "def main():\n    return 2\n"})
    assert _log(engine) == [["begin", "checkpoint"]]
    other = open_engine(ws)
    assert other.status().open_turn.label == "mixed" and other.timeline.tentative is None
    write_files(ws, {"src/app.py": "def main():\n    return 2\n", "later.txt": "x\n"})
    entry = other.end_turn()  # the other process ends it: it reads the bracket's file too
    assert sorted(f.path for f in entry.files) == ["later.txt", "src/app.py"]
    assert _log(engine) == [["begin", "checkpoint"], ["checkpoint", "end"]]
    assert [(e.number, e.label, e.state) for e in engine.entries()] == [(1, "mixed", "applied")]


def test_an_operation_during_the_open_turn_publishes_it_first(ws: Path, engine) -> None:
    batch(engine, ws, {"a.txt": "one\n"})
    engine.begin_turn(label="open")
    write_files(ws, {"b.txt": "two\n"})
    result = engine.undo()  # ends the open turn (recording b.txt) and undoes it
    assert result.applied and not (ws / "b.txt").exists() and (ws / "a.txt").exists()
    # one transaction, one log commit: the turn it ended (first), then the operation
    assert _log(engine)[1] == ["begin", "checkpoint", "end", "begin", "checkpoint", "operation"]
    assert list((engine.store.path / "brackets").iterdir()) == []
    assert [(e.number, e.kind, e.state) for e in engine.entries()] == [
        (3, "undo", "applied"), (2, "turn", "reverted"), (1, "turn", "applied"),
    ]


def test_an_agent_that_died_leaves_a_turn_the_next_begin_ends(ws: Path, engine) -> None:
    engine.begin_turn(label="died")
    write_files(ws, {"half.txt": "written before the agent died\n"})
    del engine  # the process is gone; only the open turn's file is left
    again = open_engine(ws)
    assert again.status().open_turn.label == "died"
    again.begin_turn(label="next")
    died, = [e for e in again.entries() if e.label == "died"]
    assert died.state == "applied" and [f.path for f in died.files] == ["half.txt"]
    assert again.status().open_turn.label == "next" and again.status().open_turn.number == 2


def test_numbers_follow_the_open_turn(ws: Path, engine) -> None:
    engine.begin_turn(label="one")
    assert engine.begin_turn(label="two").number == 2  # ends #1 first
    assert open_engine(ws).begin_turn(label="three").number == 3
    assert [e.number for e in engine.entries()] == [3, 2, 1]


def test_a_file_left_by_an_ended_turn_is_not_taken_for_an_open_turn(ws: Path, engine) -> None:
    """The process stopped between publishing a turn's end and removing its file: the turn is
    ended in the log, so the file is stale and goes; it never reopens the turn."""
    engine.begin_turn(label="ended")
    open_file = engine.store.path / "brackets" / brackets.FILE_NAME
    kept = open_file.read_bytes()
    engine.end_turn()
    open_file.write_bytes(kept)
    other = open_engine(ws)
    assert other.status().open_turn is None and not open_file.exists()
    assert [(e.label, e.state) for e in other.entries()] == [("ended", "applied")]


def test_gc_with_a_turn_open_keeps_it(ws: Path) -> None:
    engine = open_engine(ws, retention={"max_entries": 2})
    for i in range(4):
        batch(engine, ws, {f"f{i}.txt": f"{i}\n"})
    engine.begin_turn(label="open during gc")
    engine.gc()
    write_files(ws, {"g.txt": "g\n"})
    entry = engine.end_turn()
    assert entry.label == "open during gc" and [f.path for f in entry.files] == ["g.txt"]
    assert open_engine(ws).entry("last").label == "open during gc"


def test_a_turn_opened_by_an_older_version_ends_normally(repo: Path) -> None:
    """Before the open turn's file, begin published its record and kept the bracket's snapshot
    in brackets/<entry>.json with the index copied beside it: such a turn, left open across an
    upgrade, still ends with what its bracket saw."""
    engine = open_engine(repo)
    write_files(repo, {"src/app.py": "def main():\n    return 'person'\n"})  # dirty before the turn
    entry = engine.begin_turn(label="old style")
    opened = brackets.read(engine.store.path / "brackets", entry.id)
    folder = engine.store.path / "brackets"
    index_copy = folder / f"{entry.id}.index"
    index_copy.write_bytes((repo / ".git" / "index").read_bytes())
    (folder / f"{entry.id}.json").write_text(json.dumps({**opened.scan, "index": str(index_copy)}))
    with engine.transaction() as tx:
        tx.publish(tentatives=True)  # the begin reaches the log, as the older version published it
    opened.remove()

    other = open_engine(repo)
    assert other.status().open_turn.label == "old style"
    write_files(repo, {"src/util.py": "changed by the agent\n", "new.txt": "new\n"})
    git(repo, "add", "new.txt")  # the agent stages a file during the turn
    ended = other.end_turn()
    assert sorted(f.path for f in ended.files) == ["new.txt", "src/util.py"]  # not the person's app.py
    assert list(folder.iterdir()) == []
    other.undo()
    assert (repo / "src/app.py").read_text() == "def main():\n    return 'person'\n"
    assert not (repo / "new.txt").exists()


def test_a_folder_that_becomes_a_repository_during_the_turn(plain: Path) -> None:
    """Begun in a plain folder (a walk's snapshot), ended after the agent ran ``git init`` and
    committed: the walk's snapshot is compared by a walk, and the turn records the agent's files."""
    engine = open_engine(plain)
    engine.begin_turn(label="init")
    write_files(plain, {"src/app.py": "def main():\n    return 'agent'\n", "new.txt": "new\n"})
    git(plain, "init", "-q")
    git(plain, "add", "-A")
    git(plain, "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-qm", "agent's commit")
    entry = engine.end_turn()
    assert sorted(f.path for f in entry.files) == ["new.txt", "src/app.py"]


def test_a_repository_removed_during_the_turn_is_reported(repo: Path) -> None:
    import shutil

    engine = open_engine(repo)
    engine.begin_turn(label="rm .git")
    shutil.rmtree(repo / ".git")
    write_files(repo, {"after.txt": "x\n"})
    entry = engine.end_turn()
    assert entry.files == [] and entry.state == "applied"
    assert any("was not recorded" in n and "git repository" in n for n in entry.notices), entry.notices
