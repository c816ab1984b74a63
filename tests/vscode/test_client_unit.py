"""The VS Code client's own unit tests (tree building, wording, argument handling, server
lookup, edit conversion: vscode-client/test/*.test.ts over src/model/), run with Node's built-in
test runner so they are part of the README's test command."""

from __future__ import annotations

import os
import subprocess

import pytest

from .harness import CLIENT, NODE_BIN

NODE_MODULES = CLIENT / "node_modules" / "typescript"


@pytest.mark.skipif(not NODE_MODULES.exists(), reason="vscode-client dependencies not installed (run scripts/setup-vscode.sh)")
def test_vscode_client_unit_tests_pass():
    env = dict(os.environ)
    if (NODE_BIN / "node").exists():
        env["PATH"] = os.pathsep.join([str(NODE_BIN), env.get("PATH", "")])
    run = subprocess.run(["npm", "test", "--silent"], cwd=CLIENT, env=env, capture_output=True, text=True, timeout=240)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    summary = {line.split()[1]: int(line.split()[2]) for line in output.splitlines() if line.startswith("ℹ ") and len(line.split()) == 3 and line.split()[2].isdigit()}
    assert summary.get("fail") == 0 and summary.get("pass", 0) >= 20, output
