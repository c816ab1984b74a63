"""Work-done progress as clients differ: one that does not support it gets no progress at all,
one that refuses to create a token still gets the operation done, and one that cancels from the
progress (``window/workDoneProgress/cancel``) before anything is written gets -32800, an end of
progress that says "cancelled", and an untouched workspace."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from .raw import RawServer

AGENT = "def helper(x):\n    return x * 3\n"
PERSON = "def helper(x):\n    return x * 2\n"


def agent_turn(raw: RawServer, repo: Path) -> None:
    assert raw.request("takeback/beginTurn", {"label": "agent"})["result"]["number"] == 1
    (repo / "src/util.py").write_text(AGENT)
    assert raw.request("takeback/endTurn", {})["result"]["files"][0]["path"] == "src/util.py"


def progress_messages(raw: RawServer) -> list[dict]:
    return [m for m in list(raw.messages) if m.get("method") in ("$/progress", "window/workDoneProgress/create")]


def test_a_client_without_progress_gets_none(repo: Path, isolated_environment: Path, tmp_path: Path) -> None:
    raw = RawServer(repo, tmp_path / "server.log")
    try:
        raw.initialize(capabilities={})
        agent_turn(raw, repo)
        result = raw.request("takeback/undo", {})["result"]
        assert result["applied"] is True and (repo / "src/util.py").read_text() == PERSON
        assert progress_messages(raw) == []
    finally:
        raw.close()


def test_a_client_that_refuses_a_progress_token_still_gets_the_work_done(repo: Path, isolated_environment: Path, tmp_path: Path) -> None:
    raw = RawServer(repo, tmp_path / "server.log")
    raw.answers["window/workDoneProgress/create"] = lambda request: {"error": {"code": -32603, "message": "no progress here"}}
    try:
        raw.initialize()
        agent_turn(raw, repo)
        result = raw.request("takeback/undo", {})["result"]
        assert result["applied"] is True and (repo / "src/util.py").read_text() == PERSON
        assert [m["method"] for m in progress_messages(raw)] == ["window/workDoneProgress/create"]
    finally:
        raw.close()


def test_cancelling_from_the_progress_writes_nothing_and_says_cancelled(repo: Path, isolated_environment: Path, tmp_path: Path) -> None:
    raw = RawServer(repo, tmp_path / "server.log")
    try:
        raw.initialize()
        agent_turn(raw, repo)
        store = raw.request("takeback/status", {})["result"]["store"]
        fd = os.open(Path(store) / "lock", os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)  # the undo waits for the store
        try:
            raw.write({"jsonrpc": "2.0", "id": "undo", "method": "takeback/undo", "params": {"workDoneToken": "tok-9"}})
            time.sleep(0.5)
            raw.notify("window/workDoneProgress/cancel", {"token": "tok-9"})
            time.sleep(0.3)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        error = raw.response("undo")["error"]
        assert error == {"code": -32800, "message": "undo cancelled; nothing was written", "data": {"kind": "cancelled"}}
        values = [m["params"]["value"] for m in progress_messages(raw) if m["method"] == "$/progress"]
        assert [v["kind"] for v in values] == ["begin", "report", "end"] and values[-1]["message"] == "cancelled"
        assert (repo / "src/util.py").read_text() == AGENT
        assert raw.request("takeback/timeline", {})["result"]["entries"][0]["state"] == "applied"
    finally:
        raw.close()
