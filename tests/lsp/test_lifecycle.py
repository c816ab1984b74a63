"""The server's life as the client sees it on stdio: how it ends (the exit status after
``exit``: 0 only when ``shutdown`` came first, per the LSP specification; the end of the stream;
a stream that cannot be read; a client that stopped reading the answers), what it answers
before ``initialize`` and after ``shutdown``, and the frames between messages it skips."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import subprocess
import time
from pathlib import Path

import pytest
from pygls.uris import from_fs_path

from .raw import SERVER, RawServer, frame

STATUS = {"jsonrpc": "2.0", "id": 7, "method": "takeback/status", "params": {}}
SHUTDOWN = {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
EXIT = {"jsonrpc": "2.0", "method": "exit"}
ANSWER_UNREADABLE = (
    'the editor answered with an error (-32603: the client\'s answer could not be read: '
    'it needs "jsonrpc": "2.0" and exactly one of result and error)'
)


def initialize(root: Path) -> dict:
    uri = from_fs_path(str(root))
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": uri, "workspaceFolders": [{"uri": uri, "name": root.name}], "capabilities": {}}}


def session(root: Path, *messages: dict | bytes, stdin: object = None) -> tuple[int, dict[object, dict], str]:
    """Run the server on these messages (then the end of its input); answer its exit status,
    its answers by id, and its stderr."""
    data = b"".join(m if isinstance(m, bytes) else frame(json.dumps(m).encode()) for m in messages)
    proc = subprocess.run(
        SERVER, input=None if stdin is not None else data, stdin=stdin, capture_output=True, cwd=root,
        env=dict(os.environ), timeout=60,
    )
    answers: dict[object, dict] = {}
    rest = proc.stdout
    while rest:
        head, _, rest = rest.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        message = json.loads(rest[:length])
        rest = rest[length:]
        if "method" not in message:
            answers[message.get("id")] = message
    return proc.returncode, answers, proc.stderr.decode()


@pytest.mark.parametrize("before", ["nothing", "initialize"])
def test_exit_without_shutdown_ends_the_server_with_status_1(repo: Path, isolated_environment: Path, before: str) -> None:
    messages: list[dict] = []
    if before == "initialize":
        messages += [initialize(repo), {"jsonrpc": "2.0", "method": "initialized", "params": {}}]
    status, answers, stderr = session(repo, *messages, EXIT, STATUS)
    assert status == 1, stderr
    assert 7 not in answers  # nothing after exit is read
    assert "Traceback" not in stderr, stderr


def test_exit_without_shutdown_after_work_ends_the_server_with_status_1(raw: RawServer) -> None:
    assert raw.request("takeback/beginTurn", {"label": "work"})["result"]["number"] == 1
    raw.notify("exit")
    assert raw.proc.wait(timeout=30) == 1


def test_exit_after_shutdown_ends_the_server_with_status_0(raw: RawServer) -> None:
    assert raw.request("shutdown") == {"jsonrpc": "2.0", "id": 1 + 1, "result": None}
    raw.notify("exit")
    assert raw.proc.wait(timeout=30) == 0
    assert "Traceback" not in raw.log_text()


def test_after_shutdown_requests_are_refused_and_notifications_dropped(raw: RawServer, repo: Path) -> None:
    app = repo / "src/app.py"
    text = app.read_text()
    assert raw.request("shutdown")["result"] is None
    raw.notify("textDocument/didOpen", {"textDocument": {
        "uri": from_fs_path(str(app)), "languageId": "python", "version": 1, "text": "changed\n"}})
    for method, params in (("takeback/beginTurn", {"label": "late"}), ("takeback/status", {}), ("shutdown", None)):
        answer = raw.request(method, params)
        assert answer["error"] == {"code": -32600, "message": "invalid request: the server is shutting down"}, method
    raw.notify("exit")
    assert raw.proc.wait(timeout=30) == 0
    assert app.read_text() == text


def test_a_shutdown_while_a_command_runs_is_done_and_exit_is_clean(raw: RawServer, repo: Path) -> None:
    """The person closes the editor while an undo it asked for (``workspace/executeCommand``)
    waits for the store: the shutdown is answered, the command is answered as cancelled and
    writes nothing, and ``exit`` ends the server with status 0."""
    assert raw.request("takeback/beginTurn", {"label": "agent"})["result"]["number"] == 1
    (repo / "src/util.py").write_text("def helper(x):\n    return x * 3\n")
    assert "result" in raw.request("takeback/endTurn", {})
    store = raw.request("takeback/status", {})["result"]["store"]
    fd = os.open(Path(store) / "lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another process holds the store: the undo waits for it
    try:
        raw.write({"jsonrpc": "2.0", "id": "undo", "method": "workspace/executeCommand",
                          "params": {"command": "takeback.undoTurn", "arguments": []}})
        time.sleep(0.5)
        assert raw.request("shutdown", timeout=10)["result"] is None
        assert raw.response("undo", timeout=10)["error"]["code"] == -32800
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    time.sleep(1)  # the store is free: a cancelled undo that went on would have written by now
    assert (repo / "src/util.py").read_text() == "def helper(x):\n    return x * 3\n"
    raw.notify("exit")
    assert raw.proc.wait(timeout=30) == 0


def test_before_initialize_requests_are_answered_and_say_why_they_cannot_be_done(repo: Path, isolated_environment: Path) -> None:
    unknown = {"jsonrpc": "2.0", "id": 9, "method": "takeback/noSuchThing", "params": {}}
    status, answers, stderr = session(repo, STATUS, unknown)
    assert status == 0, stderr  # the client closed the stream: an ordinary end
    error = answers[7]["error"]
    assert error["code"] == -32005 and error["data"] == {"kind": "state"}
    assert error["message"] == "no workspace folder is open: start the server with a root folder or workspace folders"
    assert answers[9]["error"]["code"] == -32601 and "takeback/noSuchThing" in answers[9]["error"]["message"]


def test_line_breaks_between_frames_are_skipped(raw: RawServer) -> None:
    raw.write_bytes(b"\r\n\n\r\n")
    assert raw.request("takeback/status", {})["result"]["entries"] == 0
    raw.write_bytes(b"\r\n")
    assert raw.request("takeback/status", {})["result"]["entries"] == 0


@pytest.mark.parametrize("tail", [b"Content-Length: 40", b"Content-Length: 40\r\n", b"Content-Length: 40\r\n\r\n{\"jsonrpc\""])
def test_a_stream_that_ends_inside_a_frame_is_the_end_not_an_error(raw: RawServer, tail: bytes) -> None:
    raw.write_bytes(tail)
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()
    assert raw.proc.wait(timeout=30) == 0
    text = raw.log_text()
    assert " ERROR " not in text and "Traceback" not in text, text


def test_a_stream_that_cannot_be_read_ends_the_server_with_status_1(repo: Path, isolated_environment: Path, tmp_path: Path) -> None:
    """Its standard input is a pseudo-terminal whose other side closed: reading it fails (EIO)."""
    main, terminal = pty.openpty()
    log = tmp_path / "server.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(SERVER, stdin=main, stdout=subprocess.PIPE, stderr=err, cwd=repo, env=dict(os.environ))
    os.close(main)
    os.close(terminal)  # the other side goes away
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 1 and out == b""
    text = log.read_text()
    (line,) = [line for line in text.splitlines() if " ERROR " in line]
    assert line.endswith(
        "unreadable message frame from the client (the stream cannot be read: Input/output error); "
        "stopping, the editor may restart the server"
    ), text
    assert "Traceback" not in text, text


def test_a_client_that_stops_reading_the_answers_ends_the_server_with_status_1(
    repo: Path, isolated_environment: Path, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=repo, env=dict(os.environ))
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdout.close()  # nobody reads what the server writes any more
        proc.stdin.write(frame(b"not json"))  # answered at once, with an error
        proc.stdin.flush()
        try:
            assert proc.wait(timeout=30) == 1
        finally:
            proc.stdin.close()
    text = log.read_text()
    assert "Traceback" not in text, text
    assert "the connection to the client is lost (its end of stdout is closed); stopping" in text, text


def test_an_answer_to_a_request_the_server_did_not_send_is_ignored(raw: RawServer) -> None:
    raw.write({"jsonrpc": "2.0", "id": "never-asked", "result": {"applied": True}})
    raw.write({"jsonrpc": "2.0", "id": 424242, "error": {"code": 1, "message": "no"}})
    answer = raw.request("takeback/status", {})
    assert answer["result"]["entries"] == 0
    assert raw.alive()


@pytest.mark.parametrize("answer", [
    {"jsonrpc": "1.0", "result": {"applied": True}},
    {"result": {"applied": True}, "error": {"code": 1, "message": "both"}},
])
def test_an_answer_that_cannot_be_read_counts_as_a_refusal(raw: RawServer, repo: Path, answer: dict) -> None:
    """The client answers ``workspace/applyEdit`` for an open document with an answer that is not
    JSON-RPC 2.0: the edit counts as refused, nothing is written or recorded."""
    app = repo / "src/app.py"
    text = app.read_text()
    uri = from_fs_path(str(app))
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    raw.apply_edit = lambda request: answer
    edit = {"changes": {uri: [{"range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 12}}, "newText": "10"}]}}
    result = raw.request("takeback/applyEdit", {"edit": edit, "label": "odd answer"})["result"]
    assert result["applied"] is False
    assert result["failureReason"] == ANSWER_UNREADABLE, result
    assert app.read_text() == text


def test_a_refused_request_is_answered_without_a_traceback_on_stderr(raw: RawServer) -> None:
    """VS Code shows the server's stderr as errors: a request refused on purpose ("nothing to
    undo") is the client's to show, not a failure of the server with a traceback."""
    error = raw.request("takeback/undo", {})["error"]
    assert error["code"] == -32003 and error["data"] == {"kind": "nothing-to-do"}
    assert raw.request("takeback/status", {})["result"]["entries"] == 0  # after the refusal's log lines
    text = raw.log_text()
    assert "Traceback" not in text and "ERROR" not in text, text


def test_an_interrupt_ends_the_server_as_it_ends_every_command(repo: Path, isolated_environment: Path, tmp_path: Path) -> None:
    raw = RawServer(repo, tmp_path / "server.log")
    try:
        raw.initialize()
        raw.proc.send_signal(signal.SIGINT)  # Ctrl-C in the terminal that started it
        assert raw.proc.wait(timeout=30) == 130
        assert raw.log_text().splitlines()[-1] == "takeback: interrupted"
    finally:
        raw.close()


def test_a_header_of_too_many_lines_ends_the_server_with_status_1(raw: RawServer) -> None:
    raw.write_bytes(b"".join(b"X-Header-%d: yes\r\n" % n for n in range(17)) + b"\r\n{}")
    assert raw.proc.wait(timeout=30) == 1
    assert "unreadable message frame from the client (a header that is too long)" in raw.log_text()
