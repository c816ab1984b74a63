"""Live: every file-writing tool of every agent Takeback installs into, recorded, undone and
redone byte for byte, wherever the agent is started.

Each agent program (the versions scripts/setup-agents.sh pins) does one turn, offline, against
the scripted model server (``model_server.py``), in which it calls each of its file-writing tools
(the ones docs/agents.md lists per agent, read from the tool definitions the agent sends the
model) and then its shell tool. Where an agent switches tool sets by model id, each set is a case
of its own: OpenCode and Copilot CLI give GPT models ``apply_patch`` instead of their write and
edit tools. Each case runs started

- ``top``: at the work tree's top;
- ``sub``: in a subfolder (the tools name files there: absolute paths, patches relative to it);
- ``dash_c`` (Codex only): at the top with ``-C`` naming the subfolder;
- ``worktree``: at the top of a linked work tree (``git worktree add``) of the repository.

What must hold: the agent's tools wrote what they were told (else the agent, not Takeback,
failed); the turn lists exactly those files, each with its kind; ``takeback undo`` gives back
every byte and mode of the tree as it was before the turn; ``takeback redo`` gives back the
agent's; ``.git`` (the common folder, the linked work tree's own included) is byte-identical
through undo and redo, and the person's git state (refs, index, HEAD, config) is as it was
before the agent started.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from cli.conftest import Takeback
from core.support import full_state
from helpers import dot_git, git, git_state, make_repo

from .test_live import HERE, Agent, ClaudeCode, CodexCli, CopilotCli, GeminiCli, OpenCode, QwenCode, _offline_ready, install

SUB = "pkg"  # the subfolder the "sub" and "dash_c" cases start in
NOTEBOOK = json.dumps({
    "cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
               "source": ["x = 1\n"]}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}, indent=1) + "\n"
# The files each run folder holds before the turn (at the top and in SUB alike).
FILES = {
    "code.py": "def f():\n    return 1\n",
    "data.txt": "old data\n",
    "old.txt": "a file the patch moves\n",
    "nb.ipynb": NOTEBOOK,
}
CODE_AFTER = "def f():\n    return 2\n"
PATCH = (
    "*** Begin Patch\n"
    "*** Add File: new.txt\n+new file\n"
    "*** Update File: code.py\n@@\n def f():\n-    return 1\n+    return 2\n"
    "*** Delete File: data.txt\n"
    "*** Update File: old.txt\n*** Move to: moved.txt\n@@\n-a file the patch moves\n+a file the patch moves\n"
    "*** End Patch\n"
)
SHELL = "printf 'by the shell\\n' > shell.txt"


@dataclass
class ToolSet:
    """One tool set of one agent: the script's rounds (given the run folder) and what the turn
    must then hold: {path relative to the run folder: (kind, bytes after or None)}."""

    label: str
    agent: Callable[[Path], Agent]
    rounds: Callable[[Path], list[dict]]
    expect: dict[str, tuple[str, bytes | None]]


def _json_tools(read: Callable, write: Callable, edit: Callable, shell: Callable, extra: Callable | None = None):
    """The rounds for an agent whose write and edit tools take JSON arguments: read the files to
    be changed (several agents refuse to edit a file the session has not read), then write a new
    file, rewrite one, edit one (and ``extra``: the agent's own further tool), then the shell."""
    def rounds(folder: Path) -> list[dict]:
        edits = [write(folder / "new.txt", "new file\n"), write(folder / "data.txt", "data rewritten\n"),
                 edit(folder / "code.py", "return 1", "return 2")]
        reads = [read(folder / "code.py"), read(folder / "data.txt")]
        if extra is not None:
            reads.append(read(folder / "nb.ipynb"))
            edits.append(extra(folder / "nb.ipynb"))
        return [{"calls": reads}, {"calls": edits}, {"calls": [shell(SHELL)]}, {"text": "done"}]
    return rounds


def _patch_tools(read: Callable | None, patch: dict, shell: dict):
    """The rounds for an agent whose edit tool is ``apply_patch``: read the files the patch
    changes (when the agent has a read tool), the patch (PATCH: add, update, delete, move),
    then the shell."""
    def rounds(folder: Path) -> list[dict]:
        reads = [{"calls": [read(folder / "code.py"), read(folder / "old.txt")]}] if read else []
        return [*reads, {"calls": [patch]}, {"calls": [shell]}, {"text": "done"}]
    return rounds


JSON_EXPECT = {
    "new.txt": ("added", b"new file\n"),
    "data.txt": ("modified", b"data rewritten\n"),
    "code.py": ("modified", CODE_AFTER.encode()),
    "shell.txt": ("added", b"by the shell\n"),
}
PATCH_EXPECT = {
    "new.txt": ("added", b"new file\n"),
    "code.py": ("modified", CODE_AFTER.encode()),
    "data.txt": ("deleted", None),
    "moved.txt": ("renamed", FILES["old.txt"].encode()),
    "shell.txt": ("added", b"by the shell\n"),
}


def _call(tool: str, **args: object) -> dict:
    return {"tool": tool, "input": {k: str(v) if isinstance(v, Path) else v for k, v in args.items()}}


class _Started:
    """Where the test starts an agent: ``folder`` (its current folder) and ``dash_c`` (Codex's
    ``-C``: the folder it works in while started elsewhere)."""

    folder: Path
    dash_c: Path | None = None


class CodexTools(_Started, CodexCli):
    """Codex runs the installed hooks with ``--dangerously-bypass-hook-trust`` here (test_live.py
    trusts them as a person does, in Codex's own program); its project trust names the folder
    it works in."""

    def trust(self, env: dict[str, str], repo: Path, told: str) -> None:
        pass

    def command(self, prompt: str, resume: bool) -> list[str]:
        command = super().command(prompt, resume)
        at = ["-C", str(self.dash_c)] if self.dash_c else []
        return [*command[:2], "--dangerously-bypass-hook-trust", *at, *command[2:]]


class OpenCodeGpt(_Started, OpenCode):
    """OpenCode with a model whose id has ``gpt-`` in it (and neither ``oss`` nor ``gpt-4``): its
    tool registry then offers ``apply_patch`` in place of ``write`` and ``edit``."""

    def prepare(self, repo: Path) -> None:
        super().prepare(repo)
        config = json.loads((self.config / "opencode.json").read_text())
        config["model"] = "scripted/gpt-5.5"
        config["provider"]["scripted"]["models"] = {"gpt-5.5": {"name": "gpt-5.5", "tool_call": True}}
        (self.config / "opencode.json").write_text(json.dumps(config, indent=2) + "\n")


class CopilotGpt(_Started, CopilotCli):
    """Copilot CLI with a GPT-5 model: it offers a freeform ``apply_patch`` in place of
    ``create`` and ``edit``."""

    def env(self) -> dict[str, str]:
        return {**super().env(), "COPILOT_MODEL": "gpt-5.5"}


def _started(cls: type[Agent]) -> Callable[[Path], Agent]:
    return type(cls.__name__, (_Started, cls), {})  # type: ignore[return-value]


TOOL_SETS = [
    ToolSet("claude", _started(ClaudeCode), _json_tools(
        lambda p: _call("Read", file_path=p),
        lambda p, text: _call("Write", file_path=p, content=text),
        lambda p, old, new: _call("Edit", file_path=p, old_string=old, new_string=new),
        lambda c: _call("Bash", command=c, description="run it"),
        extra=lambda p: _call("NotebookEdit", notebook_path=p, cell_id="c1", new_source="x = 2\n"),
    ), {**JSON_EXPECT, "nb.ipynb": ("modified", None)}),
    ToolSet("codex", CodexTools, _patch_tools(None, {"tool": "apply_patch", "input": PATCH}, _call("exec_command", cmd=SHELL)),
            PATCH_EXPECT),  # Codex has no read tool
    ToolSet("gemini", _started(GeminiCli), _json_tools(
        lambda p: _call("read_file", file_path=p),
        lambda p, text: _call("write_file", file_path=p, content=text),
        lambda p, old, new: _call("replace", file_path=p, instruction="return 2", old_string=old, new_string=new),
        lambda c: _call("run_shell_command", command=c),
    ), JSON_EXPECT),
    ToolSet("copilot", _started(CopilotCli), _json_tools(
        lambda p: _call("view", path=p),
        lambda p, text: _call("create", path=p, file_text=text) if p.name == "new.txt"
        else _call("edit", path=p, old_str=FILES[p.name], new_str=text),  # create is for new files
        lambda p, old, new: _call("edit", path=p, old_str=old, new_str=new),
        lambda c: _call("bash", command=c, description="run it"),
    ), JSON_EXPECT),
    ToolSet("copilot-gpt", CopilotGpt, _patch_tools(
        lambda p: _call("view", path=p), {"tool": "apply_patch", "input": PATCH},
        _call("bash", command=SHELL, description="run it"),
    ), PATCH_EXPECT),
    ToolSet("opencode", _started(OpenCode), _json_tools(
        lambda p: _call("read", filePath=p),
        lambda p, text: _call("write", filePath=p, content=text),
        lambda p, old, new: _call("edit", filePath=p, oldString=old, newString=new),
        lambda c: _call("bash", command=c, description="run it"),
    ), JSON_EXPECT),
    ToolSet("opencode-gpt", OpenCodeGpt, _patch_tools(
        lambda p: _call("read", filePath=p), _call("apply_patch", patchText=PATCH),
        _call("bash", command=SHELL, description="run it"),
    ), PATCH_EXPECT),
    ToolSet("qwen", _started(QwenCode), _json_tools(
        lambda p: _call("read_file", file_path=p),
        lambda p, text: _call("write_file", file_path=p, content=text),
        lambda p, old, new: _call("edit", file_path=p, old_string=old, new_string=new),
        lambda c: _call("run_shell_command", command=c),
    ), JSON_EXPECT),
]


def _cases() -> list:
    cases = []
    for tools in TOOL_SETS:
        for where in ("top", "sub", *(("dash_c",) if tools.label == "codex" else ()), "worktree"):
            cases.append(pytest.param(tools, where, id=f"{tools.label}-{where}"))
    return cases


def _workspace(tmp_path: Path, where: str) -> tuple[Path, Path, Path]:
    """(the repository, the work tree's top the turn records into, the folder the agent works in)."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n", **FILES, **{f"{SUB}/{k}": v for k, v in FILES.items()}})
    if where == "worktree":
        git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "linked")
        return repo, tmp_path / "linked", tmp_path / "linked"
    return repo, repo, repo / SUB if where in ("sub", "dash_c") else repo


def _run(agent: Agent, tb: Takeback, script: Path, cwd: Path) -> None:
    proc = subprocess.run(
        ["unshare", "-n", sys.executable, str(HERE / "offline.py"), str(script), "120", "--",
         *agent.command("Do the tool task", resume=False)],
        cwd=cwd, env={**tb.env, **agent.env()}, capture_output=True, timeout=180,
    )
    assert proc.returncode == 0, f"{agent.name} exited {proc.returncode}\n{proc.stdout.decode()[-2000:]}\n{proc.stderr.decode()[-4000:]}"


def _check_written(agent: Agent, tools: ToolSet, before: dict[str, bytes], after: dict[str, bytes], prefix: str) -> None:
    """The agent's tools did what the script told them (else the agent failed, not Takeback)."""
    for rel, (kind, content) in tools.expect.items():
        path = prefix + rel
        if kind == "deleted":
            assert path not in after, f"{agent.name} left {path}"
        elif content is None:
            assert after.get(path) not in (None, before.get(path)), f"{agent.name} did not change {path}"
        else:
            assert after.get(path) == content, f"{agent.name} wrote {path}: {after.get(path)!r}"
        if kind == "renamed":
            assert prefix + "old.txt" not in after, f"{agent.name} left {prefix}old.txt"


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("tools", "where"), _cases())
def test_every_write_tool_recorded_undone_redone(tools: ToolSet, where: str, tmp_path: Path) -> None:
    why = _offline_ready()
    if why:
        pytest.skip(why)
    repo, top, folder = _workspace(tmp_path, where)
    agent = tools.agent(tmp_path / "agent")
    if not agent.binary.exists():
        pytest.fail(f"{agent.binary} is missing: scripts/setup-agents.sh installs it")
    agent.folder, agent.dash_c = folder, (folder if where == "dash_c" else None)  # type: ignore[attr-defined]
    tb, _told = install(agent, tmp_path, folder)
    git0, before, main0 = git_state(repo), full_state(top), full_state(repo)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": {"tool task": tools.rounds(folder)}}))

    _run(agent, tb, script, repo if where == "dash_c" else folder)

    after, git_files = full_state(top), dot_git(repo)
    prefix = "" if folder == top else folder.relative_to(top).as_posix() + "/"
    _check_written(agent, tools, before[0], after[0], prefix)
    status = tb.json("status")
    assert status["hook_failures"] == 0, status["last_hook_failure"]
    turn = next(e for e in tb.json("log") if e["kind"] == "turn")
    assert "tool task" in turn["label"] and turn["agent"] == agent.name and turn["state"] == "applied", turn
    assert {f["path"]: f["kind"] for f in turn["files"]} == {prefix + rel: kind for rel, (kind, _c) in tools.expect.items()}

    tb.ok("undo")
    assert full_state(top) == before, "undo did not give back every byte the turn started from"
    assert dot_git(repo) == git_files
    tb.ok("redo")
    assert full_state(top) == after, "redo did not give back the agent's bytes"
    assert dot_git(repo) == git_files and git_state(repo) == git0
    if top != repo:  # a linked work tree's turn touches nothing of the main one
        assert full_state(repo) == main0
