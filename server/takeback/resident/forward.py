"""The command line's short path: hand a command to the resident process, print its answer.

``takeback status``, ``log``, ``show``, ``diff``, ``cat``, ``blame``, ``undo``/``redo``/``revert``/
``restore`` (a dry run or not), ``begin`` and ``end`` are served by the resident process,
which has the engine already imported and, for a workspace its hooks record into, the work tree
watched: it runs the very same command-line code for them (``cli.py`` there) and sends back the
exit status and what was written on stdout and stderr, in order; this process writes it out
through its own streams, so the bytes are the ones the command would have written here. None of
them asks a question or reads stdin (``check`` runs a program: never sent); a pager, when one
is wanted, was started before (``pager.py``) and takes what is written here as any answer.

Whatever keeps the resident process from accepting the command (no process, other settings,
another time zone or umask, a process that is leaving, a refusal, a connection refused or closed before
acceptance) sends it to the full command line in this process, exactly as without a resident
process: nothing was done there. A reading command (a dry run too) is served without more ado,
and one whose answer is lost half-way is run again here: it writes nothing, so that never does
anything twice. A command that WRITES is accepted first (``wire.ACCEPTED``: the process checked
everything that could refuse it and does nothing for it before saying so); once accepted it is
the process's, and this process never runs it again (an undo run twice takes back two turns):
the answer is waited for without a time limit, and if none comes (the process was killed
meanwhile) one line says so and the exit status is 13 (``cli.output.EXIT_LOST``): the operation
either finished or was rolled back by its journal, which ``takeback log`` shows. Ctrl-C while it
waits says the process goes on with it (exit 130).

Never sent: every other command, ``--help`` and ``--version`` (their layout follows this
terminal's width), a ``--workspace`` given as a relative path (it names a folder from here),
calls with ``TAKEBACK_DEBUG`` set (a traceback is wanted from this process) or
``TAKEBACK_RESIDENT`` off. The resident process checks the parsed arguments again and refuses
whatever it would not serve. When no process answered and this command runs at a terminal (a
person typing, not a script), one is started in the background for the next command, as a hook
starts one.

Standard library only, and cheap to import (see ``client.py``).
"""

from __future__ import annotations

import os
import sys

from .. import pager
from . import address, client, wire

# What the resident process serves, here and after parsing there (``cli.servable``): the reading
# commands, the operations (with --dry-run they only read) and the turns' brackets.
READING = frozenset(("status", "log", "show", "diff", "cat", "blame"))
DRY_RUN = frozenset(("undo", "redo", "revert", "restore"))  # (a dry run only reads)
WRITING = DRY_RUN | frozenset(("begin", "end"))
_GLOBAL_WITH_VALUE = ("--workspace", "-C")
# What the answer's chunks are: which stream (o: stdout, e: stderr), then text (t) or bytes (b).
STDOUT, STDERR, TEXT, BYTES = b"o", b"e", b"t", b"b"


def eligible(raw: list[str]) -> bool | None:
    """Whether ``raw`` (the arguments after ``takeback``) looks like a command the resident
    process may answer (a cheap first look; its parser has the last word): False when not,
    True for one that only reads, None for one that writes (see ``answered``)."""
    words = _words(raw)
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
    if command in READING or (command in DRY_RUN and "--dry-run" in words):
        return True
    return None if command in WRITING else False


def answered(raw: list[str]) -> int | None:
    """Run ``raw`` through the resident process and write its answer out: the exit status, or
    None when there is no full answer (then nothing was written: run it in-process)."""
    kind = eligible(raw)
    if sys.stdout is None or sys.stderr is None or kind is False:
        return None  # (no stream to write an answer to: as in-process, whatever that does)
    if not address.enabled() or os.environ.get("TAKEBACK_DEBUG"):
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    paged = pager.active()  # a pager's pipe ends on a terminal: answer as for one
    terminals = b"".join(b"1" if paged or pager.isatty(s) else b"0" for s in (sys.stdout, sys.stderr))
    env = wire.environment({"TZ": os.environ["TZ"]} if "TZ" in os.environ else {})
    argv = b"\0".join(os.fsencode(word) for word in raw)
    request = (b"cli", os.fsencode(cwd), argv, env, terminals, umask())
    try:
        accepted, fields = client.call_accepted(*request) if kind is None else (False, client.call(*request))
    except client.Interrupted:
        print(f"takeback: interrupted; the resident process goes on with the {_command(raw)}: see 'takeback log'",
              file=sys.stderr)
        return 130
    if not fields or not fields[0].isdigit():
        if accepted:
            return _lost(raw)
        if paged or pager.isatty(sys.stdout) or pager.isatty(sys.stderr):
            client.start()  # a person at a terminal: the next command is served
        return None
    return _write(fields[1:], int(fields[0]))


def umask() -> bytes:
    """This process's umask in octal, as a ``cli`` request carries it (the files an operation
    makes get it, so a process serving one must have the same: ``cli.py``). Reading it means
    setting it for a moment: call it before any other thread makes files."""
    mask = os.umask(0o022)
    os.umask(mask)
    return b"%o" % mask


def _lost(raw: list[str]) -> int:
    """The command was accepted but no answer came (the resident process was killed meanwhile):
    never run again here (it may have been done), said in one line (``output.EXIT_LOST``)."""
    from ..cli.output import EXIT_LOST, fail

    command = _command(raw)
    return fail("--json" in _words(raw), "resident-lost", (
        f"the resident process running this {command} ended before it answered; the {command} either finished or "
        "was rolled back by its journal, and is not run again: see 'takeback log' and 'takeback status'"
    ), EXIT_LOST)


def _words(raw: list[str]) -> list[str]:
    return raw[: raw.index("--")] if "--" in raw else raw


def _command(raw: list[str]) -> str:
    """The writing command ``raw`` runs (``eligible`` found it)."""
    return next((word for word in _words(raw) if word in WRITING), "command")


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
