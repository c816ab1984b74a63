"""The real workbench with no Takeback server anywhere: no setting, no `takeback` on PATH, and a
python3 without the package. The person gets a message that says what is missing and how to fix
it, with "Show Logs" (the log lists each lookup step), and the panel says the server is not
running instead of staying empty."""

from __future__ import annotations

import os

import pytest

from .harness import ROOT, Workbench, missing_tools

pytestmark = pytest.mark.timeout(300)

if missing_tools():
    pytest.skip("VS Code end-to-end tools are not set up (run scripts/setup-vscode.sh)", allow_module_level=True)


def test_missing_server_is_explained_with_the_fix(tmp_path_factory: pytest.TempPathFactory):
    bench = Workbench.create(tmp_path_factory.mktemp("vscode-no-server"))
    venv_bin = str(ROOT / ".venv" / "bin")
    bench.env["PATH"] = os.pathsep.join(p for p in bench.env["PATH"].split(os.pathsep) if p != venv_bin)
    bench.env.pop("PYTHONPATH", None)
    step = bench.server_refused()
    assert "was not found" in step["message"] and "./scripts/setup.sh" in step["message"], step["message"]
    assert "Show Logs" in step["message"] and "Open Settings" in step["message"]
    assert "not running" in step["welcome"] and "Restart Server" in step["welcome"], step["welcome"]
    log = step["log"].replace("\xa0", " ")
    assert "takeback on PATH: not found" in log and "python3 -m takeback" in log, log
