"""``takeback hook AGENT [EVENT]``: what agents' hooks record, fed the payloads real agents sent.

The payloads in ``hook_payloads/`` were captured from the real agent programs (Claude Code,
Codex, Gemini CLI, Copilot CLI, OpenCode, Qwen Code) on this project's test machine, with the
run folder written ``<OUT>``; each test rewrites it to its own repository. The hook runs as a
real ``takeback`` process with the payload on stdin; the files a tool writes are written by the
test between the tool's start and end hooks, as the agent would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import git, make_repo

from .conftest import Takeback

PAYLOADS = Path(__file__).parent / "hook_payloads"
PROMPT = "Create the file agent_written.txt, then run: echo generated > gen.txt"
SHELL = "echo generated > gen.txt"
_AGENT_ENV = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "QWEN_PROJECT_DIR", "USER_PROMPT")


def captured(agent: str, event: str, repo: Path, **fields: Any) -> dict:
    """The real payload ``agent`` sent for ``event``, its ``<OUT>`` folder made ``repo``'s, with ``fields`` set."""
    data = json.loads((PAYLOADS / f"{agent}.json").read_text())["payloads"][event]
    text = json.dumps(data).replace("<OUT>/repo", str(repo)).replace("<OUT>", str(repo.parent))
    payload = json.loads(text)
    payload.update(fields)
    return payload


