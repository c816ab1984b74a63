"""A step's copy of the user's git index (``brackets.py``: ``icopy-``/``ilink-``): steps that
begin on the same version of the index share one copy, so a shell step on an index nobody
rewrote copies nothing (counted at the copy itself) and leaves no 12 MB to unlink at its end; a
step during which the agent staged a file still knows the index as it was at its start (the
shared copy is Takeback's own file: git's rename of a new index leaves it whole); a copy no step
holds any more goes when a step begins on another version (the newest stays, also once the
session's steps are discarded, for the next step) and at gc, which keeps an open step's; a step whose linked copy is gone is a torn file, as one whose embedded copy is cut
short; the user's index is never written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import git, make_repo
from takeback.engine import brackets
from takeback.engine.engine import Engine

from .support import open_engine


def _copies(folder: Path) -> list[str]:
    copies = folder.parent / brackets.INDEX_COPIES
    return sorted(p.name for p in copies.iterdir()) if copies.exists() else []


def _links(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(brackets.LINK_PREFIX))


@pytest.fixture
def copied(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of every index copy a step makes (``brackets.copy_range``, counted for real)."""
    sizes: list[int] = []
    real = brackets.copy_range

    def counting(source: int, target: int, offset: int, size: int) -> None:
        sizes.append(size)
        real(source, target, offset, size)

    monkeypatch.setattr(brackets, "copy_range", counting)
    return sizes


def _after_a_step(tmp_path: Path) -> tuple[Path, Engine, Path]:
    """A repository, its engine and its store's brackets folder, one step on it ended."""
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    engine.begin_step("warm", session="s")
    engine.end_step("warm", "Bash: nothing")
    return ws, engine, engine.store.path / "brackets"


def test_steps_on_an_unchanged_index_copy_it_once(tmp_path: Path, copied: list[int]) -> None:
    ws = make_repo(tmp_path / "ws")
    index = ws / ".git" / "index"
    stamp = os.stat(index)
    engine = open_engine(ws)
    folder = engine.store.path / "brackets"
    engine.begin_step("bash-1", session="s")
    assert copied == [stamp.st_size] and len(_copies(folder)) == 1 and len(_links(folder)) == 1
    (ws / "README.md").write_text("one\n")
    assert engine.end_step("bash-1", "Bash: one") is not None
    assert _links(folder) == [] and len(_copies(folder)) == 1  # kept for the next step
    kept = os.stat(folder.parent / brackets.INDEX_COPIES / _copies(folder)[0]).st_ino
    for n in range(2, 5):  # shell steps that change nothing, and one that changes a file
        engine.begin_step(f"bash-{n}", session="s")
        step_file = next(p for p in folder.iterdir() if p.name.startswith(brackets.STEP_PREFIX))
        opened = brackets.read_named(folder, step_file.name)
        assert opened is not None and opened.index is not None  # the link, nothing embedded
        assert opened.index.path.name.startswith(brackets.LINK_PREFIX) and opened.index.offset == 0
        if n == 4:
            (ws / "src/app.py").write_text("changed\n")
        entry = engine.end_step(f"bash-{n}", f"Bash: {n}")
        assert (entry is not None) == (n == 4)
    assert copied == [stamp.st_size]  # the first step's copy only
    assert [os.stat(folder.parent / brackets.INDEX_COPIES / c).st_ino for c in _copies(folder)] == [kept] and _links(folder) == []
    after = os.stat(index)
    assert (after.st_ino, after.st_mtime_ns, after.st_size, after.st_nlink) == (
        stamp.st_ino, stamp.st_mtime_ns, stamp.st_size, stamp.st_nlink)
    assert engine.undo().verdict == "safe" and (ws / "src/app.py").read_text() == "def main():\n    return 1\n"


def test_a_step_that_stages_its_change_keeps_the_index_it_began_with(tmp_path: Path, copied: list[int]) -> None:
    ws, engine, folder = _after_a_step(tmp_path)
    first = _copies(folder)
    engine.begin_step("bash", session="s")
    (ws / "src/app.py").write_text("staged by the agent\n")
    git(ws, "add", "src/app.py")  # git writes index.lock and renames it over the index
    assert git(ws, "status", "--porcelain") == "M  src/app.py\n"  # clean against the new index
    entry = engine.end_step("bash", "Bash: git add")
    assert entry is not None and [f.path for f in entry.files] == ["src/app.py"]
    assert engine.file_at(entry.id, "src/app.py", "before") == b"def main():\n    return 1\n"
    assert len(copied) == 1 and _copies(folder) == first
    engine.begin_step("next", session="s")  # a new version: copied, the old one no step holds goes
    assert len(copied) == 2 and len(_copies(folder)) == 1 and _copies(folder) != first
    engine.end_step("next", "Bash: nothing")


def test_discarded_steps_take_their_links_along_and_the_copy_stays_for_the_next(tmp_path: Path, copied: list[int]) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    folder = engine.store.path / "brackets"
    engine.begin_step("never-ended", session="s")
    engine.begin_step("other", session="t")
    assert engine.discard_steps("s") == 1
    assert len(_links(folder)) == 1 and len(_copies(folder)) == 1  # "other" still holds it
    assert engine.discard_steps("t") == 1
    assert list(folder.iterdir()) == [] and len(_copies(folder)) == 1
    engine.begin_step("next", session="t")  # the index did not change: nothing copied again
    assert len(copied) == 1
    engine.end_step("next", "Bash: nothing")


def test_a_step_whose_linked_copy_is_gone_is_torn(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    folder = engine.store.path / "brackets"
    engine.begin_step("bash", session="s")
    step_file = next(p for p in folder.iterdir() if p.name.startswith(brackets.STEP_PREFIX))
    (folder / _links(folder)[0]).unlink()
    assert [path for path, _ in brackets.torn(folder)] == [step_file]


def test_gc_removes_the_copy_no_step_holds_and_keeps_an_open_steps(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    folder = engine.store.path / "brackets"
    engine.begin_step("open", session="s")
    engine.gc()
    assert len(_copies(folder)) == 1  # linked by the open step
    (ws / "README.md").write_text("changed\n")
    entry = engine.end_step("open", "Bash: echo")
    assert entry is not None and engine.file_at(entry.id, "README.md", "before") == b"# demo\n"
    assert len(_copies(folder)) == 1  # kept for the next step
    engine.gc()
    assert _copies(folder) == [] and list(folder.iterdir()) == []


def test_a_copy_a_power_cut_zero_filled_is_made_again(tmp_path: Path, copied: list[int]) -> None:
    ws, engine, folder = _after_a_step(tmp_path)
    copy = folder.parent / brackets.INDEX_COPIES / _copies(folder)[0]
    copy.write_bytes(bytes(copy.stat().st_size))  # its size kept, its bytes lost
    engine.begin_step("bash", session="s")
    assert len(copied) == 2 and copy.read_bytes() == (ws / ".git" / "index").read_bytes()
    (ws / "src/app.py").write_text("staged\n")
    git(ws, "add", "src/app.py")
    entry = engine.end_step("bash", "Bash: git add")
    assert entry is not None and engine.file_at(entry.id, "src/app.py", "before") == b"def main():\n    return 1\n"
