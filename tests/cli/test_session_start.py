"""A session's start (Claude Code's and Codex's ``SessionStart``, Gemini CLI's, Copilot CLI's
``sessionStart``, OpenCode's ``session.created``): the real ``takeback hook`` with each agent's
captured payload exits 0, prints nothing and records nothing, and leaves a resident process
running whose workspace is ready (``resident status``: ``ready``), before any prompt; the hook
answers before that work is done (the store's lock held by the test keeps it from finishing);
the workspace is the one the session's prompt records into (a subfolder, a plain folder); with
the resident process off it does nothing at all.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .conftest import Takeback
from .test_hooks import captured, failures, hook, turns
from .test_resident import WAIT_SECONDS, resident, started, wait_running, write_step

# agent: its session-start event, and whether the event goes on the command line
STARTS = {
    "claude": ("SessionStart", False),
    "codex": ("SessionStart", False),
    "gemini": ("SessionStart", False),
    "copilot": ("sessionStart", True),
    "opencode": ("session.created", True),
}


def session_start(tb: Takeback, agent: str, folder: Path | None = None, env: dict[str, str] | None = None) -> None:
    """The agent's real session-start hook, run in ``folder`` (default: the repository), whose
    payload names that folder; ``hook`` checks the exit code and the empty stdout."""
    event, on_line = STARTS[agent]
    where = folder or tb.cwd
    payload = captured(agent, event, where)
    hook(tb, agent, payload, event if on_line else None, cwd=where, env=env)


def wait_ready(tb: Takeback, workspace: Path) -> dict:
    """The resident's status once ``workspace`` is ready (its engine's upkeep ran)."""
    deadline = time.monotonic() + WAIT_SECONDS
    status = wait_running(tb)
    while str(workspace) not in status["ready"] and time.monotonic() < deadline:
        time.sleep(0.1)
        status = resident(tb)
    assert status["ready"] == [str(workspace)], status
    return status


@contextmanager
def store_locked(store: Path) -> Iterator[None]:
    """Hold the store's lock (its ``flock``) from this process, as another Takeback would."""
    fd = os.open(store / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@pytest.mark.parametrize("agent", sorted(STARTS))
def test_a_session_start_records_nothing_and_leaves_its_workspace_ready(tb: Takeback, agent: str) -> None:
    before = tb.oplog()
    assert resident(tb)["running"] is False
    session_start(tb, agent)
    status = wait_ready(tb, tb.cwd)
    assert status["workspaces"] == [str(tb.cwd)] and status["requests"] == 0
    assert tb.oplog() == before and turns(tb) == [] and failures(tb) == (0, None)


def test_a_session_start_through_a_running_resident_is_answered_before_the_work_is_done(tb: Takeback) -> None:
    """With the resident process serving (started by a stop, which names no workspace), the
    session start is answered while the store's lock, which the warm-up needs, is still held
    elsewhere; once it is let go the workspace becomes ready. The session's first prompt and
    step are then served by that process and recorded as ever."""
    store = tb.store()
    first = started(tb)
    assert first["ready"] == [] and first["requests"] == 0
    with store_locked(store):
        session_start(tb, "claude")
        time.sleep(0.5)
        status = resident(tb)
        assert status["ready"] == [] and status["requests"] == 0, "the hook did not wait for the warm-up"
    status = wait_ready(tb, tb.cwd)
    assert status["pid"] == first["pid"] and status["requests"] == 0
    hook(tb, "claude", captured("claude", "UserPromptSubmit", tb.cwd))
    write_step(tb, "gen.txt", "generated\n", "toolu_s")
    hook(tb, "claude", captured("claude", "Stop", tb.cwd))
    assert resident(tb)["requests"] == 4
    [turn] = turns(tb)
    assert [f["path"] for f in turn["files"]] == ["gen.txt"] and failures(tb) == (0, None)


def test_the_hook_that_starts_the_resident_does_not_wait_for_the_warm_up(tb: Takeback) -> None:
    """No resident yet: the hook starts one naming the workspace and exits; the process's
    warm-up waits for the store's lock, held here, after the hook is gone."""
    store = tb.store()
    with store_locked(store):
        session_start(tb, "gemini")
        status = wait_running(tb)
        time.sleep(0.5)
        assert resident(tb)["ready"] == [] and status["requests"] == 0
    wait_ready(tb, tb.cwd)


def test_a_session_started_in_a_subfolder_readies_the_workspace_its_prompt_records_into(tb: Takeback) -> None:
    sub = tb.cwd / "src"
    session_start(tb, "copilot", sub)
    wait_ready(tb, tb.cwd)
    hook(tb, "copilot", captured("copilot", "userPromptSubmitted", sub), "userPromptSubmitted", cwd=sub)
    assert [t["label"] for t in turns(tb)] and resident(tb)["workspaces"] == [str(tb.cwd)]


def test_a_session_start_in_a_plain_folder_does_what_its_prompt_would(plain_tb: Takeback) -> None:
    """A folder that is not a git repository is its own workspace for a prompt: a session
    started there readies that one (nothing recorded), and the prompt then records there."""
    tb = plain_tb
    before = tb.oplog()
    session_start(tb, "claude")
    status = wait_ready(tb, tb.cwd)
    assert status["requests"] == 0 and tb.oplog() == before
    assert turns(tb) == [] and failures(tb) == (0, None)
    hook(tb, "claude", captured("claude", "UserPromptSubmit", tb.cwd))
    assert len(turns(tb)) == 1 and resident(tb)["requests"] == 1


def test_with_the_resident_off_a_session_start_does_nothing(tb: Takeback) -> None:
    env = {**tb.env, "TAKEBACK_RESIDENT": "0", "CLAUDECODE": "1"}
    session_start(tb, "claude", env=env)
    assert resident(tb)["running"] is False
    assert not list(Path(tb.env["TAKEBACK_HOME"]).glob("stores/*")), "no engine was opened: no store made"