def hook(tb: Takeback, agent: str, payload: dict | str, event: str | None = None, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``takeback hook`` as the agent does; it must exit 0 and print nothing on stdout."""
    base = {k: v for k, v in (env or tb.env).items() if k not in _AGENT_ENV}
    if agent == "claude" and env is None:
        base["CLAUDECODE"] = "1"  # Claude Code sets it for its own hooks (a test's env may leave it out)
    proc = subprocess.run(
        [sys.executable, "-m", "takeback", "hook", agent, *([event] if event else [])],
        input=payload if isinstance(payload, str) else json.dumps(payload),
        capture_output=True, text=True, cwd=cwd or tb.cwd, env=base, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "", proc.stdout
    return proc


def turns(tb: Takeback) -> list[dict]:
    return [e for e in tb.json("log") if e["kind"] == "turn"]


def failures(tb: Takeback) -> tuple[int, str | None]:
    status = tb.json("status")
    return status["hook_failures"], status["last_hook_failure"]


# ---------------------------------------------------------------- what changes between steps


def test_a_persons_edits_between_tool_calls_are_not_the_agents_and_survive_its_undo(tb: Takeback) -> None:
    repo = tb.cwd
    (repo / "src/app.py").write_text("def main():\n    return 1\n\n\n# end\n")
    git(repo, "commit", "-qam", "longer app")
    prompt = captured("claude", "UserPromptSubmit", repo)
    hook(tb, "claude", prompt)
    # Step 1: the agent's Edit of src/app.py.
    edit = {"tool_name": "Edit", "tool_use_id": "toolu_edit",
            "tool_input": {"file_path": str(repo / "src/app.py"), "old_string": "return 1", "new_string": "return 2"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **edit))
    (repo / "src/app.py").write_text("def main():\n    return 2\n\n\n# end\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **edit))
    # The person, while the agent thinks: another file, and the end of the file the agent edited.
    (repo / "README.md").write_text("# demo\nthe person's line\n")
    (repo / "src/app.py").write_text("def main():\n    return 2\n\n\n# end, says the person\n")
    # Step 2: a shell command that creates a file.
    bash = {"tool_name": "Bash", "tool_use_id": "toolu_bash", "tool_input": {"command": SHELL}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **bash))
    (repo / "gen.txt").write_text("generated\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **bash))
    hook(tb, "claude", captured("claude", "Stop", repo))

    [turn] = turns(tb)
    assert turn["state"] == "applied" and turn["ended_by"] == "stop"
    assert [cp["label"] for cp in turn["checkpoints"]] == ["Edit src/app.py", f"Bash: {SHELL}"]
    assert sorted(f["path"] for f in turn["files"]) == ["gen.txt", "src/app.py"]  # not README.md
    assert tb.json("diff", "last")["diff"].count("the person") == 0

    tb.ok("undo")
    assert (repo / "README.md").read_text() == "# demo\nthe person's line\n"
    assert (repo / "src/app.py").read_text() == "def main():\n    return 1\n\n\n# end, says the person\n"
    assert not (repo / "gen.txt").exists()
    assert failures(tb) == (0, None)


def test_a_shell_step_records_only_what_changed_during_the_command(tb: Takeback) -> None:
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    (repo / "src/util.py").write_text("changed by the person before the command\n")
    bash = {"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "make"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **bash))
    (repo / "build.out").write_text("built\n")
    (repo / "README.md").unlink()
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **bash))
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    assert {f["path"]: f["kind"] for f in turn["files"]} == {"build.out": "added", "README.md": "deleted"}


# ---------------------------------------------------------------- each agent, its real payloads


def _shell_fields(agent: str, n: int) -> dict:
    return {
        "claude": {"tool_name": "Bash", "tool_input": {"command": SHELL}, "tool_use_id": f"toolu_sh{n}"},
        "codex": {"tool_name": "Bash", "tool_input": {"command": SHELL}, "tool_use_id": f"call_sh{n}"},
        "qwen": {"tool_name": "run_shell_command", "tool_input": {"command": SHELL}, "tool_use_id": f"toolu_sh{n}"},
        "gemini": {"tool_name": "run_shell_command", "tool_input": {"command": SHELL}},
        "copilot": {"toolName": "bash", "toolArgs": {"command": SHELL}},
        "opencode": {"tool_name": "bash", "tool_input": {"command": SHELL}, "call_id": f"call_sh{n}"},
    }[agent]


# agent: (prompt, pre, post, stop) event names, whether the event goes on the command line,
# the write tool's label, the session field
AGENTS = {
    "claude": (("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"), False, "Write agent_written.txt", "session_id"),
    "codex": (("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"), False, "apply_patch agent_written.txt", "session_id"),
    "gemini": (("BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"), False, "write_file agent_written.txt", "session_id"),
    "qwen": (("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"), False, "write_file agent_written.txt", "session_id"),
    "copilot": (("userPromptSubmitted", "preToolUse", "postToolUse", "agentStop"), True, "create agent_written.txt", "sessionId"),
    "opencode": (("chat.message", "tool.execute.before", "tool.execute.after", "session.idle"), True,
                 "write agent_written.txt", "session_id"),
}


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_each_agents_real_payloads_make_one_turn_of_two_steps(tb: Takeback, agent: str) -> None:
    (prompt_ev, pre_ev, post_ev, stop_ev), on_line, write_label, session_key = AGENTS[agent]
    repo = tb.cwd

    def send(event: str, **fields: Any) -> None:
        hook(tb, agent, captured(agent, event, repo, **fields), event if on_line else None)

    send(prompt_ev)
    # Copilot CLI starts both calls of a response before either ends; the others, one by one.
    send(pre_ev)
    if agent == "copilot":
        send(pre_ev, **_shell_fields(agent, 1))
    (repo / "agent_written.txt").write_text("written by the agent's write tool\n")
    send(post_ev)
    if agent != "copilot":
        send(pre_ev, **_shell_fields(agent, 1))
    (repo / "gen.txt").write_text("generated\n")
    send(post_ev, **_shell_fields(agent, 1))
    if agent == "qwen":
        send(prompt_ev, prompt="")  # Qwen Code's empty prompt after a round of tool results
    send(stop_ev)

    [turn] = turns(tb)
    session = json.loads((PAYLOADS / f"{agent}.json").read_text())["payloads"][prompt_ev][session_key]
    assert (turn["label"], turn["session"], turn["agent"]) == (PROMPT, session, agent)
    assert turn["ended_by"] == "stop" and turn["state"] == "applied"
    assert [cp["label"] for cp in turn["checkpoints"]] == [write_label, f"{_shell_fields(agent, 1).get('tool_name') or 'bash'}: {SHELL}"]
    assert [cp["paths"] for cp in turn["checkpoints"]] == [["agent_written.txt"], ["gen.txt"]]
    assert failures(tb) == (0, None)
    tb.ok("undo")
    assert not (repo / "agent_written.txt").exists() and not (repo / "gen.txt").exists()
    tb.ok("redo")
    assert (repo / "gen.txt").read_text() == "generated\n"


def test_opencode_run_prompts_are_labelled_as_the_person_typed_them(tb: Takeback) -> None:
    """'opencode run' hands each word of its command line that holds a space over in double
    quotes, its own quotes escaped (prompts captured from OpenCode 1.18.33): a prompt that is
    one such word is labelled as typed; one of several words is kept as OpenCode sent it."""
    runs = json.loads((PAYLOADS / "opencode.json").read_text())["run_prompts"]
    for run in runs:
        hook(tb, "opencode", captured("opencode", "chat.message", tb.cwd, prompt=run["prompt"]), "chat.message")
    labels = [t["label"] for t in reversed(turns(tb))]
    assert labels == [runs[0]["argv"][0], 'Say "hi" in gen.txt', runs[2]["prompt"]]
    assert runs[1]["argv"] == ['Say "hi" in gen.txt'] and failures(tb) == (0, None)


def test_events_takeback_does_not_use_record_nothing(tb: Takeback) -> None:
    before = tb.oplog()
    for agent, event in [("claude", "SessionStart"), ("claude", "PostToolBatch"), ("gemini", "PreCompress"),
                         ("gemini", "BeforeModel"), ("codex", "PreModelRequest"), ("qwen", "Notification")]:
        hook(tb, agent, captured(agent, event, tb.cwd))
    hook(tb, "copilot", captured("copilot", "permissionRequest", tb.cwd), "permissionRequest")
    hook(tb, "opencode", captured("opencode", "file.edited", tb.cwd), "file.edited")
    assert tb.oplog() == before and turns(tb) == []
    assert failures(tb) == (0, None)


def test_a_read_only_tool_is_not_a_step(tb: Takeback) -> None:
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    read = {"tool_name": "Read", "tool_input": {"file_path": str(repo / "README.md")}, "tool_use_id": "toolu_r"}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **read))
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **read))
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    assert turn["checkpoints"] == [] and turn["files"] == []


def test_a_tool_of_an_mcp_server_that_writes_files_is_a_step(tb: Takeback) -> None:
    """A tool Takeback does not know (here an MCP server's) may write anything: it is
    bracketed like a shell command and named by the tool."""
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    call = {"tool_name": "mcp__files__write_file", "tool_use_id": "toolu_m",
            "tool_input": {"target": "notes/out.md", "text": "from the MCP tool\n"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **call))
    (repo / "notes").mkdir()
    (repo / "notes/out.md").write_text("from the MCP tool\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **call))
    grep = {"tool_name": "Grep", "tool_use_id": "toolu_g", "tool_input": {"pattern": "x"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **grep))
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **grep))
    # Takeback's own MCP tool is not a step (what it changes is an operation of its own).
    own = {"tool_name": "mcp__plugin_takeback_takeback__undo", "tool_use_id": "toolu_t", "tool_input": {}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **own))
    (repo / "by-takeback.txt").write_text("not the agent's\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **own))
    hook(tb, "claude", captured("claude", "Stop", repo))
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, prompt="/takeback:log"))  # opens no turn
    hook(tb, "claude", captured("claude", "Stop", repo))
    (repo / "by-takeback.txt").unlink()
    [turn] = turns(tb)
    assert [cp["label"] for cp in turn["checkpoints"]] == ["mcp__files__write_file"]
    assert [f["path"] for f in turn["files"]] == ["notes/out.md"]
    tb.ok("undo")
    assert not (repo / "notes").exists()


def test_codex_apply_patch_records_every_file_its_patch_names(tb: Takeback) -> None:
    repo = tb.cwd
    patch = ("*** Begin Patch\n*** Update File: src/app.py\n@@\n-    return 1\n+    return 3\n"
             "*** Delete File: src/util.py\n*** Add File: docs/new.md\n+new\n*** End Patch\n")
    fields = {"tool_input": {"command": patch}, "tool_use_id": "call_p"}
    hook(tb, "codex", captured("codex", "UserPromptSubmit", repo))
    hook(tb, "codex", captured("codex", "PreToolUse", repo, **fields))
    (repo / "src/app.py").write_text("def main():\n    return 3\n")
    (repo / "src/util.py").unlink()
    (repo / "docs").mkdir()
    (repo / "docs/new.md").write_text("new\n")
    hook(tb, "codex", captured("codex", "PostToolUse", repo, **fields))
    hook(tb, "codex", captured("codex", "Stop", repo))
    [turn] = turns(tb)
    assert turn["checkpoints"][0]["label"] == "apply_patch src/app.py, src/util.py, docs/new.md"
    assert {f["path"]: f["kind"] for f in turn["files"]} == {
        "src/app.py": "modified", "src/util.py": "deleted", "docs/new.md": "added"}
    tb.ok("undo")
    assert not (repo / "docs").exists()  # the folder the patch made goes with it
    assert (repo / "src/util.py").exists()


# ---------------------------------------------------------------- turns whose stop never comes


def _edit_step(tb: Takeback, name: str, content: str, call: str, session: str | None = None) -> None:
    repo = tb.cwd
    extra = {"session_id": session} if session else {}
    fields = {"tool_name": "Write", "tool_use_id": call, **extra,
              "tool_input": {"file_path": str(repo / name), "content": content}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **fields))
    (repo / name).write_text(content)
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **fields))


def test_a_turn_with_no_stop_ends_at_its_last_step_and_says_how(tb: Takeback) -> None:
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, prompt="first\n  prompt"))
    _edit_step(tb, "a.txt", "a\n", "c1")
    (repo / "person.txt").write_text("typed after the last step\n")
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, prompt="second"))
    _edit_step(tb, "b.txt", "b\n", "c2")
    hook(tb, "claude", captured("claude", "SessionEnd", repo))
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, prompt="third"))
    tb.ok("end")
    first, second, third = sorted(turns(tb), key=lambda t: t["number"])
    assert first["label"] == "first prompt" and [f["path"] for f in first["files"]] == ["a.txt"]
    assert (first["ended_by"], second["ended_by"], third["ended_by"]) == ("next_prompt", "session_end", "end_command")
    assert any("next prompt" in n for n in first["notices"])
    assert any("session ended" in n for n in second["notices"])
    assert any("takeback end" in n for n in third["notices"])
    shown = tb.ok("show", str(first["number"])).text
    assert "without the agent's stop" in shown


def _shell_step(tb: Takeback, command: str, call: str, session: str, write) -> None:
    """A Bash call of ``session``: ``write()`` is what the command does on disk."""
    fields = {"tool_name": "Bash", "tool_use_id": call, "session_id": session, "tool_input": {"command": command}}
    hook(tb, "claude", captured("claude", "PreToolUse", tb.cwd, **fields))
    write()
    hook(tb, "claude", captured("claude", "PostToolUse", tb.cwd, **fields))


def test_two_sessions_at_once_keep_separate_turns_and_reverting_one_keeps_the_others_work(tb: Takeback) -> None:
    """Two Claude Code sessions in one workspace (two terminals): each prompt opens its own
    session's turn while the other's stays open, each step lands in its session's turn (also on
    a file both edit, also a shell command running while the other session edits), each stop
    ends only its own turn. Reverting A's turn keeps B's files and B's lines in a shared file."""
    repo = tb.cwd
    shared = repo / "shared.txt"
    shared.write_text("one\ntwo\nthree\nfour\nfive\n")
    git(repo, "add", "shared.txt")
    git(repo, "commit", "-qm", "shared")
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, session_id="A", prompt="A's prompt"))
    _edit_step(tb, "a1.txt", "a1\n", "a1", session="A")
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, session_id="B", prompt="B's prompt"))
    status = tb.json("status")
    assert [(t["label"], t["session"]) for t in status["open_turns"]] == [("A's prompt", "A"), ("B's prompt", "B")]
    assert "open turn  #1 A's prompt  (session A)" in tb.ok("status").text
    _edit_step(tb, "b1.txt", "b1\n", "b1", session="B")
    _edit_step(tb, "shared.txt", "ONE by A\ntwo\nthree\nfour\nfive\n", "a2", session="A")
    _edit_step(tb, "shared.txt", "ONE by A\ntwo\nthree\nfour\nFIVE by B\n", "b2", session="B")

    # A's shell command runs while B's edit of shared.txt starts and ends: that edit is B's.
    a_shell = {"tool_name": "Bash", "tool_use_id": "a3", "session_id": "A", "tool_input": {"command": "make gen"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **a_shell))
    (repo / "gen.txt").write_text("generated by A\n")
    _edit_step(tb, "shared.txt", "ONE by A\ntwo\nthree by B\nfour\nFIVE by B\n", "b3", session="B")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **a_shell))

    hook(tb, "claude", captured("claude", "Stop", repo, session_id="A"))  # ends A's turn only
    assert [t["session"] for t in tb.json("status")["open_turns"]] == ["B"]
    _shell_step(tb, "touch b2.txt", "b4", "B", lambda: (repo / "b2.txt").write_text("b2\n"))
    hook(tb, "claude", captured("claude", "Stop", repo, session_id="B"))
    assert tb.json("status")["open_turns"] == []

    a_turn, b_turn = sorted(turns(tb), key=lambda t: t["number"])
    assert (a_turn["number"], a_turn["session"], a_turn["label"], a_turn["ended_by"]) == (1, "A", "A's prompt", "stop")
    assert (b_turn["number"], b_turn["session"], b_turn["label"], b_turn["ended_by"]) == (2, "B", "B's prompt", "stop")
    assert [cp["label"] for cp in a_turn["checkpoints"]] == ["Write a1.txt", "Write shared.txt", "Bash: make gen"]
    assert [cp["paths"] for cp in a_turn["checkpoints"]] == [["a1.txt"], ["shared.txt"], ["gen.txt"]]
    assert [cp["paths"] for cp in b_turn["checkpoints"]] == [["b1.txt"], ["shared.txt"], ["shared.txt"], ["b2.txt"]]

    tb.ok("revert", "1")
    assert not (repo / "a1.txt").exists() and not (repo / "gen.txt").exists()
    assert (repo / "b1.txt").read_text() == "b1\n" and (repo / "b2.txt").read_text() == "b2\n"
    assert shared.read_text() == "one\ntwo\nthree by B\nfour\nFIVE by B\n"  # A's line only went back
    assert failures(tb) == (0, None)


