"""Teammates' timelines, read only: ``takeback log --remote``, ``show REMOTE/WHO#N``, ``blame``
naming a teammate's turn, and ``takeback revert REMOTE/WHO#N`` taking one of their turns back in
your own clone.

Real git throughout: a bare remote and clones in temp folders, each clone with its own Takeback
state (its own machine, as far as the store goes), every command a real ``takeback`` process.
Alice's turns are recorded through ``takeback hook claude`` fed Claude Code's own payloads
(``hook_payloads/claude.json``); her branch is squash-merged into main on the remote, so none
of her commits reach Bob: only the content, and her timeline through ``share push``/``fetch``.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import git, make_repo

from .conftest import Takeback, isolated_env
from .test_hooks import captured, hook

TIMELINES = "refs/takeback/timelines/"
BASE = "def main():\n    return 1\n\n\ndef tax(x):\n    return x\n"
AFTER_ONE = "def main():\n    return 2  # discount\n\n\ndef tax(x):\n    return x\n"
AFTER_TWO = "def main():\n    return 2  # discount\n\n\ndef tax(x):\n    return round(x)\n"


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare repository (file://, partial-clone filters allowed) holding ``src/app.py`` = BASE."""
    source = make_repo(tmp_path / "source", {"README.md": "# demo\n", "src/app.py": BASE})
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(bare))
    git(bare, "config", "uploadpack.allowFilter", "true")
    return bare


def _clone(tmp_path: Path, remote: Path, name: str) -> Takeback:
    folder = tmp_path / name
    git(tmp_path, "clone", "-q", str(remote), str(folder))
    git(folder, "config", "user.email", f"{name}@example.com")
    git(folder, "config", "user.name", name)
    return Takeback(folder, isolated_env(tmp_path / f"env-{name}"))


def _edit_turn(tb: Takeback, prompt: str, rel: str, old: str, new: str) -> None:
    """One Claude Code turn, through its hooks: the prompt, an Edit of ``rel``, the stop."""
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, prompt=prompt))
    edit = {"tool_name": "Edit", "tool_use_id": f"toolu_{abs(hash(prompt))}",
            "tool_input": {"file_path": str(repo / rel), "old_string": old, "new_string": new}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **edit))
    path = repo / rel
    path.write_text(path.read_text().replace(old, new, 1))
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **edit))
    hook(tb, "claude", captured("claude", "Stop", repo))


def _squash_merge(tmp_path: Path, remote: Path, branch: str) -> None:
    """The team's review tool: ``branch`` squash-merged into main on the remote, as one new commit."""
    folder = tmp_path / "merger"
    git(tmp_path, "clone", "-q", str(remote), str(folder))
    git(folder, "config", "user.email", "merger@example.com")
    git(folder, "config", "user.name", "merger")
    git(folder, "merge", "-q", "--squash", f"origin/{branch}")
    git(folder, "commit", "-q", "-m", f"{branch} (squashed)")
    git(folder, "push", "-q", "origin", "main")


def _alice_shares(tmp_path: Path, remote: Path) -> tuple[Takeback, str]:
    """Alice: two turns on a branch, committed and pushed with her timeline, squash-merged."""
    alice = _clone(tmp_path, remote, "alice")
    git(alice.cwd, "checkout", "-q", "-b", "feature")
    _edit_turn(alice, "add a discount", "src/app.py", "return 1", "return 2  # discount")
    _edit_turn(alice, "round the tax", "src/app.py", "return x", "return round(x)")
    assert (alice.cwd / "src/app.py").read_text() == AFTER_TWO
    git(alice.cwd, "commit", "-qam", "discount and tax")
    git(alice.cwd, "push", "-q", "origin", "feature")
    who = alice.json("share", "push")["ref"][len(TIMELINES):]
    _squash_merge(tmp_path, remote, "feature")
    return alice, who


def _bob_pulls(tmp_path: Path, remote: Path) -> Takeback:
    bob = _clone(tmp_path, remote, "bob")
    git(bob.cwd, "pull", "-q", "origin", "main")
    assert (bob.cwd / "src/app.py").read_text() == AFTER_TWO
    return bob


