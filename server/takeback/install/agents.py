"""The table of agents Takeback installs into: for each, where its config lives (honouring its
own home variable), the events its hooks listen to, where it lists MCP servers, what the
person still has to do afterwards, and how to tell it is on this machine (``install all``).
Facts from shared/notes/agents-testing.md (checked live on the pinned versions) and each
agent's documentation.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .hookentries import HookSpec
from .mcpentries import McpSpec

CLAUDE_EVENTS = {
    "SessionStart": None, "UserPromptSubmit": None, "PreToolUse": "*", "PostToolUse": "*", "Stop": None, "SessionEnd": None,
}
"""Claude Code's hook events Takeback listens to (``*``: every tool). Codex reads the same.
``SessionStart`` (and each agent's own session start below) records nothing: it has the
workspace made ready before the session's first prompt (hooks/run.py)."""

CLAUDE_READERS_NOTE = (
    "{title} also runs the hooks in Claude Code's settings (.claude/settings.json); Takeback's "
    "Claude Code hooks ignore calls that do not come from Claude Code, so a turn is recorded once, as {name}."
)


def _env_dir(var: str, default: Callable[[], Path]) -> Path:
    value = os.environ.get(var)
    return Path(value).expanduser() if value else default()


def _home() -> Path:
    return Path.home()


@dataclass(frozen=True)
class Agent:
    name: str
    title: str
    hooks_file: Callable[[str, Path], Path]
    """(scope, project root) → the file holding the hooks (OpenCode: opencode.json)."""
    mcp_file: Callable[[str, Path], Path]
    hooks: HookSpec | None
    """None for OpenCode (a plugin instead of hooks)."""
    mcp: McpSpec | None
    """None for Codex (a TOML table in config.toml)."""
    seed: dict = field(default_factory=dict)
    """What a hooks file Takeback creates starts with (Cursor's ``version``)."""
    project_seed: dict | None = None
    """The same for ``--scope project``, where it differs (Copilot's repository hook file)."""
    next_steps: tuple[str, ...] = ()
    project_notes: tuple[str, ...] = ()
    """Said after ``--scope project``."""
    plugin_file: Callable[[str, Path], Path] | None = None
    """OpenCode: where the plugin file goes."""
    hooks_off: tuple[tuple[str, ...], object] | None = None
    """A setting in the hooks file that switches every hook off (keys, value): install says so."""
    programs: tuple[str, ...] = ()
    """The agent's program names: one on PATH means the agent is on this machine."""
    home: Callable[[], Path] | None = None
    """Its config folder: when it exists, so does the agent (it made it at its first run)."""


def _claude_dir() -> Path:
    return _env_dir("CLAUDE_CONFIG_DIR", lambda: _home() / ".claude")


def _codex_dir() -> Path:
    return _env_dir("CODEX_HOME", lambda: _home() / ".codex")


def _gemini_dir() -> Path:
    return _env_dir("GEMINI_CLI_HOME", _home) / ".gemini"


def _qwen_dir() -> Path:
    return _env_dir("QWEN_HOME", lambda: _home() / ".qwen")


def _copilot_dir() -> Path:
    return _env_dir("COPILOT_HOME", lambda: _home() / ".copilot")


def _opencode_dir() -> Path:
    return _env_dir("XDG_CONFIG_HOME", lambda: _home() / ".config") / "opencode"


def _scoped(user: Callable[[], Path], project: str) -> Callable[[str, Path], Path]:
    return lambda scope, root: user() if scope == "user" else root / project


SHARED_FILE_NOTE = "{path} is a file of the repository: git shows it as new; add it to .git/info/exclude to keep it to yourself"

AGENTS: dict[str, Agent] = {
    a.name: a
    for a in (
        Agent(
            "claude",
            "Claude Code",
            hooks_file=_scoped(lambda: _claude_dir() / "settings.json", ".claude/settings.local.json"),
            mcp_file=lambda scope, root: (
                _env_dir("CLAUDE_CONFIG_DIR", _home) / ".claude.json" if scope == "user" else root / ".mcp.json"
            ),
            hooks=HookSpec(CLAUDE_EVENTS),
            mcp=McpSpec(extra={"type": "stdio"}),
            hooks_off=(("disableAllHooks",), True),
            programs=("claude",),
            home=_claude_dir,
            next_steps=("Claude Code reads hooks when a session starts: start a new session (/hooks lists them).",),
            project_notes=(
                ".claude/settings.local.json is Claude Code's personal file for this repository (not the team's .claude/settings.json).",
            ),
        ),
        Agent(
            "codex",
            "Codex CLI",
            hooks_file=_scoped(lambda: _codex_dir() / "hooks.json", ".codex/hooks.json"),
            mcp_file=_scoped(lambda: _codex_dir() / "config.toml", ".codex/config.toml"),
            hooks=HookSpec(CLAUDE_EVENTS),
            mcp=None,
            programs=("codex",),
            home=_codex_dir,
            next_steps=(
                "Codex runs new hooks only once you trust them, and skips them silently until then: start codex "
                "and answer its 'Hooks need review' question with 'Trust all and continue' (or type /hooks and "
                "press t). Codex asks again whenever a hook's command changes.",
            ),
            project_notes=(
                "Codex loads a repository's .codex/ folder only when the project is trusted.",
                SHARED_FILE_NOTE,
            ),
        ),
        Agent(
            "gemini",
            "Gemini CLI",
            hooks_file=_scoped(lambda: _gemini_dir() / "settings.json", ".gemini/settings.json"),
            mcp_file=_scoped(lambda: _gemini_dir() / "settings.json", ".gemini/settings.json"),
            hooks=HookSpec({
                "SessionStart": None, "BeforeAgent": None, "BeforeTool": ".*", "AfterTool": ".*", "AfterAgent": None,
                "SessionEnd": None,
            }),
            mcp=McpSpec(),
            hooks_off=(("hooksConfig", "enabled"), False),
            programs=("gemini",),
            home=_gemini_dir,
            next_steps=("Gemini CLI reads hooks when a session starts: start a new session (/hooks lists them).",),
            project_notes=("Gemini CLI reads a repository's .gemini/settings.json only in a trusted folder.", SHARED_FILE_NOTE),
        ),
        Agent(
            "copilot",
            "Copilot CLI",
            hooks_file=_scoped(lambda: _copilot_dir() / "settings.json", ".github/hooks/takeback.json"),
            mcp_file=lambda scope, root: _copilot_dir() / "mcp-config.json",
            hooks=HookSpec(
                dict.fromkeys(("sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop", "sessionEnd")),
                grouped=False,
                key="bash",
                extra={"type": "command", "timeoutSec": 30},
                event_in_command=True,
            ),
            mcp=McpSpec(extra={"type": "local", "tools": ["*"]}),
            project_seed={"version": 1},
            programs=("copilot",),
            home=_copilot_dir,
            next_steps=(
                "Start a new Copilot CLI session.",
                CLAUDE_READERS_NOTE.format(title="Copilot (the CLI and VS Code's agent)", name="copilot"),
            ),
            project_notes=(
                "Copilot CLI runs a repository's .github/hooks/ only when the folder is trusted (copilot --trust-folder).",
                "Copilot CLI's MCP servers are per person: the server went into the user's mcp-config.json.",
                SHARED_FILE_NOTE,
            ),
        ),
        Agent(
            "cursor",
            "Cursor",
            hooks_file=_scoped(lambda: _home() / ".cursor" / "hooks.json", ".cursor/hooks.json"),
            mcp_file=_scoped(lambda: _home() / ".cursor" / "mcp.json", ".cursor/mcp.json"),
            hooks=HookSpec(
                dict.fromkeys((
                    "beforeSubmitPrompt", "beforeShellExecution", "afterShellExecution", "beforeMCPExecution",
                    "afterMCPExecution", "afterFileEdit", "stop",
                )),
                grouped=False,
            ),
            mcp=McpSpec(),
            seed={"version": 1},
            programs=("cursor", "cursor-agent"),
            home=lambda: _home() / ".cursor",
            next_steps=(
                "Restart Cursor (or reload its window) so it reads hooks.json.",
                CLAUDE_READERS_NOTE.format(title="Cursor", name="cursor"),
            ),
            project_notes=(SHARED_FILE_NOTE,),
        ),
        Agent(
            "opencode",
            "OpenCode",
            hooks_file=_scoped(lambda: _opencode_dir() / "opencode.json", "opencode.json"),
            mcp_file=_scoped(lambda: _opencode_dir() / "opencode.json", "opencode.json"),
            hooks=None,
            mcp=McpSpec(section="mcp", argv_list=True, extra={"enabled": True}),
            plugin_file=_scoped(lambda: _opencode_dir() / "takeback-plugin.js", ".opencode/takeback-plugin.js"),
            programs=("opencode",),
            home=_opencode_dir,
            next_steps=("OpenCode loads plugins when it starts: start it again.",),
            project_notes=(SHARED_FILE_NOTE,),
        ),
        Agent(
            "qwen",
            "Qwen Code",
            hooks_file=_scoped(lambda: _qwen_dir() / "settings.json", ".qwen/settings.json"),
            mcp_file=_scoped(lambda: _qwen_dir() / "settings.json", ".qwen/settings.json"),
            hooks=HookSpec({"UserPromptSubmit": None, "PreToolUse": ".*", "PostToolUse": ".*", "Stop": None, "SessionEnd": None}),
            mcp=McpSpec(),
            programs=("qwen",),
            home=_qwen_dir,
            next_steps=("Qwen Code reads hooks when a session starts: start a new session.",),
            project_notes=(SHARED_FILE_NOTE,),
        ),
    )
}

NAMES = tuple(AGENTS)


def seed_for(agent: Agent, scope: str) -> dict:
    """What a hooks file that Takeback creates for ``agent`` in ``scope`` starts with."""
    return agent.project_seed if scope == "project" and agent.project_seed is not None else agent.seed


def not_found(agent: Agent) -> str | None:
    """Why ``install all`` passes ``agent`` over: None when it is on this machine (one of its
    programs on PATH, or its config folder exists), else what was looked for."""
    search = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(d))
    if any(shutil.which(program, path=search) for program in agent.programs):  # never a relative folder: the repository's own file
        return None
    folder = agent.home() if agent.home is not None else None
    if folder is not None and folder.is_dir():
        return None
    programs = " or ".join(f"`{p}`" for p in agent.programs)
    where = f" and no {_tilde(folder)}" if folder is not None else ""
    return f"not found: no {programs} on PATH{where}"


def _tilde(path: Path) -> str:
    """``path`` with the home folder written ``~``, as the person knows it."""
    try:
        return "~/" + str(path.relative_to(_home()))
    except ValueError:
        return str(path)
