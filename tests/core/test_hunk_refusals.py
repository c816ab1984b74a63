"""A hunk of a file that has no lines to name is refused with one clear line, nothing written:
a file not there now, a symlink (its target is not lines), a file whose content the store never
kept (a secret by the policy). Real git repositories in temp folders, the in-process engine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import make_repo
from takeback.core.hunks import HunkAt
from takeback.errors import InvalidInput

from .support import open_engine


def _turn(engine, change) -> None:  # type: ignore[no-untyped-def]
    engine.begin_turn(label="a turn")
    change()
    engine.end_turn()


def test_a_hunk_of_a_file_that_is_not_there_now_is_refused(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"app.py": "one\ntwo\n"})
    engine = open_engine(ws)
    _turn(engine, lambda: (ws / "app.py").write_text("one\nTWO\n"))
    (ws / "app.py").unlink()
    with pytest.raises(InvalidInput, match="is not there now"):
        engine.revert("1", hunk=HunkAt(str(ws / "app.py"), 2))
    assert not (ws / "app.py").exists()


def test_a_hunk_of_a_symlink_is_refused(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"target.txt": "t\n"})
    engine = open_engine(ws)
    _turn(engine, lambda: os.symlink("target.txt", ws / "link"))
    with pytest.raises(InvalidInput, match="is a symlink"):
        engine.revert("1", hunk=HunkAt(str(ws / "link"), 1))
    assert os.readlink(ws / "link") == "target.txt"


def test_a_hunk_of_a_file_the_store_never_kept_is_refused(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {".env": "KEY=1\n"})
    engine = open_engine(ws)
    _turn(engine, lambda: (ws / ".env").write_text("KEY=2\n"))
    with pytest.raises(InvalidInput, match="not stored"):
        engine.revert("1", hunk=HunkAt(str(ws / ".env"), 1))
    assert (ws / ".env").read_text() == "KEY=2\n"
