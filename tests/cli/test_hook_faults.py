"""``takeback hook`` when the machine around it fails: it still exits 0 and prints nothing on
stdout (a hook never breaks its agent), and what it could not do is said where the person
finds it. A stdin that fails to read (open for writing only), a hook started in a folder
deleted under it (coverage cannot measure that process: it needs its folder to start), a state
folder where no store can be made (the failure goes to stderr, the one place left), the hook
reached through the full command line (``takeback --json hook``). Real processes, real captured
Claude Code payloads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .conftest import Takeback

CLAUDE = json.loads((Path(__file__).parent / "hook_payloads" / "claude.json").read_text())["payloads"]
PROMPT = CLAUDE["UserPromptSubmit"]["prompt"]


def payload(event: str, repo: Path) -> bytes:
    return json.dumps(CLAUDE[event]).replace("<OUT>/repo", str(repo)).encode()


def hook(tb: Takeback, *argv: str, data: bytes | None = None, env: dict[str, str] | None = None, cwd: Path | None = None,
         stdin: int | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "takeback", *argv], input=data, stdin=stdin, capture_output=True,
                          cwd=cwd or tb.cwd, env={**tb.env, "CLAUDECODE": "1", **(env or {})}, timeout=60)
    assert proc.returncode == 0 and proc.stdout == b"", proc
    return proc


def turns(tb: Takeback) -> list[str]:
    return [e["label"] for e in tb.json("log") if e["kind"] == "turn"]


def test_a_stdin_that_cannot_be_read_is_an_empty_payload_logged_as_a_failure(tb: Takeback, tmp_path: Path) -> None:
    """The agent wired the hook's stdin wrongly (a file open for writing only: every read
    fails): the hook reads nothing, exits 0 and logs why nothing was recorded."""
    wrong = os.open(tmp_path / "write-only", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        proc = hook(tb, "hook", "claude", stdin=wrong)
    finally:
        os.close(wrong)
    assert proc.stderr == b""
    status = tb.json("status")
    assert status["hook_failures"] == 1
    assert "no event name in the claude payload" in status["last_hook_failure"]
    assert turns(tb) == []


def test_a_hook_whose_folder_was_deleted_records_where_its_payload_says(tb: Takeback, tmp_path: Path) -> None:
    """The agent's shell removed the folder it stands in before the hook ran: the payload's
    ``cwd`` still names the project, and the prompt opens its turn there."""
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'rmdir "$PWD" && exec {sys.executable} -m takeback hook claude'
    proc = subprocess.run(["sh", "-c", script], cwd=gone, input=payload("UserPromptSubmit", tb.cwd),
                          env={**tb.env, "CLAUDECODE": "1"}, capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b"", proc
    assert not gone.exists()
    assert turns(tb) == [PROMPT]


def test_when_no_store_can_be_made_the_failure_goes_to_stderr(tb: Takeback, tmp_path: Path) -> None:
    """TAKEBACK_HOME is a file: no store, so no failure log either. The hook still exits 0 with
    nothing on stdout, and says on stderr (which agents keep out of the model's context) what
    failed; with TAKEBACK_DEBUG, the traceback too."""
    blocked = tmp_path / "state-is-a-file"
    blocked.write_text("not a folder\n")
    env = {"TAKEBACK_HOME": str(blocked), "TAKEBACK_RESIDENT": "0"}
    proc = hook(tb, "hook", "claude", data=payload("UserPromptSubmit", tb.cwd), env=env)
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("takeback hook claude: "), proc
    assert str(blocked) in lines[0] and "Not a directory" in lines[0], proc
    debug = hook(tb, "hook", "claude", data=payload("UserPromptSubmit", tb.cwd), env={**env, "TAKEBACK_DEBUG": "1"})
    text = debug.stderr.decode()
    assert text.startswith("Traceback (most recent call last):") and text.endswith(lines[0] + "\n"), debug
    assert blocked.read_text() == "not a folder\n"
    assert turns(tb) == []  # under the usable state folder: nothing was recorded anywhere


def test_the_hook_reached_through_the_full_command_line_records_the_same(tb: Takeback) -> None:
    """A global option before ``hook`` (``takeback --json hook claude``) takes the full command
    line, not the hook's short path: the same recording, the same silence."""
    for event in ("UserPromptSubmit", "Stop"):
        proc = hook(tb, "--json", "hook", "claude", data=payload(event, tb.cwd))
        assert proc.stderr == b"", proc
    (turn,) = [e for e in tb.json("log") if e["kind"] == "turn"]
    assert turn["label"] == PROMPT and turn["ended_by"] == "stop"