def test_reverting_one_sessions_turn_reports_the_conflict_with_the_others_and_writes_nothing(tb: Takeback) -> None:
    """Session B rewrote the line session A's turn wrote: reverting A's turn is a conflict,
    reported, and B's work stays as B left it."""
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, session_id="A", prompt="A"))
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, session_id="B", prompt="B"))
    _edit_step(tb, "src/app.py", "def main():\n    return 'A'\n", "a1", session="A")
    _edit_step(tb, "src/app.py", "def main():\n    return 'B'\n", "b1", session="B")
    _edit_step(tb, "b.txt", "b\n", "b2", session="B")
    hook(tb, "claude", captured("claude", "Stop", repo, session_id="A"))
    hook(tb, "claude", captured("claude", "Stop", repo, session_id="B"))
    a_turn, b_turn = sorted(turns(tb), key=lambda t: t["number"])
    assert (a_turn["session"], [f["path"] for f in a_turn["files"]]) == ("A", ["src/app.py"])
    assert (b_turn["session"], sorted(f["path"] for f in b_turn["files"])) == ("B", ["b.txt", "src/app.py"])
    result = tb("--json", "revert", str(a_turn["number"]))
    assert result.code != 0, str(result)
    answer = result.json()
    assert answer["verdict"] == "refused" and [c["path"] for c in answer["conflicts"]] == ["src/app.py"]
    assert (repo / "src/app.py").read_text() == "def main():\n    return 'B'\n" and (repo / "b.txt").exists()
    assert [t["state"] for t in sorted(turns(tb), key=lambda t: t["number"])] == ["applied", "applied"]


