"""The server's text helpers: LSP line breaks, positions in UTF-8/16/32 with astral characters,
edits applied all at once, and the line edits that carry a revert into an open document."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from takeback.errors import InvalidInput
from takeback.lsp.documents import TextIndex, apply_text_edits, diff_edits, split_lines, units

ENCODINGS = ["utf-8", "utf-16", "utf-32"]


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def edit(l1: int, c1: int, l2: int, c2: int, text: str) -> types.TextEdit:
    return types.TextEdit(range=types.Range(start=pos(l1, c1), end=pos(l2, c2)), new_text=text)


def test_line_breaks_are_lsps_only() -> None:
    assert split_lines("a\r\nb\rc\nd\x0ce\u2028f") == ["a\r\n", "b\r", "c\n", "d\x0ce\u2028f"]
    index = TextIndex("a\r\nb\rc\n", "utf-16")
    assert [index.offset(pos(n, 0)) for n in range(4)] == [0, 3, 5, 7]
    assert index.offset(pos(0, 5)) == 1  # past the end of a line: its end, before the break


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_astral_characters_in_every_encoding(encoding: str) -> None:
    text = "x = '😀é'\n"
    index = TextIndex(text, encoding)
    after_emoji = units("x = '😀", encoding)
    assert after_emoji == {"utf-8": 9, "utf-16": 7, "utf-32": 6}[encoding]
    assert index.offset(pos(0, after_emoji)) == 6
    assert index.position(6) == pos(0, after_emoji)
    assert apply_text_edits(text, [edit(0, after_emoji, 0, after_emoji + units("é", encoding), "e")], encoding) == "x = '😀e'\n"


def test_edits_apply_all_at_once_and_overlaps_are_refused() -> None:
    text = "one\ntwo\n"
    assert apply_text_edits(text, [edit(1, 0, 1, 3, "TWO"), edit(0, 0, 0, 3, "ONE")], "utf-16") == "ONE\nTWO\n"
    assert apply_text_edits(text, [edit(0, 0, 0, 0, "a"), edit(0, 0, 0, 0, "b")], "utf-16") == "abone\ntwo\n"
    with pytest.raises(InvalidInput, match="overlap"):
        apply_text_edits(text, [edit(0, 0, 0, 3, "x"), edit(0, 2, 1, 1, "y")], "utf-16")
    with pytest.raises(InvalidInput, match="ends before it starts"):
        apply_text_edits(text, [edit(1, 0, 0, 0, "x")], "utf-16")


lines = st.lists(st.sampled_from(["a", "b", "😀", "é", "", "x = 1"]), max_size=6)
endings = st.sampled_from(["\n", "\r\n", "\r", ""])


@settings(max_examples=200, deadline=None)
@given(old=st.lists(st.tuples(lines.map("".join), endings)), new=st.lists(st.tuples(lines.map("".join), endings)),
       encoding=st.sampled_from(ENCODINGS))
def test_diff_edits_turn_old_into_new(old: list, new: list, encoding: str) -> None:
    a = "".join(t + e for t, e in old)
    b = "".join(t + e for t, e in new)
    assert apply_text_edits(a, diff_edits(a, b, encoding), encoding) == b
