"""The language server's open documents (``lsp/documents.py``) in-process: positions at the
edges of a text (past the last line, past a line's end, CRLF breaks), text edits that
cannot be applied, changes with a reversed range, and the bookkeeping of open, changed, closed
and unsynced documents."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path

from takeback.errors import InvalidInput, StaleContent
from takeback.lsp.documents import Document, Documents, TextIndex, apply_text_edits


def _pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def _edit(l1: int, c1: int, l2: int, c2: int, text: str) -> types.TextEdit:
    return types.TextEdit(range=types.Range(start=_pos(l1, c1), end=_pos(l2, c2)), new_text=text)


def test_positions_at_the_edges_of_a_text() -> None:
    index = TextIndex("ab\r\ncd\n", "utf-16")
    assert index.offset(_pos(0, 99)) == 2  # past the line's end: its end, before the CRLF
    assert index.offset(_pos(1, 1)) == 5
    assert index.offset(_pos(7, 0)) == len("ab\r\ncd\n")  # past the last line: the end
    assert index.position(5) == _pos(1, 1)


def test_text_edits_that_cannot_be_applied_say_why() -> None:
    text = "one\ntwo\n"
    assert apply_text_edits(text, [_edit(1, 0, 1, 3, "TWO"), _edit(0, 0, 0, 3, "ONE")], "utf-16") == "ONE\nTWO\n"
    with pytest.raises(InvalidInput, match=r"malformed edit in a.py: range 1:2-0:0 ends before it starts"):
        apply_text_edits(text, [_edit(1, 2, 0, 0, "x")], "utf-16", "a.py")
    with pytest.raises(InvalidInput, match="text edits overlap"):
        apply_text_edits(text, [_edit(0, 0, 0, 3, "x"), _edit(0, 1, 0, 2, "y")], "utf-16")
    snippet = types.SnippetTextEdit(range=types.Range(start=_pos(0, 0), end=_pos(0, 0)), snippet=types.StringValue("x"))
    with pytest.raises(InvalidInput, match="unsupported text edit in document"):
        apply_text_edits(text, [snippet], "utf-16")  # type: ignore[list-item]


def test_a_change_with_a_reversed_range_replaces_the_same_span() -> None:
    doc = Document(uri="file:///x", path="/x", version=1, text="hello world\n")
    doc.apply(types.TextDocumentContentChangePartial(range=types.Range(start=_pos(0, 11), end=_pos(0, 6)), text="there"), "utf-16")
    assert doc.text == "hello there\n"
    doc.apply(types.TextDocumentContentChangeWholeDocument(text="new\n"), "utf-16")
    assert doc.text == "new\n"


def test_open_change_close_and_unsynced_documents(tmp_path: Path) -> None:
    docs = Documents()
    docs.open(types.TextDocumentItem(uri="untitled:Untitled-1", language_id="python", version=1, text="x"))
    assert docs.by_uri == {}  # not a file: nothing to track
    (tmp_path / "sub").mkdir()
    a, b = str(tmp_path / "a.py"), str(tmp_path / "sub" / "b.py")
    for path in (a, b):
        docs.open(types.TextDocumentItem(uri=from_fs_path(path), language_id="python", version=1, text="v1\n"))
    docs.change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=from_fs_path(str(tmp_path / "closed.py")), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="ignored\n")],
    ), "utf-16")
    assert set(docs.by_path) == {a, b}
    assert set(docs.snapshot(under=str(tmp_path / "sub"))) == {b}
    assert set(docs.snapshot(paths=[a, str(tmp_path / "other.py")])) == {a}
    docs.unsynced.add(a)
    with pytest.raises(StaleContent, match="a.py: the editor applied Takeback's last edit to it but has not sent its new text yet"):
        docs.require_synced([b, a])
    heard: list[str] = []
    docs.next_change[a] = [lambda doc: heard.append(doc.text)]
    docs.change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=from_fs_path(a), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="v2\n")],
    ), "utf-16")
    assert heard == ["v2\n"] and a not in docs.unsynced and docs.get(a).version == 2  # type: ignore[union-attr]
    docs.require_synced([a, b])  # synced again: no exception
    docs.close(from_fs_path(a))
    docs.close(from_fs_path(str(tmp_path / "never-open.py")))
    assert docs.get(a) is None and set(docs.snapshot()) == {b}
