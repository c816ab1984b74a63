"""A client that speaks raw stdio frames to a real ``takeback serve`` process, for what a
well-behaved client library cannot send: malformed frames and bodies, mistyped messages, odd
answers to the server's own requests (``workspace/applyEdit``), or none at all.

A reader thread splits the server's output into messages; requests from the server are
answered by ``on_server_request`` (by default as an editor would, per method).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pygls.uris import from_fs_path

SERVER = [sys.executable, "-m", "takeback", "serve", "--log-level", "INFO"]

Answer = Callable[[dict], dict | None]
"""Given a request from the server, the JSON-RPC fields to answer with ({"result": …} or
{"error": …}), or None for no answer at all."""


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    def __init__(self, root: Path, log: Path, env: dict[str, str] | None = None) -> None:
        self.root = root
        self.log = log
        self._log = open(log, "wb")
        self.proc = subprocess.Popen(
            SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, cwd=root,
            env=env or dict(os.environ),
        )
        self.messages: list[dict] = []
        self.unreadable: list[bytes] = []
        self._cond = threading.Condition()
        self._next = 0
        self.apply_edit: Answer = lambda request: {"result": {"applied": False, "failureReason": "raw client says no"}}
        self.answers: dict[str, Answer] = {}
        """How to answer the server's other requests, by method (default: ``{"result": null}``)."""
        self.server_requests: list[dict] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ plumbing

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self._cond:
                        self._cond.notify_all()
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            assert length is not None, "the server sent a frame without Content-Length"
            body = out.read(length)
            try:
                message = json.loads(body)
            except ValueError:
                self.unreadable.append(body)
                continue
            if isinstance(message, dict) and "method" in message and "id" in message:
                self._answer(message)
            with self._cond:
                self.messages.append(message)
                self._cond.notify_all()

    def _answer(self, request: dict) -> None:
        self.server_requests.append(request)
        if request["method"] == "workspace/applyEdit":
            answer = self.apply_edit(request)
        elif request["method"] in self.answers:
            answer = self.answers[request["method"]](request)
        else:
            answer = {"result": None}
        if answer is not None:
            self.write({"jsonrpc": "2.0", "id": request["id"], **answer})

    def write_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass

    def write(self, message: Any) -> None:
        self.write_bytes(frame(json.dumps(message).encode()))

    def new_id(self) -> int:
        self._next += 1
        return self._next

    def request(self, method: str, params: Any = None, timeout: float = 20.0) -> dict:
        """Send a request; answer the response (or raise AssertionError if none comes)."""
        msg_id = self.new_id()
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.write(message)
        return self.response(msg_id, timeout)

    def notify(self, method: str, params: Any = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.write(message)

    def response(self, msg_id: Any, timeout: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for message in self.messages:
                    if "method" not in message and message.get("id") == msg_id and ("result" in message or "error" in message):
                        return message
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise AssertionError(f"no answer to request {msg_id!r} within {timeout} s (server exit: {self.proc.poll()})")
                self._cond.wait(min(left, 0.2))

    def responses_without_id(self) -> list[dict]:
        with self._cond:
            return [m for m in self.messages if "method" not in m and m.get("id") is None]

    def log_text(self) -> str:
        """What the server wrote on stderr so far."""
        self._log.flush()
        return self.log.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    # ------------------------------------------------------------------ session

    def initialize(self, options: dict | None = None, capabilities: dict | None = None) -> dict:
        """``initialize`` then ``initialized``; ``capabilities`` replaces the client's default
        ones (an editor that applies edits and shows progress)."""
        uri = from_fs_path(str(self.root))
        result = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": self.root.name}],
                "capabilities": {
                    "workspace": {
                        "applyEdit": True,
                        "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create", "rename", "delete"]},
                    },
                    "window": {"workDoneProgress": True},
                } if capabilities is None else capabilities,
                "initializationOptions": {"pollInterval": 0.2, "applyEditTimeout": 1, **(options or {})},
            },
        )
        self.notify("initialized", {})
        return result

    def close(self) -> None:
        if self.alive():
            try:
                self.request("shutdown", timeout=5)
                self.notify("exit")
                self.proc.wait(timeout=5)
            except (AssertionError, subprocess.TimeoutExpired):
                pass
        if self.alive():
            self.proc.kill()
            self.proc.wait()
        self._log.close()
