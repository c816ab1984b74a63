"""Takeback as people install it: the standard build tool (``python -m build``) makes an sdist
and, from it, a wheel; both hold every file Takeback needs at run time (the Claude Code plugin,
whose list is ``install/bundled.py``'s), and the build prints no warning. The wheel goes into a
fresh virtual environment (no system site-packages, its dependencies from the package registry
pip is set up with); from a folder outside the clone, with a temporary home, ``takeback demo``
runs its story to the end, ``takeback install claude`` writes hooks that run the installed
Takeback (never the clone's) and record a real turn, ``takeback install opencode`` writes its
plugin, and the plugin's launcher, run from the installed package, finds the installed
``takeback`` with nothing on PATH. About a minute: a build, a venv, a pip install."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import git, make_repo
from takeback.install.bundled import CLAUDE_PLUGIN, CLAUDE_PLUGIN_FILES

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_IN_PACKAGE = "takeback/" + "/".join(CLAUDE_PLUGIN)

pytestmark = pytest.mark.timeout(900)


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what points Python at the clone or at coverage (the
    tests run with ``PYTHONPATH=server``; an installed Takeback must stand on its own)."""
    drop = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONPYCACHEPREFIX")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith(("COVERAGE_", "TAKEBACK_", "GIT_"))}
    env.update(extra)
    return env


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload,no-any-return]


def _source_copy(into: Path) -> Path:
    """The clone's files (tracked, and new ones not ignored) copied away: building writes
    ``*.egg-info`` beside the sources, which must not land in the clone."""
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


@dataclass
class Installed:
    dist: Path
    build_log: str
    venv: Path
    home: Path
    elsewhere: Path

    @property
    def takeback(self) -> Path:
        return self.venv / "bin" / "takeback"

    def env(self, **extra: str) -> dict[str, str]:
        return _clean_env(
            HOME=str(self.home), XDG_CONFIG_HOME=str(self.home / ".config"), XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"), TMPDIR=str(self.elsewhere), GIT_CONFIG_NOSYSTEM="1",
            TAKEBACK_RESIDENT="0", **extra,
        )

    def run(self, *args: str, cwd: Path | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
        return _run([str(self.takeback), *args], cwd=cwd or self.elsewhere, env=self.env(**extra))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    source = _source_copy(base / "source")
    dist = base / "dist"
    built = _run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)], cwd=base, env=_clean_env())
    assert built.returncode == 0, built.stdout + built.stderr
    venv = base / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], env=_clean_env())
    assert made.returncode == 0, made.stderr
    [wheel] = dist.glob("*.whl")
    pip = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)], cwd=base, env=_clean_env())
    assert pip.returncode == 0, pip.stdout + pip.stderr
    (base / "home").mkdir()
    (base / "elsewhere").mkdir()
    return Installed(dist, built.stdout + built.stderr, venv, base / "home", base / "elsewhere")


def test_the_build_says_no_warning(installed: Installed) -> None:
    warnings = [line for line in installed.build_log.splitlines() if "warning" in line.lower() or "would be ignored" in line.lower()]
    assert warnings == [], "\n".join(warnings)


def test_the_sdist_and_the_wheel_hold_the_claude_code_plugin(installed: Installed) -> None:
    [sdist] = installed.dist.glob("*.tar.gz")
    [wheel] = installed.dist.glob("*.whl")
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        held = {m.name: m for m in tar.getmembers()}
    for name in CLAUDE_PLUGIN_FILES:
        assert f"{top}/server/{PLUGIN_IN_PACKAGE}/{name}" in held, f"the sdist lacks the plugin's {name}"
    assert held[f"{top}/server/{PLUGIN_IN_PACKAGE}/bin/takeback"].mode & 0o111, "the sdist keeps the launcher executable"
    with zipfile.ZipFile(wheel) as whl:
        modes = {info.filename: info.external_attr >> 16 for info in whl.infolist()}
    for name in CLAUDE_PLUGIN_FILES:
        assert f"{PLUGIN_IN_PACKAGE}/{name}" in modes, f"the wheel lacks the plugin's {name}"
    assert modes[f"{PLUGIN_IN_PACKAGE}/bin/takeback"] & 0o111, "the wheel keeps the launcher executable"
    # every module of the package is in the wheel
    modules = {str(p.relative_to(ROOT / "server")) for p in (ROOT / "server" / "takeback").rglob("*.py")}
    assert modules <= set(modes), sorted(modules - set(modes))


