"""The guard on a real hook process and from ``takeback guard``: what cannot be taken back is
asked about in the agent's own answer, ordinary work is let through silently, the person's rules
(their config; a repository only stricter) and ``takeback guard off`` for a session are obeyed,
in-process and through the resident process alike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, make_repo, write_user_config

from .conftest import Takeback
from .test_hooks import captured, hook


def pre_tool(tb: Takeback, command: str | None = None, session: str = "s1", path: str | None = None,
             env: dict[str, str] | None = None, call: str | None = None) -> subprocess.CompletedProcess:
    """Claude Code's real PreToolUse payload for a Bash ``command`` (or a Write of ``path``), run as the hook."""
    fields: dict = {"session_id": session, "tool_use_id": call or f"t-{command or path}"}
    if command is not None:
        fields.update(tool_name="Bash", tool_input={"command": command})
    else:
        fields.update(tool_name="Write", tool_input={"file_path": path, "content": "x\n"})
    payload = captured("claude", "PreToolUse", tb.cwd, **fields)
    return subprocess.run(
        [sys.executable, "-m", "takeback", "hook", "claude"], input=json.dumps(payload), capture_output=True, text=True,
        cwd=tb.cwd, env={**(env or tb.env), "CLAUDECODE": "1"}, timeout=60,
    )


def answer(proc: subprocess.CompletedProcess) -> dict | None:
    assert proc.returncode == 0, proc.stderr
    if not proc.stdout:
        return None
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    return out


@pytest.fixture
def repo(tb: Takeback) -> Takeback:
    make_repo(tb.cwd, {"a.txt": "a\n", ".gitignore": "build/\n.env\n"})
    git(tb.cwd, "commit", "-q", "--allow-empty", "-m", "two")
    (tb.cwd / "build").mkdir()
    (tb.cwd / "build" / "out.o").write_text("object\n")
    (tb.cwd / ".env").write_text("KEY=1\n")
    return tb


@pytest.mark.parametrize("resident", ["in-process", "resident"])
def test_what_cannot_be_taken_back_is_asked_about_and_ordinary_work_is_not(repo: Takeback, resident: str) -> None:
    env = {**repo.env, "TAKEBACK_RESIDENT": "0" if resident == "in-process" else "1"}
    head = git(repo.cwd, "rev-parse", "HEAD")
    for command in ("git reset --hard HEAD~1", "rm -rf build", "cat x > .env", "git push --force", "sudo apt-get install jq"):
        out = answer(pre_tool(repo, command, env=env))
        assert out is not None and out["permissionDecision"] == "ask", command
        assert out["permissionDecisionReason"].startswith("Takeback could not take this back: "), out
    reset = answer(pre_tool(repo, "git reset --hard HEAD~1", env=env))
    assert reset is not None and reset["permissionDecisionReason"] == (
        "Takeback could not take this back: this resets the branch main to HEAD~1 (its commits stay only in the reflog) "
        "and discards uncommitted changes git holds")
    rm = answer(pre_tool(repo, "rm -rf build .env", env=env))
    assert rm is not None and rm["permissionDecisionReason"] == (
        "Takeback could not take this back: this deletes 2 ignored files Takeback does not hold: build/ (1 file), .env")
    for command in ("npm test", "python -m pytest -q", "git add -A && git commit -m x", "rm a.txt", "make build"):
        assert answer(pre_tool(repo, command, env=env)) is None, command
    assert answer(pre_tool(repo, path=str(repo.cwd / "src" / "new.py"), env=env)) is None
    outside = answer(pre_tool(repo, path="/etc/takeback-guard-test.conf", env=env))
    assert outside is not None and "outside the workspace" in outside["permissionDecisionReason"]
    assert (repo.cwd / "build" / "out.o").exists() and git(repo.cwd, "rev-parse", "HEAD") == head  # asked only: nothing ran


