"""The open turn's file (brackets.py): its begin record, the bracket's snapshot and the index
copy in one file; the cheap "was the index rewritten?" check on that copy; stores that kept an
open bracket the older way."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest

from takeback.core.models import EntryBegun
from takeback.engine import brackets
from takeback.engine.brackets import IndexCopy
from takeback.errors import StoreError


def _begun(entry: str = "01JTESTENTRY0000000000000A", number: int = 3) -> EntryBegun:
    return EntryBegun(id=entry, at=datetime(2026, 11, 26, 3, 0, tzinfo=UTC), entry=entry, number=number, label="a turn")


def _index(path: Path, body: bytes, trailer: bytes) -> Path:
    path.write_bytes(body + trailer)
    return path


def _copy_of(tmp_path: Path, index_file: Path) -> IndexCopy:
    """The index copy as the open turn's file holds it: behind the two header lines."""
    folder = tmp_path / "store"
    brackets.write(folder, _begun(), {"kind": "git", "dirty": {}}, index_file, fsync=False)
    opened = brackets.read(folder, _begun().entry)
    assert opened is not None and opened.index is not None and opened.index.offset > 0
    return opened.index


def test_the_file_holds_the_begin_the_snapshot_and_the_index(tmp_path: Path) -> None:
    index = _index(tmp_path / "index", b"DIRC" + os.urandom(5000), b"\x11" * 20)
    folder = tmp_path / "store"
    snapshot = {"kind": "git", "dirty": {"a.txt": None}}
    brackets.write(folder, _begun(), snapshot, index, fsync=True)
    assert [p.name for p in folder.iterdir()] == [brackets.FILE_NAME]  # no temporary file left
    assert brackets.read_begun(folder) == _begun()
    opened = brackets.read(folder, _begun().entry)
    assert opened is not None and opened.begun == _begun() and opened.scan == snapshot
    assert opened.index is not None and opened.index.size == index.stat().st_size
    data = (folder / brackets.FILE_NAME).read_bytes()
    assert data[opened.index.offset:] == index.read_bytes()
    assert brackets.read(folder, "01JSOMEOTHERENTRY000000000") is None  # another turn's file
    opened.remove()
    assert brackets.read_begun(folder) is None and list(folder.iterdir()) == []


def test_nested_repositories_indexes_follow_the_outer_one(tmp_path: Path) -> None:
    """Each nested repository's index is copied behind the outer one, each read back whole and
    in its place; a nested index that is gone at begin has no copy."""
    outer = _index(tmp_path / "index", b"DIRC" + os.urandom(3000), b"\x11" * 20)
    lib = _index(tmp_path / "lib-index", b"DIRC" + os.urandom(700), b"\x22" * 20)
    deep = _index(tmp_path / "deep-index", b"DIRC" + os.urandom(90), b"\x33" * 20)
    folder = tmp_path / "store"
    nested = {"lib": lib, "lib/deep": deep, "gone": tmp_path / "no-such-index"}
    brackets.write(folder, _begun(), {"kind": "git", "dirty": {}}, outer, fsync=False, nested_sources=nested)
    opened = brackets.read(folder, _begun().entry)
    assert opened is not None and opened.index is not None and sorted(opened.nested) == ["lib", "lib/deep"]
    data = (folder / brackets.FILE_NAME).read_bytes()
    for copy, source in [(opened.index, outer), (opened.nested["lib"], lib), (opened.nested["lib/deep"], deep)]:
        assert data[copy.offset:copy.offset + copy.size] == source.read_bytes()
        assert copy.same_as(source)
    assert data.endswith(deep.read_bytes())


def test_a_turn_without_bracket_or_index(tmp_path: Path) -> None:
    brackets.write(tmp_path, _begun(), None, tmp_path / "no-index-here", fsync=False)
    opened = brackets.read(tmp_path, _begun().entry)
    assert opened is not None and opened.scan is None and opened.index is None


