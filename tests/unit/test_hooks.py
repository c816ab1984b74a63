"""The pure parts of the agent hooks: each agent's payload read into an ``Event``
(``hooks/agents.py``, fed the payloads captured from the real agents under
tests/cli/hook_payloads/ and hand-written ones for the agents read from their documentation),
the files a Codex patch names (``hooks/apply_patch.py``), the workspace a hook records into
(``hooks/where.py``) and the resident process's netstrings (``resident/wire.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from takeback.config import default_store_dir
from takeback.hooks.agents import PayloadError, parse
from takeback.hooks.apply_patch import patch_paths
from takeback.hooks.where import workspace_for
from takeback.resident import wire
from takeback.workspace.locate import workspace_root

CAPTURED = Path(__file__).parent.parent / "cli" / "hook_payloads"
CLAUDE_ENV = {"CLAUDECODE": "1"}

# agent: (the event name its edit tool's pre-tool payload is under, given on the command line?, env)
EDIT_EVENTS = {
    "claude": ("PreToolUse", False, CLAUDE_ENV),
    "codex": ("PreToolUse", False, {}),
    "qwen": ("PreToolUse", False, {}),
    "gemini": ("BeforeTool", False, {}),
    "copilot": ("preToolUse", True, {}),
    "opencode": ("tool.execute.before", True, {}),
}


def captured(agent: str) -> dict:
    return json.loads((CAPTURED / f"{agent}.json").read_text())["payloads"]


# ------------------------------------------------------------------ payloads captured from the real agents


@pytest.mark.parametrize("agent", sorted(EDIT_EVENTS))
def test_each_agents_edit_tool_call_names_its_file(agent: str) -> None:
    name, on_command_line, env = EDIT_EVENTS[agent]
    event = parse(agent, name if on_command_line else None, captured(agent)[name], env)
    assert (event.kind, event.agent, event.is_step) == ("pre_tool", agent, True)
    assert [Path(p).name for p in event.paths] == ["agent_written.txt"]
    assert event.command is None


@pytest.mark.parametrize("agent,name", [("claude", "UserPromptSubmit"), ("codex", "UserPromptSubmit"), ("qwen", "UserPromptSubmit"),
                                        ("gemini", "BeforeAgent"), ("copilot", "userPromptSubmitted"), ("opencode", "chat.message")])
def test_each_agents_prompt_opens_a_turn_with_its_text_and_session(agent: str, name: str) -> None:
    event = parse(agent, name if EDIT_EVENTS[agent][1] else None, captured(agent)[name], EDIT_EVENTS[agent][2])
    assert event.kind == "prompt"
    assert event.prompt.startswith("Create the file agent_written.txt")
    assert event.session


@pytest.mark.parametrize("agent,name", [("claude", "SessionStart"), ("codex", "SessionStart"), ("gemini", "SessionStart"),
                                        ("copilot", "sessionStart"), ("opencode", "session.created")])
def test_each_agents_session_start_is_read_with_its_folder_and_is_no_step(agent: str, name: str) -> None:
    """A session's start records nothing (hooks/record.py); it is read so that its workspace,
    found from its folder as a prompt's is, can be made ready before the first prompt."""
    event = parse(agent, name if EDIT_EVENTS[agent][1] else None, captured(agent)[name], EDIT_EVENTS[agent][2])
    assert (event.kind, event.agent, event.is_step, event.prompt) == ("session_start", agent, False, None)
    assert event.folders[0] == "<OUT>/repo" and event.session


@pytest.mark.parametrize("agent,name", [("claude", "PostToolBatch"), ("codex", "PreModelRequest"), ("gemini", "PreCompress"),
                                        ("opencode", "session.status")])
def test_events_takeback_does_not_use_are_none(agent: str, name: str) -> None:
    assert parse(agent, name if EDIT_EVENTS[agent][1] else None, captured(agent)[name], EDIT_EVENTS[agent][2]) is None


def test_claudes_hooks_run_by_another_agent_record_nothing() -> None:
    assert parse("claude", None, captured("claude")["PreToolUse"], {}) is None


def test_the_agents_project_folder_comes_before_the_payloads() -> None:
    event = parse("gemini", None, captured("gemini")["BeforeTool"], {"GEMINI_PROJECT_DIR": "/project"})
    assert event.folders == ["/project", "<OUT>/repo"]


# ------------------------------------------------------------------ refusals


def test_an_unknown_agent_is_refused_with_the_known_ones() -> None:
    with pytest.raises(PayloadError, match="unknown agent 'vim' \\(one of claude, codex"):
        parse("vim", "stop", {}, {})


def test_a_payload_without_an_event_name_is_refused() -> None:
    with pytest.raises(PayloadError, match="no event name in the copilot payload"):
        parse("copilot", None, {"sessionId": "s"}, {})


