"""The resident process refuses malformed requests over its real socket, one line each, and keeps
serving; and it exits when its socket is removed.

Each test starts the real resident process with a real hook (tests/cli/test_resident.py) and
sends raw netstrings (resident/wire.py) to its socket.
"""

from __future__ import annotations

import os
import socket

import pytest

from helpers import environment
from takeback.resident import address, wire

from .conftest import Takeback
from .test_resident import resident, started, wait_gone


def ask(path: str, data: bytes) -> list[bytes]:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    conn.sendall(data)
    conn.shutdown(socket.SHUT_WR)
    chunks = []
    while chunk := conn.recv(65536):
        chunks.append(chunk)
    conn.close()
    return wire.unpack(b"".join(chunks))


def its_fingerprint(tb: Takeback, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """The fingerprint the resident process serving ``tb`` holds (computed under ``tb``'s env)."""
    with environment(tb.env):
        return address.fingerprint().encode("utf-8", "surrogateescape")


def test_malformed_requests_are_refused_and_the_process_keeps_serving(tb: Takeback, monkeypatch: pytest.MonkeyPatch) -> None:
    status = started(tb)
    path, print_ = status["socket"], its_fingerprint(tb, monkeypatch)
    assert ask(path, wire.pack([b"status", print_]))[0] == b"done"  # the fingerprint is the right one
    assert ask(path, b"5:abc") == [b"refused", b"a netstring is cut short"]
    assert ask(path, wire.pack([b"frob", print_])) == [b"refused", b"unknown request"]
    assert ask(path, wire.pack([b"hook", print_, b"claude"])) == [b"refused", b"unknown request"]
    bad_env = wire.pack([b"hook", print_, b"claude", b"", str(tb.cwd).encode(), b"NOEQUALS", b"{}"])
    assert ask(path, bad_env) == [b"refused", b"an environment entry has no '='"]
    assert ask(path, wire.pack([b"stop", print_])) == [b"done"]
    wait_gone(tb, status["pid"])
    assert resident(tb)["running"] is False


def test_the_process_exits_when_its_socket_is_removed(tb: Takeback) -> None:
    status = started(tb)
    os.unlink(status["socket"])
    wait_gone(tb, status["pid"])
    assert not os.path.exists(status["socket"])
