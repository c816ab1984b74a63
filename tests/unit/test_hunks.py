"""The hunk planner (``core/hunks.py``): which hunk of a recorded change a line of the file now
points at, and the before' it makes; then the three-way merge every revert uses
(``core/merge.py``) with before' as the side taken back, as the operation does."""

from __future__ import annotations

import pytest

from takeback.core.hunks import hunks, take_back_hunk, touches
from takeback.core.merge import Version, merge_file
from takeback.errors import InvalidInput

BEFORE = "".join(f"line {i}\n" for i in range(1, 21))
# the change: line 3 edited, two lines added after line 10, line 18 removed
AFTER = (BEFORE.replace("line 3\n", "line 3 changed\n").replace("line 10\n", "line 10\nadded a\nadded b\n")
         .replace("line 18\n", ""))


def revert_hunk(before: str | bytes, after: str | bytes, now: str | bytes, line: int) -> tuple[bytes | None, str | None]:
    """The file after taking back the hunk at ``line`` of ``now`` (three-way: base = after,
    ours = now, theirs = before'), or the merge's conflict."""
    b, a, n = (x.encode() if isinstance(x, str) else x for x in (before, after, now))
    before2, _hunk = take_back_hunk(b, a, n, line, "f.txt")
    merged = merge_file(Version(a, 0o100644), Version(n, 0o100644), Version(before2, 0o100644))
    return (merged.result.content if merged.result else None), merged.conflict


def test_each_block_of_the_change_is_a_hunk_placed_in_the_file_now() -> None:
    found = hunks(BEFORE.encode(), AFTER.encode(), AFTER.encode())
    assert [h.shown for h in found] == ["3", "11-12", "19-20"]  # the removal: the lines on each side of it


@pytest.mark.parametrize("line", [11, 12])
def test_only_the_hunk_at_the_line_is_taken_back(line: int) -> None:
    result, conflict = revert_hunk(BEFORE, AFTER, AFTER, line)
    assert conflict is None
    assert result == AFTER.replace("added a\nadded b\n", "").encode()


def test_a_removal_comes_back_from_the_line_beside_it() -> None:
    for line in (19, 20):
        result, _ = revert_hunk(BEFORE, AFTER, AFTER, line)
        assert result == AFTER.replace("line 17\n", "line 17\nline 18\n").encode()


def test_a_hunk_moved_down_by_a_later_edit_above_it_is_found_where_it_is_now() -> None:
    now = AFTER.replace("line 1\n", "person 1\nperson 2\nperson 3\n")  # two lines more above every hunk
    with pytest.raises(InvalidInput, match=r"line 11 of f.txt is in none .* lines 5 and 13-14"):
        take_back_hunk(BEFORE.encode(), AFTER.encode(), now.encode(), 11, "f.txt")
    result, conflict = revert_hunk(BEFORE, AFTER, now, 13)
    assert conflict is None
    assert result == now.replace("added a\nadded b\n", "").encode()  # the person's lines stay


def test_a_hunk_that_grew_covers_the_lines_added_inside_it() -> None:
    now = AFTER.replace("added a\n", "added a\nperson inside\n")
    assert [h.shown for h in hunks(BEFORE.encode(), AFTER.encode(), now.encode())][1] == "11-13"
    before2, hunk = take_back_hunk(BEFORE.encode(), AFTER.encode(), now.encode(), 12, "f.txt")
    assert hunk.shown == "11-13" and before2 == AFTER.replace("added a\nadded b\n", "").encode()
    _result, conflict = revert_hunk(BEFORE, AFTER, now, 12)
    assert conflict is not None  # the person's line sits inside what is taken back: theirs to decide


def test_a_hunk_half_edited_since_is_a_conflict() -> None:
    now = AFTER.replace("added b\n", "added b, edited by the person\n")
    _result, conflict = revert_hunk(BEFORE, AFTER, now, 11)
    assert conflict is not None