# ------------------------------------------------------------------ tools sorted by kind


def _codex_tool(tool: str, tool_input: dict) -> object:
    return parse("codex", "PreToolUse", {"session_id": "s", "tool_name": tool, "tool_input": tool_input}, {})


def test_a_shell_tool_carries_its_command() -> None:
    assert _codex_tool("Bash", {"command": "make"}).command == "make"


def test_codexs_shell_argv_is_joined_into_one_command() -> None:
    assert _codex_tool("shell", {"command": ["bash", "-lc", "echo hi > x"]}).command == "bash -lc echo hi > x"


def test_a_patch_sent_through_codexs_shell_names_its_files() -> None:
    event = _codex_tool("shell", {"command": "*** Begin Patch\n*** Update File: a.py\n*** End Patch\n"})
    assert (event.paths, event.command) == (["a.py"], None)


def test_a_read_only_tool_is_not_a_step() -> None:
    assert not _codex_tool("Read", {"file_path": "a.py"}).is_step


def test_any_other_tool_is_bracketed_like_a_command() -> None:
    event = _codex_tool("mcp__github__create_file", {"path": "x"})
    assert (event.command, event.paths, event.is_step) == ("", None, True)


@pytest.mark.parametrize("tool", ["mcp__takeback__undo", "mcp__plugin_takeback_takeback__revert"])
def test_takebacks_own_tools_are_not_steps(tool: str) -> None:
    assert not _codex_tool(tool, {}).is_step


def test_an_edit_tool_without_a_path_names_no_file() -> None:
    assert _codex_tool("Write", {"content": "x"}).paths is None


def test_copilots_tool_arguments_given_as_json_text_are_read() -> None:
    event = parse("copilot", "preToolUse", {"sessionId": "s", "toolName": "edit", "toolArgs": '{"path": "a.py"}'}, {})
    assert event.paths == ["a.py"]


def test_copilots_unreadable_tool_arguments_name_no_file() -> None:
    event = parse("copilot", "preToolUse", {"sessionId": "s", "toolName": "edit", "toolArgs": "{not json"}, {})
    assert event.paths is None


# ------------------------------------------------------------------ agents read from their documentation


def test_opencode_run_prompt_quoted_as_one_word_is_unwrapped() -> None:
    event = parse("opencode", "chat.message", {"session_id": "s", "prompt": '"fix the \\"bug\\" now"'}, {})
    assert event.prompt == 'fix the "bug" now'


def test_opencode_prompt_quoting_a_single_word_is_kept() -> None:
    assert parse("opencode", "chat.message", {"session_id": "s", "prompt": '"word"'}, {}).prompt == '"word"'


def test_opencode_session_from_the_event_properties() -> None:
    assert parse("opencode", "session.idle", {"properties": {"sessionID": "ses_1"}}, {}).session == "ses_1"


def test_cursor_file_edit_carries_the_replacements_made() -> None:
    payload = {"hook_event_name": "afterFileEdit", "conversation_id": "c", "workspace_roots": ["/w"], "file_path": "/w/a.py",
               "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": 1}]}
    event = parse("cursor", None, payload, {})
    assert (event.kind, event.paths, event.edits, event.folders) == ("edited", ["/w/a.py"], [("a", "b")], ["/w"])


def test_cursor_shell_execution_is_a_shell_step() -> None:
    event = parse("cursor", None, {"hook_event_name": "beforeShellExecution", "conversation_id": "c", "command": "ls"}, {})
    assert (event.kind, event.tool, event.command) == ("pre_tool", "shell", "ls")


def test_cline_reads_the_object_named_after_its_hook() -> None:
    payload = {"hookName": "PreToolUse", "taskId": "t", "workspaceRoots": ["/w"],
               "preToolUse": {"toolName": "write_to_file", "parameters": {"path": "a.md"}}}
    event = parse("cline", None, payload, {})
    assert (event.session, event.paths, event.folders) == ("t", ["a.md"], ["/w"])


def test_windsurf_write_and_run_actions() -> None:
    write = parse("windsurf", None, {"agent_action_name": "pre_write_code", "trajectory_id": "t",
                                     "tool_info": {"file_path": "/w/a.py", "cwd": "/w"}}, {})
    run = parse("windsurf", None, {"agent_action_name": "post_run_command", "trajectory_id": "t",
                                   "tool_info": {"command_line": "make"}}, {})
    assert (write.kind, write.paths, write.folders) == ("pre_tool", ["/w/a.py"], ["/w"])
    assert (run.kind, run.command) == ("post_tool", "make")


