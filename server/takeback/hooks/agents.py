"""Each agent's hook payload read into a normalized ``Event`` (or None: an event not used).

What each agent sends was established on real runs (docs/agents.md and the captured
payloads under tests/cli/hook_payloads/); Cursor, Cline, Windsurf and Kiro are read as their
documentation describes. Tools are sorted into edit tools (which name the files they write),
shell tools (whose effect on disk is bracketed), tools known only to read (not steps), and any
other tool — an MCP server's tool, a tool newer than this list — which is bracketed like a
shell command, since it may write files. An edit tool whose payload names no file (an argument
this list does not know, a patch Takeback cannot read) is bracketed too: never dropped. Each
event keeps the folder the agent's call runs in (``Event.cwd``: the payload's ``cwd``), which
the tool's relative paths start from (``record.py``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping

from ..workspace.locate import project_folder
from .apply_patch import patch_paths
from .decode import safe_text
from .events import Event

AGENTS = ("claude", "codex", "gemini", "copilot", "cursor", "opencode", "qwen", "cline", "windsurf", "kiro")

# Edit tools and the argument naming their file; shell tools and their command argument.
_EDIT_PATH_KEYS = ("file_path", "filePath", "path", "notebook_path", "absolute_path", "target_file")
_EDIT_TOOLS = {
    "Write", "Edit", "MultiEdit", "NotebookEdit",  # Claude Code
    "write_file", "replace", "edit",  # Gemini CLI, Qwen Code
    "create", "str_replace_editor",  # Copilot CLI (edit too)
    "write", "patch", "multiedit",  # OpenCode (edit too)
    "write_to_file", "replace_in_file", "new_rule",  # Cline
}
_PATCH_TOOLS = {"apply_patch"}  # Codex, OpenCode (GPT models): the files are named inside the patch text
_PATCH_KEYS = ("command", "input", "patch", "patchText")
_SHELL_TOOLS = {"Bash", "bash", "shell", "run_shell_command", "exec_command", "local_shell", "execute_command",
                "shell_command", "PowerShell", "monitor"}  # Codex's other shell; Claude Code on Windows; Qwen Code
# Tools that only read, plan or talk (their calls are not steps).
_READ_ONLY_TOOLS = {
    # Claude Code (Task: a subagent, whose own tool calls run the hooks too)
    "Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "TodoRead", "NotebookRead", "Task", "Agent",
    "ExitPlanMode", "BashOutput", "KillShell", "KillBash", "SlashCommand", "Skill", "AskUserQuestion",
    "ListMcpResourcesTool", "ReadMcpResourceTool", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "TaskOutput",
    "EnterPlanMode", "ReportFindings", "CronList",
    # Gemini CLI, Qwen Code
    "read_file", "read_many_files", "glob", "search_file_content", "grep_search", "list_directory", "web_fetch",
    "google_web_search", "web_search", "save_memory", "write_todos", "todo_write", "task", "exit_plan_mode",
    "update_topic", "list_background_processes", "read_background_output", "enter_plan_mode", "ask_user",
    "get_internal_docs", "read_mcp_resource", "list_mcp_resources", "tool_search", "ask_user_question", "cron_list",
    # Copilot CLI
    "view", "grep", "report_intent", "think", "fetch", "read_bash", "list_bash", "stop_bash",
    "rg", "fetch_copilot_cli_documentation", "read_agent", "list_agents",
    # OpenCode
    "read", "list", "webfetch", "websearch", "todowrite", "todoread", "codesearch", "question",
    # Codex
    "update_plan", "view_image", "list_dir", "grep_files", "request_user_input", "get_goal",
}

# Event names of the agents that use Claude Code's hook format (Codex and Qwen Code do).
_CLAUDE_EVENTS = {
    "SessionStart": "session_start", "UserPromptSubmit": "prompt", "PreToolUse": "pre_tool", "PostToolUse": "post_tool",
    "PostToolUseFailure": "post_tool", "Stop": "stop", "StopFailure": "stop", "SessionEnd": "session_end",
}
_EVENTS = {
    "claude": _CLAUDE_EVENTS,
    "codex": _CLAUDE_EVENTS,
    "qwen": _CLAUDE_EVENTS,
    "gemini": {
        "SessionStart": "session_start", "BeforeAgent": "prompt", "BeforeTool": "pre_tool", "AfterTool": "post_tool", "AfterAgent": "stop",
        "SessionEnd": "session_end",
    },
    "copilot": {
        "sessionStart": "session_start", "userPromptSubmitted": "prompt", "preToolUse": "pre_tool", "postToolUse": "post_tool",
        "agentStop": "stop", "sessionEnd": "session_end",
    },
    "opencode": {
        "session.created": "session_start", "chat.message": "prompt", "tool.execute.before": "pre_tool", "tool.execute.after": "post_tool",
        "session.idle": "stop", "session.deleted": "session_end",
    },
    "cursor": {
        "beforeSubmitPrompt": "prompt", "beforeShellExecution": "pre_tool", "afterShellExecution": "post_tool",
        "beforeMCPExecution": "pre_tool", "afterMCPExecution": "post_tool", "afterFileEdit": "edited", "stop": "stop",
    },
    "cline": {
        "UserPromptSubmit": "prompt", "PreToolUse": "pre_tool", "PostToolUse": "post_tool",
        "TaskComplete": "stop", "TaskCancel": "stop",
    },
    "windsurf": {
        "pre_user_prompt": "prompt", "pre_write_code": "pre_tool", "post_write_code": "post_tool",
        "pre_run_command": "pre_tool", "post_run_command": "post_tool", "post_cascade_response": "stop",
    },
    "kiro": {"promptSubmit": "prompt", "agentStop": "stop"},
}


class PayloadError(ValueError):
    """The payload is not what this agent sends (logged as a hook failure)."""


#: The variable an agent sets in its own hooks' environment, for agents whose hook configuration
#: other agents run too (Copilot CLI, Cursor and VS Code's agent run `.claude/settings.json`
#: hooks): a call without it comes from another agent, whose own hooks record that turn, so it
#: records nothing (never a turn twice, nor under the wrong agent's name).
_RUN_BY = {"claude": "CLAUDECODE"}


def event_kind(agent: str, event_name: str) -> str | None:
    """What ``agent``'s event ``event_name`` is to Takeback ("pre_tool", "prompt" …), or None
    for an event it does not use (or an unknown agent)."""
    return _EVENTS.get(agent, {}).get(event_name)


def parse(agent: str, event_name: str | None, payload: dict, env: Mapping[str, str] | None = None) -> Event | None:
    """``payload`` (the agent's JSON) as a normalized event; ``event_name``: the one given on the
    command line (Copilot CLI's payloads have none; OpenCode's plugin passes it too); ``env``:
    the hook's environment (default: this process's), which some agents put facts in. None for an
    event Takeback does not use, or a call another agent made with this agent's hooks."""
    env = os.environ if env is None else env
    if agent not in _EVENTS:
        raise PayloadError(f"unknown agent {agent!r} (one of {', '.join(AGENTS)})")
    marker = _RUN_BY.get(agent)
    if marker is not None and not env.get(marker):
        return None
    name = event_name or payload.get("hook_event_name") or payload.get("hookName") or payload.get("agent_action_name")
    if not name:
        raise PayloadError(f"no event name in the {agent} payload nor on the command line")
    kind = _EVENTS[agent].get(str(name))
    if kind is None:
        return None  # an event Takeback does not use (PreCompress, PostToolBatch, …)
    event = _READERS.get(agent, _read_claude)(agent, kind, payload)
    project = project_folder(agent, env)
    if project:
        event.folders.insert(0, project)  # the agent's project folder wins over the payload's
    if agent == "kiro" and env.get("USER_PROMPT"):
        event.prompt = safe_text(env["USER_PROMPT"])
    return event


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _args(value: object) -> dict:
    """Tool arguments: an object, or (Copilot CLI, some versions) its JSON text; a text that is
    not JSON is a freeform tool's whole input (Copilot CLI's ``apply_patch`` for GPT models
    sends the bare patch), kept as ``input``."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {"input": value}
    return value if isinstance(value, dict) else {}


def _command(value: object) -> str | None:
    if isinstance(value, list):  # Codex's shell takes argv
        return " ".join(str(v) for v in value)
    return _text(value)


def _tool(event: Event, tool: str | None, args: dict) -> Event:
    """Fill in what a tool call touches, by the tool's kind."""
    event.tool = tool
    if tool in _PATCH_TOOLS:  # Codex: command (or input, patch); OpenCode's for GPT models: patchText
        patch = next((args[k] for k in _PATCH_KEYS if isinstance(args.get(k), str) and args[k]), "")
        event.paths = patch_paths(patch) or None
        event.command = None if event.paths else ""  # a patch naming no file it can read: bracketed
    elif tool in _EDIT_TOOLS:
        path = next((args[k] for k in _EDIT_PATH_KEYS if isinstance(args.get(k), str) and args[k]), None)
        event.paths = [path] if path else None
        event.command = None if path else ""  # no file named: bracketed like a shell command
    elif tool in _SHELL_TOOLS:
        command = _command(args.get("command", args.get("cmd")))
        if isinstance(command, str) and command.startswith("*** Begin Patch"):  # Codex may send a patch via its shell
            event.paths = patch_paths(command)
        else:
            event.command = command or ""
    elif tool and tool not in _READ_ONLY_TOOLS and not _is_takeback_tool(tool):
        event.command = ""  # a tool that may write anything: bracketed like a command, named by the tool
    return event


