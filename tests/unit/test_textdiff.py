"""Git-style diffs of one file (``core/textdiff.py``): a rename with a changed content, a mode
change alone and with a changed content carry git's extended headers in git's order; line counts
taken without a diff (lines only inserted or only removed in one place) are the differ's."""

from __future__ import annotations

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st

from takeback.core import textdiff
from takeback.core.models import MODE_EXEC, MODE_FILE
from takeback.core.textdiff import unified_diff


def test_a_renamed_and_changed_file_has_the_rename_headers_after_the_first_line() -> None:
    text = unified_diff("b.py", b"x = 1\n", b"x = 2\n", old_path="a.py")
    lines = text.splitlines()
    assert lines[:3] == ["diff --git a/a.py b/b.py", "rename from a.py", "rename to b.py"]
    assert "-x = 1" in lines and "+x = 2" in lines


def test_a_mode_change_alone_is_a_header_only_diff() -> None:
    text = unified_diff("run.sh", b"echo\n", b"echo\n", before_mode=MODE_FILE, after_mode=MODE_EXEC)
    assert text == "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"


def test_a_mode_change_with_new_content_has_both() -> None:
    lines = unified_diff("run.sh", b"echo\n", b"echo hi\n", before_mode=MODE_FILE, after_mode=MODE_EXEC).splitlines()
    assert lines[:3] == ["diff --git a/run.sh b/run.sh", "old mode 100644", "new mode 100755"]
    assert "-echo" in lines and "+echo hi" in lines


_LINES = st.lists(st.sampled_from([b"a\n", b"b\n", b"a", b"\n", b"c\r\n", b"a b\n", b""]), max_size=12)


@settings(max_examples=600, deadline=None)
@given(base=_LINES, middle=_LINES, cut=st.integers(0, 12), tail=st.sampled_from([b"", b"x", b"a", b"\n"]),
       edit=st.sampled_from(["insert", "delete", "replace", "append-to-line"]))
def test_line_counts_without_a_diff_are_the_differs(base, middle, cut, tail, edit) -> None:
    """Whatever the two sides, ``line_stats`` answers what libgit2's differ counts; the
    one-sided shortcut answers only when it applies, and then with the differ's counts."""
    short = b"".join(base) + tail
    i = min(cut, len(short))
    if edit == "insert":
        long = short[:i] + b"".join(middle) + short[i:]
    elif edit == "delete":
        long = short[:i] + short[i + len(b"".join(middle)):]
    elif edit == "replace":
        long = short[:i] + b"".join(middle) + short[i + 3:]
    else:
        long = short + b"".join(middle)
    for before, after in ((short, long), (long, short)):
        patch = pygit2.Patch.create_from(before, after)
        expected = patch.line_stats[1:]
        assert textdiff._line_stats(before, after) == expected, (before, after)
        shortcut = textdiff._one_sided(before, after)
        assert shortcut is None or shortcut == expected


_SCATTERED = st.lists(st.sampled_from([b"a\n", b"b\n", b"a  \n", b"\n", b"c\r\n", b"a b\n", b"x"]), max_size=40)


@settings(max_examples=600, deadline=None)
@given(before=_SCATTERED, after=_SCATTERED)
def test_line_counts_of_changes_all_over_a_file_are_the_differs(before: list[bytes], after: list[bytes]) -> None:
    """Changes in many places (a formatter's): the counts, taken without context lines, are
    those of the differ's patch with git's three."""
    old, new = b"".join(before), b"".join(after)
    assert textdiff._line_stats(old, new) == pygit2.Patch.create_from(old, new).line_stats[1:], (old, new)


def test_a_formatters_appended_line_and_a_removed_block_are_counted_without_a_diff() -> None:
    body = b"".join(b"line %d\n" % n for n in range(50))
    assert textdiff._one_sided(body, body + b"# formatted\n") == (1, 0)
    assert textdiff._one_sided(body, b"# header\n# two\n" + body) == (2, 0)
    cut = body.index(b"line 10\n"), body.index(b"line 20\n")
    assert textdiff._one_sided(body, body[: cut[0]] + body[cut[1] :]) == (0, 10)
    assert textdiff._one_sided(body, body[:75] + body[140:]) is None  # cut mid-line: the differ
    assert textdiff._one_sided(body, body.replace(b"line 7\n", b"line seven\n")) is None  # a changed line: the differ


@settings(max_examples=800, deadline=None)
@given(lines=st.lists(st.sampled_from([b"a\n", b"b\n", b"a", b"\n", b"c\r\n", b"a b\n", b""]), max_size=12),
       at=st.integers(0, 12), new=st.sampled_from([b"a\n", b"b\n", b"a", b"x\n", b"", b"\n", b"a b c\n", b"b"]))
def test_one_line_replaced_is_counted_as_the_differ_counts_it(lines: list[bytes], at: int, new: bytes) -> None:
    """A line replaced by another (or cut, or a line's end changed): the shortcut answers only
    when one line on each side differs, and the counts are then the differ's; ``_line_stats``
    always answers the differ's counts."""
    i = min(at, len(lines))
    before = b"".join(lines)
    after = b"".join(lines[:i] + [new] + lines[i + 1:])
    for old, changed in ((before, after), (after, before)):
        expected = pygit2.Patch.create_from(old, changed).line_stats[1:]
        assert textdiff._line_stats(old, changed) == expected, (old, changed)
        if old != changed and textdiff._one_line_each(old, changed):
            assert expected == (1, 1), (old, changed)


def test_a_formatters_new_stamp_is_one_line_each_without_a_diff() -> None:
    body = b"".join(b"line %d\n" % n for n in range(50))
    assert textdiff._one_line_each(b"# formatted 1\n" + body, b"# formatted 2\n" + body)
    assert textdiff._one_line_each(body, body.replace(b"line 7\n", b"line seven\n"))
    assert not textdiff._one_line_each(body, body.replace(b"line 7\n", b"7\n").replace(b"line 9\n", b"9\n"))
    assert not textdiff._one_line_each(body, body + b"tail")  # lines added at the end: the differ