def test_bob_lists_alices_turns_and_takes_one_back_keeping_her_later_one(tmp_path: Path, remote: Path) -> None:
    _alice, who = _alice_shares(tmp_path, remote)
    bob = _bob_pulls(tmp_path, remote)
    bob.ok("share", "fetch")

    [listed] = bob.json("log", "--remote", "origin")
    assert (listed["remote"], listed["who"]) == ("origin", who)
    turns = [(e["number"], e["label"], e["agent"], [f["path"] for f in e["files"]]) for e in listed["entries"]]
    assert turns == [(2, "round the tax", "claude", ["src/app.py"]), (1, "add a discount", "claude", ["src/app.py"])]
    text = bob.ok("log", "--remote", "origin").text
    assert f"origin/{who}" in text and "add a discount" in text and "round the tax" in text
    shown = bob.json("show", f"origin/{who}#1", "--patch")
    assert shown["who"] == who and "+    return 2  # discount" in shown["patch"]

    # blame: her squashed lines are her prompts' (Bob's own timeline never saw them)
    lines = bob.json("blame", "src/app.py")["lines"]
    named = {line["line"]: (line["origin"]["kind"], line["origin"]["remote"], line["origin"]["who"],
                            line["origin"]["number"], line["origin"]["label"]) for line in lines}
    assert named[2] == ("turn", "origin", who, 1, "add a discount")
    assert named[6] == ("turn", "origin", who, 2, "round the tax")
    assert named[1][0] == "before" and named[1][1] is None  # (git's commit: the line is older than her turns)
    shown_blame = bob.ok("blame", "src/app.py").text.splitlines()
    assert shown_blame[1].startswith(f"origin/{who} #1.1 claude") and shown_blame[5].startswith(f"origin/{who} #2.1 claude")

    # Bob's own edit of the very line her turn wrote: a conflict, nothing written, and the
    # command the answer names is the teammate's turn again, never this workspace's #1
    app = bob.cwd / "src/app.py"
    app.write_text(AFTER_TWO.replace("return 2  # discount", "return 3"))
    refused = bob("--json", "revert", f"origin/{who}#1")
    assert refused.code == 11 and refused.json()["verdict"] == "refused"
    assert f"takeback revert origin/{who}#1 --on-conflict force" in refused.json()["next_action"]
    assert app.read_text() == AFTER_TWO.replace("return 2  # discount", "return 3")

    # Bob's own edit after hers, elsewhere in the file: kept by the revert
    app = bob.cwd / "src/app.py"
    app.write_text(AFTER_TWO + "# bob's note\n")
    preview = bob.json("revert", "origin/alice#1", "--dry-run")
    assert preview["verdict"] == "safe" and not preview["applied"] and app.read_text() == AFTER_TWO + "# bob's note\n"

    done = bob.json("revert", "origin/alice#1")
    assert done["verdict"] == "safe" and done["applied"], done
    assert app.read_bytes() == (BASE.replace("return x", "return round(x)") + "# bob's note\n").encode()
    lines = bob.json("blame", "src/app.py")["lines"]
    assert lines[1]["origin"]["remote"] is None and lines[1]["origin"]["kind"] == "person"  # his revert's line
    assert (lines[5]["origin"]["who"], lines[5]["origin"]["number"]) == (who, 2)  # her later turn's line stays hers
    assert f"origin/{who}#1" in done["message"]
    [entry] = bob.json("log")
    assert entry["kind"] == "revert" and entry["label"] == f"revert origin/{who}#1: add a discount"
    assert git(bob.cwd, "status", "--porcelain") == " M src/app.py\n"  # (nothing but the file: no git state)

    # the same turn again: refused, it is taken back here already
    again = bob("revert", f"origin/{who}#1")
    assert again.code != 0 and again.err.count("\n") == 1 and "taken back here already" in again.err

    # the revert is itself undoable: the command its answer names takes it back ('takeback redo'
    # does the same: it re-applies the newest revert)
    back = done["next"][-1]
    assert (back["command"], back["number"]) == ("revert", entry["number"]) and back["step"] is None
    bob.ok("revert", str(back["number"]))
    assert app.read_text() == AFTER_TWO + "# bob's note\n"
    assert bob.json("revert", f"origin/{who}#1", "--dry-run")["verdict"] == "safe"  # hers can be taken back again


