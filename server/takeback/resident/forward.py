"""The command line's short path: hand a reading command to the resident process, print its answer.

``takeback status``, ``log``, ``show``, ``diff``, ``cat`` and ``undo``/``redo``/``revert``/
``restore --dry-run`` only read (a dry run writes nothing), so the resident process, which has
the engine already imported, can run the very same command-line code for them (``cli.py``
there) and send back the exit status and what was written on stdout and stderr, in order; this
process writes it out through its own streams, so the bytes are the ones the command would have
written here. Whatever keeps a full answer from coming (no process, other settings, another
time zone, a process that is leaving or is killed half-way) sends the command to the full
command line in this process, exactly as without a resident process: as nothing served here
writes, doing it again in-process never does anything twice.

Never sent: every other command (they write, ask, read stdin or run a program), ``--help`` and
``--version`` (their layout follows this terminal's width), a ``--workspace`` given as a
relative path (it names a folder from here), calls with ``TAKEBACK_DEBUG`` set (a traceback is
wanted from this process) or ``TAKEBACK_RESIDENT`` off. The resident process checks the parsed
arguments again and refuses whatever it would not serve. When no process answered and this
command runs at a terminal (a person typing, not a script), one is started in the background
for the next command, as a hook starts one.

Standard library only, and cheap to import (see ``client.py``).
"""

from __future__ import annotations

import os
import sys

from . import address, client, wire

# What the resident process serves, here and after parsing there (``cli.servable``): the reading
# commands, and the operations only with --dry-run.
READING = frozenset(("status", "log", "show", "diff", "cat"))
DRY_RUN = frozenset(("undo", "redo", "revert", "restore"))
_GLOBAL_WITH_VALUE = ("--workspace", "-C")
# What the answer's chunks are: which stream (o: stdout, e: stderr), then text (t) or bytes (b).
STDOUT, STDERR, TEXT, BYTES = b"o", b"e", b"t", b"b"


def eligible(raw: list[str]) -> bool:
    """Whether ``raw`` (the arguments after ``takeback``) looks like a command the resident
    process may answer (a cheap first look; its parser has the last word)."""
    words = raw[: raw.index("--")] if "--" in raw else raw
    command = None
    expect_value = False
    for word in words:
        if expect_value:
            if not os.path.isabs(word):
                return False
            expect_value = False
        elif word in _GLOBAL_WITH_VALUE:
            expect_value = True
        elif word.startswith(("--workspace=", "-C")):
            if not os.path.isabs(word.partition("=")[2] if word.startswith("--") else word[2:]):
                return False
        elif word.startswith(("-h", "--h", "--v", "--w")):  # help, version, an abbreviated --workspace
            return False
        elif command is None and not word.startswith("-"):
            command = word
    if command in READING:
        return True
    return command in DRY_RUN and "--dry-run" in words


def answered(raw: list[str]) -> int | None:
    """Run ``raw`` through the resident process and write its answer out: the exit status, or
    None when there is no full answer (then nothing was written: run it in-process)."""
    if sys.stdout is None or sys.stderr is None or not eligible(raw):
        return None  # (no stream to write an answer to: as in-process, whatever that does)
    if not address.enabled() or os.environ.get("TAKEBACK_DEBUG"):
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    terminals = b"".join(b"1" if _isatty(s) else b"0" for s in (sys.stdout, sys.stderr))
    env = wire.environment({"TZ": os.environ["TZ"]} if "TZ" in os.environ else {})
    argv = b"\0".join(os.fsencode(word) for word in raw)
    fields = client.call(b"cli", os.fsencode(cwd), argv, env, terminals)
    if not fields or not fields[0].isdigit():
        if _isatty(sys.stdout) or _isatty(sys.stderr):
            client.start()  # a person at a terminal: the next command is served
        return None
    return _write(fields[1:], int(fields[0]))


def _write(chunks: list[bytes], status: int) -> int:
    """Write the answer's chunks as the command wrote them (see ``STDOUT`` …)."""
    try:
        for chunk in chunks:
            stream = sys.stdout if chunk[:1] == STDOUT else sys.stderr
            if chunk[1:2] == TEXT:
                stream.write(chunk[2:].decode("utf-8", "surrogatepass"))
            else:
                stream.buffer.write(chunk[2:])
    except BrokenPipeError:  # the reader went away (``| head``), as the command line says it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return status


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False
