"""The real workbench with a stale `takeback` on PATH: the Takeback of the commit before protocol
version 2 (taken from this repository's history), which sent engine objects snake_case. The
extension says once that the server speaks another protocol version and what to do, the panel
says the server is not running, and the server gets no Takeback request (what the editor sent
it is recorded on its way in)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import ROOT, Workbench, missing_tools

pytestmark = pytest.mark.timeout(300)

if missing_tools():
    pytest.skip("VS Code end-to-end tools are not set up (run scripts/setup-vscode.sh)", allow_module_level=True)


def _stale_server(base: Path) -> Path:
    """A `takeback` of protocol version 1: the server as it was just before version 2, run with
    this checkout's Python and libraries; it records what it reads in ``traffic.jsonrpc``."""
    try:
        introduced = subprocess.run(
            ["git", "-C", str(ROOT), "log", "--format=%H", "--reverse", "-S", "PROTOCOL_VERSION = 2", "--",
             "server/takeback/lsp/protocol.py"],
            capture_output=True, text=True, check=True,
        ).stdout.split()[0]
    except (subprocess.CalledProcessError, IndexError, FileNotFoundError):
        pytest.skip("needs this repository's git history (the commit before protocol version 2)")
    old = base / "takeback-v1"
    old.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", f"{introduced}^", "server"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
    bin_dir = base / "stale-bin"
    bin_dir.mkdir()
    script = bin_dir / "takeback"
    script.write_text(
        "#!/bin/sh\n"
        f"export PYTHONPATH='{old / 'server'}'\n"
        f"tee -a '{base / 'traffic.jsonrpc'}' | '{sys.executable}' -m takeback \"$@\"\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bin_dir


def test_a_server_of_another_protocol_version_is_refused_with_one_error(tmp_path_factory: pytest.TempPathFactory):
    bench = Workbench.create(tmp_path_factory.mktemp("vscode-stale-server"))
    stale = _stale_server(bench.base)
    bench.env["PATH"] = os.pathsep.join([str(stale), bench.env["PATH"]])
    step = bench.server_refused()
    message = step["message"].replace("\xa0", " ")
    assert "speaks an older protocol (version 1); this extension speaks version 2" in message, message
    assert "Upgrade the Takeback server" in message and "Show Logs" in message, message
    assert "not running" in step["welcome"], step["welcome"]
    assert "speaks an older protocol" in step["log"].replace("\xa0", " "), step["log"]
    traffic = (bench.base / "traffic.jsonrpc").read_text()
    assert '"method":"initialize"' in traffic.replace(" ", ""), traffic[:2000]
    assert '"method":"takeback/' not in traffic.replace(" ", ""), traffic