def test_the_persons_rules_and_a_repository_that_may_only_make_them_stricter(repo: Takeback) -> None:
    write_user_config(repo.env["XDG_CONFIG_HOME"], '[guard]\nallow = ["rm -rf build"]\ndeny = ["git push --force*"]\n'
                      '[guard.effects]\nsystem = "allow"\n')
    assert answer(pre_tool(repo, "rm -rf build")) is None
    assert answer(pre_tool(repo, "sudo apt-get install jq")) is None
    denied = answer(pre_tool(repo, "git push --force origin main"))
    assert denied is not None and denied["permissionDecision"] == "deny"
    assert "this matches your guard rule deny = 'git push --force*'" in denied["permissionDecisionReason"]
    (repo.cwd / ".takeback.toml").write_text('[guard]\nallow = ["git reset *"]\nenabled = false\ndeny = ["make deploy*"]\n'
                                             '[guard.effects]\nsystem = "deny"\ngit-refs = "allow"\n')
    reset = answer(pre_tool(repo, "git reset --hard HEAD~1"))
    assert reset is not None and reset["permissionDecision"] == "ask"  # the repository's allow, off and looser class: refused
    assert answer(pre_tool(repo, "make deploy prod"))["permissionDecision"] == "deny"  # type: ignore[index]
    assert answer(pre_tool(repo, "sudo apt-get install jq"))["permissionDecision"] == "deny"  # type: ignore[index]
    status = repo("guard")
    assert status.code == 0 and "deny       make deploy*" in status.text
    for refused in ("guard.allow ignored", "guard.enabled ignored", "guard.effects ignored"):
        assert refused in status.err


def test_guard_off_for_the_session_going_on(repo: Takeback) -> None:
    hook(repo, "claude", captured("claude", "UserPromptSubmit", repo.cwd, session_id="s1", prompt="clean up"))
    off = repo.ok("guard", "off")
    assert "session s1" in off.text
    assert answer(pre_tool(repo, "git reset --hard HEAD~1", session="s1")) is None
    other = answer(pre_tool(repo, "git reset --hard HEAD~1", session="s2"))  # another conversation: the guard is on
    assert other is not None and other["permissionDecision"] == "ask"
    assert repo.json("guard", "status", "--json")["sessions_off"].keys() == {"s1"}
    repo.ok("guard", "on")
    assert answer(pre_tool(repo, "git reset --hard HEAD~1", session="s1")) is not None


def test_guard_check_says_what_the_hook_would_answer(repo: Takeback) -> None:
    checked = repo.json("guard", "check", "--json", "--", "npm", "test", "&&", "rm", "-rf", "build")
    assert checked["action"] == "ask" and checked["effect"] == "ignored-files"
    assert checked["line"] == answer(pre_tool(repo, "npm test && rm -rf build"))["permissionDecisionReason"]  # type: ignore[index]
    assert repo.ok("guard", "check", "--", "npm test").text == "allow\n"
    repo.fails(2, "guard", "check", match="name a shell line")
    fresh = Path(repo.cwd)
    assert fresh.is_dir()


def test_a_call_the_person_let_through_lists_what_it_lost_and_how_to_put_back_what_was_kept(repo: Takeback) -> None:
    """Through the hooks: the guard asks, the person says yes, the call runs; the step lists the
    ignored files it deleted (kept in the store: the command writes them back) and the branch it
    moved (with git's own command), and the listed commands really put them back."""
    head = git(repo.cwd, "rev-parse", "HEAD").strip()
    hook(repo, "claude", captured("claude", "UserPromptSubmit", repo.cwd, session_id="s1", prompt="start over"))
    line = "rm -rf build && git reset --hard HEAD~1"
    asked = answer(pre_tool(repo, line))
    assert asked is not None and asked["permissionDecision"] == "ask"
    subprocess.run(["sh", "-c", line], cwd=repo.cwd, check=True, capture_output=True)  # the person said yes: it runs
    post = captured("claude", "PostToolUse", repo.cwd, session_id="s1", tool_use_id=f"t-{line}", tool_name="Bash",
                    tool_input={"command": line})
    hook(repo, "claude", post)
    hook(repo, "claude", captured("claude", "Stop", repo.cwd, session_id="s1"))
    entry = repo.json("show", "1", "--json")
    assert [(lost["path"], lost["kept"] is not None) for lost in entry["lost"]] == [("build/out.o", True)]
    [moved] = entry["git_moved"]
    assert moved["what"] == "branch" and moved["command"] == f"git reset --mixed {head}"
    shown = repo.ok("show", "1").text
    assert "lost, not taken back by undo" in shown and "build/out.o" in shown
    for lost in entry["lost"]:
        subprocess.run(["sh", "-c", lost["command"].replace("takeback ", f"{sys.executable} -m takeback ", 1)],
                       cwd=repo.cwd, env=repo.env, check=True)
    assert (repo.cwd / "build" / "out.o").read_text() == "object\n"
    subprocess.run(["sh", "-c", moved["command"]], cwd=repo.cwd, check=True, capture_output=True)
    assert git(repo.cwd, "rev-parse", "HEAD").strip() == head