def test_the_installed_takeback_runs_the_demo_from_another_folder(installed: Installed) -> None:
    where = _run([str(installed.venv / "bin" / "python"), "-c", "import takeback; print(takeback.__file__)"], env=installed.env())
    assert Path(where.stdout.strip()).is_relative_to(installed.venv), "the venv imports its own Takeback, not the clone's"
    demo = installed.run("demo")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "REFUSED: revert of #1 refused" in demo.stdout
    assert demo.stdout.rstrip().splitlines()[-1].endswith("byte-identical: yes")


def test_install_claude_writes_hooks_that_run_the_installed_takeback(installed: Installed, tmp_path: Path) -> None:
    done = installed.run("install", "claude")
    assert done.returncode == 0, done.stdout + done.stderr
    settings = json.loads((installed.home / ".claude" / "settings.json").read_text())
    lines = {entry["command"] for groups in settings["hooks"].values() for group in groups for entry in group["hooks"]}
    [line] = lines
    words = shlex.split(line)
    assert words[-2:] == ["hook", "claude"]
    for word in words[:-2]:
        if word.startswith("/"):
            assert Path(word).is_relative_to(installed.venv) and not Path(word).is_relative_to(ROOT), line
            assert Path(word).exists(), line

    # the hook line, run as Claude Code runs it, records a turn
    repo = make_repo(tmp_path / "repo", {"app.py": "print('hi')\n"})
    env = installed.env(CLAUDECODE="1", CLAUDE_PROJECT_DIR=str(repo))
    base = {"session_id": "s-1", "cwd": str(repo), "transcript_path": str(tmp_path / "t.jsonl")}
    tool = {"tool_name": "Write", "tool_use_id": "toolu_1", "tool_input": {"file_path": str(repo / "greet.py"), "content": "print('hello')\n"}}
    events = (
        {**base, "hook_event_name": "UserPromptSubmit", "prompt": "add a greeting"},
        {**base, "hook_event_name": "PreToolUse", **tool},
        None,  # the agent's Write tool writes the file
        {**base, "hook_event_name": "PostToolUse", **tool, "tool_response": {"type": "create", "filePath": str(repo / "greet.py")}},
        {**base, "hook_event_name": "Stop", "stop_hook_active": False},
    )
    for payload in events:
        if payload is None:
            (repo / "greet.py").write_text("print('hello')\n")
            continue
        ran = subprocess.run(line, shell=True, input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=repo, timeout=120)
        assert ran.returncode == 0 and ran.stdout == "", ran.stderr
    log = installed.run("-C", str(repo), "log", "--json")
    assert log.returncode == 0, log.stderr
    [turn] = [e for e in json.loads(log.stdout) if e["kind"] == "turn"]
    assert turn["label"] == "add a greeting" and [f["path"] for f in turn["files"]] == ["greet.py"]


def test_install_opencode_writes_a_plugin_that_runs_the_installed_takeback(installed: Installed) -> None:
    done = installed.run("install", "opencode")
    assert done.returncode == 0, done.stdout + done.stderr
    plugin = (installed.home / ".config" / "opencode" / "takeback-plugin.js").read_text()
    assert json.dumps([str(installed.takeback)]) in plugin


def test_the_packaged_claude_plugin_finds_the_installed_takeback(installed: Installed) -> None:
    found = _run(
        [str(installed.venv / "bin" / "python"), "-c", "from takeback.install.bundled import claude_plugin_dir; print(claude_plugin_dir())"],
        env=installed.env(),
    )
    plugin = Path(found.stdout.strip())
    assert plugin.is_relative_to(installed.venv) and all((plugin / name).is_file() for name in CLAUDE_PLUGIN_FILES)
    # nothing on PATH but the system's: the launcher finds the takeback of the environment it came in
    ran = _run([str(plugin / "bin" / "takeback"), "--version"], cwd=installed.elsewhere, env=installed.env(PATH="/usr/bin:/bin"))
    assert ran.returncode == 0 and ran.stdout.startswith("takeback "), ran.stdout + ran.stderr


def test_the_plugins_file_list_is_the_folders() -> None:
    """``CLAUDE_PLUGIN_FILES``, which the checks above go by, names every file of the plugin."""
    from takeback.install.bundled import claude_plugin_dir

    folder = claude_plugin_dir()
    on_disk = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert on_disk == set(CLAUDE_PLUGIN_FILES)
