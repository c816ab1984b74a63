"""Live: an agent's turns shared through git, blamed and taken back by a teammate on another clone.

Two clones and a bare remote in temp folders. Alice works with a real agent program (Claude
Code, installed by scripts/setup-agents.sh and hooked up by ``takeback install``) run offline
against the scripted model server: two prompts, each one Edit of ``src/app.py``. She commits on a
branch, pushes it and ``takeback share push``-es her timeline, while Carol (a third machine)
pushes hers at the same moment. The branch is squash-merged into main on the remote, so none of
Alice's commits reach Bob: only the content, and her timeline through ``share fetch``.

What must hold for Bob, every command a real ``takeback`` process: ``log --remote origin`` lists
both teammates' turns (Carol's too: the concurrent push lost nothing); ``blame`` gives the
squashed lines to Alice's two prompts; ``revert origin/alice#1`` takes back her first turn in
his clone, keeping her second and his own later line (three-way, file bytes checked), as an
entry of his own timeline that ``takeback redo`` takes back again; his git state never moves
but for the file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cli.test_remote import AFTER_TWO, BASE, TIMELINES, _clone, _edit_turn, _squash_merge
from helpers import git, make_repo

from .test_live import HERE, ClaudeCode, _offline_ready, install

PROMPTS = ("add a discount", "round the tax")


def _rounds(app: Path, old: str, new: str) -> list[dict]:
    """Read (Claude Code edits only a file the session has read), Edit, done."""
    return [
        {"calls": [{"tool": "Read", "input": {"file_path": str(app)}}]},
        {"calls": [{"tool": "Edit", "input": {"file_path": str(app), "old_string": old, "new_string": new}}]},
        {"text": "done"},
    ]


@pytest.mark.timeout(600)
def test_bob_blames_and_takes_back_alices_agent_turn_after_a_squash_merge(tmp_path: Path) -> None:
    why = _offline_ready()
    if why:
        pytest.skip(why)
    source = make_repo(tmp_path / "source", {"README.md": "# demo\n", "src/app.py": BASE})
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(remote))
    git(remote, "config", "uploadpack.allowFilter", "true")

    # Alice: a real Claude Code session per prompt, through the hooks takeback install wrote
    folder = tmp_path / "alice"
    git(tmp_path, "clone", "-q", str(remote), str(folder))
    git(folder, "config", "user.email", "alice@example.com")
    git(folder, "config", "user.name", "alice")
    git(folder, "checkout", "-q", "-b", "feature")
    agent = ClaudeCode(tmp_path / "agent")
    if not agent.binary.exists():
        pytest.fail(f"{agent.binary} is missing: scripts/setup-agents.sh installs it")
    alice, told = install(agent, tmp_path / "alice-home", folder)
    agent.trust({**alice.env, **agent.env()}, folder, told)
    app = folder / "src/app.py"
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": {
        PROMPTS[0]: _rounds(app, "return 1", "return 2  # discount"),
        PROMPTS[1]: _rounds(app, "return x", "return round(x)"),
    }}))
    for prompt in PROMPTS:
        proc = subprocess.run(
            ["unshare", "-n", sys.executable, str(HERE / "offline.py"), str(script), "120", "--",
             *agent.command(prompt, resume=False)],
            cwd=folder, env={**alice.env, **agent.env()}, capture_output=True, timeout=180,
        )
        assert proc.returncode == 0, f"claude exited {proc.returncode}\n{proc.stderr.decode()[-3000:]}"
    assert app.read_text() == AFTER_TWO, "the agent did not do what the script said"
    status = alice.json("status")
    assert status["hook_failures"] == 0, status["last_hook_failure"]
    turns = [(e["label"], e["agent"]) for e in alice.json("log") if e["kind"] == "turn"]
    assert [agent_name for _label, agent_name in turns] == ["claude", "claude"], turns
    assert all(any(p in label for label, _a in turns) for p in PROMPTS), turns
    git(folder, "commit", "-qam", "discount and tax")
    git(folder, "push", "-q", "origin", "feature")

    # Carol, a third machine, pushes her timeline at the very moment Alice pushes hers
    carol = _clone(tmp_path, remote, "carol")
    _edit_turn(carol, "carol's readme", "README.md", "# demo", "# demo, by carol")
    with ThreadPoolExecutor(max_workers=2) as pool:
        pushed = list(pool.map(lambda tb: tb.json("share", "push"), (alice, carol)))
    who = pushed[0]["ref"][len(TIMELINES):]
    assert who.startswith("alice@") and all(p["commit"] for p in pushed)
    _squash_merge(tmp_path, remote, "feature")

    # Bob: main (the squash), and the teammates' timelines
    bob = _clone(tmp_path, remote, "bob")
    git(bob.cwd, "pull", "-q", "origin", "main")
    bob.ok("share", "fetch")
    found = {mate["who"].split("@")[0]: [e["number"] for e in mate["entries"]] for mate in bob.json("log", "--remote", "origin")}
    assert found == {"alice": [2, 1], "carol": [1]}, found

    origins = {line["line"]: line["origin"] for line in bob.json("blame", "src/app.py")["lines"]}
    for line, number, prompt in ((2, 1, PROMPTS[0]), (6, 2, PROMPTS[1])):
        origin = origins[line]
        assert (origin["kind"], origin["remote"], origin["who"], origin["number"], origin["agent"]) == (
            "turn", "origin", who, number, "claude"), origin
        assert prompt in origin["label"], origin
    assert origins[1]["kind"] == "before"

    # Bob takes back her first turn in his clone, keeping her second and his own later line
    bob_app = bob.cwd / "src/app.py"
    bob_app.write_text(AFTER_TWO + "# bob's note\n")
    done = bob.json("revert", f"origin/{who}#1")
    assert done["verdict"] == "safe" and done["applied"], done
    taken_back = (BASE.replace("return x", "return round(x)") + "# bob's note\n").encode()
    assert bob_app.read_bytes() == taken_back
    assert git(bob.cwd, "status", "--porcelain") == " M src/app.py\n"
    [entry] = bob.json("log")
    assert entry["kind"] == "revert" and entry["label"].startswith(f"revert origin/{who}#1")

    bob.ok("redo")  # his revert is an entry of his own timeline: taken back like any other
    assert bob_app.read_bytes() == (AFTER_TWO + "# bob's note\n").encode()
    assert {e["kind"] for e in bob.json("log")} == {"revert", "redo"}
