"""``takeback ui`` as a person starts it: the real command in a pseudo-terminal (what an SSH
session gives it), 80x24 and no colour beyond 256, showing the timeline and quitting on ``q``."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pyte


def test_the_command_shows_the_timeline_in_a_terminal_and_quits_on_q(repo: Path) -> None:
    leader, follower = pty.openpty()
    os.set_blocking(leader, False)
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}
    env.pop("COLORTERM", None)  # no true colour
    proc = subprocess.Popen([sys.executable, "-m", "takeback", "ui", "--no-mouse"], cwd=repo, env=env,
                            stdin=follower, stdout=follower, stderr=follower, start_new_session=True)
    os.close(follower)
    ready = select.poll()  # (not select.select: a test worker may hold more than 1024 descriptors)
    ready.register(leader, select.POLLIN)
    seen = b""
    screen = pyte.Screen(80, 24)
    stream = pyte.ByteStream(screen)
    try:
        deadline = time.monotonic() + 30
        while not any("#2 add a title" in line for line in screen.display):
            assert time.monotonic() < deadline and proc.poll() is None, "\n".join(screen.display)
            if ready.poll(200):
                try:
                    data = os.read(leader, 65536)
                    seen += data
                    stream.feed(data)
                except OSError:  # the program ended: its last words are read above
                    break
        os.write(leader, b"q")
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
    assert b"\x1b[38;2;" not in seen  # no true-colour sequence sent to a terminal that did not offer it
