"""The language server's status counts hook payloads read only in part (a prompt holding half an
emoji): recorded anyway — its turn is on the timeline — and shown as ``payloadProblems``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from .editor import Editor


async def test_a_payload_read_only_in_part_is_in_the_status_and_its_turn_on_the_timeline(editor: Editor, repo: Path) -> None:
    before = await editor.request("takeback/status", {})
    assert (before["payloadProblems"], before["lastPayloadProblem"]) == (0, None)
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s-1", "cwd": str(repo),
                          "prompt": "tidy up"}).replace("tidy up", "tidy up \\ud83d")
    proc = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "takeback", "hook", "claude"],
        input=payload, capture_output=True, text=True, cwd=repo, env={**os.environ, "CLAUDECODE": "1"}, timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == ""
    status = await editor.request("takeback/status", {})
    assert status["payloadProblems"] == 1 and "lone surrogate" in status["lastPayloadProblem"]
    assert status["hookFailures"] == 0
    assert [t["label"] for t in status["openTurns"]] == ["tidy up \ufffd"]
