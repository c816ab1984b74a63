"""Protocol fuzz test of the real server process, driven with raw stdio frames (``raw.py``).

Malformed and mistyped JSON-RPC messages, wrong param types, unknown methods, huge and deeply
nested messages, edits for URIs outside the workspace, and clients that answer
``workspace/applyEdit`` with an error, with nonsense or never: every request is answered or
refused, the server keeps running (a following valid request is answered), and nothing is
written in the workspace. A frame whose header cannot be read may end the server, but never
leave it alive and deaf.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygls.uris import from_fs_path

from helpers import git_state, tree_state

from .raw import RawServer, frame

APP = "def main():\n    return 1\n\n\ndef other():\n    return 2\n"

METHODS = [
    "takeback/beginTurn", "takeback/endTurn", "takeback/applyEdit", "takeback/undo", "takeback/redo",
    "takeback/revertTurn", "takeback/restore", "takeback/timeline", "takeback/turn", "takeback/diff",
    "takeback/fileAt", "takeback/recordCheck", "takeback/status", "workspace/executeCommand",
    "textDocument/codeAction", "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose",
    "workspace/didChangeWorkspaceFolders", "$/cancelRequest", "$/setTrace", "no/such/method", "",
]


def workspace_state(repo: Path) -> tuple:
    return tree_state(repo), git_state(repo)


def still_serving(raw: RawServer) -> None:
    """The server is alive and answers a valid request."""
    answer = raw.request("takeback/status", {}, timeout=20)
    assert "result" in answer, answer


def refused(raw: RawServer, method: str, params, code: int | None = None) -> dict:
    answer = raw.request(method, params)
    assert "error" in answer, f"{method} {str(params)[:200]} was carried out: {str(answer)[:300]}"
    if code is not None:
        assert answer["error"]["code"] == code, answer
    return answer["error"]


def rng(l1: int, c1: int, l2: int, c2: int) -> dict:
    return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}


# --------------------------------------------------------------------------- bodies and envelopes

BODIES = [
    ("not JSON", b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700),
    ("not UTF-8", b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}', -32700),
    ("empty body", b"", -32700),
    ("a batch", b'[{"jsonrpc": "2.0", "id": 1, "method": "takeback/status"}]', -32600),
    ("a number", b"42", -32600),
    ("null", b"null", -32600),
    ("a string", b'"takeback/status"', -32600),
    ("nested too deep", b'{"jsonrpc": "2.0", "id": 1, "method": "takeback/status", "params": {"x": '
     + b"[" * 200_000 + b"]" * 200_000 + b"}}", -32700),
    ("an id that is an object", b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "takeback/status"}', -32600),
    ("an id that is true", b'{"jsonrpc": "2.0", "id": true, "method": "takeback/status"}', -32600),
    ("neither id nor method", b'{"jsonrpc": "2.0", "params": {}}', None),
]


def test_malformed_bodies_are_answered_with_id_null(raw: RawServer, repo: Path) -> None:
    before = workspace_state(repo)
    for name, body, code in BODIES:
        count = len(raw.responses_without_id())
        raw.write_bytes(frame(body))
        still_serving(raw)
        errors = raw.responses_without_id()[count:]
        if code is None:
            assert errors == [], name
        else:
            assert [e["error"]["code"] for e in errors] == [code], (name, errors)
    assert raw.alive() and workspace_state(repo) == before


ENVELOPES = [
    ({"id": 7, "method": "takeback/status"}, -32600),  # no "jsonrpc"
    ({"jsonrpc": "1.0", "id": 7, "method": "takeback/status"}, -32600),
    ({"jsonrpc": 2, "id": 7, "method": "takeback/status"}, -32600),
    ({"jsonrpc": "2.0", "id": 7, "method": 5}, -32600),
    ({"jsonrpc": "2.0", "id": 7, "method": None}, -32600),
    ({"jsonrpc": "2.0", "id": 7, "method": "takeback/status", "params": 5}, -32602),
    ({"jsonrpc": "2.0", "id": 7, "method": "takeback/status", "params": "folder"}, -32602),
    ({"jsonrpc": "2.0", "id": 7, "method": "no/such/method"}, -32601),
    ({"jsonrpc": "2.0", "id": "seven", "method": "no/such/method", "params": {"a": [1, 2]}}, -32601),
    ({"jsonrpc": "2.0", "id": 7, "method": "textDocument/codeAction", "params": {"textDocument": 5}}, -32602),
    ({"jsonrpc": "2.0", "id": 7, "method": "textDocument/codeAction"}, None),  # some error
    ({"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand", "params": {"command": 5}}, -32602),
    ({"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand", "params": {"command": "takeback.undoTurn", "arguments": "x"}}, -32602),
    ({"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand", "params": {"command": "takeback.restore", "arguments": [{"checkpointId": {"id": 5}}]}}, -32602),
    ({"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand", "params": {"command": "rm -rf", "arguments": []}}, None),
]


def test_mistyped_requests_are_answered_with_their_id(raw: RawServer, repo: Path) -> None:
    before = workspace_state(repo)
    for message, code in ENVELOPES:
        message = {**message, "id": f"{message['id']}-{raw.new_id()}" if isinstance(message["id"], str) else raw.new_id()}
        raw.write(message)
        answer = raw.response(message["id"], timeout=20)
        assert "error" in answer, (message, answer)
        if code is not None:
            assert answer["error"]["code"] == code, (message, answer)
        still_serving(raw)
    assert workspace_state(repo) == before


WRONG_PARAMS = {
    "takeback/beginTurn": [{"label": 5}, {"bracket": "yes"}, {"sessionId": ["a"]}, [1, 2]],
    "takeback/endTurn": [{"turnId": 5}, {"checks": [{"name": "t", "status": "green"}]}, {"commandsRun": "ls"}],
    "takeback/applyEdit": [{}, {"edit": 5}, {"edit": {"changes": 5}}, {"edit": {"changes": {"file:///x": "y"}}},
                           {"edit": {"documentChanges": [{"kind": "explode", "uri": "file:///x"}]}}, {"edit": {}}],
    "takeback/undo": [{"dryRun": ""}, {"dryRun": "false"}, {"onConflict": "ask"}, {"expectTurnId": []}],
    "takeback/redo": [{"dryRun": 0}, {"onConflict": 5}],
    "takeback/revertTurn": [{}, {"turnId": None}, {"turnId": "#99999"}, {"turnId": "1", "uri": 5}],
    "takeback/restore": [{}, {"checkpointId": {"id": 1}}, {"checkpointId": "nope"}],
    "takeback/timeline": [{"limit": 0}, {"limit": -1}, {"limit": "many"}, {"before": "x"}],
    "takeback/turn": [{}, {"turnId": 1.5}, {"turnId": "zzzzzzzzzz"}],
    "takeback/diff": [{"turnId": "last", "uri": "file:///etc/passwd"}, {"turnId": []}],
    "takeback/fileAt": [{"turnId": "last", "uri": "file:///etc/passwd"}, {"turnId": "1", "uri": "x", "side": "middle"}],
    "takeback/recordCheck": [{"name": "t", "status": "green"}, {"name": 5, "status": "passed"}, {}],
    "takeback/status": [{"folder": 5}, {"folder": "file:///not/a/workspace/folder"}, {"folder": "http://example.com"}],
}


def test_wrong_param_types_are_refused(raw: RawServer, repo: Path) -> None:
    before = workspace_state(repo)
    for method, cases in WRONG_PARAMS.items():
        for params in cases:
            refused(raw, method, params)
    still_serving(raw)
    assert workspace_state(repo) == before
    timeline = raw.request("takeback/timeline", {})["result"]
    assert timeline["entries"] == []  # nothing was recorded either


def test_huge_messages(raw: RawServer, repo: Path) -> None:
    before = workspace_state(repo)
    big = "x" * 20_000_000
    answer = raw.request("takeback/timeline", {"sessionId": big}, timeout=60)
    assert answer["result"]["entries"] == []
    refused(raw, "no/such/method", {"blob": big})
    nested: object = "leaf"
    for _ in range(300):  # deep (600 levels), but JSON that Python reads
        nested = {"a": [nested]}
    assert "result" in raw.request("takeback/status", {"extra": nested})
    refused(raw, "takeback/applyEdit", {"edit": {"changes": {from_fs_path(str(repo / "README.md")): nested}}}, -32602)
    long_text_edit = {"changes": {from_fs_path(str(repo / "README.md")): [{"range": rng(0, 0, 0, 0), "newText": big, "x": nested}]}}
    answer = raw.request("takeback/applyEdit", {"edit": long_text_edit, "label": big[:100_000]}, timeout=120)
    # a big but valid edit is carried out (the client has no document open: written on disk)
    assert answer["result"]["applied"] is True, str(answer)[:300]
    assert (repo / "README.md").stat().st_size == len(big) + len("# demo\n")
    assert "result" in raw.request("takeback/undo", {}, timeout=120)
    assert workspace_state(repo) == before
    still_serving(raw)


def test_edits_outside_the_workspace_write_nothing(raw: RawServer, repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("keep\n")
    (repo / "link").symlink_to(outside, target_is_directory=True)
    before = workspace_state(repo), tree_state(outside)
    targets = [
        from_fs_path(str(outside / "secret.txt")),
        from_fs_path(str(repo / "link" / "secret.txt")),
        from_fs_path(str(repo)) + "/../outside/secret.txt",
        from_fs_path(str(repo / ".git" / "config")),
        from_fs_path(str(repo / ".git" / "hooks" / "pre-commit")),
        "file:///etc/passwd",
        "untitled:Untitled-1",
        "http://example.com/a.py",
        "file://host/share/a.py",
        "not a uri",
        "",
    ]
    inside = from_fs_path(str(repo / "README.md"))
    for uri in targets:
        edits = [
            {"changes": {uri: [{"range": rng(0, 0, 0, 0), "newText": "owned\n"}]}},
            {"changes": {inside: [{"range": rng(0, 0, 0, 0), "newText": "x"}], uri: [{"range": rng(0, 0, 0, 0), "newText": "owned\n"}]}},
            {"documentChanges": [{"kind": "create", "uri": uri, "options": {"overwrite": True}}]},
            {"documentChanges": [{"kind": "delete", "uri": uri, "options": {"recursive": True}}]},
            {"documentChanges": [{"kind": "rename", "oldUri": inside, "newUri": uri, "options": {"overwrite": True}}]},
            {"documentChanges": [{"kind": "rename", "oldUri": uri, "newUri": inside + ".stolen"}]},
        ]
        for edit in edits:
            error = refused(raw, "takeback/applyEdit", {"edit": edit})
            assert error["code"] in (-32004, -32602), (uri, edit, error)
    for uri in targets[:3]:
        refused(raw, "takeback/fileAt", {"turnId": "last", "uri": uri})
        refused(raw, "takeback/revertTurn", {"turnId": "last", "uri": uri})
    still_serving(raw)
    assert (workspace_state(repo), tree_state(outside)) == before


APPLY_EDIT_ANSWERS = {
    "a JSON-RPC error (eglot)": lambda request: {"error": {"code": 32603, "message": "User cancelled server edit"}},
    "applied false": lambda request: {"result": {"applied": False, "failureReason": "no", "failedChange": 0}},
    "applied as a string": lambda request: {"result": {"applied": "yes"}},
    "a null result": lambda request: {"result": None},
    "a result that is a list": lambda request: {"result": [True]},
    "an error that is not an error object": lambda request: {"error": "no"},
    "an error without a message": lambda request: {"error": {"code": -1}},
    "no answer at all": lambda request: None,
}


@pytest.mark.parametrize("answer", list(APPLY_EDIT_ANSWERS))
def test_clients_that_answer_apply_edit_badly_or_never(raw: RawServer, repo: Path, answer: str) -> None:
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": from_fs_path(str(repo / "src/app.py")), "languageId": "python", "version": 1, "text": APP}})
    raw.apply_edit = APPLY_EDIT_ANSWERS[answer]
    before = workspace_state(repo)
    edit = {
        "changes": {
            from_fs_path(str(repo / "src/app.py")): [{"range": rng(1, 11, 1, 12), "newText": "10"}],
            from_fs_path(str(repo / "src/util.py")): [{"range": rng(1, 15, 1, 16), "newText": "3"}],
        }
    }
    began = time.monotonic()
    result = raw.request("takeback/applyEdit", {"edit": edit, "label": answer}, timeout=30)
    assert "result" in result, result
    assert result["result"]["applied"] is False and result["result"]["failureReason"], result
    assert time.monotonic() - began < 20
    assert workspace_state(repo) == before  # the closed file's disk write never happened
    still_serving(raw)
    # an undo of nothing, and a turn recorded with the buffer's text, still work
    assert "error" in raw.request("takeback/undo", {})
    raw.apply_edit = lambda request: {"result": {"applied": True}}
    assert raw.request("takeback/status", {})["result"]["entries"] == 1


BAD_HEADERS = [
    b"Content-Length: abc\r\n\r\n{}",
    b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}",
    b"Content-Length: -5\r\n\r\n{}",
    b"Content-Length: 99999999999999\r\n\r\n{}",
    b"this is not a header\r\n\r\n",
    b"Content-Length 12\r\n\r\n",
    b"X: " + b"y" * 5000 + b"\r\n\r\n",
]


@pytest.mark.parametrize("header", BAD_HEADERS, ids=range(len(BAD_HEADERS)))
def test_a_frame_that_cannot_be_read_ends_the_server_or_is_survived(
    repo: Path, isolated_environment: Path, tmp_path: Path, header: bytes
) -> None:
    raw = RawServer(repo, tmp_path / "server.log")
    try:
        raw.initialize()
        before = workspace_state(repo)
        raw.write_bytes(header)
        deadline = time.monotonic() + 5
        while raw.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if raw.alive():  # then it must still answer
            still_serving(raw)
        else:
            assert raw.proc.returncode != 0
        assert workspace_state(repo) == before
    finally:
        raw.close()


EXIT_BOUND_SECONDS = 15.0
"""How long a server may take to exit after a frame it cannot read (a liveness bound, not a
speed: the process leaves at once; the bound only stops the test from waiting for ever)."""


@pytest.mark.parametrize("when", ["first", "during-initialize", "after-initialize", "with-a-request-behind", "after-a-request"])
def test_a_header_without_content_length_ends_the_server_while_the_client_holds_the_pipe_open(
    repo: Path, isolated_environment: Path, tmp_path: Path, when: str
) -> None:
    log = tmp_path / "server.log"
    raw = RawServer(repo, log)
    try:
        if when == "during-initialize":  # the initialize request still being handled (its engine opening)
            uri = from_fs_path(str(repo))
            raw.write({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "processId": None, "rootUri": uri, "workspaceFolders": [{"uri": uri, "name": "repo"}], "capabilities": {}}})
        elif when != "first":
            raw.initialize()
        if when == "after-a-request":
            still_serving(raw)
        before = workspace_state(repo)
        status = frame(json.dumps({"jsonrpc": "2.0", "id": 900, "method": "takeback/status", "params": {}}).encode())
        raw.write_bytes(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
                        + (status if when == "with-a-request-behind" else b""))
        if when != "with-a-request-behind":
            raw.write_bytes(status)  # what the client then sends, and waits an answer for
        # The client holds its end of the pipe open and sends nothing more: the server must go.
        try:
            raw.proc.wait(timeout=EXIT_BOUND_SECONDS)
        except Exception:
            pytest.fail(f"the server is still alive {EXIT_BOUND_SECONDS} s after a frame it could not read")
        assert raw.proc.stdin is not None and not raw.proc.stdin.closed
        assert raw.proc.returncode == 1
        assert workspace_state(repo) == before
        text = log.read_text()
        errors = [line for line in text.splitlines() if " ERROR " in line]
        assert len(errors) == 1 and "unreadable message frame from the client (a header without Content-Length)" in errors[0], text
        assert "Traceback" not in text and "Fatal Python error" not in text, text
    finally:
        raw.close()


def test_the_client_closing_the_stream_ends_the_server(raw: RawServer) -> None:
    raw.write_bytes(b"Content-Length: 50\r\n\r\n{")  # a body cut short
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()
    raw.proc.wait(timeout=20)


# --------------------------------------------------------------------------- random messages

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
param_keys = st.sampled_from(
    ["turnId", "uri", "folder", "dryRun", "onConflict", "label", "edit", "changes", "documentChanges",
     "textDocument", "range", "checkpointId", "limit", "before", "name", "status", "command", "arguments",
     "side", "sessionId", "expectTurnId", "workDoneToken", "id", "contentChanges"]
)
params = st.one_of(
    json_values,
    st.dictionaries(param_keys, json_values, max_size=5),
)
ids = st.one_of(st.integers(1, 2**31), st.text(min_size=1, max_size=8), st.none(), st.booleans(), st.floats(allow_nan=False))
messages = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2]), "method": st.sampled_from(METHODS) | st.text(max_size=20)},
    optional={"id": ids, "params": params},
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(message=messages)
def test_random_messages(raw: RawServer, repo: Path, message: dict) -> None:
    before = workspace_state(repo)
    msg_id = message.get("id")
    if "id" in message and isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool):
        message["id"] = msg_id = f"fuzz-{raw.new_id()}-{msg_id}"  # unique, so answers cannot mix
    count = len(raw.responses_without_id())
    raw.write(message)
    if "id" in message:
        if isinstance(msg_id, str):
            raw.response(msg_id, timeout=20)  # answered or refused
        else:
            still_serving(raw)
            assert len(raw.responses_without_id()) > count  # refused with id null
    still_serving(raw)
    assert workspace_state(repo) == before


def test_the_raw_client_sees_what_a_real_one_does(raw: RawServer, repo: Path) -> None:
    """The fuzz client is a real client: a valid edit reaches it as workspace/applyEdit."""
    uri = from_fs_path(str(repo / "src/app.py"))
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": APP}})
    applied: list[dict] = []

    def apply(request: dict) -> dict:
        applied.append(request["params"]["edit"])
        return {"result": {"applied": True}}

    raw.apply_edit = apply
    edit = {"changes": {uri: [{"range": rng(1, 11, 1, 12), "newText": "10"}]}}
    answer = raw.request("takeback/applyEdit", {"edit": edit})
    assert answer["result"]["applied"] is True and len(applied) == 1
    text = json.dumps(applied[0])
    assert "return 10" in text and uri in text
