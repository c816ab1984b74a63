"""Asking the resident process to do a request, and starting it when it is not there.

``call`` sends one request over the process's socket (``wire.py``) and waits for its answer
(the work is done by then: a hook's step is recorded before the agent's tool runs). It returns
None whenever the answer did not come, for whatever reason (no process, a refused fingerprint,
a process that went away half-way): the caller then does the work itself, in-process, so the
absence or the crash of the resident process never loses a step. ``call_accepted`` is the
same for a command that writes, which the process may accept before it answers: once accepted,
the caller must never do it itself (``forward.py``). ``start`` launches the process
in the background for the calls that follow; two callers starting it at once are fine (the
second process finds the first one's lock and leaves).

Standard library only, and cheap to import (see ``address.py``): ``os`` only where a served
hook never goes (``start``).
"""

import _socket  # the C module: ``socket`` would import ``enum`` and ``selectors``, a third of a hook's budget
import sys
import time

from .. import oslite
from . import address, wire

_ENTRY = oslite.join(oslite.dirname(oslite.dirname(oslite.abspath(__file__))), "__main__.py")  # this Takeback

# How long a caller waits for an answer. A request that waits for the store's lock (which an
# editor's dialog can hold) may take long; the engine's own lock timeout ends it first.
_ANSWER_SECONDS = 120.0
_START_EVERY_SECONDS = 0.5


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while an accepted request's answer was awaited: the process goes on with it."""


def call(op: bytes, *fields: bytes, print_: str | None = None) -> list[bytes] | None:
    """The resident process's answer to request ``op`` (after ``done``: its fields), or None
    when there is none (see above)."""
    return _exchange(op, fields, print_)[1]


def call_accepted(op: bytes, *fields: bytes) -> tuple[bool, list[bytes] | None]:
    """``call`` for a request that writes: whether the process accepted it (``wire.ACCEPTED``:
    from then on the work is its own, and this caller must never do it again, answer or not),
    and its answer (None: none came). Once accepted, the answer is waited for without a time
    limit: the work is under way, and a process killed meanwhile closes the connection."""
    return _exchange(op, fields, None)


def _exchange(op: bytes, fields: tuple[bytes, ...], print_: str | None) -> tuple[bool, list[bytes] | None]:
    folder = address.private_folder(create=False)
    if folder is None:
        return False, None
    print_ = print_ if print_ is not None else address.fingerprint()
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    accepted, data = False, bytearray()
    try:
        conn.settimeout(_ANSWER_SECONDS)
        conn.connect(address.socket_path(folder, print_))
        conn.sendall(wire.pack([op, print_.encode("utf-8", "surrogateescape"), *fields]))
        conn.shutdown(_socket.SHUT_WR)
        while len(data) <= wire.MAX_BYTES:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
            if not accepted and data.startswith(wire.ACCEPTED_FRAME):
                accepted = True
                del data[: len(wire.ACCEPTED_FRAME)]
                conn.settimeout(None)
        answer = wire.unpack(bytes(data))
    except (OSError, ValueError):
        return accepted, None
    except KeyboardInterrupt:
        if accepted:
            raise Interrupted from None
        raise
    finally:
        conn.close()
    return accepted, (answer[1:] if answer[:1] == [b"done"] else None)


def start(warm: str | None = None) -> None:
    """Launch the resident process in the background (best effort: without it, work is done
    in-process); ``warm``: the workspace the caller records into, which the process makes ready
    as soon as it listens (its engine, the work tree's watch and listing), so the next hook,
    typically the session's first shell step, finds it so. It runs with a safe module path and from ``/``, so nothing in the folder the
    agent works in can be imported by it; and as this package's ``__main__.py`` file, so it is
    this very Takeback (the one whose socket the callers look for, ``address.fingerprint``) even
    when this process found it without ``site`` (a hook line, ``install/command.py``)."""
    import os

    folder = address.private_folder(create=True)
    if folder is None:
        return
    path = address.socket_path(folder, address.fingerprint())
    if address.lock_held(path):
        return  # one is starting up, serving or leaving
    marker = address.sibling(path, ".start")
    try:  # the calls made in the moment before the new one holds its lock do not each start one
        if time.time() - os.stat(marker).st_mtime < _START_EVERY_SECONDS:
            return
    except OSError:
        pass
    try:
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
        os.utime(marker)
    except OSError:
        return
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-P", _ENTRY, "resident", "run", *([f"--warm={warm}"] if warm else [])],
            cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
            env={**os.environ, "PYTHONSAFEPATH": "1"},
        )
    except OSError:
        pass
