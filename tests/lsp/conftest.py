"""Fixtures for the language-server tests: a real git repository and a real server process,
initialised with the Neovim and the VS Code capability snapshots in turn."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio

from helpers import make_repo

from .editor import Editor, start
from .raw import RawServer

CLIENTS = ["neovim", "visual_studio_code"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "repo",
        {
            "README.md": "# demo\n",
            "src/app.py": "def main():\n    return 1\n\n\ndef other():\n    return 2\n",
            "src/util.py": "def helper(x):\n    return x * 2\n",
        },
    )


@pytest_asyncio.fixture(params=CLIENTS)
async def editor(request: pytest.FixtureRequest, repo: Path, isolated_environment: Path) -> Editor:
    ed, _result = await start(request.param, [repo])
    ed.client_name = request.param  # type: ignore[attr-defined]
    yield ed
    await ed.client.shutdown_session()
    await ed.client.stop()


@pytest.fixture
def raw(repo: Path, isolated_environment: Path, tmp_path: Path):
    """A real server spoken to in raw frames (``raw.py``), initialised on the repository."""
    server = RawServer(repo, tmp_path / "server.log")
    server.initialize()
    yield server
    server.close()
