"""An open turn's file in the store (``brackets/``) at its edges, through the engine's public API
on real folders: a git bracket's file cut short inside its index copy is set aside and reported,
never left to block every command; a large walk snapshot (a plain folder of many files) is read
by every command cheaply and still ends the turn exactly; a file whose settings or snapshot were
tampered with is refused by name, nothing written; a turn begun by an older version (its
begin in the log, its snapshot in ``<entry>.json``) ends from that snapshot, and an unreadable
one is refused by name; gc keeps what an open turn over secrets needs, and goes on past torn
files of the folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import make_repo, tree_state, write_files
from takeback.engine import brackets
from takeback.engine.engine import Engine
from takeback.errors import StoreError

from .support import open_engine

MAGIC_LINES = 2  # the magic line and the begin record, before the header


def _parts(path: Path) -> tuple[list[bytes], dict, bytes]:
    """(the lines before the header, the header, the bytes after it) of an open turn's file."""
    raw = path.read_bytes()
    lines = raw.split(b"\n", MAGIC_LINES + 1)
    return [line + b"\n" for line in lines[:MAGIC_LINES]], json.loads(lines[MAGIC_LINES]), lines[MAGIC_LINES + 1]


def _rewrite(path: Path, head: list[bytes], header: dict, rest: bytes) -> None:
    path.write_bytes(b"".join(head) + json.dumps(header).encode() + b"\n" + rest)


def test_a_git_brackets_file_cut_inside_its_index_copy_is_set_aside(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    engine.begin_turn(label="agent")
    turn_file = engine.store.path / "brackets" / brackets.FILE_NAME
    size = turn_file.stat().st_size
    with open(turn_file, "r+b") as handle:
        handle.truncate(size - 10)
    again = open_engine(ws)
    assert again.entries() == []  # the turn it held is not open any more
    repairs = again.status().repairs
    assert [f.path for r in repairs for f in r.files] == ["brackets/" + brackets.FILE_NAME]
    assert "cut short" in repairs[0].files[0].problem
    again.begin_turn(label="next")
    write_files(ws, {"a.txt": "next\n"})
    assert [f.path for f in again.end_turn().files] == ["a.txt"]


def test_a_large_walk_snapshot_is_read_by_every_command_and_ends_the_turn(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    write_files(ws, {f"pkg{i % 20}/module_{i:05d}.txt": f"{i}\n" for i in range(1500)})
    before = tree_state(ws)
    engine = open_engine(ws)
    engine.begin_turn(label="agent")
    turn_file = engine.store.path / "brackets" / brackets.FILE_NAME
    assert len(turn_file.read_bytes().split(b"\n")[MAGIC_LINES]) > 64 << 10  # past the cheap size check
    assert [e.state for e in open_engine(ws).entries()] == ["open"]
    write_files(ws, {"pkg3/module_00003.txt": "changed\n", "new.txt": "new\n"})
    entry = engine.end_turn()
    assert entry is not None and sorted(f.path for f in entry.files) == ["new.txt", "pkg3/module_00003.txt"]
    assert engine.undo().verdict == "safe" and tree_state(ws) == before


@pytest.mark.parametrize("tampered", ["settings", "snapshot"])
def test_a_tampered_open_turn_file_is_refused(tmp_path: Path, tampered: str) -> None:
    ws = tmp_path / "plain"
    write_files(ws, {"a.txt": "a\n"})
    outside = tmp_path / "outside.txt"
    outside.write_text("the person's\n")
    engine = open_engine(ws)
    engine.begin_turn(label="agent")
    turn_file = engine.store.path / "brackets" / brackets.FILE_NAME
    head, header, rest = _parts(turn_file)
    if tampered == "settings":
        header["config"]["lock_timeout"] = "not a number"
        expected = "unreadable settings in the open turn's file in "
    else:
        header["scan"]["files"]["../outside.txt"] = header["scan"]["files"]["a.txt"]
        expected = r"the open turn's snapshot in .* names '../outside.txt', which is outside the workspace"
    _rewrite(turn_file, head, header, rest)
    write_files(ws, {"a.txt": "agent\n"})
    with pytest.raises(StoreError, match=expected):
        engine.end_turn()
    assert outside.read_text() == "the person's\n" and (ws / "a.txt").read_text() == "agent\n"


def _older_turn(tmp_path: Path) -> tuple[Path, Engine, Path]:
    """A turn as an older version left it: its begin in the log, its snapshot in
    ``brackets/<entry>.json`` (gc publishes the open turn's begin into the log)."""
    ws = tmp_path / "plain"
    write_files(ws, {"a.txt": "a\n", "b.txt": "b\n"})
    engine = open_engine(ws)
    begun = engine.begin_turn(label="older")
    turn_file = engine.store.path / "brackets" / brackets.FILE_NAME
    _head, header, _rest = _parts(turn_file)
    engine.gc()
    turn_file.unlink()
    older = engine.store.path / "brackets" / f"{begun.id}.json"
    older.write_text(json.dumps(header["scan"]))
    return ws, engine, older


def test_a_turn_an_older_version_began_ends_from_its_snapshot(tmp_path: Path) -> None:
    ws, engine, older = _older_turn(tmp_path)
    write_files(ws, {"a.txt": "agent\n", "c.txt": "new\n"})
    entry = engine.end_turn()
    assert entry is not None and sorted(f.path for f in entry.files) == ["a.txt", "c.txt"]
    assert not older.exists()
    assert engine.undo().verdict == "safe"
    assert tree_state(ws) == {"a.txt": b"a\n", "b.txt": b"b\n"}


def test_an_unreadable_older_snapshot_is_refused_by_name(tmp_path: Path) -> None:
    ws, engine, older = _older_turn(tmp_path)
    older.write_text("{not json")
    with pytest.raises(StoreError, match=f"unreadable bracket snapshot {older}: "):
        engine.end_turn()


def test_gc_keeps_what_an_open_turn_over_secrets_needs_past_torn_files(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    write_files(ws, {".env": "API_KEY=one\n", "app.txt": "app\n"})
    engine = open_engine(ws)
    engine.begin_turn(label="agent")
    folder = engine.store.path / "brackets"
    (folder / (brackets.STEP_PREFIX + "0" * 32)).write_bytes(b"")  # a step a crash tore
    (folder / "01OLDERSNAPSHOT.json").write_text("{torn")
    report = engine.gc()
    assert report.kept_entries == 1 and report.removed_entries == 0  # the open turn
    write_files(ws, {"app.txt": "agent\n", ".env": "API_KEY=two\n"})
    entry = engine.end_turn()
    assert entry is not None and sorted(f.path for f in entry.files) == [".env", "app.txt"]
    result = engine.undo()
    assert (ws / "app.txt").read_text() == "app\n"
    assert [s.path for s in result.skipped] == [".env"] and (ws / ".env").read_text() == "API_KEY=two\n"


def test_a_turn_whose_file_is_gone_ends_recording_nothing(tmp_path: Path) -> None:
    """Its begin is in the log (gc published it), its file is gone (removed by hand): what it
    changed cannot be told, so ending it records no change, and nothing on disk is touched."""
    ws = tmp_path / "plain"
    write_files(ws, {"a.txt": "a\n"})
    engine = open_engine(ws)
    begun = engine.begin_turn(label="agent")
    engine.gc()
    (engine.store.path / "brackets" / brackets.FILE_NAME).unlink()
    write_files(ws, {"a.txt": "agent\n"})
    entry = engine.end_turn()
    assert entry is not None and entry.id == begun.id and entry.state == "applied" and entry.files == []
    assert (ws / "a.txt").read_text() == "agent\n"
