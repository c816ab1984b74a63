"""Serving the command line's commands in the resident process (the ``cli`` request): the
reading ones, the operations and ``begin``/``end`` (``forward.py`` says which and why).

The caller (``forward.py``) sends the arguments, the folder they were typed in, its time zone
and whether its stdout and stderr are terminals. The command runs through the very same code as
in-process (``cli.answer``), with the engine this process holds for the workspace lent to it
(``server.py``: it answers as a new one would, or a new one is opened), in the request's thread,
with its own streams: ``sys.stdout`` and ``sys.stderr`` are, in this process, switches that send
each thread's writes to that thread's capture (or to the process's own streams), so requests
served side by side never see each other's output and nothing process-wide (the folder, the
environment) is changed for one. A warning the engine logs while serving goes to that capture's
stderr, as Python's last-resort handler prints it in a process that configured no logging.

The answer: the exit status, then what was written, in order, as chunks (``forward.STDOUT`` …),
text as text and bytes (``cat``) as bytes, so the caller's own streams encode and buffer them as
they would have. Refused (the caller then runs the command itself, nothing having been done):
another time zone (dates are printed in local time), another umask (the files an operation
makes get the caller's; it is this process's, set once for all its threads), arguments that parse to a command that is
not served (``servable``), a relative ``--workspace``, ``--help``. A command that writes
(``writes``: not a dry run) is accepted once parsed and found servable, before its engine is
taken or anything is done for it (``serve``'s ``accept``: ``wire.ACCEPTED``), so the caller knows
never to run it again.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from ..cli import answer
from ..cli.output import TerminalStream
from . import forward, wire

if TYPE_CHECKING:
    from ..cli.context import Lend

UMASK = forward.umask()  # read once, at import, before any request thread (server.py imports this module)
_local = threading.local()
_installed = threading.Lock()


def servable(args: argparse.Namespace) -> bool:
    """Whether the parsed command is one this process serves (its folder named absolutely, if
    named): a reading command, an operation (dry run or not), ``begin`` or ``end``."""
    workspace = args.workspace
    if workspace is not None and workspace.strip() and not os.path.isabs(workspace):
        return False
    return args.command in forward.READING or args.command in forward.WRITING


def writes(args: argparse.Namespace) -> bool:
    """Whether the parsed (and servable) command writes: not a reading command, not a dry run."""
    return args.command in forward.WRITING and getattr(args, "dry_run", False) is not True


class _Capture:
    """One stream of one request: what was written, in order, and whether it is a terminal."""

    def __init__(self, tag: bytes, tty: bool, chunks: list[bytearray]) -> None:
        self.tag, self.tty, self.chunks = tag, tty, chunks
        self.buffer = _Bytes(self)
        self.encoding = "utf-8"

    def write(self, text: str) -> int:
        self.add(forward.TEXT, text.encode("utf-8", "surrogatepass"))
        return len(text)

    def add(self, kind: bytes, data: bytes) -> None:
        head = self.tag + kind
        if self.chunks and self.chunks[-1][:2] == head:
            self.chunks[-1] += data
        elif data:
            self.chunks.append(bytearray(head + data))

    def isatty(self) -> bool:
        return self.tty

    def flush(self) -> None:
        pass


class _Bytes:
    def __init__(self, capture: _Capture) -> None:
        self.capture = capture

    def write(self, data: bytes) -> int:
        self.capture.add(forward.BYTES, bytes(data))
        return len(data)

    def flush(self) -> None:
        pass


class _Switch:
    """``sys.stdout`` / ``sys.stderr`` of this process: this thread's capture, if it has one."""

    def __init__(self, name: str, own: TextIO) -> None:
        self.name, self.own = name, own

    def _target(self) -> Any:
        streams = getattr(_local, "streams", None)
        return streams[self.name] if streams is not None else self.own

    def write(self, text: str) -> int:
        return self._target().write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)


class _Warnings(logging.Handler):
    """What Python's last-resort handler prints in-process: a served thread's warnings, bare."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.addFilter(lambda _record: getattr(_local, "streams", None) is not None)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:  # noqa: BLE001 - as logging's own handlers: never fail the caller
            self.handleError(record)


def _install() -> None:
    with _installed:
        if not isinstance(sys.stdout, _Switch):
            sys.stdout = _Switch("stdout", sys.stdout)
            sys.stderr = _Switch("stderr", sys.stderr)
            logging.getLogger().addHandler(_Warnings())


def serve(fields: list[bytes], lend: Lend | None = None, accept: Callable[[], object] | None = None) -> list[bytes]:
    """The answer to a ``cli`` request's fields after the fingerprint: CWD ARGV ENVIRONMENT
    TERMINALS [UMASK] (see ``forward.py``; without UMASK, nothing that writes is served);
    ``lend``: the engines this process holds (``cli.answer``);
    ``accept``: called once a command that writes is parsed and served, before anything else is
    done for it (it tells the caller the command is this process's: ``wire.ACCEPTED``); one that
    raises refuses it with nothing done. None: commands that write are refused."""
    if len(fields) not in (4, 5):
        return [b"refused", b"unknown request"]
    umask = fields[4] if len(fields) == 5 else None
    if umask is not None and umask != UMASK:
        return [b"refused", b"another umask"]  # the files an operation makes get the caller's
    cwd = os.fsdecode(fields[0])
    raw = [os.fsdecode(word) for word in fields[1].split(b"\0")] if fields[1] else []
    env = wire.read_environment(fields[2])
    if env.get("TZ") != os.environ.get("TZ"):
        return [b"refused", b"another time zone"]
    _install()
    chunks: list[bytearray] = []
    out = _Capture(forward.STDOUT, fields[3][:1] == b"1", chunks)
    err = _Capture(forward.STDERR, fields[3][1:2] == b"1", chunks)
    _local.streams = {"stdout": TerminalStream(out), "stderr": TerminalStream(err)}  # type: ignore[arg-type]
    def may_serve(args: argparse.Namespace) -> bool:
        if not servable(args):
            return False
        if writes(args):
            if accept is None or umask is None:
                return False
            accept()
        return True

    try:
        status = answer(raw, cwd, may_serve, lend)
    except SystemExit:  # --help or --version after all: their layout is the caller's terminal's
        status = None
    finally:
        _local.streams = None
    if status is None:
        return [b"refused", b"not served"]
    return [b"done", str(status).encode(), *map(bytes, chunks)]
