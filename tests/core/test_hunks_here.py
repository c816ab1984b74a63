"""``Engine.hunks_at``: which past turns' and marks' hunks lines of a file still hold as it stands
now (``engine/hunks_here.py``), and that the line it names for each is the hunk ``revert`` then
takes back (one rule, two users). Real repositories, the real engine."""

from __future__ import annotations

from pathlib import Path

from helpers import make_repo
from takeback.core.hunks import HunkAt
from takeback.core.merge import Version

from .support import open_engine

APP = "def main():\n    return 1\n\n\ndef other():\n    return 2\n"


def test_turns_and_marks_newest_first_and_each_named_line_is_the_hunk_revert_takes(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"src/app.py": APP})
    app = ws / "src/app.py"
    engine = open_engine(ws)
    engine.begin_turn(label="ten")
    app.write_text(APP.replace("return 1", "return 10"))
    engine.end_turn()
    app.write_text(APP.replace("return 1", "return 10").replace("return 2", "return 20"))  # the person
    mark = engine.mark("mine")
    assert mark.kind == "mark"

    assert [(h.kind, h.number, h.label, h.first, h.last) for h in engine.hunks_at(str(app), 1, 6)] == [
        ("mark", 2, "mine", 6, 6), ("turn", 1, "ten", 2, 2)]
    assert engine.hunks_at(str(app), 3, 5) == []
    assert [h.number for h in engine.hunks_at(str(app), 1, 6, entries=1)] == [2]

    # the person's buffer, two lines added above: the lines move, and each named line is the hunk
    now = b"# note\n\n" + app.read_bytes()
    found = engine.hunks_in(str(app), now)
    assert [(h.number, h.first, h.line) for h in found] == [(2, 8, 8), (1, 4, 4)]
    takes = {2: ("-    return 20\n+    return 2\n", "return 10"), 1: ("-    return 10\n+    return 1\n", "return 20")}
    for hunk in found:
        plan = engine.revert(hunk.entry, dry_run=True, hunk=HunkAt(str(app), hunk.line), overlay={str(app): Version(now, 0o100644)})
        this, other = takes[hunk.number]
        assert this in plan.patch and other not in plan.patch, plan.patch

    # taken back (by hand here): not offered; a revert entry is never offered itself
    engine.revert("1", hunk=HunkAt(str(app), 2))
    assert app.read_text() == APP.replace("return 2", "return 20")
    assert [h.number for h in engine.hunks_at(str(app), 1, 6)] == [2]

