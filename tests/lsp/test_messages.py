"""What an editor's person reads from the server when something is not done as asked: an empty
'folder' refused, an open turn ended by a second beginTurn or by an undo, conflicts that say
whether markers can go into them; an agent's hook that failed to record."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from lsprotocol import types

from helpers import tree_state

from .editor import Editor, start
from .test_requests import expect_error


async def test_an_empty_folder_is_refused_not_taken_for_the_first(editor: Editor, repo: Path) -> None:
    before = tree_state(repo)
    for method in ("takeback/beginTurn", "takeback/timeline", "takeback/undo"):
        message = await expect_error(editor, -32602, method, {"folder": ""})
        assert "'folder' is empty: give a workspace folder URI, or leave it out to mean the first folder" in message
    assert tree_state(repo) == before
    assert (await editor.request("takeback/timeline", {}))["entries"] == []


async def test_ending_the_open_turn_is_said(editor: Editor, repo: Path) -> None:
    first = await editor.request("takeback/beginTurn", {"label": "one"})
    assert first["notices"] == []
    (repo / "src/util.py").write_text("changed during one\n")
    second = await editor.request("takeback/beginTurn", {"label": "two"})
    assert second["notices"] == [
        "turn #1 was still open; this begin ended it first (what changed on disk until now is recorded as its changes)"
    ]
    (repo / "README.md").write_text("changed during two\n")
    undone = await editor.request("takeback/undo", {})
    assert undone["applied"] and undone["targetNumber"] == 2
    assert undone["notices"] == [
        "turn #2 was still open; undo ended it first (what changed on disk during it is recorded as its changes)"
    ]


async def test_a_binary_conflict_is_not_offered_markers(editor: Editor, repo: Path) -> None:
    (repo / "logo.bin").write_bytes(b"\x00\x01")
    await editor.request("takeback/beginTurn", {"label": "binary"})
    (repo / "logo.bin").write_bytes(b"\x00\x02")
    await editor.request("takeback/endTurn", {})
    (repo / "logo.bin").write_bytes(b"\x00\x03")
    result = await editor.request("takeback/undo", {"dryRun": True})
    (conflict,) = result["conflicts"]
    assert (conflict["path"], conflict["binary"], conflict["markersPossible"]) == ("logo.bin", True, False)
    assert conflict["advice"].startswith("conflict markers cannot be written into it (it is binary)")
    assert "markers" not in result["nextAction"]


async def _hook_with_bad_payload(repo: Path) -> None:
    """An agent's hook that fails (its payload is not JSON): it logs the failure in the store."""
    env = {**os.environ, "CLAUDECODE": "1"}
    proc = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "takeback", "hook", "claude"],
        input="{not json", capture_output=True, text=True, cwd=repo, env=env, timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == ""


async def _announced(editor: Editor, reason: str, count: int) -> list[dict]:
    for _ in range(100):
        found = [n for n in editor.notifications if n["reason"] == reason]
        if len(found) >= count:
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"expected {count} {reason} notification(s): {editor.notifications}")


async def test_a_hook_failure_is_announced_and_said_once(editor: Editor, repo: Path) -> None:
    """The poller sees the store's hook failure log grow: the client is told to refresh (its
    status now counts the failure), and the person is warned once, not at every failure."""
    assert (await editor.request("takeback/status", {}))["hookFailures"] == 0
    await _hook_with_bad_payload(repo)
    (first,) = await _announced(editor, "hook-failure", 1)
    assert first["folder"] == editor.uri("").rstrip("/")
    status = await editor.request("takeback/status", {})
    assert status["hookFailures"] == 1 and "claude" in status["lastHookFailure"]
    warnings = [m.message for m in editor.client.messages if m.type == types.MessageType.Warning]
    assert len(warnings) == 1 and "an agent's hook failed to record" in warnings[0], warnings
    assert "1 failure logged" in warnings[0] and "hook-failures.log" in warnings[0]

    await _hook_with_bad_payload(repo)
    await _announced(editor, "hook-failure", 2)
    assert (await editor.request("takeback/status", {}))["hookFailures"] == 2
    assert len([m for m in editor.client.messages if m.type == types.MessageType.Warning]) == 1


async def test_a_client_that_shows_hook_failures_itself_can_turn_the_message_off(
    repo: Path, isolated_environment: Path
) -> None:
    await _hook_with_bad_payload(repo)  # before the server starts: in its status only
    editor, _ = await start("visual_studio_code", [repo], {"hookFailureMessages": False})
    try:
        assert (await editor.request("takeback/status", {}))["hookFailures"] == 1
        await _hook_with_bad_payload(repo)
        await _announced(editor, "hook-failure", 1)
        assert (await editor.request("takeback/status", {}))["hookFailures"] == 2
        assert [m for m in editor.client.messages if m.type == types.MessageType.Warning] == []
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()
