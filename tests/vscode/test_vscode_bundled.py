"""The VS Code extension on its own: the .vsix holds Takeback and its libraries (vscode-client/
bundled, made by scripts/bundle_vscode.py), so a VS Code with only a Python 3.11+ on PATH — no
`takeback` anywhere, the system's python3 without the package — runs the bundled server. A
fresh code-server profile opens a folder where a turn was recorded with the CLI beforehand (the
same store: TAKEBACK_HOME); the panel shows the turn, and undoing it from its row puts the file
back on disk. The server's log says it was the bundled copy that ran, with which Python."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from .harness import ROOT, VSIX, Workbench, bare_path, missing_tools

pytestmark = pytest.mark.timeout(300)

if missing_tools():
    pytest.skip("VS Code end-to-end tools are not set up (run scripts/setup-vscode.sh)", allow_module_level=True)

SYSTEM_PYTHON = Path("/usr/bin/python3")
LABEL = "Explain how to run it"
NOTE = "\nRun it with: python -m app.main\n"


def _bundle_manifest() -> dict:
    with zipfile.ZipFile(VSIX) as vsix:
        names = set(vsix.namelist())
        assert "extension/bundled/libs/takeback/__main__.py" in names, "the .vsix holds no bundled Takeback"
        return json.loads(vsix.read("extension/bundled/manifest.json"))


def _python_version(python: Path) -> str:
    run = subprocess.run([str(python), "-I", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True)
    return run.stdout.strip()


def _server_log(bench: Workbench) -> str:
    logs = sorted((bench.base / "user-data" / "logs").rglob("*Takeback*.log"))
    return "\n".join(f.read_text(errors="replace") for f in logs)


def test_the_vsix_alone_runs_its_bundled_server_and_undoes_a_turn(tmp_path_factory: pytest.TempPathFactory):
    manifest = _bundle_manifest()
    assert manifest["target"] == "linux-x64" and "pygit2" in manifest["libraries"], manifest
    version = _python_version(SYSTEM_PYTHON) if SYSTEM_PYTHON.exists() else ""
    if version not in manifest["pythons"]:
        pytest.skip(f"needs a system python3 of a version the bundle holds ({manifest['pythons']}), not {version or 'none'}")
    plain = subprocess.run([str(SYSTEM_PYTHON), "-I", "-c", "import takeback"], capture_output=True, text=True, cwd="/")
    assert plain.returncode != 0, "the system python3 has a takeback package: the test would not prove the bundle"

    bench = Workbench.create(tmp_path_factory.mktemp("vscode-bundled"))
    readme = bench.repo / "README.md"
    original = readme.read_text()
    # The turn, recorded with this checkout's CLI (bench.env: its .venv on PATH, the bench's TAKEBACK_HOME).
    cli = str(ROOT / ".venv" / "bin" / "takeback")
    subprocess.run([cli, "begin", "--label", LABEL, "--session", "terminal", "--agent", "shell"],
                   cwd=bench.repo, env=bench.env, check=True, capture_output=True, text=True, timeout=60)
    readme.write_text(original + NOTE)
    subprocess.run([cli, "end"], cwd=bench.repo, env=bench.env, check=True, capture_output=True, text=True, timeout=60)

    bench.env["PATH"] = bare_path(bench.base, SYSTEM_PYTHON)
    bench.env.pop("PYTHONPATH", None)
    bench.env.pop("VIRTUAL_ENV", None)
    run = bench.run(scenario="bundled", label=LABEL, file="README.md", original=original)
    step = run["steps"].get("bundled_turn")
    log = _server_log(bench).replace("\xa0", " ")
    driver_log = "\n".join(run["log"][-20:])
    assert step and step["ok"], f"{(step or {}).get('error', run.get('fatal'))}\n{driver_log}\n--- Takeback log ---\n{log[-3000:]}"

    assert LABEL in step["row"], step["row"]
    assert "Undo of #" in step["outcome"], step["outcome"]
    assert readme.read_text() == original
    assert "takeback on PATH: not found" in log, log
    assert f"bundled Takeback: run by {bench.base / 'bare-bin' / 'python3'}" in log, log
    assert "/bundled/libs/takeback/__main__.py serve" in log, log
    # The bundled server wrote to the store the CLI reads: the undo is on the timeline.
    kinds = [entry["kind"] for entry in bench.takeback("log")]
    assert "undo" in kinds and "turn" in kinds, kinds
