"""The three-way file merge behind every revert (base = what the change produced, ours = now,
theirs = what it started from), table-driven."""

from __future__ import annotations

import pytest

from takeback.merge import Version, merge_file
from takeback.models import MODE_EXEC, MODE_FILE


def v(text: str | None, mode: int = MODE_FILE) -> Version | None:
    return None if text is None else Version(text.encode(), mode)


CLEAN = [
    # (name, base, ours, theirs, expected)
    ("untouched since: take theirs", "a\nB\nc\n", "a\nB\nc\n", "a\nb\nc\n", "a\nb\nc\n"),
    ("already as theirs", "a\nB\nc\n", "a\nb\nc\n", "a\nb\nc\n", "a\nb\nc\n"),
    ("far apart", "1\nB\n3\n4\n5\n", "1\nB\n3\n4\nP\n", "1\nb\n3\n4\n5\n", "1\nb\n3\n4\nP\n"),
    ("person adds the line right after", "a\nB\nc\n", "a\nB\nperson\nc\n", "a\nb\nc\n", "a\nb\nperson\nc\n"),
    ("person edits the line right before", "a\nB\nc\n", "A!\nB\nc\n", "a\nb\nc\n", "A!\nb\nc\n"),
    ("person deletes the next line", "a\nB\nc\nd\n", "a\nB\nd\n", "a\nb\nc\nd\n", "a\nb\nd\n"),
    ("crlf kept", "a\r\nB\r\nc\r\n", "a\r\nB\r\nc\r\nP\r\n", "a\r\nb\r\nc\r\n", "a\r\nb\r\nc\r\nP\r\n"),
    ("created, unchanged: removed", "new\n", "new\n", None, None),
    ("deleted, still absent: comes back", None, None, "old\n", "old\n"),
]


@pytest.mark.parametrize("name,base,ours,theirs,expected", CLEAN, ids=[c[0] for c in CLEAN])
def test_clean_merges(name: str, base, ours, theirs, expected) -> None:
    result = merge_file(v(base), v(ours), v(theirs))
    assert result.conflict is None
    assert result.result == v(expected)


CONFLICTS = [
    ("same line changed", "a\nB\nc\n", "a\nX\nc\n", "a\nb\nc\n", "overlapping edits in 1 place"),
    ("both insert at one spot", "a\nc\n", "a\nP\nc\n", "a\nT\nc\n", "overlapping edits in 1 place"),
    ("created file changed since", "new\n", "new, edited\n", None, "changed since, so it is not removed"),
    ("recreated differently", None, "mine\n", "old\n", "created on both sides with different content"),
    ("deleted since", "B\n", None, "b\n", "deleted since, but the revert would change it"),
    ("binary changed since", "\0B", "\0P", "\0b", "binary file changed since; it cannot be merged"),
]


@pytest.mark.parametrize("name,base,ours,theirs,reason", CONFLICTS, ids=[c[0] for c in CONFLICTS])
def test_conflicts_keep_ours_and_say_why(name: str, base, ours, theirs, reason: str) -> None:
    result = merge_file(v(base), v(ours), v(theirs))
    assert result.conflict == reason
    assert result.result == v(ours)


def test_markers_show_both_sides() -> None:
    result = merge_file(v("a\nB\nc"), v("a\nX\nc"), v("a\nb\nc"), label_ours="current", label_theirs="before #3")
    assert result.markers == b"a\n<<<<<<< current\nX\n=======\nb\n>>>>>>> before #3\nc"
    assert result.hunks == 1


def test_mode_merges_apart_from_content() -> None:
    result = merge_file(v("x\n", MODE_EXEC), v("x\nP\n", MODE_EXEC), v("x\n", MODE_FILE))
    assert result.result == v("x\nP\n", MODE_FILE)
    assert merge_file(v("x\n", MODE_EXEC), v("y\n", MODE_FILE), v("z\n", MODE_FILE)).conflict