def test_a_new_prompt_ends_only_its_own_sessions_turn(tb: Takeback) -> None:
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, session_id="A", prompt="A first"))
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, session_id="B", prompt="B first"))
    _edit_step(tb, "a.txt", "a\n", "a1", session="A")
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, session_id="A", prompt="A second"))
    _edit_step(tb, "b.txt", "b\n", "b1", session="B")
    _edit_step(tb, "a2.txt", "a2\n", "a2", session="A")
    open_turns = tb.json("status")["open_turns"]
    assert [(t["number"], t["label"]) for t in open_turns] == [(2, "B first"), (3, "A second")]
    hook(tb, "claude", captured("claude", "SessionEnd", repo, session_id="B"))
    first, b_turn, second = sorted(turns(tb), key=lambda t: t["number"])
    assert (first["label"], first["ended_by"], [f["path"] for f in first["files"]]) == ("A first", "next_prompt", ["a.txt"])
    assert (b_turn["ended_by"], [f["path"] for f in b_turn["files"]]) == ("session_end", ["b.txt"])
    assert (second["state"], [f["path"] for f in second["files"]]) == ("open", ["a2.txt"])


# ---------------------------------------------------------------- steps in show and restore


def test_show_lists_the_steps_and_restore_goes_back_to_just_before_a_step(tb: Takeback) -> None:
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, prompt="three steps"))
    for k in (1, 2, 3):
        _edit_step(tb, "steps.txt", f"after step {k}\n", f"s{k}")
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    n = turn["number"]
    shown = tb.ok("show", str(n)).text
    for k in (1, 2, 3):
        assert f"step   #{n}.{k} Write steps.txt" in shown
    tb.ok("restore", f"#{n}.2")  # just before step 3 = just after step 2
    assert (repo / "steps.txt").read_text() == "after step 2\n"