def _is_takeback_tool(tool: str) -> bool:
    """Takeback's own MCP tools (``mcp__takeback__undo``, the plugin's
    ``mcp__plugin_takeback_takeback__undo``): what they change is an operation on the timeline
    already, never an agent's step."""
    parts = tool.split("__")
    return len(parts) >= 3 and parts[0] == "mcp" and "takeback" in parts[1]


def _folders(agent: str, payload: dict, *keys: str) -> list[str]:
    found: list[str] = []
    for key in keys:
        value = payload.get(key)
        if isinstance(value, list):
            found.extend(v for v in value if isinstance(v, str))
        elif isinstance(value, str):
            found.append(value)
    return [f for f in found if f]


def _read_claude(agent: str, kind: str, payload: dict) -> Event:
    """Claude Code, Codex CLI and Qwen Code (Claude Code's format); Gemini CLI (the same fields)."""
    event = Event(kind, agent, session=_text(payload.get("session_id")), folders=_folders(agent, payload, "cwd"),  # type: ignore[arg-type]
                  cwd=_text(payload.get("cwd")))
    if kind == "prompt":
        event.prompt = _text(payload.get("prompt"))
    elif kind in ("pre_tool", "post_tool"):
        event.call_id = _text(payload.get("tool_use_id"))
        _tool(event, _text(payload.get("tool_name")), _args(payload.get("tool_input")))
    return event


