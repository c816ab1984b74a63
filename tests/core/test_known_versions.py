"""A long-lived engine's git scans keep the versions they captured (``scan.KnownVersions``): a
shell step's begin and end read again none of the dirty files that did not change since the last
step, and under the walk scanner's stat-cache rule only: a file changed behind the same size
and modification time (its ctime moved) is read and its change recorded; a file captured in the
same timestamp tick as its last change is read again; a version whose content the store no
longer holds is captured again. Real git repositories in temp folders, the in-process engine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import make_repo
from takeback.engine.engine import Engine
from takeback.scanning import scan
from takeback.workspace.capture import Capturer

from .support import open_engine

NOTES = [f"notes/n{i}.md" for i in range(6)]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file a capture read from disk."""
    seen: list[str] = []
    original = Capturer.from_disk

    def from_disk(self: Capturer, rel: str):  # type: ignore[no-untyped-def]
        seen.append(rel)
        return original(self, rel)

    monkeypatch.setattr(Capturer, "from_disk", from_disk)
    return seen


def _engine(tmp_path: Path) -> tuple[Path, Engine]:
    ws = make_repo(tmp_path / "ws")
    (ws / "notes").mkdir()
    for rel in NOTES:  # untracked files: dirty at every step's begin
        (ws / rel).write_text(f"{rel}\n")
    engine = open_engine(ws, long_lived=True)
    engine.defer_upkeep()
    engine.upkeep()  # the watch, as the resident has it
    return ws, engine


def _step(engine: Engine, key: str, change=None):  # type: ignore[no-untyped-def]
    engine.begin_step(key, session="s")
    if change is not None:
        change()
    return engine.end_step(key, f"Bash {key}")


def test_unchanged_dirty_files_are_not_read_again(tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_RACY_NS", 0)  # (every capture here is in the tick of the file's write)
    ws, engine = _engine(tmp_path)
    assert _step(engine, "one") is None
    assert set(NOTES) <= set(reads)  # the first step reads them
    reads.clear()
    entry = _step(engine, "two", lambda: (ws / "notes" / "n1.md").write_text("changed by the command\n"))
    assert entry is not None and [f.path for f in engine.entry(entry.id).files] == ["notes/n1.md"]
    assert reads == ["notes/n1.md"]  # at its end, the one that changed; nothing else, at either side
    engine.close()


def test_a_change_behind_the_same_size_and_time_is_recorded(tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_RACY_NS", 0)
    ws, engine = _engine(tmp_path)
    _step(engine, "one")
    target = ws / NOTES[2]
    info = target.stat()

    def same_size_same_mtime() -> None:
        target.write_text(f"{NOTES[2]}\n".upper())  # the same length
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))  # its modification time put back (ctime moves)

    entry = _step(engine, "two", same_size_same_mtime)
    assert entry is not None and [f.path for f in engine.entry(entry.id).files] == [NOTES[2]]
    assert engine.file_at(entry.id, NOTES[2]) == f"{NOTES[2]}\n".upper().encode()
    engine.close()


def test_a_capture_in_the_tick_of_the_last_write_is_not_trusted(tmp_path: Path, reads: list[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_RACY_NS", 3600 * 10**9)  # every capture is "in the tick" of its file's last change
    ws, engine = _engine(tmp_path)
    _step(engine, "one")
    reads.clear()
    _step(engine, "two")
    assert sorted(set(reads)) == sorted(NOTES)  # read again, at begin and at end
    engine.close()


def test_a_version_whose_content_the_store_lost_is_captured_again(tmp_path: Path, reads: list[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_RACY_NS", 0)
    ws, engine = _engine(tmp_path)
    _step(engine, "one")
    known = engine._scan_cache.known
    assert known is not None
    known.has = lambda oid: False  # as after another process's gc
    reads.clear()
    _step(engine, "two")
    assert set(NOTES) <= set(reads)
    engine.close()


def test_a_short_lived_engine_keeps_none(tmp_path: Path) -> None:
    engine = open_engine(make_repo(tmp_path / "ws"))
    assert engine._scan_cache.known is None


def test_a_file_gone_is_captured_as_gone_and_the_kept_versions_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_RACY_NS", 0)
    root = tmp_path / "tree"
    root.mkdir()
    captured: list[str] = []

    def capture(rel: str):  # type: ignore[no-untyped-def]
        captured.append(rel)
        path = root / rel
        return scan.FileVersion(oid="1" * 40, mode=0o100644, size=path.stat().st_size) if path.exists() else None

    known = scan.KnownVersions(lambda oid: True)
    assert known.version(str(root / "gone.txt"), "gone.txt", capture) is None and captured == ["gone.txt"]
    monkeypatch.setattr(scan.KnownVersions, "MAX", 2)
    for name in ("a", "b", "c"):
        (root / name).write_text(name)
        assert known.version(str(root / name), name, capture) is not None
    captured.clear()
    assert known.version(str(root / "c"), "c", capture) is not None and captured == []  # kept
    assert known.version(str(root / "a"), "a", capture) is not None and captured == ["a"]  # forgotten when the third came
