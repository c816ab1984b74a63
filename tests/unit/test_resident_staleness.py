"""The resident process's look at its own code (``resident/staleness.py``): a loaded module's
file written, touched, replaced or removed is a change; Python writing its ``__pycache__`` is
not; while the watch is quiet no file is stamped again (the per-request cost it removes); and
without a watch (a file system that raises no events) the stamps alone still find every change.
Real files in a temp folder, a real inotify watch."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from takeback.resident import staleness


def _package(tmp_path: Path) -> tuple[Path, list[Path]]:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = [package / "a.py", package / "sub" / "b.py"]
    for path in files:
        path.write_text("x = 1\n")
    return package, files


@pytest.fixture
def stats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file ``staleness.stamp`` stats."""
    seen: list[str] = []
    original = os.stat

    def counting(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(str(path))
        return original(path, *args, **kwargs)

    monkeypatch.setattr(staleness.os, "stat", counting)
    return seen


@pytest.mark.parametrize("change", ["written", "touched", "replaced", "removed"])
@pytest.mark.parametrize("watched", [True, False])
def test_a_change_to_a_loaded_module_is_found(tmp_path: Path, change: str, watched: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    package, files = _package(tmp_path)
    if not watched:  # a file system that raises no events: the stamps at each call
        monkeypatch.setattr(staleness, "_watch", lambda _package: None)
    code = staleness.Code(package, files)
    assert not code.changed() and not code.changed()
    target = files[1]
    if change == "written":
        target.write_text("x = 2\n")
    elif change == "touched":
        info = target.stat()
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))  # as an upgrade would
    elif change == "replaced":
        fresh = target.with_suffix(".new")
        fresh.write_text("x = 1\n")
        fresh.replace(target)
    else:
        target.unlink()
    assert code.changed() and code.changed()  # and it stays changed
    code.close()


def test_a_quiet_watch_stamps_nothing_and_pycache_writes_are_quiet(tmp_path: Path, stats: list[str]) -> None:
    package, files = _package(tmp_path)
    (package / "__pycache__").mkdir()
    code = staleness.Code(package, files)
    assert not code.changed()  # the first call looks (the watch's first period)
    stats.clear()
    for _ in range(5):
        assert not code.changed()
    assert stats == []  # no module stamped while nothing happened
    (package / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"compiled")
    (package / "notes.txt").write_text("not a module\n")  # an event, not a change: the stamps decide
    assert not code.changed()
    assert len(stats) == len(files)
    stats.clear()
    assert not code.changed() and stats == []
    code.close()


def test_modules_loaded_later_are_stamped_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package, files = _package(tmp_path)
    code = staleness.Code(package, files[:1])
    monkeypatch.setattr(staleness, "loaded_modules", lambda _package: files)
    code.add_loaded()
    assert code.files == files and not code.changed()
    files[1].write_text("x = 3\n")
    assert code.changed()
    code.close()


def test_without_a_watch_or_once_it_stops_the_stamps_decide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            stats: list[str]) -> None:
    package, files = _package(tmp_path)

    def unavailable(*_args: object) -> None:
        raise staleness.Unavailable("a file system that raises no events")

    with monkeypatch.context() as patch:
        patch.setattr(staleness, "TreeWatch", unavailable)
        code = staleness.Code(package, files)  # no watch: every call stamps
    stats.clear()
    assert not code.changed() and len(stats) == len(files)
    code.close()
    watched = staleness.Code(package, files)
    assert not watched.changed()
    watched._watch.close()  # type: ignore[union-attr]  # as a watch that stopped working
    stats.clear()
    assert not watched.changed() and len(stats) == len(files)  # the stamps decided, the watch dropped
    assert watched._watch is None
    files[0].write_text("x = 4\n")
    assert watched.changed()
