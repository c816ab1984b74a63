"""Live: the guard in real agents. Ordinary work runs unasked; a call Takeback cannot take back is
asked about (Claude Code) or, where the agent cannot ask, refused as the policy says.

Each real agent program (the versions scripts/setup-agents.sh pins), hooked up by ``takeback
install``, does one turn offline against the scripted model server (``model_server.py``) in a git
repository with two commits and an ignored ``build/`` folder holding files. Its model calls, each in
a round of its own:

1. the write tool: creates ``agent.txt``;
2. the shell tool: ``npm test`` (the package's test script prints a marker);
3. the shell tool: ``git reset --hard HEAD~1`` (moves the branch: not undoable);
4. the shell tool: ``rm -rf build`` (deletes ignored files Takeback does not hold: not undoable).

What must hold:

- Claude Code asks the person, through its own permission flow (``asker.py`` answers its
  ``can_use_tool`` questions): exactly two questions, for 3 and 4, each carrying Takeback's one
  line (the guard's reason for that command). Answered no: the branch and ``build/`` are intact,
  the edit and the test run happened and the turn records ``agent.txt``. Answered yes (once
  each): the reset and the delete run and the turn records the file the reset changed.
- ``claude -p`` with nobody to ask: Claude Code refuses 3 and 4 itself and its model's next
  request carries Takeback's line.
- Codex, Gemini CLI, Copilot CLI, Qwen Code and OpenCode (its plugin refuses by throwing), with
  the policy set to refuse what the agent cannot ask about (``guard.cannot_ask = "deny"``): 3 and 4 do not run, the model's next
  request carries Takeback's line, and 1 and 2 ran unasked (the test's marker reached the model; ``agent.txt`` is in the turn).
- Every case: no hook failure.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.conftest import Takeback
from helpers import git, make_repo, write_files
from takeback.guard.classify import Workspace, classify_command

from .test_live import HERE, Agent, ClaudeCode, CopilotCli, GeminiCli, OpenCode, QwenCode, _offline_ready, install
from .test_live_tools import CodexTools

RESET = "git reset --hard HEAD~1"
REMOVE = "rm -rf build"
TEST_RUN = "npm --no-update-notifier test"
MARKER = "all 3 tests passed"
BUILD = {"build/app.bin": b"\x00compiled\x01", "build/cache/obj.o": b"object code\n", "build/report.txt": "made by make\n"}
PACKAGE = json.dumps({"name": "demo", "version": "1.0.0", "private": True,
                      "scripts": {"test": f"node -e \"console.log('{MARKER}')\""}}, indent=2) + "\n"


def _repo(tmp_path: Path) -> Path:
    """A repository with two commits (``f.txt`` differs between them), ``build/`` ignored and
    holding files, a package with a test script."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n", ".gitignore": "build/\n", "package.json": PACKAGE,
                                         "f.txt": "first\n"})
    (repo / "f.txt").write_text("second\n")
    git(repo, "commit", "-qam", "second")
    write_files(repo, BUILD)
    return repo


def _lines(repo: Path) -> dict[str, str]:
    """The guard's one line for each not-undoable command, as the classifier reads it in ``repo``."""
    def ignored(rel: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", "--no-index", rel], cwd=repo).returncode == 0
    ws = Workspace(root=str(repo), is_ignored=ignored, home=str(Path.home()))
    lines = {}
    for command in (RESET, REMOVE):
        verdict = classify_command(command, ws, str(repo))
        assert not verdict.undoable, (command, verdict)
        lines[command] = verdict.reason
    return lines


def _rounds(agent: Agent, repo: Path, calls: tuple[str, ...]) -> list[dict]:
    tools = agent.tools(repo)  # type: ignore[attr-defined]
    made = {"write": tools["write"]("agent.txt", "written by the agent\n"), "test": tools["shell"](TEST_RUN),
            "reset": tools["shell"](RESET), "remove": tools["shell"](REMOVE)}
    return [*({"calls": [made[c]]} for c in calls), {"text": "done"}]


def _intact(repo: Path, head: str) -> None:
    assert git(repo, "rev-parse", "HEAD").strip() == head, "the branch moved"
    assert (repo / "f.txt").read_text() == "second\n"
    for rel, content in BUILD.items():
        data = content.encode() if isinstance(content, str) else content
        assert (repo / rel).read_bytes() == data, f"{rel} is gone or changed"


def _seen(requests: Path) -> str:
    """Every request the agent sent the model, as one JSON text (tool results included)."""
    return "\n".join(json.dumps(json.loads(line)["body"]) for line in requests.read_text().splitlines())


def _quoted(text: str) -> str:
    return json.dumps(text)[1:-1]  # as it stands inside a JSON string


def _run(agent: Agent, tb: Takeback, script: Path, command: list[str]) -> subprocess.CompletedProcess:
    proc = subprocess.run(["unshare", "-n", sys.executable, str(HERE / "offline.py"), str(script), "120", "--", *command],
                          cwd=tb.cwd, env={**tb.env, **agent.env()}, capture_output=True, timeout=180)
    assert proc.returncode == 0, f"{agent.name} exited {proc.returncode}\n{proc.stdout.decode()[-2000:]}\n{proc.stderr.decode()[-4000:]}"
    return proc


def _setup(make: Callable[[Path], Agent], tmp_path: Path, calls: tuple[str, ...]) -> tuple[Agent, Takeback, Path, Path]:
    why = _offline_ready()
    if why:
        pytest.skip(why)
    repo = _repo(tmp_path)
    agent = make(tmp_path / "agent")
    if not agent.binary.exists():
        pytest.fail(f"{agent.binary} is missing: scripts/setup-agents.sh installs it")
    tb, _told = install(agent, tmp_path, repo)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"requests": str(tmp_path / "requests.jsonl"),
                                  "turns": {"guarded task": _rounds(agent, repo, calls)}}))
    return agent, tb, repo, script


