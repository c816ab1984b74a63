"""The three-way file merge behind every revert (base = what the change produced, ours = now,
theirs = what it started from), table-driven."""

from __future__ import annotations

import pytest

from takeback.core.merge import Version, merge_file
from takeback.core.models import MODE_EXEC, MODE_FILE, MODE_LINK


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


def test_a_real_line_merge_says_merged_and_a_plain_take_does_not() -> None:
    assert merge_file(v("1\nB\n3\n4\n5\n"), v("1\nB\n3\n4\nP\n"), v("1\nb\n3\n4\n5\n")).merged
    assert not merge_file(v("a\nB\n"), v("a\nB\n"), v("a\nb\n")).merged


def test_neighbouring_edits_both_apply_where_git_would_conflict() -> None:
    result = merge_file(v("a\nB\nc\n"), v("a\nB\nC!\n"), v("a\nb\nc\n"))
    assert (result.conflict, result.result) == (None, v("a\nb\nC!\n"))


def test_markers_follow_a_crlf_files_line_endings() -> None:
    result = merge_file(v("a\r\nB\r\nc\r\n"), v("a\r\nX\r\nc\r\n"), v("a\r\nb\r\nc\r\n"),
                        label_theirs="before #2")
    assert result.markers == b"a\r\n<<<<<<< current\r\nX\r\n=======\r\nb\r\n>>>>>>> before #2\r\nc\r\n"


def test_markers_end_a_last_line_without_newline_so_each_marker_has_its_own_line() -> None:
    result = merge_file(v("a\nB"), v("a\nX"), v("a\nb"))
    assert result.markers == b"a\n<<<<<<< current\nX\n=======\nb\n>>>>>>> reverted\n"


def test_two_overlaps_are_counted_as_two_places() -> None:
    base = "1\nA\n3\n4\n5\n6\nB\n8\n"
    result = merge_file(v(base), v(base.replace("A", "X").replace("B", "Y")), v(base.replace("A", "a").replace("B", "b")))
    assert (result.conflict, result.hunks) == ("overlapping edits in 2 places", 2)


def test_conflict_keeps_the_file_as_it_is_now() -> None:
    result = merge_file(v("a\nB\nc\n"), v("a\nX\nc\n"), v("a\nb\nc\n"))
    assert result.result == v("a\nX\nc\n")


def test_binary_changed_on_one_side_only_takes_that_side() -> None:
    assert merge_file(v("\0B"), v("\0B"), v("\0b")).result == v("\0b")
    assert merge_file(v("\0B"), v("\0P"), v("\0B")).result == v("\0P")


def test_binary_conflict_has_no_markers() -> None:
    result = merge_file(v("\0B\n"), v("\0P\n"), v("\0b\n"))
    assert (result.markers, result.hunks) == (None, 0)


def test_deleted_since_and_deleted_by_the_revert_agree() -> None:
    assert merge_file(v("x\n"), None, None).result is None


def test_edited_since_when_the_revert_deletes_it_is_a_conflict() -> None:
    result = merge_file(v("made\n"), v("made, then edited\n"), None)
    assert (result.conflict, result.result, result.markers) == ("changed since, so it is not removed", v("made, then edited\n"), None)


def test_both_sides_changing_the_mode_differently_is_a_conflict() -> None:
    result = merge_file(v("x\n", MODE_FILE), v("x\n", MODE_EXEC), v("x\n", MODE_LINK))
    assert result.conflict == "its file mode changed on both sides"


def test_symlink_targets_are_never_line_merged() -> None:
    link = lambda target: v(target, MODE_LINK)  # noqa: E731
    assert merge_file(link("a"), link("a"), link("b")).result == link("b")
    assert merge_file(link("a"), link("c"), link("a")).result == link("c")
    assert merge_file(link("a"), link("c"), link("b")).conflict == "a symlink changed on both sides"


def test_labels_name_both_sides_in_the_markers() -> None:
    result = merge_file(v("B\n"), v("X\n"), v("b\n"), label_ours="yours", label_theirs="before #7")
    assert result.markers.startswith(b"<<<<<<< yours\n") and result.markers.endswith(b">>>>>>> before #7\n")


FORCED = [
    # name, base (the turn's result), ours (now), theirs (before the turn), what force writes
    ("one overlap, one clean later edit: the clean edit is kept",
     "a\nB\nc\nd\ne\nf\n", "a\nX\nc\nd\ne\nF!\n", "a\nb\nc\nd\ne\nf\n", "a\nb\nc\nd\ne\nF!\n"),
    ("two overlaps: the earlier side in both", "A\nm\nn\nB\n", "X\nm\nn\nY\n", "a\nm\nn\nb\n", "a\nm\nn\nb\n"),
    ("created, then extended: removed with what was added", "new\n", "new\nmore\n", None, None),
    ("deleted since: the earlier content comes back", "B\n", None, "b\n", "b\n"),
    ("binary: the earlier version whole", "\0B", "\0P", "\0b", "\0b"),
]


@pytest.mark.parametrize("name,base,ours,theirs,forced", FORCED, ids=[c[0] for c in FORCED])
def test_force_takes_the_earlier_side_only_where_it_conflicts(name: str, base, ours, theirs, forced) -> None:
    result = merge_file(v(base), v(ours), v(theirs))
    assert result.conflict is not None
    assert result.forced == v(forced)


def test_force_of_a_text_conflict_is_the_marker_file_with_the_earlier_side_chosen() -> None:
    """Property over small files: where markers would be written, force writes the 'theirs'
    block; everywhere else it writes what the markers file holds (the clean merge)."""
    base, ours, theirs = "1\n2\n3\n4\n5\n6\n7\n", "1\nX\n3\n4\n5\nY\n7\n", "1\nb\n3\n4\n5\n6\n7\n"
    result = merge_file(v(base), v(ours), v(theirs), label_ours="current", label_theirs="before #2")
    assert result.markers == b"1\n<<<<<<< current\nX\n=======\nb\n>>>>>>> before #2\n3\n4\n5\nY\n7\n"
    assert result.forced == v("1\nb\n3\n4\n5\nY\n7\n")
