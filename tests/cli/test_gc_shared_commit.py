"""gc dropping an entry whose records share a log commit with one it keeps, with the real CLI.

An undo that ends the open turn first publishes that turn's records and its own in one commit.
Retention keeping only the newest entry (the undo) must rewrite that commit with the undo's
records alone, keeping the content blobs it names: the dropped turn is reported as dropped, and
the undo can still be redone byte for byte.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import write_files, write_user_config

from .conftest import Takeback, expect_error


def test_gc_rewrites_a_commit_shared_by_a_dropped_and_a_kept_entry(tb: Takeback) -> None:
    tb.ok("begin", "--label", "the turn")
    write_files(tb.cwd, {"src/app.py": "def main():\n    return 2\n"})
    tb.ok("undo")  # ends the turn and undoes it: one log commit for both
    (store,) = Path(tb.env["TAKEBACK_HOME"], "stores").iterdir()
    git_dir = str(store / "objects.git")
    assert subprocess.run(["git", "--git-dir", git_dir, "rev-list", "--count", "refs/takeback/oplog"], capture_output=True,
                          text=True, check=True).stdout.strip() == "1"
    write_user_config(tb.env["XDG_CONFIG_HOME"], "[retention]\nmax_entries = 1\n")
    assert "dropped 1 entries" in tb.ok("gc").text
    assert [item["number"] for item in tb.json("log")] == [2]
    expect_error(tb("show", "1"), 3, match="turn #1 was dropped by retention")
    tb.ok("redo")
    assert (tb.cwd / "src" / "app.py").read_text() == "def main():\n    return 2\n"
