"""Open documents and what the server makes of them, over stdio: a document closed is the disk's
again, documents the engine never touches (inside ``.git``) or that are not on disk yet do not
stop an undo, a document opened and typed into before ``initialize`` is tracked, code actions
only where they can be offered and only of the kinds asked, and a binary file's old content
served as base64."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from pygls.uris import from_fs_path

from .raw import RawServer

AGENT = "def helper(x):\n    return x * 3\n"
PERSON = "def helper(x):\n    return x * 2\n"


@pytest.fixture
def raw(repo: Path, isolated_environment: Path, tmp_path: Path):
    """Not initialised yet (one test speaks before ``initialize``); edits asked are applied."""
    server = RawServer(repo, tmp_path / "server.log")
    server.apply_edit = lambda request: {"result": {"applied": True}}
    yield server
    server.close()


def agent_turn(raw: RawServer, repo: Path) -> None:
    assert raw.request("takeback/beginTurn", {"label": "agent"})["result"]["number"] == 1
    (repo / "src/util.py").write_text(AGENT)
    assert raw.request("takeback/endTurn", {})["result"]["files"][0]["path"] == "src/util.py"


def open_doc(raw: RawServer, path: Path, text: str, version: int = 1) -> str:
    uri = from_fs_path(str(path))
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "text", "version": version, "text": text}})
    return uri


def test_a_closed_document_is_the_disk_again(raw: RawServer, repo: Path) -> None:
    raw.initialize()
    agent_turn(raw, repo)
    uri = open_doc(raw, repo / "src/util.py", AGENT)
    raw.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert raw.request("takeback/undo", {})["result"]["applied"] is True
    assert [r["method"] for r in raw.server_requests if r["method"] == "workspace/applyEdit"] == []  # written on disk
    assert (repo / "src/util.py").read_text() == PERSON


def test_documents_the_engine_never_touches_do_not_stop_an_undo(raw: RawServer, repo: Path) -> None:
    raw.initialize()
    agent_turn(raw, repo)
    open_doc(raw, repo / ".git/COMMIT_EDITMSG", "a message being written\n")  # inside .git
    open_doc(raw, repo / "src/unsaved.py", "print('not on disk yet')\n")  # a new buffer, never saved
    result = raw.request("takeback/undo", {})["result"]
    assert result["applied"] is True and [r["path"] for r in result["restored"]] == ["src/util.py"]
    assert (repo / "src/util.py").read_text() == PERSON
    assert not (repo / "src/unsaved.py").exists()


def test_a_document_typed_into_before_initialize_is_tracked(raw: RawServer, repo: Path) -> None:
    """Before ``initialize`` positions are UTF-16 (the default encoding)."""
    util = repo / "src/util.py"
    uri = open_doc(raw, util, PERSON)
    raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 10}}, "text": "twice"}]})
    raw.initialize()
    edit = {"documentChanges": [{"textDocument": {"uri": uri, "version": 2}, "edits": [
        {"range": {"start": {"line": 1, "character": 15}, "end": {"line": 1, "character": 16}}, "newText": "4"}]}]}
    result = raw.request("takeback/applyEdit", {"edit": edit, "label": "agent"})["result"]
    assert result["applied"] is True
    before = raw.request("takeback/fileAt", {"turnId": "last", "uri": uri, "side": "before"})["result"]
    after = raw.request("takeback/fileAt", {"turnId": "last", "uri": uri, "side": "after"})["result"]
    assert before["content"] == "def twice(x):\n    return x * 2\n"
    assert after["content"] == "def twice(x):\n    return x * 4\n"


def code_actions(raw: RawServer, uri: str, only: list[str] | None = None) -> list[dict] | None:
    context: dict = {"diagnostics": []}
    if only is not None:
        context["only"] = only
    zero = {"line": 0, "character": 0}
    answer = raw.request(
        "textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": zero, "end": zero}, "context": context}
    )
    return answer["result"]


def test_code_actions_only_where_and_of_the_kinds_they_can_be(raw: RawServer, repo: Path, tmp_path: Path) -> None:
    raw.initialize()
    agent_turn(raw, repo)
    util = from_fs_path(str(repo / "src/util.py"))
    titles = ["Undo agent turn #1: agent (1 file)", "Revert turn #1's changes to this file"]
    for only in (None, [], ["quickfix"], [""], ["refactor", "quickfix"]):
        assert [a["title"] for a in code_actions(raw, util, only) or []] == titles, only
    assert code_actions(raw, util, ["refactor"]) is None
    assert code_actions(raw, util, ["quickfix.other"]) is None
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    assert code_actions(raw, from_fs_path(str(outside))) is None
    assert code_actions(raw, "untitled:Untitled-1") is None
    missing = tmp_path / "missing"  # a workspace folder without a store
    added = [{"uri": from_fs_path(str(missing)), "name": "m"}]
    raw.notify("workspace/didChangeWorkspaceFolders", {"event": {"added": added, "removed": []}})
    assert code_actions(raw, from_fs_path(str(missing / "a.py"))) is None


def test_a_rename_that_may_both_overwrite_and_ignore_overwrites(raw: RawServer, repo: Path) -> None:
    """LSP: ``overwrite`` wins over ``ignoreIfExists``."""
    raw.initialize()
    old, new = repo / "src/util.py", repo / "README.md"
    edit = {"documentChanges": [{"kind": "rename", "oldUri": from_fs_path(str(old)), "newUri": from_fs_path(str(new)),
                                 "options": {"overwrite": True, "ignoreIfExists": True}}]}
    result = raw.request("takeback/applyEdit", {"edit": edit, "label": "move"})["result"]
    assert result["applied"] is True
    assert not old.exists() and new.read_text() == PERSON


def test_a_binary_file_is_served_as_base64(raw: RawServer, repo: Path) -> None:
    logo = repo / "logo.bin"
    logo.write_bytes(b"\x89PNG\x00\xff")
    raw.initialize()
    raw.request("takeback/beginTurn", {"label": "art"})
    logo.write_bytes(b"\x89PNG\x00\xfe")
    raw.request("takeback/endTurn", {})
    uri = from_fs_path(str(logo))
    for side, content in (("before", b"\x89PNG\x00\xff"), ("after", b"\x89PNG\x00\xfe")):
        result = raw.request("takeback/fileAt", {"turnId": "last", "uri": uri, "side": side})["result"]
        assert (result["exists"], result["encoding"]) == (True, "base64")
        assert base64.b64decode(result["content"]) == content
