"""Test-wide isolation: every test gets its own state home, and none may write into the real home."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

_REAL_HOME = Path(os.path.expanduser("~"))


def _home_fingerprint() -> tuple:
    """Top-level entries of the real home and of its state folder (cheap, catches stray writes)."""
    state = _REAL_HOME / ".local" / "state" / "takeback"
    names = tuple(sorted(os.listdir(_REAL_HOME))) if _REAL_HOME.exists() else ()
    takeback = tuple(sorted(os.listdir(state))) if state.exists() else ()
    return names, takeback


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Point every store and config lookup at a temp folder; fail if the real home changed."""
    base = tmp_path_factory.mktemp("env")
    home = base / "home"
    home.mkdir()
    monkeypatch.setenv("TAKEBACK_HOME", str(base / "state"))
    monkeypatch.setenv("XDG_STATE_HOME", str(base / "xdg-state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "xdg-data"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        monkeypatch.delenv(name, raising=False)
    before = _home_fingerprint()
    yield base
    assert _home_fingerprint() == before, "a test wrote into the real home directory"