# ---------------------------------------------------------------- where a hook records, and failures


def test_a_hook_from_a_subfolder_records_into_the_work_trees_top(tb: Takeback) -> None:
    repo = tb.cwd
    sub = repo / "src"
    hook(tb, "codex", captured("codex", "UserPromptSubmit", repo, cwd=str(sub)), cwd=sub)
    assert tb.json("status")["open_turn"]["label"] == PROMPT
    # the CLI from that subfolder finds the same workspace (its slash commands run there)
    from_sub = tb.json("status", cwd=sub)
    assert from_sub["workspace"] == str(repo.resolve()) and from_sub["open_turn"]["label"] == PROMPT
    assert tb.json("log", cwd=sub)[0]["label"] == PROMPT


def test_a_subfolder_with_its_own_store_keeps_it(tb: Takeback) -> None:
    """An editor may keep a workspace on a subfolder of a repository: a command or a hook from
    inside it records there, not at the work tree's top."""
    repo = tb.cwd
    sub = repo / "src"
    tb.ok("--workspace", str(sub), "begin", "--label", "the editor's turn")
    assert tb.json("status", cwd=sub)["open_turn"]["label"] == "the editor's turn"
    hook(tb, "codex", captured("codex", "UserPromptSubmit", repo, cwd=str(sub)), cwd=sub)
    assert tb.json("status", cwd=sub)["workspace"] == str(sub.resolve())
    assert tb.json("status")["open_turn"] is None  # the top's store saw nothing


