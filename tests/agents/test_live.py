"""Live: real agent programs from npm, hooked up by ``takeback install``, do real turns offline.

Claude Code, Qwen Code, Copilot CLI, Gemini CLI, Codex CLI and OpenCode (each installed by
scripts/setup-agents.sh at a pinned version) run, one after the other, non-interactively in a temp
git repository, in a network namespace that has only loopback, against the scripted model server
(``model_server.py``, started inside the same namespace by ``offline.py``). The hooks are the ones
``takeback install AGENT`` merged into the agent's own config folder; where the agent runs new
hooks only once the person trusts them (Codex), the test trusts them as install tells the person
to, in the agent's own interactive program (``terminal.py``). The scenario:

1. turn 1 ("first task"): the agent's write tool creates a file; while the agent waits for the
   model, the person edits a file of their own; then the agent's shell tool creates a file and
   changes a tracked one;
2. turn 2 ("second task", the same session resumed): the write tool creates another file;
3. the timeline shows two turns of that agent and session, labelled by their prompts, turn 1
   with one step per tool call and exactly the agent's files (not the person's edit);
4. turn 1 is reverted while turn 2 and the person's edit stay; undo (of turn 2) and redo give
   back each state byte for byte, and so does taking back the revert itself; the user's git
   state never changes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cli.conftest import Takeback, isolated_env
from core.support import full_state
from helpers import git_state, make_repo

from .terminal import Terminal

HERE = Path(__file__).parent
CACHE = Path(os.environ.get("TAKEBACK_AGENTS_CACHE", Path.home() / ".cache" / "takeback-agents"))


def _offline_ready() -> str | None:
    if os.geteuid() != 0:
        return "needs root for a network namespace (unshare -n)"
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} is missing (scripts/setup-agents.sh installs it)"
    return None


class Agent:
    """How one agent program is run: its binary, its config folder, its environment."""

    name: str
    package_bin: str

    def __init__(self, base: Path) -> None:
        self.base = base

    @property
    def binary(self) -> Path:
        return CACHE / self.name / "node_modules" / ".bin" / self.package_bin

    def env(self) -> dict[str, str]:
        raise NotImplementedError

    def prepare(self, repo: Path) -> None:
        """The agent's own settings before ``takeback install`` merges its hooks into them."""

    def trust(self, env: dict[str, str], repo: Path, told: str) -> None:
        """What the person does after ``takeback install`` (which ``told`` them so) before the
        agent runs the hooks."""

    def command(self, prompt: str, resume: bool) -> list[str]:
        raise NotImplementedError


