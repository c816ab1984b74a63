"""Git-style diffs of one file (``core/textdiff.py``): a rename with a changed content, a mode
change alone and with a changed content carry git's extended headers in git's order."""

from __future__ import annotations

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
