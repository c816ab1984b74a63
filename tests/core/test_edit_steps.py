"""An edit step (a tool that names its files) checked against the disk: the files it named, and
what else changed while it ran — with a long-lived engine whose watch answers the common case
(only the named files touched) without a scan, and one with no watch."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import make_repo

from .support import open_engine


@pytest.mark.parametrize("long_lived", [True, False], ids=["watched", "unwatched"])
def test_an_edit_step_records_its_files_and_what_else_changed_while_it_ran(tmp_path: Path, long_lived: bool) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = open_engine(repo, long_lived=long_lived)
    try:
        engine.begin_turn(label="prompt", session="s", agent="claude", source="hook", bracket=False)
        for n in range(3):  # only the named file changes: recorded from its before-image
            engine.begin_step(f"only-{n}", ["src/app.py"], session="s", agent="claude")
            (repo / "src/app.py").write_text(f"def main():\n    return {n + 10}\n")
            entry = engine.end_step(f"only-{n}", "Edit src/app.py")
            assert entry is not None and [f.path for f in entry.files] == ["src/app.py"]
        engine.begin_step("more", ["src/app.py"], session="s", agent="claude")
        (repo / "src/app.py").write_text("def main():\n    return 99\n")
        (repo / "src/util.py").write_text("also written by the tool\n")
        (repo / "new.txt").write_text("and this\n")
        entry = engine.end_step("more", "Edit src/app.py")
        assert entry is not None
        assert sorted(f.path for f in entry.files) == ["new.txt", "src/app.py", "src/util.py"]
        assert any("named src/app.py but changed new.txt, src/util.py too" in n for n in entry.notices), entry.notices
        engine.end_turn(turn=entry.id, ended_by="stop")
        engine.undo()
        assert (repo / "src/app.py").read_text() == "def main():\n    return 1\n"
        assert (repo / "src/util.py").read_text() == "def helper(x):\n    return x * 2\n"
        assert not (repo / "new.txt").exists()
    finally:
        engine.close()