class ClaudeCode(Agent):
    name = "claude"
    package_bin = "claude"

    def env(self) -> dict[str, str]:
        return {
            "CLAUDE_CONFIG_DIR": str(self.base / "claude-config"),
            "IS_SANDBOX": "1",  # as root, --dangerously-skip-permissions needs it
            "TB_AGENT_ANTHROPIC_BASE_URL": "http://127.0.0.1:{PORT}",
            "ANTHROPIC_API_KEY": "dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }

    def command(self, prompt: str, resume: bool) -> list[str]:
        return [str(self.binary), "-p", prompt, "--dangerously-skip-permissions", "--output-format", "json",
                *(["--continue"] if resume else [])]

    def tools(self, repo: Path) -> dict:
        """The script's tool calls in this agent's own tool names and argument names."""
        return {
            "write": lambda path, content: {"tool": "Write", "input": {"file_path": str(repo / path), "content": content}},
            "shell": lambda command: {"tool": "Bash", "input": {"command": command, "description": "run it"}},
        }


class QwenCode(Agent):
    name = "qwen"
    package_bin = "qwen"

    def env(self) -> dict[str, str]:
        return {
            "QWEN_HOME": str(self.base / "qwen-home"),
            "TB_AGENT_OPENAI_BASE_URL": "http://127.0.0.1:{PORT}/v1",
            "OPENAI_API_KEY": "dummy",
            "OPENAI_MODEL": "mock-model",
        }

    def prepare(self, repo: Path) -> None:
        home = self.base / "qwen-home"
        home.mkdir(parents=True, exist_ok=True)
        (home / "settings.json").write_text(json.dumps({
            "security": {"auth": {"selectedType": "openai"}},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        }, indent=2) + "\n")

    def command(self, prompt: str, resume: bool) -> list[str]:
        return [str(self.binary), "-p", prompt, "--yolo", "--output-format", "json", *(["--continue"] if resume else [])]

    def tools(self, repo: Path) -> dict:
        return {
            "write": lambda path, content: {"tool": "write_file", "input": {"file_path": str(repo / path), "content": content}},
            "shell": lambda command: {"tool": "run_shell_command", "input": {"command": command}},
        }


class CopilotCli(Agent):
    name = "copilot"
    package_bin = "copilot"

    def env(self) -> dict[str, str]:
        return {
            "COPILOT_HOME": str(self.base / "copilot-home"),
            "COPILOT_OFFLINE": "true",
            "TB_AGENT_COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:{PORT}/v1",
            "COPILOT_PROVIDER_API_KEY": "dummy",
            "COPILOT_MODEL": "mock-model",
            "COPILOT_AUTO_UPDATE": "false",
        }

    def command(self, prompt: str, resume: bool) -> list[str]:
        return [str(self.binary), "-p", prompt, "--allow-all", "--no-auto-update", "--disable-client-telemetry",
                *(["--continue"] if resume else [])]

    def tools(self, repo: Path) -> dict:
        return {
            "write": lambda path, content: {"tool": "create", "input": {"path": str(repo / path), "file_text": content}},
            "shell": lambda command: {"tool": "bash", "input": {"command": command, "description": "run it"}},
        }


class GeminiCli(Agent):
    name = "gemini"
    package_bin = "gemini"

    def env(self) -> dict[str, str]:
        return {
            "GEMINI_CLI_HOME": str(self.base / "gemini-home"),
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "TB_AGENT_GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:{PORT}",
            "GEMINI_API_KEY": "dummy",
        }

    def prepare(self, repo: Path) -> None:
        settings = self.base / "gemini-home" / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "hooksConfig": {"enabled": True},
        }, indent=2) + "\n")

    def command(self, prompt: str, resume: bool) -> list[str]:
        # A fixed model: "auto" first asks a router model for JSON, which the script does not speak.
        return [str(self.binary), "-m", "gemini-2.5-pro", "-p", prompt, "--yolo", "--output-format", "json",
                *(["--resume", "latest"] if resume else [])]

    def tools(self, repo: Path) -> dict:
        return {
            "write": lambda path, content: {"tool": "write_file", "input": {"file_path": str(repo / path), "content": content}},
            "shell": lambda command: {"tool": "run_shell_command", "input": {"command": command}},
        }


class CodexCli(Agent):
    name = "codex"
    package_bin = "codex"

    def env(self) -> dict[str, str]:
        return {"CODEX_HOME": str(self.base / "codex-home"), "MOCK_PROVIDER_API_KEY": "dummy"}

    def prepare(self, repo: Path) -> None:
        # "gpt-5.5": a model Codex knows, so it offers its apply_patch tool. The provider's URL
        # goes on the command line (the port is chosen inside the network namespace).
        home = self.base / "codex-home"
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            'model = "gpt-5.5"\n'
            'model_provider = "mock"\n'
            "check_for_update_on_startup = false\n\n"
            "[model_providers.mock]\n"
            'name = "mock"\n'
            'base_url = "http://127.0.0.1:9/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "MOCK_PROVIDER_API_KEY"\n\n'
            "[features]\nplugins = false\nremote_plugin = false\napps = false\n\n"
            "[analytics]\nenabled = false\n\n"
            f"[projects.{json.dumps(str(repo))}]\n"
            'trust_level = "trusted"\n'
        )

    def trust(self, env: dict[str, str], repo: Path, told: str) -> None:
        """Codex skips new hooks until the person trusts them: as install says, start ``codex``,
        answer its "Hooks need review" question with "Trust all and continue", quit."""
        assert "start codex and answer its 'Hooks need review' question with 'Trust all and continue'" in told
        config = self.base / "codex-home" / "config.toml"
        hooks = str(self.base / "codex-home" / "hooks.json")

        def trusted() -> list[str]:  # the events of the hooks.json hooks Codex keeps trust for
            try:
                state = tomllib.loads(config.read_text()).get("hooks", {}).get("state", {})
            except tomllib.TOMLDecodeError:  # Codex is writing it
                return []
            return sorted(key.split(":")[-3] for key, value in state.items()
                          if key.startswith(hooks + ":") and value.get("trusted_hash"))

        # --no-daemon: no background server of Codex's outlives the test
        terminal = Terminal(["unshare", "-n", str(self.binary), "--no-daemon"], {**env, "TERM": "xterm-256color"}, str(repo))
        try:
            terminal.wait_for("Hooks need review", 60)
            terminal.choose("Trust all and continue")
            terminal.until(lambda: len(trusted()) == 6, 30, "Codex kept no trust for the 6 hooks in config.toml")
        finally:
            terminal.close()
        assert trusted() == ["post_tool_use", "pre_tool_use", "session_end", "session_start", "stop", "user_prompt_submit"]

    def command(self, prompt: str, resume: bool) -> list[str]:
        return [str(self.binary), "exec", "-c", 'model_providers.mock.base_url="http://127.0.0.1:{PORT}/v1"',
                "--dangerously-bypass-approvals-and-sandbox", "--json", *(["resume", "--last"] if resume else []), prompt]

    def tools(self, repo: Path) -> dict:
        def patch(path: str, content: str) -> dict:
            added = "".join(f"+{line}\n" for line in content.splitlines())
            return {"tool": "apply_patch", "input": f"*** Begin Patch\n*** Add File: {path}\n{added}*** End Patch\n"}
        return {
            "write": patch,
            "shell": lambda command: {"tool": "exec_command", "input": {"cmd": command}},
        }