def test_a_hunk_edited_since_elsewhere_in_the_file_merges() -> None:
    now = AFTER.replace("line 15\n", "line 15 by the person\n")
    result, conflict = revert_hunk(BEFORE, AFTER, now, 3)
    assert conflict is None
    assert result == now.replace("line 3 changed\n", "line 3\n").encode()


def test_crlf_lines_keep_their_endings() -> None:
    before, after = BEFORE.replace("\n", "\r\n"), AFTER.replace("\n", "\r\n")
    result, conflict = revert_hunk(before, after, after, 3)
    assert conflict is None
    assert result == after.replace("line 3 changed\r\n", "line 3\r\n").encode()


def test_no_final_newline() -> None:
    before = "a\nb\nc\nd"
    after = "a\nB\nc\nd\ne"  # b edited; e added after a last line that had no newline
    assert [h.shown for h in hunks(before.encode(), after.encode(), after.encode())] == ["2", "4-5"]
    result, conflict = revert_hunk(before, after, after, 5)
    assert conflict is None and result == b"a\nB\nc\nd"
    result, conflict = revert_hunk(before, after, after, 2)
    assert conflict is None and result == b"a\nb\nc\nd\ne"


def test_binary_files_are_refused_with_a_reason() -> None:
    with pytest.raises(InvalidInput, match=r"f.bin is binary .*take the whole file back"):
        take_back_hunk(b"a\x00b\n", b"a\x00c\n", b"a\x00c\n", 1, "f.bin")


def test_a_line_outside_every_hunk_names_the_nearest() -> None:
    with pytest.raises(InvalidInput, match=r"line 7 of f.txt is in none of the change's hunks; .*lines 3 and 11-12$"):
        take_back_hunk(BEFORE.encode(), AFTER.encode(), AFTER.encode(), 7, "f.txt")
    with pytest.raises(InvalidInput, match=r"counted from 1"):
        take_back_hunk(BEFORE.encode(), AFTER.encode(), AFTER.encode(), 0, "f.txt")


def test_a_later_change_touches_the_hunk_only_in_its_lines() -> None:
    before2, hunk = take_back_hunk(BEFORE.encode(), AFTER.encode(), AFTER.encode(), 11, "f.txt")
    assert before2
    on_it = AFTER.replace("added a\n", "added a, later\n")
    elsewhere = AFTER.replace("line 1\n", "line 1, later\n")
    assert touches(AFTER.encode(), hunk, AFTER.encode(), on_it.encode())
    assert not touches(AFTER.encode(), hunk, AFTER.encode(), elsewhere.encode())
    # a later change made after the person moved the hunk down still lands on it
    moved = "top\n" + AFTER
    assert touches(AFTER.encode(), hunk, moved.encode(), moved.replace("added b\n", "").encode())


def test_a_line_of_the_change_itself_names_its_hunk_wherever_the_file_has_moved() -> None:
    """``of="change"``: the line is one of the change's result (a diff view's right side), so
    lines the person added above since do not move it."""
    now = "".join(f"new top {i}\n" for i in range(5)) + AFTER
    before2, hunk = take_back_hunk(BEFORE.encode(), AFTER.encode(), now.encode(), 12, "f.txt", of="change")
    assert (hunk.new_start, hunk.new_end) == (10, 12) and hunk.shown == "16-17"  # lines 11-12 then, 16-17 now
    assert before2 == AFTER.replace("added a\nadded b\n", "").encode()
    removal = take_back_hunk(BEFORE.encode(), AFTER.encode(), now.encode(), 20, "f.txt", of="change")[0]
    assert removal == AFTER.replace("line 19\n", "line 18\nline 19\n").encode()
    with pytest.raises(InvalidInput, match=r"line 7 of f.txt as the change left it is in none of its hunks"):
        take_back_hunk(BEFORE.encode(), AFTER.encode(), now.encode(), 7, "f.txt", of="change")
