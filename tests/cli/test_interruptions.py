"""The command line when its reader or its person goes away mid-command: a closed stdout (``| head``)
still has what was asked done and ends quietly with 141; Ctrl-C ends with 130 and one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from .conftest import Takeback
from .test_operations import turn


def test_an_undo_whose_reader_has_gone_is_still_done_and_ends_quietly_with_141(tb: Takeback) -> None:
    turn(tb, {"src/app.py": "def main():\n    return 2\n"}, "agent work")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is printed
    try:
        proc = subprocess.run([sys.executable, "-m", "takeback", "undo"], cwd=tb.cwd, env=tb.env,
                              stdout=write_end, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr.decode()) == (141, "")
    assert (tb.cwd / "src/app.py").read_text() == "def main():\n    return 1\n"
    assert [e["kind"] for e in tb.json("log")][:1] == ["undo"]


def test_ctrl_c_during_a_check_ends_with_130_one_line_and_records_nothing(tb: Takeback) -> None:
    turn(tb, {"src/app.py": "def main():\n    return 2\n"}, "agent work")
    started = tb.cwd / "started"
    proc = subprocess.Popen(
        [sys.executable, "-m", "takeback", "check", "--name", "slow", "--", "sh", "-c", f"touch '{started}'; exec sleep 60"],
        cwd=tb.cwd, env=tb.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the check's command never started"
    proc.send_signal(signal.SIGINT)  # to takeback only, as a terminal's Ctrl-C would also reach it
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err.decode(), out) == (130, "takeback: interrupted\n", b"")
    assert tb.json("log")[0]["checks"] == []
