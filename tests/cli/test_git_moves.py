"""What of the person's git state an agent's step or a bracketed turn moved (a commit, a stash
pushed or dropped, a new branch checked out): Takeback never changes it, so ``show`` lists it
with the git command that would put it back, and an undo of the turn names it in its answer.
Real git repositories, Claude Code's captured hook payloads, the CLI as a process; Takeback's
own calls leave every file under ``.git`` as it was."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from helpers import git

from .conftest import Takeback
from .test_guarding import pre_tool
from .test_hooks import captured, hook, turns


def _dot_git(repo: Path) -> dict[str, str]:
    """Every file under ``.git``, by its bytes' digest."""
    return {str(p.relative_to(repo)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((repo / ".git").rglob("*")) if p.is_file()}


def _bash(tb: Takeback, call: str, command: str, run: Callable[[], object], asked: bool = False) -> None:
    """A Bash call through Claude Code's hooks; ``asked``: the guard asks about it (the person says yes)."""
    fields = {"tool_name": "Bash", "tool_use_id": call, "tool_input": {"command": command}}
    if asked:
        session = captured("claude", "PreToolUse", tb.cwd)["session_id"]
        answer = pre_tool(tb, command, session=session, call=call)
        assert answer.returncode == 0 and json.loads(answer.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"
    else:
        hook(tb, "claude", captured("claude", "PreToolUse", tb.cwd, **fields))
    run()
    hook(tb, "claude", captured("claude", "PostToolUse", tb.cwd, **fields))


def test_a_commit_a_stash_and_a_new_branch_are_listed_by_show_and_named_by_the_undo(tb: Takeback) -> None:
    repo = tb.cwd
    first = git(repo, "rev-parse", "HEAD").strip()
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))

    def commit() -> None:
        (repo / "notes.txt").write_text("the agent's notes\n")
        git(repo, "add", "notes.txt")
        git(repo, "commit", "-qm", "notes")

    _bash(tb, "toolu_1", "git add notes.txt && git commit -m notes", commit)
    second = git(repo, "rev-parse", "HEAD").strip()

    def stash() -> None:
        (repo / "src/app.py").write_text("def main():\n    return 'stashed'\n")
        git(repo, "stash", "-q")

    _bash(tb, "toolu_2", "git stash", stash)
    stashed = git(repo, "rev-parse", "refs/stash").strip()
    _bash(tb, "toolu_3", "git stash drop", lambda: git(repo, "stash", "drop", "-q"), asked=True)
    _bash(tb, "toolu_4", "git checkout -b feature", lambda: git(repo, "checkout", "-qb", "feature"))
    hook(tb, "claude", captured("claude", "Stop", repo))

    before = _dot_git(repo)
    [turn] = turns(tb)
    entry = tb.json("show", str(turn["number"]))
    steps = {cp["label"]: [m["fact"] for m in cp["git_moved"]] for cp in entry["checkpoints"]}
    assert steps["Bash: git add notes.txt && git commit -m notes"][0] == f"branch main moved from {first[:7]} to {second[:7]}"
    assert any("was pushed (0 → 1 entry)" in f for f in steps["Bash: git stash"])
    assert steps["Bash: git stash drop"] == [f"stash {stashed[:7]} (WIP on main: {second[:7]} notes) was dropped (1 → 0 entries)"]
    assert steps["Bash: git checkout -b feature"] == ["HEAD switched from main to feature"]
    commands = {m["what"]: m["command"] for m in entry["git_moved"] if m["command"]}
    assert commands["head"] == "git switch main"
    # each command as of the end of the step that moved it (main was checked out then): put back newest first
    assert f"git reset --mixed {first}" in [m["command"] for m in entry["git_moved"]]
    assert f"git stash store -m 'WIP on main: {second[:7]} notes' {stashed}" in [m["command"] for m in entry["git_moved"]]

    shown = tb.ok("show", str(turn["number"])).text
    assert "cannot take back" in shown
    assert f"branch main moved from {first[:7]} to {second[:7]}; to put it back: git reset --mixed {first}" in shown
    assert "HEAD switched from main to feature; to put it back: git switch main" in shown
    assert f"to put it back: git stash store -m 'WIP on main: {second[:7]} notes' {stashed}" in shown

    answer = tb.json("undo")
    assert answer["verdict"] == "safe" and not (repo / "notes.txt").exists()
    assert (f"turn #{turn['number']} also: branch main moved from {first[:7]} to {second[:7]}: Takeback does not take "
            f"that back; to put it back: git reset --mixed {first}") in answer["notices"]
    assert any(n.endswith("HEAD switched from main to feature: Takeback does not take that back; to put it back: git switch main")
               for n in answer["notices"])
    assert _dot_git(repo) == before  # show and undo read the person's git state, and change none of it
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/feature"


def test_a_bracketed_turn_says_what_moved_between_its_begin_and_end(tb: Takeback) -> None:
    repo = tb.cwd
    first = git(repo, "rev-parse", "HEAD").strip()
    tb.ok("begin", "--label", "commit it")
    (repo / "README.md").write_text("# demo, committed by the agent\n")
    git(repo, "commit", "-qam", "readme")
    second = git(repo, "rev-parse", "HEAD").strip()
    tb.ok("end")
    entry = tb.json("show", "last")
    assert [(m["fact"], m["command"]) for m in entry["git_moved"]] == [
        (f"branch main moved from {first[:7]} to {second[:7]}", f"git reset --mixed {first}"),
        ("the index changed (what is staged for the next commit)", None),  # commit -a staged README.md
    ]
    assert f"to put it back: git reset --mixed {first}" in tb.ok("show", "last").text
    before = _dot_git(repo)
    answer = tb.json("undo")
    assert any(f"branch main moved from {first[:7]}" in n and "Takeback does not take that back" in n for n in answer["notices"])
    assert _dot_git(repo) == before


def test_a_step_that_changes_nothing_of_git_says_nothing(tb: Takeback) -> None:
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    _bash(tb, "toolu_1", "git status", lambda: (git(repo, "status"), (repo / "out.txt").write_text("x\n")))
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    assert turn["git_moved"] == [] and all(cp["git_moved"] == [] for cp in turn["checkpoints"])
    assert "cannot take back" not in tb.ok("show", "last").text
