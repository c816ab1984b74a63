"""Documented hook payloads with a part missing or of another shape than documented: the event is
still recorded, from what the payload does hold, and nothing is made up. Cursor's
``afterFileEdit`` with no list of edits (the file's before cannot be derived: the turn says
"before unknown"), Windsurf's events with no ``tool_info`` (the turn still ends). The real
``takeback hook`` process, in a real repository.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import Takeback


def hook(tb: Takeback, agent: str, payload: dict) -> None:
    proc = subprocess.run([sys.executable, "-m", "takeback", "hook", agent], input=json.dumps(payload).encode(),
                          capture_output=True, cwd=tb.cwd, env=tb.env, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b""), proc


@pytest.mark.parametrize("edits", [None, "return 1 -> return 5"])
def test_a_cursor_edit_without_its_list_of_edits_is_recorded_before_unknown(tb: Takeback, edits: object) -> None:
    base = {"conversation_id": "conv-1", "generation_id": "gen-1", "workspace_roots": [str(tb.cwd)]}
    hook(tb, "cursor", {**base, "hook_event_name": "beforeSubmitPrompt", "prompt": "make main return 5"})
    (tb.cwd / "src/app.py").write_text("def main():\n    return 5\n")
    hook(tb, "cursor", {**base, "hook_event_name": "afterFileEdit", "file_path": str(tb.cwd / "src/app.py"),
                        **({} if edits is None else {"edits": edits})})
    hook(tb, "cursor", {**base, "hook_event_name": "stop", "status": "completed"})
    (turn,) = [e for e in tb.json("log") if e["kind"] == "turn"]
    assert [cp["label"] for cp in turn["checkpoints"]] == ["edit src/app.py"]
    assert [(f["path"], f["before"]["withheld"]) for f in turn["files"]] == [("src/app.py", "unknown")]
    assert tb.json("status")["hook_failures"] == 0


def test_windsurf_events_without_tool_info_still_open_and_end_the_turn(tb: Takeback) -> None:
    base = {"trajectory_id": "traj-1", "execution_id": "exec-1"}
    hook(tb, "windsurf", {**base, "agent_action_name": "pre_user_prompt", "tool_info": {"user_prompt": "edit app"}})
    hook(tb, "windsurf", {**base, "agent_action_name": "post_cascade_response"})
    (turn,) = [e for e in tb.json("log") if e["kind"] == "turn"]
    assert (turn["label"], turn["session"], turn["ended_by"]) == ("edit app", "traj-1", "stop")
