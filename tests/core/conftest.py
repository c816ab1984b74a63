"""Fixtures for the core tests: real git repositories and plain folders in temp folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import make_repo, write_files

from .support import open_engine

PLAIN_FILES = {
    "README.md": "# demo\n",
    "src/app.py": "def main():\n    return 1\n",
    "src/util.py": "def helper(x):\n    return x * 2\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with three committed files."""
    return make_repo(tmp_path / "ws")


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """A folder that is not a git repository, with the same three files."""
    ws = tmp_path / "plain"
    ws.mkdir()
    write_files(ws, PLAIN_FILES)
    return ws


@pytest.fixture(params=["git", "plain", "git-walk"])
def ws_kind(request: pytest.FixtureRequest) -> str:
    """git: a repository, scanned with git; plain: no repository (walk scanner);
    git-walk: a repository scanned by the walk scanner (git_scanner=False)."""
    return request.param


@pytest.fixture
def ws(ws_kind: str, tmp_path: Path) -> Path:
    if ws_kind == "plain":
        folder = tmp_path / "plain"
        folder.mkdir()
        write_files(folder, PLAIN_FILES)
        return folder
    return make_repo(tmp_path / "ws", dict(PLAIN_FILES))


@pytest.fixture
def engine(ws: Path, ws_kind: str):
    return open_engine(ws, git_scanner=ws_kind != "git-walk")
