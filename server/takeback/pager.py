"""The pager: long answers on a terminal go through ``less``, as git's do.

``log``, ``show``, ``diff`` and the operations' answers (``undo``, ``redo``, ``revert``,
``restore``, a dry run or not: a 119-file plan is a long read) are written to a pager when
stdout is a terminal: ``$TAKEBACK_PAGER``, else ``$PAGER``, else ``less``, run by the shell as
git runs its pager, with ``LESS=FRX`` unless the person set ``LESS`` (quit at once when the
answer fits on one screen, keep it on the screen afterwards, no screen clearing). Never with
``--json``, ``--no-pager``, a pager set to ``cat`` or empty, ``TERM=dumb``, when stdout is not a
terminal (a pipe, a file, an agent reading the answer), or when the process has no terminal to
read keys from (``/dev/tty``).

``start`` points this process's stdout (and its stderr, when that is the same terminal) at the
pager's input, so every path that writes an answer — the command line in this process, or the
resident process's answer written out by ``resident/forward.py`` — writes to it unchanged;
``active`` tells them the answer still ends up on a terminal (text is escaped as for one, and a
patch is not written raw). ``finish`` gives the pager its end of input and waits for the person
to leave it; the exit status is the command's (141 if the person left before the end, as with
``| head``: what was asked was still done).

Standard library only and cheap to import: it runs before the resident process is asked
(``subprocess`` and ``signal``, ~8 ms of every command's start, only when a pager runs). The
command's name is found by a small scan of the arguments (the first word that is not an option,
past ``-C``/``--workspace``'s value); the parser has the last word on what the command is, but a
pager only needs to know whether the answer may be long.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's own import costs milliseconds on every command's path
if TYPE_CHECKING:
    import subprocess

PAGED = frozenset(("log", "show", "diff", "undo", "redo", "revert", "restore"))
_WITH_VALUE = ("--workspace", "-C")


class Pager:
    """A running pager with this process's stdout (and maybe stderr) pointed at it."""

    def __init__(self, process: subprocess.Popen[bytes], stderr_copy: int | None) -> None:
        self.process = process
        self.stderr_copy = stderr_copy  # the terminal stderr was, kept to put back; None: not moved

    def finish(self) -> None:
        """Flush, close the pager's input (it then shows the end), put stderr back on the
        terminal and wait for the person to leave the pager; Ctrl-C meanwhile is the pager's."""
        global _active
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass  # the person left the pager early: nothing more to show
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # the pager's input closes here (its only other end was given to it)
        os.close(devnull)
        if self.stderr_copy is not None:
            os.dup2(self.stderr_copy, 2)
            os.close(self.stderr_copy)
        import signal

        before = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self.process.wait()
        finally:
            signal.signal(signal.SIGINT, before)
            _active = False


_active = False


def active() -> bool:
    """Whether this process's stdout goes to a pager (and so, in the end, to a terminal)."""
    return _active


def command(raw: list[str]) -> str | None:
    """The command ``raw`` (the arguments after ``takeback``) names, by a cheap scan."""
    words = raw[: raw.index("--")] if "--" in raw else raw
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _WITH_VALUE:
            skip = True
        elif not word.startswith("-"):
            return word
    return None


def wanted(raw: list[str]) -> str | None:
    """The pager command to run for ``raw``, or None (see the module's docstring for when)."""
    words = raw[: raw.index("--")] if "--" in raw else raw
    if command(raw) not in PAGED or "--json" in words or "--no-pager" in words:
        return None
    if os.environ.get("TERM") == "dumb" or not isatty(sys.stdout) or not _controlling_terminal():
        return None
    program = os.environ.get("TAKEBACK_PAGER", os.environ.get("PAGER", "less"))
    return None if program.strip() in ("", "cat") else program


def start(raw: list[str]) -> Pager | None:
    """Run the pager for ``raw`` if one is wanted, with stdout (and a terminal stderr) sent to
    it; None when none is, or it cannot be started (the answer is then written as it is)."""
    global _active
    program = wanted(raw)
    if program is None:
        return None
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    import subprocess

    try:
        sys.stdout.flush()
        process = subprocess.Popen(program, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        return None
    assert process.stdin is not None
    stderr_copy = None
    os.dup2(process.stdin.fileno(), 1)
    if isatty(sys.stderr):
        sys.stderr.flush()
        stderr_copy = os.dup(2)
        os.dup2(process.stdin.fileno(), 2)
    process.stdin.close()
    _active = True
    return Pager(process, stderr_copy)


def _controlling_terminal() -> bool:
    """Whether this process has a terminal to read keys from (``/dev/tty``), as a pager does: a
    program started with its stdout on a terminal but outside that terminal's session (a test
    harness, a supervisor) has none, and a pager there would wait for keys that never come."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return False
    os.close(fd)
    return True


def isatty(stream: object) -> bool:
    """Whether ``stream`` is a terminal (False for a stream that has none or is closed)."""
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False
