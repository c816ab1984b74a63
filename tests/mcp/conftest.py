"""The MCP tests' shared fixtures: a real git repository and an engine over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import make_repo
from takeback.engine.engine import Engine


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "ws")


@pytest.fixture
def engine(ws: Path) -> Engine:
    return Engine(ws)
