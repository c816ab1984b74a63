"""The crash-point harness: run a ``takeback`` command under strace, list its mutating system
calls, and run it again killed (or failed) at each one in turn.

A command is first traced once (``strace -o``, its main process only: a kill point of a
``git`` child is not Takeback's write). Every call of ``MUTATING`` it makes is a point, named by
the call and its rank among the calls of that name (strace counts per call and per process), so
``strace -e inject=NAME:signal=KILL:when=RANK`` stops the command exactly there. ``openat`` is
a point only when it creates (``O_CREAT``); of the answer's writes to the terminal (fd 1 and 2)
only the first is a point: the others come after it with nothing written in between. A kill
right after an fsync or a failed call leaves what a kill at that call leaves: not a point of
its own for kills (``points(kills_only=True)``), one for injected errors.

Scenarios keep a snapshot of the workspace and of the state folder (``TAKEBACK_HOME``), and put
both back before each point; the workspace stays at the same path (the store is named after it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from helpers import dot_git, tree_state, unmeasured

STRACE = shutil.which("strace")

MUTATING = (
    "write", "pwrite64", "writev", "rename", "renameat", "renameat2", "unlink", "unlinkat", "mkdir", "mkdirat",
    "rmdir", "fsync", "fdatasync", "ftruncate", "openat", "symlink", "symlinkat", "link", "linkat", "fchmod",
    "fchown", "chmod", "fchmodat", "syncfs",
)
_CALL = re.compile(r"^(?P<name>[a-z0-9_]+)\((?P<args>.*)$")


@dataclass(frozen=True)
class Point:
    """One mutating system call of a command: its name, its rank among calls of that name."""

    name: str
    rank: int
    text: str  # what strace printed, for the failure message

    def __str__(self) -> str:
        return f"{self.name}#{self.rank}: {self.text[:160]}"


def strace_usable() -> str | None:
    """Why strace cannot trace here (not installed, ptrace refused), or None."""
    if STRACE is None:
        return "strace is not installed (scripts/setup-faults.sh installs it)"
    probe = subprocess.run([STRACE, "-qq", "-o", os.devnull, "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"strace cannot trace here: {probe.stderr.strip()}"
    return None


def points(trace: str, kills_only: bool = True) -> list[Point]:
    """The points in an ``strace -o`` log of one process, in the order they ran. With
    ``kills_only``, a point right after a call that changed nothing another process can see (an
    fsync, a call that failed) is left out: a kill there leaves exactly what a kill at that
    call leaves. (Error injection needs every call: ``kills_only=False``.)"""
    ranks: Counter[str] = Counter()
    found: list[Point] = []
    answered: set[str] = set()
    unseen = False  # the previous mutating call changed nothing another process could see
    for line in trace.splitlines():
        match = _CALL.match(line)
        if match is None or match["name"] not in MUTATING:
            continue
        name, args = match["name"], match["args"]
        ranks[name] += 1
        if name == "openat" and "O_CREAT" not in args:
            continue
        if name in ("write", "writev"):
            fd = args.split(",", 1)[0]
            if fd in ("1", "2"):
                if fd in answered:
                    continue
                answered.add(fd)
        point = Point(name, ranks[name], line)
        if not (kills_only and unseen):
            found.append(point)
        unseen = name in ("fsync", "fdatasync", "syncfs") or line.rsplit(" = ", 1)[-1].startswith("-1 ")
    return found


def environment() -> dict[str, str]:
    """The command's environment: the test's (its isolated state folders), hooks recorded in
    the process itself (as Claude Code runs them), no bytecode written (the calls must be the
    same at every run)."""
    return unmeasured({**os.environ, "TAKEBACK_RESIDENT": "0", "PYTHONDONTWRITEBYTECODE": "1", "CLAUDECODE": "1"})


def run(cwd: Path, args: list[str], stdin: bytes | None = None, strace: list[str] | None = None,
        ) -> subprocess.CompletedProcess[bytes]:
    """``takeback ARGS`` in ``cwd`` (under ``strace`` with those options if given)."""
    argv = [sys.executable, "-m", "takeback", *args]
    if strace is not None:
        assert STRACE is not None
        argv = [STRACE, "-qq", *strace, *argv]
    return subprocess.run(argv, cwd=cwd, input=stdin or b"", capture_output=True, env=environment(), timeout=120,
                          check=False)


def trace_points(cwd: Path, args: list[str], trace_file: Path, stdin: bytes | None = None, kills_only: bool = True,
                 ) -> list[Point]:
    proc = run(cwd, args, stdin, ["-o", str(trace_file), "-e", "trace=" + ",".join(MUTATING)])
    assert proc.returncode in (0, 10), proc.stderr.decode(errors="replace")
    return points(trace_file.read_text(errors="replace"), kills_only)


def inject(cwd: Path, args: list[str], point: Point, action: str, stdin: bytes | None = None, every_later: bool = False,
           ) -> subprocess.CompletedProcess[bytes]:
    """Run the command with ``action`` (``signal=KILL``, ``error=EIO`` …) at ``point`` (and
    with ``every_later``, at every later call of that name: a disk that stays full)."""
    when = f"{point.rank}+" if every_later else str(point.rank)
    return run(cwd, args, stdin, ["-o", os.devnull, "-e", f"inject={point.name}:{action}:when={when}"])


class Snapshot:
    """The workspace and the state folder as they were, to put back before each point."""

    def __init__(self, ws: Path, state: Path, keep: Path) -> None:
        self.ws, self.state, self.keep = ws, state, keep
        shutil.copytree(ws, keep / "ws", symlinks=True)
        shutil.copytree(state, keep / "state", symlinks=True)
        self.files = tree_state(ws)
        self.git = dot_git(ws)

    def put_back(self) -> None:
        for live, kept in ((self.ws, self.keep / "ws"), (self.state, self.keep / "state")):
            shutil.rmtree(live)
            shutil.copytree(kept, live, symlinks=True)