def test_unknown_and_ambiguous_teammates_are_refused_with_one_line(tmp_path: Path, remote: Path) -> None:
    _alice, who = _alice_shares(tmp_path, remote)
    tip = git(remote, "rev-parse", TIMELINES + who).strip()
    git(remote, "update-ref", f"{TIMELINES}alice@second-laptop", tip)  # alice's other machine
    bob = _bob_pulls(tmp_path, remote)
    before = bob("revert", "origin/alice#1")
    assert before.code != 0 and "share fetch origin" in before.err and before.err.count("\n") == 1
    bob.ok("share", "fetch")
    cases = {
        "origin/alice#1": "ambiguous",
        "origin/carol#1": "no timeline origin/carol",
        f"origin/{who}#9": "no turn #9",
        "upstream/alice#1": "no timeline fetched from upstream",
    }
    for spec, said in cases.items():
        result = bob("revert", spec)
        assert result.code != 0 and said in result.err and result.err.count("\n") == 1, (spec, result)
    assert (bob.cwd / "src/app.py").read_text() == AFTER_TWO
    assert bob.json("revert", "origin/alice@second-laptop#2", "--dry-run")["verdict"] == "safe"


def test_a_third_machine_pushing_at_the_same_time_loses_nothing(tmp_path: Path, remote: Path) -> None:
    alice, who = _alice_shares(tmp_path, remote)
    carol = _clone(tmp_path, remote, "carol")
    _edit_turn(carol, "carol's readme", "README.md", "# demo", "# demo, by carol")
    _edit_turn(alice, "a third turn", "src/app.py", "def tax", "def the_tax")
    with ThreadPoolExecutor(max_workers=2) as pool:
        pushed = list(pool.map(lambda tb: tb.json("share", "push"), (alice, carol)))
    assert all(p["commit"] for p in pushed)
    bob = _bob_pulls(tmp_path, remote)
    bob.ok("share", "fetch")
    found = {mate["who"].split("@")[0]: [e["label"] for e in mate["entries"]] for mate in bob.json("log", "--remote", "origin")}
    assert found == {"alice": ["a third turn", "round the tax", "add a discount"], "carol": ["carol's readme"]}
    assert json.loads(bob.ok("--json", "log", "--remote", "origin", "--limit", "1").text)[0]["entries"][0]["number"] == 3


def test_a_long_lived_process_folds_a_teammates_tip_once(tmp_path: Path, remote: Path, monkeypatch) -> None:
    """The hover and the resident's blame read teammates' timelines on every call: a tip already
    folded is not read from ``shared.git`` again (its chain cannot change under a commit id);
    a fetch that moves the tip is read anew."""
    from takeback.engine import remote as remotes
    from takeback.storage import share
    from takeback.storage.store import Store

    alice, _who = _alice_shares(tmp_path, remote)
    bob = _bob_pulls(tmp_path, remote)
    bob.ok("share", "fetch")
    store = Store(bob.store(), bob.cwd)
    [(name, tip)] = remotes.fetched(store).items()
    first = remotes.read(store, name, tip)
    assert [s.begun.number for s in first.timeline.ordered()] == [1, 2]

    def no_reading(*_args: object) -> None:
        raise AssertionError("shared.git read again for a tip already folded")

    with monkeypatch.context() as patched:
        patched.setattr(share, "metas", no_reading)
        assert remotes.read(store, name, tip) is first
    _edit_turn(alice, "a third turn", "src/app.py", "def tax", "def the_tax")
    alice.ok("share", "push")
    bob.ok("share", "fetch")
    [(name, newer)] = remotes.fetched(store).items()
    assert newer != tip and [s.begun.number for s in remotes.read(store, name, newer).timeline.ordered()] == [1, 2, 3]