def test_an_unreadable_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / brackets.FILE_NAME).write_bytes(b"something else\n")
    with pytest.raises(StoreError, match="not an open turn's file"):
        brackets.read_begun(tmp_path)
    (tmp_path / brackets.FILE_NAME).write_bytes(b"takeback open turn 1\n{not json\n")
    with pytest.raises(StoreError, match="unreadable open turn"):
        brackets.read_begun(tmp_path)


def test_a_failed_write_leaves_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    brackets.write(tmp_path, _begun(), {"kind": "walk", "files": {}}, None, fsync=False)

    def full(*args, **kwargs):  # the system edge: the store's disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError, match="No space left"):
        brackets.write(tmp_path, _begun("01JTESTENTRY0000000000000B", 4), None, None, fsync=False)
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == [brackets.FILE_NAME]
    assert brackets.read_begun(tmp_path) == _begun()


def test_the_copy_parses_as_the_index_it_was(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n")
    (repo / "b.bin").write_bytes(b"\x00\x01")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    copy = _copy_of(tmp_path, repo / ".git" / "index")
    index = copy.parsed()
    assert sorted(e.path for e in index) == ["a.txt", "b.bin"]
    assert index["a.txt"].id == pygit2.Repository(str(repo)).index["a.txt"].id
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == [brackets.FILE_NAME]  # scratch removed


def test_equal_files_are_equal_by_their_trailer(tmp_path: Path) -> None:
    body = b"DIRC" + os.urandom(4000)
    copy = _copy_of(tmp_path, _index(tmp_path / "a", body, b"\x11" * 20))
    assert copy.same_as(_index(tmp_path / "b", body, b"\x11" * 20))


def test_a_different_size_or_trailer_is_a_rewrite(tmp_path: Path) -> None:
    body = b"DIRC" + os.urandom(4000)
    copy = _copy_of(tmp_path, _index(tmp_path / "a", body, b"\x11" * 20))
    assert not copy.same_as(_index(tmp_path / "b", body + b"x", b"\x11" * 20))
    assert not copy.same_as(_index(tmp_path / "c", body, b"\x22" * 20))


def test_a_zero_trailer_is_compared_in_full(tmp_path: Path) -> None:
    """index.skipHash writes no checksum: equal trailers then prove nothing."""
    body = bytearray(b"DIRC" + os.urandom(3 << 20))
    copy = _copy_of(tmp_path, _index(tmp_path / "a", bytes(body), b"\x00" * 20))
    assert copy.same_as(_index(tmp_path / "b", bytes(body), b"\x00" * 20))
    body[10] ^= 0xFF
    assert not copy.same_as(_index(tmp_path / "c", bytes(body), b"\x00" * 20))


def test_missing_files(tmp_path: Path) -> None:
    copy = _copy_of(tmp_path, _index(tmp_path / "a", b"DIRC" + b"\x01" * 100, b"\x11" * 20))
    assert not copy.same_as(tmp_path / "missing")  # the index went away
    (tmp_path / "store" / brackets.FILE_NAME).unlink()
    assert not copy.same_as(tmp_path / "a")  # the file holding the copy went away


def test_an_older_store_s_open_bracket_is_read(tmp_path: Path) -> None:
    """Before the open turn's file, a bracket kept <entry>.json and <entry>.index (the begin was
    in the log): a turn opened before an upgrade still ends with what its bracket saw."""
    entry = "01JOLDENTRY000000000000000"
    index = _index(tmp_path / f"{entry}.index", b"DIRC" + os.urandom(100), b"\x11" * 20)
    snapshot = {"kind": "git", "dirty": {"x.txt": None}, "index": str(index)}
    (tmp_path / f"{entry}.json").write_text(json.dumps(snapshot))
    opened = brackets.read(tmp_path, entry)
    assert opened is not None and opened.begun is None and opened.scan == snapshot
    assert opened.index == IndexCopy(index, 0, index.stat().st_size)
    assert brackets.snapshots(tmp_path) == [snapshot]
    opened.remove()
    assert list(tmp_path.iterdir()) == []
