"""Files and folders the scanner cannot read (permission denied), as a user who is not root.

The tests run as root, whom no permission stops; here a child process drops to ``nobody``
(``setpriv``) in a repository it owns, locks a folder and a file away from itself, and runs a
real bracket with the git scanner: both must be set aside with the reason git or the read gave,
and everything else recorded as usual.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers import unmeasured

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run a child as another user",
)

SERVER = str(Path(__file__).resolve().parents[2] / "server")

_CHILD = r"""
import json, os, subprocess, sys
from pathlib import Path
from takeback.config import load_config
from takeback.engine.engine import Engine
from takeback.scanning import scan

ws = Path(sys.argv[1])
def git(*args):
    subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)
git("init", "-q", "-b", "main")
(ws / "a.txt").write_text("a\n")
(ws / "secret.txt").write_text("tracked\n")
git("add", "-A")
git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "i")
scan.LISTING = sys.argv[2]
engine = Engine(ws, load_config(ws, {}))
engine.begin_turn(label="unreadable")
(ws / "locked").mkdir()
(ws / "locked" / "inside.txt").write_text("x\n")
os.chmod(ws / "locked", 0)
(ws / "secret.txt").write_text("edited, then locked away\n")
os.chmod(ws / "secret.txt", 0)
(ws / "a.txt").write_text("edited\n")
entry = engine.end_turn()
os.chmod(ws / "locked", 0o755)
print(json.dumps({"files": sorted(f.path for f in entry.files), "notices": entry.notices}))
"""


@pytest.mark.parametrize("how", [
    "git",
    pytest.param("auto", marks=pytest.mark.xfail(strict=True, reason=(
        "known bug: libgit2's in-process listing passes over a folder it cannot open without a word, "
        "so files made in it during the turn are left out with no notice (git's listing names it)"
    ))),
])
def test_a_locked_folder_and_file_are_set_aside_with_the_reason(how: str) -> None:
    home = Path(tempfile.mkdtemp(prefix="takeback-nobody-"))
    try:
        os.chmod(home, 0o755)
        ws = home / "ws"
        ws.mkdir()
        for path in (home, ws):
            os.chown(path, 65534, 65534)
        env = unmeasured(dict(os.environ))
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_STATE_HOME=str(home / "state"),
                   TAKEBACK_HOME=str(home / "state"), PYTHONPATH=SERVER, GIT_CONFIG_NOSYSTEM="1")
        proc = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", _CHILD, str(ws), how],
            env=env, cwd=str(home), capture_output=True, text=True, timeout=60, check=False,
        )
        assert proc.returncode == 0, proc.stderr
        result = json.loads(proc.stdout)
        assert result["files"] == ["a.txt"]
        notices = "\n".join(result["notices"])
        assert "locked: not recorded, it could not be read (permission denied)" in notices
        assert "secret.txt: not recorded, it could not be read" in notices
    finally:
        shutil.rmtree(home, ignore_errors=True)
