"""Drives an interactive terminal program the way a person at a keyboard does: it runs in a
pseudo-terminal of a fixed size, the test waits for text to appear on its screen, then types.

The screen is what a person would see: the program's output goes through a terminal emulator
(``pyte``), since full-screen programs redraw only the cells that change. Questions the program
asks the terminal (where is the cursor?) get the emulator's answers.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from collections.abc import Callable

import pyte


class _Screen(pyte.Screen):
    def __init__(self, cols: int, rows: int, fd: int) -> None:
        super().__init__(cols, rows)
        self.fd = fd

    def write_process_input(self, data: str) -> None:  # the terminal's answers to the program
        os.write(self.fd, data.encode())


class Terminal:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: str, rows: int = 40, cols: int = 120) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the program, with the pseudo-terminal as its controlling terminal
            try:
                os.chdir(cwd)
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self._screen = _Screen(cols, rows, self.fd)
        self._stream = pyte.ByteStream(self._screen)
        self.status: int | None = None

    def screen(self) -> str:
        """The screen as it shows now, one line per row, trailing blanks dropped."""
        return "\n".join(line.rstrip() for line in self._screen.display)

    def _read(self, wait: float) -> bool:
        """Take in what the program writes within ``wait`` seconds; False once it has exited."""
        poll = select.poll()  # (not select.select: a test worker may hold more than 1024 descriptors)
        poll.register(self.fd, select.POLLIN)
        if not poll.poll(wait * 1000):
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # the program closed the terminal
            data = b""
        if not data:
            return False
        self._stream.feed(data)
        return True

    def until(self, condition: Callable[[], object], timeout: float, failure: str) -> None:
        """Keep taking in the program's output until ``condition()`` holds (text on the screen,
        something the program wrote to disk)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline or not self._read(0.2):
                raise AssertionError(f"{failure}; the screen shows:\n{self.screen()}")

    def wait_for(self, pattern: str, timeout: float) -> re.Match[str]:
        """Wait until ``pattern`` (a regular expression) is on the screen; returns the match."""
        found: list[re.Match[str]] = []

        def shown() -> bool:
            match = re.search(pattern, self.screen())
            if match:
                found.append(match)
            return match is not None

        self.until(shown, timeout, f"{pattern!r} did not show on the screen")
        return found[0]

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def choose(self, entry: str, timeout: float = 30, marker: str = "›") -> None:
        """Pick the menu entry whose line holds ``entry``: move the selection (the line starting
        with ``marker``) there with the arrow keys, then confirm with Enter. A key pressed
        before the program reads its keyboard is lost, so a key whose effect does not show is
        pressed again."""
        self.wait_for(re.escape(entry), timeout)
        deadline = time.monotonic() + timeout

        def rows() -> tuple[int | None, int | None]:  # (the entry's row, the selected row)
            lines = self.screen().splitlines()
            target = next((i for i, line in enumerate(lines) if entry in line), None)
            selected = next((i for i, line in enumerate(lines) if line.lstrip().startswith(marker)), None)
            return target, selected

        while True:
            target, selected = rows()
            if target is None:
                raise AssertionError(f"{entry!r} left the screen; it shows:\n{self.screen()}")
            if selected == target:
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"could not select {entry!r}; the screen shows:\n{self.screen()}")
            self.type("\x1b[B" if selected is None or selected < target else "\x1b[A")
            moved = time.monotonic() + 2
            while rows()[1] == selected and time.monotonic() < moved and self._read(0.1):
                pass
        self.type("\r")

    def close(self, timeout: float = 15) -> int:
        """Quit as a person does (Ctrl-C, twice); a program still running ``timeout`` seconds
        later is killed. Returns its exit status."""
        for _ in range(2):
            if self._exited():
                break
            self.type("\x03")
            end = time.monotonic() + 1
            while time.monotonic() < end and self._read(0.1):
                pass
        deadline = time.monotonic() + timeout
        while not self._exited() and time.monotonic() < deadline:
            self._read(0.2)
        if not self._exited():
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.status = -signal.SIGKILL
        os.close(self.fd)
        return self.status if self.status is not None else -1

    def _exited(self) -> bool:
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
        return self.status is not None
