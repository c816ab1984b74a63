"""A real Emacs eglot (Debian's Emacs 28 with eglot 1.9) saying no to the server's edits: with a
JSON-RPC error when the person answers "no", and after applying the first document of two when
the second is stale. Nothing is written, and what eglot applied is taken back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import make_repo

DRIVER = Path(__file__).with_name("driver.el")
APP = "def main():\n    return 1\n\n\ndef other():\n    return 2\n"
UTIL = "def helper(x):\n    return x * 2\n"


def _eglot_installed() -> bool:
    if not shutil.which("emacs"):
        return False
    proc = subprocess.run(
        ["emacs", "--batch", "-q", "--eval", "(progn (require 'eglot) (kill-emacs 0))"],
        capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    return proc.returncode == 0


@pytest.mark.skipif(not _eglot_installed(), reason="needs emacs and eglot: apt-get install -y emacs-nox elpa-eglot")
def test_eglot_refusals_write_nothing_and_partial_edits_are_taken_back(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP, "src/util.py": UTIL})
    out = tmp_path / "result.json"
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # `takeback` as users have it
    env["TAKEBACK_TEST_OUT"] = str(out)
    proc = subprocess.run(
        ["emacs", "--batch", "-q", "-l", str(DRIVER)], cwd=repo, env=env, capture_output=True, timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.exists(), f"Emacs wrote no result (exit {proc.returncode}): {proc.stderr.decode(errors='replace')[-2000:]}"
    r = json.loads(out.read_text())
    assert "error" not in r, f"{r['error']}\n{proc.stderr.decode(errors='replace')[-2000:]}"

    # 1. "no": eglot's JSON-RPC error is a refusal; nothing changed anywhere
    assert r["refused"]["applied"] is False
    assert "User cancelled server edit" in r["refused"]["failureReason"]
    assert r["app_after_no"] == APP and r["util_after_no"] == UTIL
    # 2. "yes"
    assert r["applied"]["applied"] is True
    # 3. the undo: eglot applied app.py, then refused util.py (stale): -32005, nothing recorded
    code, message = r["undo"][1], r["undo"][2]
    assert code == -32005 and "the editor refused its edit" in message and "require version" in message, r["undo"]
    assert r["app_right_after_undo"] == APP  # eglot had applied its first document
    # 4. once eglot reported it, the server took it back: editor, disk and timeline agree
    assert r["app_after_take_back"] == APP.replace("return 1", "return 10")
    assert r["util_after_take_back"] == UTIL.replace("x * 2", "x * 3") + "# typed\n"
    assert [(e["kind"], e["state"]) for e in r["timeline"]["entries"]] == [("turn", "applied"), ("turn", "not-applied")]
    assert (repo / "src/app.py").read_text() == APP and (repo / "src/util.py").read_text() == UTIL  # never saved