class OpenCode(Agent):
    name = "opencode"
    package_bin = "opencode"

    @property
    def config(self) -> Path:
        return self.base / "opencode-config" / "opencode"

    def env(self) -> dict[str, str]:
        return {
            "XDG_CONFIG_HOME": str(self.config.parent),
            "TB_AGENT_SCRIPTED_MODEL_URL": "http://127.0.0.1:{PORT}/v1",  # read by opencode.json
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        }

    def prepare(self, repo: Path) -> None:
        self.config.mkdir(parents=True, exist_ok=True)
        (self.config / "opencode.json").write_text(json.dumps({
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "model": "scripted/mock-model",
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai-compatible",  # bundled with OpenCode
                "name": "Scripted model server",
                "options": {"baseURL": "{env:SCRIPTED_MODEL_URL}", "apiKey": "dummy"},
                "models": {"mock-model": {"name": "mock-model", "tool_call": True}},
            }},
        }, indent=2) + "\n")
        # With a plugin listed, OpenCode installs @opencode-ai/plugin into its config folder
        # from npm when it starts and waits for that (offline: about 70 s of retries, then it
        # goes on). A person's OpenCode that ever started with the registry reachable has it;
        # here it is the package as npm installed it (scripts/setup-agents.sh), copied in.
        package = CACHE / "opencode-plugin"
        if not (package / "package-lock.json").exists():
            pytest.fail(f"{package} is missing: scripts/setup-agents.sh installs it")
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(package / name, self.config / name)
        shutil.copytree(package / "node_modules", self.config / "node_modules", symlinks=True)

    def command(self, prompt: str, resume: bool) -> list[str]:
        return [str(self.binary), "run", prompt, *(["--continue"] if resume else [])]

    def tools(self, repo: Path) -> dict:
        return {
            "write": lambda path, content: {"tool": "write", "input": {"filePath": str(repo / path), "content": content}},
            "shell": lambda command: {"tool": "bash", "input": {"command": command, "description": "run it"}},
        }


AGENTS = [ClaudeCode, QwenCode, CopilotCli, GeminiCli, CodexCli, OpenCode]


@pytest.fixture(params=AGENTS, ids=lambda a: a.name)
def agent(request: pytest.FixtureRequest, tmp_path: Path) -> Agent:
    why = _offline_ready()
    if why:
        pytest.skip(why)
    made = request.param(tmp_path)
    if not made.binary.exists():
        pytest.fail(f"{made.binary} is missing: scripts/setup-agents.sh installs it (the README's test command runs it)")
    return made


