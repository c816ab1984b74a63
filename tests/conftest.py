"""Test-wide isolation: every test gets its own state home, and none may write into the real home."""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import time
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


@pytest.fixture(autouse=True, scope="session")
def resident_processes(tmp_path_factory: pytest.TempPathFactory):
    """The resident processes hooks start (``takeback.resident``) get a runtime folder of this
    test run's own, exit soon when idle, and are all stopped when the run ends."""
    runtime = tmp_path_factory.mktemp("runtime")
    runtime.chmod(0o700)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_RUNTIME_DIR", str(runtime))
        patch.setenv("TAKEBACK_RESIDENT_IDLE", "20")
        patch.setenv("TAKEBACK_PAGER", "")  # no pager for takeback on a test's pseudo-terminal (tests/cli/test_pager.py)
        yield runtime
    stopped: list[int] = []
    for lock in (runtime / "takeback").glob("*.lock") if (runtime / "takeback").is_dir() else []:
        with open(lock, "r+") as held:
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                continue  # nobody holds it: that process is gone
            except BlockingIOError:
                text = held.read().strip()
        if text.isdigit() and int(text) > 1:
            try:
                os.kill(int(text), signal.SIGTERM)
                stopped.append(int(text))
            except OSError:
                pass
    _wait_gone(stopped)


def _wait_gone(pids: list[int], seconds: float = 15.0) -> None:
    """Wait until the processes told to stop have exited (a resident process ends its loop within
    a second of SIGTERM, then writes its coverage data, which scripts/test.sh combines next)."""
    import psutil

    deadline = time.monotonic() + seconds
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(0.05)


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



_LIVE = {"agents", "emacs", "nvim", "vscode"}


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, which scripts/test.sh runs
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Under pytest-xdist (scripts/test.sh runs the whole suite in 2 workers), the tests that
    start a live editor or agent keep to one worker, one after another as in a single process
    (they share the editors' caches and need the most CPU); every other test is sent on its own
    to whichever worker is free. (xdist's own ``xdist_group`` mark cannot do it under pytest 9.2,
    whose node ids xdist's suffix no longer reaches.)"""
    from xdist.scheduler import LoadScopeScheduling

    class LiveTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            parts = nodeid.split("/", 2)
            return "live" if len(parts) > 2 and parts[1] in _LIVE else nodeid

    return LiveTogether(config, log)