def _read_copilot(agent: str, kind: str, payload: dict) -> Event:
    event = Event(kind, agent, session=_text(payload.get("sessionId")), folders=_folders(agent, payload, "cwd"),  # type: ignore[arg-type]
                  cwd=_text(payload.get("cwd")))
    if kind == "prompt":
        event.prompt = _text(payload.get("prompt"))
    elif kind in ("pre_tool", "post_tool"):
        _tool(event, _text(payload.get("toolName")), _args(payload.get("toolArgs")))
    return event


def _read_opencode(agent: str, kind: str, payload: dict) -> Event:
    session = _text(payload.get("session_id")) or _text((payload.get("properties") or {}).get("sessionID"))
    event = Event(kind, agent, session=session, folders=_folders(agent, payload, "worktree", "cwd"),  # type: ignore[arg-type]
                  cwd=_text(payload.get("cwd")))  # the plugin's: OpenCode's directory, which its tools start from
    if kind == "prompt":
        prompt = _text(payload.get("prompt"))
        event.prompt = _unquoted_run_prompt(prompt) if prompt else prompt
    elif kind in ("pre_tool", "post_tool"):
        event.call_id = _text(payload.get("call_id"))
        _tool(event, _text(payload.get("tool_name")), _args(payload.get("tool_input")))
    return event


_RUN_WORD = re.compile(r'"((?:\\"|[^"])*)"')


def _unquoted_run_prompt(prompt: str) -> str:
    """``opencode run "fix the bug"`` hands the prompt over as ``"fix the bug"``: each word of
    its command line that holds a space wrapped in double quotes, its own quotes as ``\\"``.
    A prompt that is one such word is unwrapped; any other is kept as it came (a prompt typed
    in OpenCode's window may quote words itself)."""
    word = _RUN_WORD.fullmatch(prompt)
    if word is None or " " not in word.group(1):
        return prompt
    return word.group(1).replace('\\"', '"')