def _run(agent: Agent, tb: Takeback, script: Path, prompt: str, resume: bool) -> None:
    env = {**tb.env, **agent.env()}
    proc = subprocess.run(
        ["unshare", "-n", sys.executable, str(HERE / "offline.py"), str(script), "120", "--", *agent.command(prompt, resume)],
        cwd=tb.cwd, env=env, capture_output=True, timeout=180,
    )
    assert proc.returncode == 0, f"{agent.name} exited {proc.returncode}\n{proc.stdout.decode()[-2000:]}\n{proc.stderr.decode()[-4000:]}"


def install(agent: Agent, tmp_path: Path, folder: Path) -> tuple[Takeback, str]:
    """``takeback install AGENT`` (user scope) into the agent's settings, prepared for ``folder``:
    the CLI in ``folder`` with the agent's home variables, and what install said."""
    env = isolated_env(tmp_path / "env")
    env.update({k: v for k, v in agent.env().items() if not k.startswith("TB_AGENT_")})
    if env.get("PYTHONPATH"):  # the CLI and the hooks run in the repository: the same takeback as the test's
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in env["PYTHONPATH"].split(os.pathsep) if p)
    tb = Takeback(folder, env)
    agent.prepare(folder)
    installed = tb("install", agent.name)
    assert installed.code == 0, installed
    return tb, " ".join(installed.text.split())


@pytest.mark.timeout(600)
def test_live_turns_steps_and_revert(agent: Agent, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n", "notes.md": "the person's notes\n"})
    tb, told = install(agent, tmp_path, repo)
    agent.trust({**tb.env, **agent.env()}, repo, told)
    git0 = git_state(repo)

    tools = agent.tools(repo)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": {
        "first task": [
            {"calls": [tools["write"]("agent.txt", "written by the agent\n")]},
            {"before": {str(repo / "notes.md"): "the person's notes\nand a line typed while the agent thinks\n"},
             "calls": [tools["shell"]("echo generated > gen.txt && echo 'more, by the shell' >> README.md")]},
            {"text": "done"},
        ],
        "second task": [
            {"calls": [tools["write"]("second.txt", "the second turn's file\n")]},
            {"text": "done"},
        ],
    }}))

    _run(agent, tb, script, "Do the first task", resume=False)
    after_first = full_state(repo)
    _run(agent, tb, script, "Now the second task", resume=True)

    resident = tb.json("resident", "status")  # the hooks reached the per-user process the first one started
    assert resident["running"] and resident["requests"] > 0 and str(repo) in resident["workspaces"], resident
    status = tb.json("status")
    assert status["hook_failures"] == 0, status["last_hook_failure"]

    turns = [e for e in tb.json("log") if e["kind"] == "turn"]
    assert [t["number"] for t in turns] == [2, 1], turns
    second, first = turns
    assert "first task" in first["label"] and "second task" in second["label"]
    assert first["agent"] == second["agent"] == agent.name
    assert first["session"] and first["session"] == second["session"]
    assert first["state"] == second["state"] == "applied"
    assert {f["path"]: f["kind"] for f in first["files"]} == {
        "agent.txt": "added", "gen.txt": "added", "README.md": "modified",
    }, "the person's edit of notes.md must not be the agent's"
    assert [f["path"] for f in second["files"]] == ["second.txt"]
    steps = [c["label"] or "" for c in tb.json("show", "1")["checkpoints"]]
    assert len(steps) == 2 and "agent.txt" in steps[0] and "gen.txt" not in steps[0], steps

    person_notes = (repo / "notes.md").read_bytes()
    before_revert = full_state(repo)
    assert after_first[0]["agent.txt"] == before_revert[0]["agent.txt"]
    revert = tb.json("revert", "1")
    reverted = full_state(repo)
    assert "agent.txt" not in reverted[0] and "gen.txt" not in reverted[0]
    assert reverted[0]["README.md"] == b"# project\n"
    assert reverted[0]["second.txt"] == b"the second turn's file\n"
    assert reverted[0]["notes.md"] == person_notes
    tb.ok("undo")  # the last agent turn: the second
    assert "second.txt" not in full_state(repo)[0] and (repo / "notes.md").read_bytes() == person_notes
    tb.ok("redo")
    assert full_state(repo) == reverted
    tb.ok("revert", str(revert["entry"]["number"]))  # the revert is itself an entry: taken back
    assert full_state(repo) == before_revert
    assert git_state(repo) == git0
