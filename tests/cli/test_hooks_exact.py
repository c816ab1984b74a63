"""What the hooks record is proven against the disk: an agent's payload is a hint.

Real ``takeback hook`` processes fed the captured payloads (``hook_payloads/``), in real git
repositories: a payload that cannot be fully decoded still opens and ends its turn and is
counted; relative paths of edit tools start at the agent's folder for that call; an edit tool
whose files cannot be found, or whose files do not account for what changed, is bracketed; and a
before-image rebuilt from an edit reported after it was made is verified, or the file is
"before unknown" and undo skips it, saying so.
"""

from __future__ import annotations

import json

from .conftest import Takeback
from .test_hooks import captured, failures, hook, turns


def test_a_prompt_with_half_an_emoji_still_opens_and_ends_its_turn_and_is_counted(tb: Takeback) -> None:
    repo = tb.cwd
    prompt = json.dumps(captured("claude", "UserPromptSubmit", repo)).replace(
        '"prompt": "', '"prompt": "make it nicer \\ud83d ', 1)
    assert "\\ud83d" in prompt
    hook(tb, "claude", prompt)
    for n in (1, 2):
        fields = {"tool_name": "Write", "tool_use_id": f"toolu_{n}",
                  "tool_input": {"file_path": str(repo / f"f{n}.txt"), "content": f"{n}\n"}}
        hook(tb, "claude", captured("claude", "PreToolUse", repo, **fields))
        (repo / f"f{n}.txt").write_text(f"{n}\n")
        hook(tb, "claude", captured("claude", "PostToolUse", repo, **fields))
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    assert turn["label"].startswith("make it nicer \ufffd ") and turn["ended_by"] == "stop"
    assert [cp["label"] for cp in turn["checkpoints"]] == ["Write f1.txt", "Write f2.txt"]
    status = tb.json("status")
    assert (status["hook_failures"], status["payload_problems"]) == (0, 1)
    assert "lone surrogate" in status["last_payload_problem"] and "claude prompt:" in status["last_payload_problem"]
    assert "payloads   1 read only in part (recorded anyway)" in tb.ok("status").text
    tb.ok("undo")
    assert not (repo / "f1.txt").exists() and not (repo / "f2.txt").exists()


def test_a_payload_that_is_not_utf8_still_opens_its_turn_and_is_counted(tb: Takeback) -> None:
    repo = tb.cwd
    text = json.dumps(captured("copilot", "userPromptSubmitted", repo, prompt="fix \u00e9 please"), ensure_ascii=False)
    data = text.encode("utf-8").replace("\u00e9".encode(), b"\xe9")  # latin-1 inside UTF-8
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "takeback", "hook", "copilot", "userPromptSubmitted"], input=data,
                          capture_output=True, cwd=repo, env=tb.env, timeout=60)
    assert proc.returncode == 0 and proc.stdout == b""
    [turn] = turns(tb)
    assert turn["label"] == "fix \ufffd please" and turn["state"] == "open"
    assert failures(tb) == (0, None) and tb.json("status")["payload_problems"] == 1