def _read_cursor(agent: str, kind: str, payload: dict) -> Event:
    event = Event(kind, agent, session=_text(payload.get("conversation_id")),  # type: ignore[arg-type]
                  folders=_folders(agent, payload, "workspace_roots", "cwd"), cwd=_text(payload.get("cwd")))
    if kind == "prompt":
        event.prompt = _text(payload.get("prompt"))
    elif kind in ("pre_tool", "post_tool") and isinstance(payload.get("tool_name"), str):
        # beforeMCPExecution / afterMCPExecution: an MCP server's tool (its arguments as JSON
        # text); it may write anything, so it is bracketed like a shell command
        _tool(event, payload["tool_name"], _args(payload.get("tool_input")))
    elif kind in ("pre_tool", "post_tool"):
        event.tool = "shell"
        event.command = _text(payload.get("command")) or ""
    elif kind == "edited":
        path = _text(payload.get("file_path"))
        event.tool = "edit"
        event.paths = [path] if path else None
        edits = payload.get("edits")
        if not isinstance(edits, list):
            edits = []
        event.edits = [
            (e["old_string"], e["new_string"]) for e in edits
            if isinstance(e, dict) and isinstance(e.get("old_string"), str) and isinstance(e.get("new_string"), str)
        ]
    return event


def _read_cline(agent: str, kind: str, payload: dict) -> Event:
    """Cline: ``hookName``, ``taskId``, ``workspaceRoots``, and one object named after the hook
    (``userPromptSubmit.prompt``, ``preToolUse.toolName`` / ``.parameters`` …)."""
    name = str(payload.get("hookName", ""))
    body = payload.get(name[:1].lower() + name[1:]) if name else None
    body = body if isinstance(body, dict) else {}
    roots = _folders(agent, payload, "workspaceRoots")
    event = Event(kind, agent, session=_text(payload.get("taskId")), folders=roots, cwd=roots[0] if roots else None)  # type: ignore[arg-type]
    if kind == "prompt":
        event.prompt = _text(body.get("prompt"))
    elif kind in ("pre_tool", "post_tool"):
        _tool(event, _text(body.get("toolName")), _args(body.get("parameters")))
    return event


def _read_windsurf(agent: str, kind: str, payload: dict) -> Event:
    """Windsurf Cascade: ``agent_action_name``, ``trajectory_id``, ``execution_id`` and ``tool_info``."""
    info = payload.get("tool_info")
    if not isinstance(info, dict):
        info = {}
    event = Event(kind, agent, session=_text(payload.get("trajectory_id")), folders=_folders(agent, info, "cwd"),  # type: ignore[arg-type]
                  cwd=_text(info.get("cwd")))
    action = str(payload.get("agent_action_name", ""))
    if kind == "prompt":
        event.prompt = _text(info.get("user_prompt"))
    elif action.endswith("_write_code"):
        path = _text(info.get("file_path"))
        event.tool, event.paths = "write_code", ([path] if path else None)
        event.command = None if path else ""  # no file named: bracketed
    elif action.endswith("_run_command"):
        event.tool, event.command = "run_command", _text(info.get("command_line")) or ""
    return event


def _read_kiro(agent: str, kind: str, payload: dict) -> Event:
    """Kiro's agent hooks run a command with no payload; the prompt is in ``USER_PROMPT``. No
    tool events: a Kiro turn is a whole-turn bracket."""
    prompt = _text(payload.get("prompt"))  # parse() puts USER_PROMPT first
    return Event(kind, agent, session=_text(payload.get("session_id")) or "kiro", prompt=prompt,  # type: ignore[arg-type]
                 folders=_folders(agent, payload, "cwd", "workspace"), whole_turn=True)


_READERS: dict[str, Callable[[str, str, dict], Event]] = {
    "copilot": _read_copilot,
    "opencode": _read_opencode,
    "cursor": _read_cursor,
    "cline": _read_cline,
    "windsurf": _read_windsurf,
    "kiro": _read_kiro,
}