def test_kiro_turn_is_a_whole_turn_bracket_with_the_prompt_from_its_environment() -> None:
    event = parse("kiro", "promptSubmit", {}, {"USER_PROMPT": "tidy up"})
    assert (event.kind, event.prompt, event.session, event.whole_turn) == ("prompt", "tidy up", "kiro", True)


# ------------------------------------------------------------------ Codex patches


def test_patch_names_every_added_updated_deleted_and_moved_file_in_order() -> None:
    patch = ("*** Begin Patch\n*** Add File: new.py\n+x\n*** Update File: old.py\n*** Move to: moved.py\n@@\n-a\n+b\n"
             "*** Delete File: gone.py\n*** End Patch\n")
    assert patch_paths(patch) == ["new.py", "old.py", "moved.py", "gone.py"]


def test_patch_names_a_file_once_and_trims_spaces() -> None:
    assert patch_paths("*** Update File:  a.py \n*** Update File: a.py\n") == ["a.py"]


def test_patch_lines_that_only_mention_a_header_name_nothing() -> None:
    assert patch_paths("+*** Add File: not-a-header.py\n*** Add File:\n") == []


# ------------------------------------------------------------------ the hook's workspace


def test_a_hook_in_a_subfolder_records_into_the_repository_top(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src" / "deep").mkdir(parents=True)
    assert workspace_for([], str(tmp_path / "repo" / "src" / "deep")) == str(tmp_path / "repo")


def test_a_subfolder_that_has_a_store_is_its_own_workspace(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src" / "deep").mkdir(parents=True)
    default_store_dir(tmp_path / "repo" / "src").mkdir(parents=True)  # an editor's workspace there
    assert workspace_root(str(tmp_path / "repo" / "src" / "deep")) == str(tmp_path / "repo" / "src")
    assert workspace_root(str(tmp_path / "repo")) == str(tmp_path / "repo")
    (tmp_path / "plain" / "sub").mkdir(parents=True)
    default_store_dir(tmp_path / "plain").mkdir(parents=True)
    assert workspace_root(str(tmp_path / "plain" / "sub")) == str(tmp_path / "plain" / "sub")  # no work tree: no walk up


def test_a_linked_worktree_whose_git_is_a_file_is_its_own_top(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "wt" / "src").mkdir(parents=True)
    (tmp_path / "repo" / "wt" / ".git").write_text("gitdir: ../.git/worktrees/wt\n")
    assert workspace_for([str(tmp_path / "repo" / "wt" / "src")], "/") == str(tmp_path / "repo" / "wt")


def test_a_folder_in_no_repository_is_its_own_workspace(tmp_path: Path) -> None:
    (tmp_path / "plain" / "sub").mkdir(parents=True)
    assert workspace_for([str(tmp_path / "plain" / "sub")], "/") == str(tmp_path / "plain" / "sub")


def test_relative_folders_resolve_from_the_hooks_folder_and_missing_ones_are_passed_over(tmp_path: Path) -> None:
    (tmp_path / "a" / "proj").mkdir(parents=True)
    assert workspace_for(["missing", "proj/../proj"], str(tmp_path / "a")) == str(tmp_path / "a" / "proj")


def test_without_any_existing_folder_the_hooks_folder_is_used(tmp_path: Path) -> None:
    assert workspace_for([str(tmp_path / "nope")], str(tmp_path)) == str(tmp_path)


# ------------------------------------------------------------------ the resident process's wire format


@pytest.mark.parametrize("fields", [[], [b""], [b"hook", b"a:b,c", b"\0\xff\n"], [b"x" * 1000]])
def test_netstrings_round_trip_any_bytes(fields: list[bytes]) -> None:
    assert wire.unpack(wire.pack(fields)) == fields


def test_pack_writes_length_colon_bytes_comma() -> None:
    assert wire.pack([b"done", b""]) == b"4:done,0:,"


@pytest.mark.parametrize("data,why", [
    (b"x:abc,", "not a netstring"),
    (b"4abcd,", "not a netstring"),
    (b"5:abcd,", "cut short"),
    (b"4:abcd;", "cut short"),
    (b"4:abcd", "cut short"),
])
def test_unpack_refuses_anything_but_netstrings(data: bytes, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        wire.unpack(data)


def test_environment_round_trips_values_with_equals_and_undecodable_bytes() -> None:
    env = {"A": "x=y", "EMPTY": "", "RAW": b"\xff".decode("utf-8", "surrogateescape")}
    assert wire.read_environment(wire.environment(env)) == env


def test_empty_environment_is_empty() -> None:
    assert wire.read_environment(wire.environment({})) == {}


def test_an_environment_entry_without_equals_is_refused() -> None:
    with pytest.raises(ValueError, match="has no '='"):
        wire.read_environment(b"A=1\0JUNK")
