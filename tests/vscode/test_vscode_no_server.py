"""The real workbench where no Takeback server can start: no setting, no `takeback` on PATH, and
no Python to run the copy bundled with the extension (PATH holds Node and git only). The person
gets a message that says what is missing and the one fix, with "Show Logs" (the log lists each
lookup step), and the panel says the server is not running instead of staying empty."""

from __future__ import annotations

import pytest

from .harness import Workbench, bare_path, missing_tools

pytestmark = pytest.mark.timeout(300)

if missing_tools():
    pytest.skip("VS Code end-to-end tools are not set up (run scripts/setup-vscode.sh)", allow_module_level=True)


def test_missing_server_is_explained_with_the_fix(tmp_path_factory: pytest.TempPathFactory):
    bench = Workbench.create(tmp_path_factory.mktemp("vscode-no-server"))
    bench.env["PATH"] = bare_path(bench.base)
    bench.env.pop("PYTHONPATH", None)
    step = bench.server_refused()
    message = step["message"].replace("\xa0", " ")
    assert "could not start" in message and "no Python 3.11 or newer" in message, message
    assert "Install Python 3.11 or newer" in message, message
    assert "Show Logs" in message and "Open Settings" in message, message
    assert "not running" in step["welcome"] and "Restart Server" in step["welcome"], step["welcome"]
    log = step["log"].replace("\xa0", " ")
    assert "takeback on PATH: not found" in log and "python3 on PATH: not found" in log, log
