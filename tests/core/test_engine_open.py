"""Opening an engine on odd workspaces and stores, through the public API on real folders: an
empty workspace name is refused clearly; a user repository git cannot open (a broken config, a
broken HEAD) still gets turns recorded and undone, its files untouched; a folder or a symlink
loop where the timeline cache goes does not stop the store from opening (the folder is set
aside and reported as a repair); a crafted journal naming a folder outside the workspace and a
log record that is not a record are refused before anything is acted on; a log read past
``CACHE_AFTER_RECORDS`` commits caches the timeline, but not while a turn is open."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from helpers import make_repo, tree_state, write_files
from takeback.core.clock import new_id
from takeback.core.models import BatchChange
from takeback.engine.engine import Engine
from takeback.engine.history import CACHE_AFTER_RECORDS
from takeback.errors import InvalidInput, StoreError

from .support import open_engine


@pytest.mark.parametrize("name", ["", "   "])
def test_an_empty_workspace_name_is_refused_not_taken_for_the_current_folder(name: str, tmp_path: Path) -> None:
    os.chdir(tmp_path)
    with pytest.raises(InvalidInput, match="^the workspace folder is empty: name a folder$"):
        Engine(name)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("broken", ["config", "HEAD"])
def test_a_repository_git_cannot_open_still_gets_turns_recorded_and_undone(broken: str, tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    garbage = "[core\nbroken =\n" if broken == "config" else "not a ref\n"
    (ws / ".git" / broken).write_text(garbage)
    git_files = {p: p.read_bytes() for p in (ws / ".git").rglob("*") if p.is_file()}
    before = tree_state(ws)
    engine = Engine(ws)
    engine.begin_turn(label="agent")
    write_files(ws, {"a.txt": "agent\n", "README.md": "changed\n"})
    engine.end_turn()
    entry = engine.entry("last")
    assert entry.head is None  # git could not say where the person's branch was
    assert sorted(f.path for f in entry.files) == ["README.md", "a.txt"]
    assert engine.undo().verdict == "safe"
    assert tree_state(ws) == before
    assert {p: p.read_bytes() for p in (ws / ".git").rglob("*") if p.is_file()} == git_files


def _one_turn(ws: Path) -> Engine:
    engine = Engine(ws)
    engine.begin_turn(label="agent")
    write_files(ws, {"a.txt": "agent\n"})
    engine.end_turn()
    return engine


def test_a_folder_where_the_timeline_cache_goes_is_set_aside(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = _one_turn(ws)
    cache = engine.store.path / "timeline.json"
    cache.unlink(missing_ok=True)
    cache.mkdir()
    (cache / "left.txt").write_text("not Takeback's\n")
    again = Engine(ws)
    assert [e.label for e in again.entries()] == ["agent"]
    repairs = again.status().repairs
    assert len(repairs) == 1 and repairs[0].files[0].path == "timeline.json"
    assert "a folder stood where the timeline cache goes" in repairs[0].files[0].problem
    kept = Path(repairs[0].folder) / "timeline.json" / "left.txt"
    assert kept.read_text() == "not Takeback's\n"
    assert not cache.exists()
    assert again.undo().verdict == "safe" and not (ws / "a.txt").exists()


def test_a_symlink_loop_where_the_timeline_cache_goes_is_removed(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = _one_turn(ws)
    cache = engine.store.path / "timeline.json"
    cache.unlink(missing_ok=True)
    cache.symlink_to(cache.name)  # points at itself: reading it fails with ELOOP
    again = Engine(ws)
    assert [e.label for e in again.entries()] == ["agent"]
    assert not cache.is_symlink() and again.status().repairs == []


def test_a_journal_naming_a_folder_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = _one_turn(ws)
    outside = tmp_path / "outside"
    outside.mkdir()
    journal = engine.store.path / "journal.json"
    journal.write_text(json.dumps({
        "entry": new_id(), "operation": "undo", "started": datetime.now(UTC).isoformat(), "files": [],
        "folders": ["../outside"],
    }))
    before = tree_state(ws)
    with pytest.raises(StoreError, match=r"names the folder '../outside', which is not inside the workspace: .*remove the journal"):
        Engine(ws)
    assert outside.is_dir() and tree_state(ws) == before and journal.exists()


def test_a_log_commit_that_holds_no_records_is_refused_by_name(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = _one_turn(ws)
    store = engine.store
    with store.locked():
        forged = store.append(b"this is not a record envelope", set(), "forged", store.head())
    with pytest.raises(StoreError, match=f"unreadable record {forged} in "):
        Engine(ws)


def test_the_timeline_is_cached_after_a_long_read_but_not_while_a_turn_is_open(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    for i in range(CACHE_AFTER_RECORDS):
        engine.record_batch([BatchChange(path=f"f{i}.txt", after=b"x\n")], label=f"edit {i}")
    cache = engine.store.path / "timeline.json"
    cache.unlink(missing_ok=True)
    engine.begin_turn(label="still running")
    assert [e.state for e in Engine(ws).entries(limit=1)] == ["open"]
    assert not cache.exists()  # the open turn's begin is not in the log: the cache would not hold it
    engine.end_turn()
    reopened = Engine(ws)
    assert cache.exists() and len(reopened.entries()) == CACHE_AFTER_RECORDS + 1
    cached = json.loads(cache.read_text())
    assert cached["head"] == reopened.store.head()