def test_a_hook_in_a_linked_worktree_records_into_that_worktrees_workspace(tb: Takeback, tmp_path: Path) -> None:
    other = tmp_path / "linked"
    git(tb.cwd, "worktree", "add", "-q", str(other), "-b", "side")
    hook(tb, "gemini", captured("gemini", "BeforeAgent", other), cwd=other / "src")
    assert tb.json("status")["open_turn"] is None
    assert tb.json("status", cwd=other)["open_turn"]["label"] == PROMPT


def test_the_project_folder_variable_wins_over_the_hooks_folder(tb: Takeback, tmp_path: Path) -> None:
    elsewhere = make_repo(tmp_path / "elsewhere")
    env = {**tb.env, "QWEN_PROJECT_DIR": str(tb.cwd)}
    proc = subprocess.run(
        [sys.executable, "-m", "takeback", "hook", "qwen"],
        input=json.dumps(captured("qwen", "UserPromptSubmit", elsewhere)), capture_output=True, text=True,
        cwd=elsewhere, env=env, timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == ""
    assert tb.json("status")["open_turn"]["agent"] == "qwen"


@pytest.mark.parametrize("stdin", ["{not json", "[1, 2]", json.dumps({"session_id": "x"})])
def test_a_failing_hook_exits_0_prints_nothing_and_is_counted_by_status(tb: Takeback, stdin: str) -> None:
    proc = hook(tb, "claude", stdin)
    assert proc.stderr == ""
    count, last = failures(tb)
    assert count == 1 and "claude" in last
    assert "hooks      1 failure logged" in tb.ok("status").text


def test_an_unknown_agent_or_no_arguments_still_exit_0(tb: Takeback) -> None:
    hook(tb, "nosuchagent", captured("claude", "UserPromptSubmit", tb.cwd))
    proc = subprocess.run([sys.executable, "-m", "takeback", "hook"], input="", capture_output=True, text=True,
                          cwd=tb.cwd, env=tb.env, timeout=60)
    assert proc.returncode == 0 and proc.stdout == ""
    assert failures(tb)[0] == 2 and turns(tb) == []


def test_a_hook_outside_any_repository_records_in_the_folder(plain_tb: Takeback) -> None:
    folder = plain_tb.cwd
    hook(plain_tb, "claude", captured("claude", "UserPromptSubmit", folder))
    _edit_step(plain_tb, "notes.txt", "agent\n", "p1")
    hook(plain_tb, "claude", captured("claude", "Stop", folder))
    [turn] = turns(plain_tb)
    assert [f["path"] for f in turn["files"]] == ["notes.txt"]
    plain_tb.ok("undo")
    assert (folder / "notes.txt").read_text() == "one\ntwo\n"


# ---------------------------------------------------------------- documented payloads (not run here)


def test_cursor_documented_payloads(tb: Takeback) -> None:
    repo = tb.cwd
    base = {"conversation_id": "conv-1", "generation_id": "gen-1", "workspace_roots": [str(repo)]}
    hook(tb, "cursor", {**base, "hook_event_name": "beforeSubmitPrompt", "prompt": "make main return 5"})
    (repo / "src/app.py").write_text("def main():\n    return 5\n")
    hook(tb, "cursor", {**base, "hook_event_name": "afterFileEdit", "file_path": str(repo / "src/app.py"),
                        "edits": [{"old_string": "return 1", "new_string": "return 5"}]})
    (repo / "README.md").write_text("the person\n")  # between tool calls: not Cursor's
    shell = {**base, "command": SHELL, "cwd": str(repo)}
    hook(tb, "cursor", {**shell, "hook_event_name": "beforeShellExecution"})
    (repo / "gen.txt").write_text("generated\n")
    hook(tb, "cursor", {**shell, "hook_event_name": "afterShellExecution", "output": ""})
    hook(tb, "cursor", {**base, "hook_event_name": "stop", "status": "completed"})
    [turn] = turns(tb)
    assert (turn["label"], turn["session"], turn["agent"], turn["ended_by"]) == ("make main return 5", "conv-1", "cursor", "stop")
    assert [cp["label"] for cp in turn["checkpoints"]] == ["edit src/app.py", f"shell: {SHELL}"]
    tb.ok("undo")
    assert (repo / "src/app.py").read_text() == "def main():\n    return 1\n"
    assert (repo / "README.md").read_text() == "the person\n" and not (repo / "gen.txt").exists()


def test_cline_documented_payloads(tb: Takeback) -> None:
    repo = tb.cwd
    base = {"clineVersion": "3.40.0", "timestamp": "1795673065586", "taskId": "task-7", "workspaceRoots": [str(repo)]}
    hook(tb, "cline", {**base, "hookName": "UserPromptSubmit", "userPromptSubmit": {"prompt": "add notes"}})
    tool = {"toolName": "write_to_file", "parameters": {"path": "notes.md", "content": "n\n"}}
    hook(tb, "cline", {**base, "hookName": "PreToolUse", "preToolUse": tool})
    (repo / "notes.md").write_text("n\n")
    hook(tb, "cline", {**base, "hookName": "PostToolUse", "postToolUse": {**tool, "result": "ok", "success": True}})
    cmd = {"toolName": "execute_command", "parameters": {"command": SHELL}}
    hook(tb, "cline", {**base, "hookName": "PreToolUse", "preToolUse": cmd})
    (repo / "gen.txt").write_text("generated\n")
    hook(tb, "cline", {**base, "hookName": "PostToolUse", "postToolUse": cmd})
    hook(tb, "cline", {**base, "hookName": "TaskComplete", "taskComplete": {}})
    [turn] = turns(tb)
    assert (turn["label"], turn["session"], turn["agent"]) == ("add notes", "task-7", "cline")
    assert [cp["label"] for cp in turn["checkpoints"]] == ["write_to_file notes.md", f"execute_command: {SHELL}"]


def test_windsurf_documented_payloads(tb: Takeback) -> None:
    repo = tb.cwd
    base = {"trajectory_id": "traj-1", "execution_id": "exec-1", "timestamp": "2026-11-26T06:04:10Z"}
    hook(tb, "windsurf", {**base, "agent_action_name": "pre_user_prompt", "tool_info": {"user_prompt": "edit app"}},
         cwd=repo / "src")
    info = {"file_path": str(repo / "src/app.py"), "edits": [{"old_string": "return 1", "new_string": "return 9"}]}
    hook(tb, "windsurf", {**base, "agent_action_name": "pre_write_code", "tool_info": info})
    (repo / "src/app.py").write_text("def main():\n    return 9\n")
    hook(tb, "windsurf", {**base, "agent_action_name": "post_write_code", "tool_info": info})
    run = {"command_line": SHELL, "cwd": str(repo)}
    hook(tb, "windsurf", {**base, "agent_action_name": "pre_run_command", "tool_info": run})
    (repo / "gen.txt").write_text("generated\n")
    hook(tb, "windsurf", {**base, "agent_action_name": "post_run_command", "tool_info": run})
    hook(tb, "windsurf", {**base, "agent_action_name": "post_cascade_response", "tool_info": {"response": "done"}})
    [turn] = turns(tb)
    assert (turn["label"], turn["session"], turn["ended_by"]) == ("edit app", "traj-1", "stop")
    assert sorted(f["path"] for f in turn["files"]) == ["gen.txt", "src/app.py"]


def test_kiro_documented_hooks_bracket_the_whole_turn(tb: Takeback) -> None:
    repo = tb.cwd
    env = {**tb.env, "USER_PROMPT": "kiro, edit the readme"}
    proc = subprocess.run([sys.executable, "-m", "takeback", "hook", "kiro", "promptSubmit"], input="",
                          capture_output=True, text=True, cwd=repo, env=env, timeout=60)
    assert proc.returncode == 0 and proc.stdout == ""
    (repo / "README.md").write_text("by kiro\n")
    hook(tb, "kiro", "", "agentStop")
    [turn] = turns(tb)
    assert (turn["label"], turn["agent"]) == ("kiro, edit the readme", "kiro")
    assert [f["path"] for f in turn["files"]] == ["README.md"]


def test_the_captured_payload_files_are_what_the_agents_sent() -> None:
    """Guard against editing the test data by hand: each file lists the events it holds in the
    order they fired, and every payload of an agent with event names carries its own name."""
    for path in sorted(PAYLOADS.glob("*.json")):
        data = json.loads(path.read_text())
        assert set(data["payloads"]) <= set(data["order"]), path.name
        for name, payload in data["payloads"].items():
            if data["agent"] not in ("copilot",):
                assert payload["hook_event_name"] == name, (path.name, name)


def test_an_edit_outside_the_workspace_records_nothing_but_says_so_and_is_no_failure(tb: Takeback, tmp_path: Path) -> None:
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    _edit_step(tb, str(tmp_path / "outside.txt"), "elsewhere\n", "o1")
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    assert [(cp["paths"], cp["outside"]) for cp in turn["checkpoints"]] == [([], [str(tmp_path / "outside.txt")])]
    assert turn["files"] == [] and failures(tb) == (0, None)


def test_gc_between_a_steps_start_and_end_keeps_its_before_images(tb: Takeback) -> None:
    """The before-image of a file no turn holds yet lives only in the step's file until its end."""
    repo = tb.cwd
    (repo / "draft.txt").write_text("the person's draft, never committed\n")
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    fields = {"tool_name": "Write", "tool_use_id": "g1",
              "tool_input": {"file_path": str(repo / "draft.txt"), "content": "agent\n"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **fields))
    tb.ok("gc")
    (repo / "draft.txt").write_text("agent\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **fields))
    hook(tb, "claude", captured("claude", "Stop", repo))
    tb.ok("undo")
    assert (repo / "draft.txt").read_text() == "the person's draft, never committed\n"
    assert failures(tb) == (0, None)


def test_a_step_whose_end_never_came_is_discarded_at_stop(tb: Takeback) -> None:
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    fields = {"tool_name": "Bash", "tool_use_id": "never-ends", "tool_input": {"command": "sleep 1000"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **fields))
    steps = Path(tb.json("status")["store"]) / "brackets"
    assert [p.name[:5] for p in steps.glob("step-*")] == ["step-"]
    hook(tb, "claude", captured("claude", "Stop", repo))
    assert list(steps.glob("step-*")) == []


def test_a_shell_step_that_writes_back_what_an_earlier_step_wrote_is_still_its_change(tb: Takeback) -> None:
    """Step 1 writes X; the person puts the file back; the shell step writes X again: the shell
    step's change is its own (only steps recorded while it ran can explain its changes away)."""
    repo = tb.cwd
    original = (repo / "README.md").read_text()
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    _edit_step(tb, "README.md", "by the agent\n", "w1")
    (repo / "README.md").write_text(original)  # the person undoes it by hand
    bash = {"tool_name": "Bash", "tool_use_id": "b1", "tool_input": {"command": "cp x README.md"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **bash))
    (repo / "README.md").write_text("by the agent\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **bash))
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    assert [cp["paths"] for cp in turn["checkpoints"]] == [["README.md"], ["README.md"]]


def test_copilot_calls_side_by_side_record_each_file_once(tb: Takeback) -> None:
    repo = tb.cwd
    hook(tb, "copilot", captured("copilot", "userPromptSubmitted", repo), "userPromptSubmitted")
    hook(tb, "copilot", captured("copilot", "preToolUse", repo), "preToolUse")
    hook(tb, "copilot", captured("copilot", "preToolUse", repo, **_shell_fields("copilot", 1)), "preToolUse")
    (repo / "agent_written.txt").write_text("written by the agent's write tool\n")
    (repo / "gen.txt").write_text("generated\n")
    hook(tb, "copilot", captured("copilot", "postToolUse", repo), "postToolUse")
    hook(tb, "copilot", captured("copilot", "postToolUse", repo, **_shell_fields("copilot", 1)), "postToolUse")
    hook(tb, "copilot", captured("copilot", "agentStop", repo), "agentStop")
    [turn] = turns(tb)
    assert [cp["paths"] for cp in turn["checkpoints"]] == [["agent_written.txt"], ["gen.txt"]]


def test_claude_hooks_another_agent_runs_record_nothing(tb: Takeback) -> None:
    """Copilot CLI, Cursor and VS Code's agent run the hooks in .claude/settings.json too, but
    without the CLAUDECODE variable Claude Code sets: their calls record nothing under Claude's
    name (their own hooks record the turn), and nothing fails."""
    repo = tb.cwd
    env = {k: v for k, v in tb.env.items() if k != "CLAUDECODE"}
    edit = {"tool_name": "Write", "tool_input": {"file_path": str(repo / "x.txt"), "content": "x\n"}, "tool_use_id": "t1"}
    for payload in (captured("claude", "UserPromptSubmit", repo), captured("claude", "PreToolUse", repo, **edit)):
        hook(tb, "claude", payload, env=env)
    (repo / "x.txt").write_text("x\n")
    for payload in (captured("claude", "PostToolUse", repo, **edit), captured("claude", "Stop", repo)):
        hook(tb, "claude", payload, env=env)
    assert turns(tb) == [] and failures(tb) == (0, None)
