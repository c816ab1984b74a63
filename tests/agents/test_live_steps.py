"""Live: one step of a real agent's turn taken back, the steps before and after it kept.

A real agent program (Claude Code; Codex CLI, whose edit tool is ``apply_patch``), installed by
scripts/setup-agents.sh and hooked up by ``takeback install``, runs ONE prompt offline against the
scripted model server (``model_server.py``), in which its model makes three tool calls, each in a
round of its own:

1. the write tool creates ``a.txt``;
2. the edit tool changes the first line of the tracked ``b.txt``;
3. the shell tool appends a line to the tracked ``c.txt``.

What must hold: ``takeback show N`` lists exactly three steps, ``#N.1``, ``#N.2``, ``#N.3``, each
with the one file its tool call changed; ``takeback revert '#N.2'`` (the CLI, as a real process)
takes back step 2 only: ``b.txt`` is as before the turn, ``a.txt`` and ``c.txt`` keep the agent's
bytes, the turn is ``partial`` and the log lists the revert as an entry of its own; taking that
revert back (``takeback redo``, and again ``takeback revert`` of the revert entry) gives back the
agent's bytes of every file; the person's git state never changes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.conftest import Takeback
from core.support import full_state
from helpers import git_state, make_repo

from .test_live import HERE, Agent, ClaudeCode, _offline_ready, install
from .test_live_tools import CodexTools

B_BEFORE = "b first line\nb second line\nb third line\n"
B_AFTER = "b first line, edited by step 2\nb second line\nb third line\n"
C_BEFORE = "c first line\n"
C_AFTER = "c first line\nc line appended by step 3\n"
A_AFTER = "a made by step 1\n"
SHELL = "printf 'c line appended by step 3\\n' >> c.txt"


def _claude_rounds(repo: Path) -> list[dict]:
    """Write, Read (Claude Code edits only a file the session has read; a read is no step), Edit, Bash."""
    return [
        {"calls": [{"tool": "Write", "input": {"file_path": str(repo / "a.txt"), "content": A_AFTER}}]},
        {"calls": [{"tool": "Read", "input": {"file_path": str(repo / "b.txt")}}]},
        {"calls": [{"tool": "Edit", "input": {"file_path": str(repo / "b.txt"), "old_string": "b first line\n",
                                               "new_string": "b first line, edited by step 2\n"}}]},
        {"calls": [{"tool": "Bash", "input": {"command": SHELL, "description": "append to c.txt"}}]},
        {"text": "done"},
    ]


def _codex_rounds(repo: Path) -> list[dict]:
    """apply_patch adding a.txt, apply_patch updating b.txt, the shell (Codex has no read tool)."""
    return [
        {"calls": [{"tool": "apply_patch", "input": f"*** Begin Patch\n*** Add File: a.txt\n+{A_AFTER}*** End Patch\n"}]},
        {"calls": [{"tool": "apply_patch", "input": (
            "*** Begin Patch\n*** Update File: b.txt\n@@\n-b first line\n+b first line, edited by step 2\n"
            " b second line\n*** End Patch\n")}]},
        {"calls": [{"tool": "exec_command", "input": {"cmd": SHELL}}]},
        {"text": "done"},
    ]


AGENTS: list[tuple[Callable[[Path], Agent], Callable[[Path], list[dict]]]] = [
    (ClaudeCode, _claude_rounds),
    (CodexTools, _codex_rounds),  # its hooks run with --dangerously-bypass-hook-trust (test_live.py trusts them in Codex)
]


def _run(agent: Agent, tb: Takeback, script: Path) -> None:
    proc = subprocess.run(
        ["unshare", "-n", sys.executable, str(HERE / "offline.py"), str(script), "120", "--",
         *agent.command("Do the three step task", resume=False)],
        cwd=tb.cwd, env={**tb.env, **agent.env()}, capture_output=True, timeout=180,
    )
    assert proc.returncode == 0, f"{agent.name} exited {proc.returncode}\n{proc.stdout.decode()[-2000:]}\n{proc.stderr.decode()[-4000:]}"


def _states(tb: Takeback) -> dict[int, str]:
    return {e["number"]: e["state"] for e in tb.json("log")}


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("make", "rounds"), AGENTS, ids=["claude", "codex"])
def test_the_second_step_is_taken_back_and_the_first_and_third_stay(
    make: Callable[[Path], Agent], rounds: Callable[[Path], list[dict]], tmp_path: Path,
) -> None:
    why = _offline_ready()
    if why:
        pytest.skip(why)
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n", "b.txt": B_BEFORE, "c.txt": C_BEFORE})
    agent = make(tmp_path / "agent")
    if not agent.binary.exists():
        pytest.fail(f"{agent.binary} is missing: scripts/setup-agents.sh installs it")
    tb, _told = install(agent, tmp_path, repo)
    git0 = git_state(repo)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": {"three step task": rounds(repo)}}))

    _run(agent, tb, script)

    after = full_state(repo)
    assert (after[0].get("a.txt"), after[0]["b.txt"], after[0]["c.txt"]) == (
        A_AFTER.encode(), B_AFTER.encode(), C_AFTER.encode()), f"{agent.name} did not do what the script said"
    status = tb.json("status")
    assert status["hook_failures"] == 0, status["last_hook_failure"]
    [turn] = [e for e in tb.json("log") if e["kind"] == "turn"]
    n = turn["number"]
    assert "three step task" in turn["label"] and turn["agent"] == agent.name and turn["state"] == "applied", turn
    assert {f["path"]: f["kind"] for f in turn["files"]} == {"a.txt": "added", "b.txt": "modified", "c.txt": "modified"}

    # The steps the person sees: one per tool call that changed a file, numbered #N.1 to #N.3.
    steps = tb.json("show", str(n))["checkpoints"]
    assert [sorted(cp["paths"]) for cp in steps] == [["a.txt"], ["b.txt"], ["c.txt"]], steps
    shown = tb.ok("show", str(n)).text
    listed = [line.split(None, 2)[1:] for line in shown.splitlines() if line.lstrip().startswith("step ")]
    assert [number for number, _label in listed] == [f"#{n}.1", f"#{n}.2", f"#{n}.3"], shown
    assert all(name in label for (_number, label), name in zip(listed, ("a.txt", "b.txt", "c.txt"))), shown

    reverted = tb.ok("revert", f"#{n}.2")
    assert reverted.text.startswith(f"SAFE: revert of #{n} done as #{n + 1}"), reverted
    now = full_state(repo)
    assert now[0]["b.txt"] == B_BEFORE.encode(), "step 2's change is still there"
    assert {k: v for k, v in now[0].items() if k != "b.txt"} == {k: v for k, v in after[0].items() if k != "b.txt"}
    assert now[1] == after[1]  # modes too
    entries = tb.json("log")
    [entry] = [e for e in entries if e["number"] == n + 1]
    assert entry["kind"] != "turn" and entry["label"].startswith(f"revert step #{n}.2 of turn #{n}"), entry
    assert _states(tb)[n] == "partial"
    assert f"revert step #{n}.2 of turn #{n}" in tb.ok("show", str(n + 1)).text
    assert f"#{n + 1}" in tb.ok("log").text

    tb.ok("redo")  # takes back the newest revert: step 2's change is back
    assert full_state(repo) == after
    assert _states(tb)[n] == "applied"

    again = tb.json("revert", f"{n}.2")  # without '#' too
    assert full_state(repo) == now
    tb.ok("revert", str(again["entry"]["number"]))  # the revert is itself an entry: taken back
    assert full_state(repo) == after
    assert git_state(repo) == git0
