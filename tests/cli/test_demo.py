"""``takeback demo`` (the README's first command): the scripted session runs to its end, every
verdict it shows is the one its story tells, and the throw-away repository's git state is kept."""

from __future__ import annotations

import re
from pathlib import Path

from .conftest import Takeback, isolated_env


def _demo(tmp_path: Path) -> Takeback:
    env = isolated_env(tmp_path / "env")
    env["TMPDIR"] = str(tmp_path)  # the demo's throw-away folder lands here, not in /tmp
    return Takeback(tmp_path, env)


def test_the_demo_tells_its_story_with_the_verdicts_it_promises(tmp_path: Path) -> None:
    data = _demo(tmp_path).json("demo")
    assert data["git_state_unchanged"] is True
    results = [(e["result"]["operation"], e["result"]["verdict"], e["result"]["target_number"]) for e in data["events"] if "result" in e]
    assert results == [("undo", "safe", 3), ("redo", "safe", 4), ("revert", "safe", 2), ("revert", "refused", 1), ("revert", "partial", 1)]
    refused, partial = [e["result"] for e in data["events"] if "result" in e][3:]
    assert refused["applied"] is False and [c["path"] for c in refused["conflicts"]] == ["utils.py"]
    assert [r["path"] for r in partial["restored"]] == ["tests/test_utils.py"]
    timelines = [[t["kind"] for t in e["timeline"]] for e in data["events"] if "timeline" in e]
    assert timelines == [["turn"] * 3, ["revert", "revert", "redo", "undo", "turn", "turn", "turn"]]
    guarded = [e["guard"] for e in data["events"] if "guard" in e]
    assert [g["command"] for g in guarded] == ["pytest -q", "git reset --hard HEAD~1"]
    assert guarded[0]["answer"] is None  # ordinary work: no question
    assert guarded[1]["answer"]["permissionDecision"] == "ask"  # the guard asks once, in Claude Code's own answer
    assert "this resets the branch main to HEAD~1" in guarded[1]["answer"]["permissionDecisionReason"]
    assert not list(tmp_path.glob("takeback-demo-*")), "the demo folder is removed"


def test_the_demo_in_a_terminal_prints_each_step_and_keeps_its_folder_when_asked(tmp_path: Path) -> None:
    out = _demo(tmp_path).ok("demo", "--keep").text
    titles = re.findall(r"^(\d+)\. ", out, flags=re.M)
    assert titles == [str(n) for n in range(1, 14)]
    assert "REFUSED: revert of #1 refused" in out and "nothing was written" in out
    assert "git reset --hard HEAD~1: Claude Code asks the person (ask):" in out
    assert "   | def main():" in out  # a file shown after the undo
    assert out.rstrip().splitlines()[-2].endswith("byte-identical: yes")
    kept = re.search(r"kept (\S+); try: takeback -C (\S+) log", out)
    assert kept is not None and Path(kept[1]).parent == tmp_path
    assert (Path(kept[2]) / "logging.ini").is_file() and (Path(kept[1]) / "store").is_dir()