def _questions(path: Path) -> list[dict]:
    """What Claude Code asked the person (``asker.py`` wrote them down)."""
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _turn_files(tb: Takeback) -> dict[str, str]:
    status = tb.json("status")
    assert status["hook_failures"] == 0, status["last_hook_failure"]
    [turn] = [e for e in tb.json("log") if e["kind"] == "turn"]
    assert "guarded task" in turn["label"], turn
    return {f["path"]: f["kind"] for f in turn["files"]}


ALL = ("write", "test", "reset", "remove")


@pytest.mark.timeout(300)
def test_claude_code_asks_the_person_and_a_no_keeps_the_branch_and_build(tmp_path: Path) -> None:
    agent, tb, repo, script = _setup(ClaudeCode, tmp_path, ALL)
    head, lines = git(repo, "rev-parse", "HEAD").strip(), _lines(repo)
    questions = tmp_path / "questions.jsonl"

    _run(agent, tb, script, [sys.executable, str(HERE / "asker.py"), str(questions), "deny", "Do the guarded task", "--",
                             str(agent.binary), "--dangerously-skip-permissions"])

    asked = _questions(questions)
    assert [(q["tool_name"], q["input"]["command"]) for q in asked] == [("Bash", RESET), ("Bash", REMOVE)], asked
    for question in asked:
        assert question["decision_reason_type"] == "hook", question
        assert lines[question["input"]["command"]] in question["decision_reason"], question
    _intact(repo, head)
    assert (repo / "agent.txt").read_text() == "written by the agent\n"
    assert MARKER in _seen(tmp_path / "requests.jsonl"), "npm test did not run"
    assert _turn_files(tb) == {"agent.txt": "added"}


@pytest.mark.timeout(300)
def test_claude_code_asks_and_a_yes_runs_the_call_and_the_step_records_it(tmp_path: Path) -> None:
    agent, tb, repo, script = _setup(ClaudeCode, tmp_path, ("reset", "remove"))
    first = git(repo, "rev-parse", "HEAD~1").strip()
    questions = tmp_path / "questions.jsonl"

    _run(agent, tb, script, [sys.executable, str(HERE / "asker.py"), str(questions), "allow", "Do the guarded task", "--",
                             str(agent.binary), "--dangerously-skip-permissions"])

    assert [q["input"]["command"] for q in _questions(questions)] == [RESET, REMOVE]
    assert git(repo, "rev-parse", "HEAD").strip() == first and (repo / "f.txt").read_text() == "first\n"
    assert not (repo / "build").exists()
    assert _turn_files(tb) == {"f.txt": "modified"}
    [turn] = [e for e in tb.json("log") if e["kind"] == "turn"]
    steps = tb.json("show", str(turn["number"]))["checkpoints"]
    assert any("f.txt" in cp["paths"] for cp in steps), steps


def _refused(agent: Agent, tb: Takeback, repo: Path, script: Path, tmp_path: Path) -> None:
    """The run, then: 3 and 4 refused with Takeback's line, 1 and 2 ran and are recorded."""
    head, lines = git(repo, "rev-parse", "HEAD").strip(), _lines(repo)

    _run(agent, tb, script, agent.command("Do the guarded task", resume=False))

    _intact(repo, head)
    seen = _seen(tmp_path / "requests.jsonl")
    for command, line in lines.items():
        assert _quoted(line) in seen, f"the model was not told why {command!r} was refused"
    assert MARKER in seen, "npm test did not run"
    assert (repo / "agent.txt").read_text() == "written by the agent\n"
    assert _turn_files(tb) == {"agent.txt": "added"}


@pytest.mark.timeout(300)
def test_claude_code_with_nobody_to_ask_refuses_and_its_model_is_told_why(tmp_path: Path) -> None:
    agent, tb, repo, script = _setup(ClaudeCode, tmp_path, ALL)
    _refused(agent, tb, repo, script, tmp_path)


CANNOT_ASK: list[Callable[[Path], Agent]] = [CodexTools, GeminiCli, CopilotCli, QwenCode, OpenCode]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("make", CANNOT_ASK, ids=["codex", "gemini", "copilot", "qwen", "opencode"])
def test_an_agent_that_cannot_ask_follows_the_policy_and_refuses(make: Callable[[Path], Agent], tmp_path: Path) -> None:
    agent, tb, repo, script = _setup(make, tmp_path, ALL)
    _refuse_where_agent_cannot_ask(tb)
    _refused(agent, tb, repo, script, tmp_path)


def _refuse_where_agent_cannot_ask(tb: Takeback) -> None:
    """The person's policy, in their own config file (docs/guard.md): where the agent cannot ask,
    refuse (the default is to warn and let the call run)."""
    config = Path(tb.env.get("TAKEBACK_CONFIG") or Path(tb.env["XDG_CONFIG_HOME"]) / "takeback" / "config.toml")
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[guard]\ncannot_ask = "deny"\n')
