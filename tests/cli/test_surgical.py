"""Taking back exactly what the person points at, from the command line: one step of a turn
(``revert '#N.k'``), the files a pathspec names (``revert N -- PATTERN…``) and one hunk
(``revert N --hunk PATH:LINE``); each three-way against the disk now, an entry of its own that
can be taken back, and a plan that names the later changes to the same files or lines.
Turns with steps are recorded through Claude Code's real hook payloads (``test_hooks.py``)."""

from __future__ import annotations

from helpers import git_state, tree_state, write_files

from .conftest import Snapshot, Takeback, expect_error
from .test_hooks import captured, hook

LINES = "".join(f"line {i}\n" for i in range(1, 21))


def _three_step_turn(tb: Takeback) -> int:
    """A turn of three steps on big.txt (lines 2, 10 and 18), the second also creating two.txt."""
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, prompt="three steps"))
    text = LINES
    for k, line in ((1, 2), (2, 10), (3, 18)):
        text = text.replace(f"line {line}\n", f"line {line} by step {k}\n")
        _write_step(tb, {"big.txt": text, **({"two.txt": "made by step 2\n"} if k == 2 else {})}, f"s{k}")
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = [e for e in tb.json("log") if e["kind"] == "turn"]
    return int(turn["number"])


def _write_step(tb: Takeback, files: dict[str, str], call: str) -> None:
    """One tool call that writes every file of ``files`` (a step: one checkpoint)."""
    repo = tb.cwd
    first = next(iter(files))
    fields = {"tool_name": "Write", "tool_use_id": call,
              "tool_input": {"file_path": str(repo / first), "content": files[first]}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **fields))
    write_files(repo, files)
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **fields))


def _states(tb: Takeback) -> dict[int, str]:
    return {e["number"]: e["state"] for e in tb.json("log")}


def test_reverting_the_middle_step_keeps_the_steps_around_it_and_the_persons_edit(tb: Takeback) -> None:
    ws = tb.cwd
    write_files(ws, {"big.txt": LINES})
    git_before = git_state(ws)
    n = _three_step_turn(tb)
    assert len(tb.json("show", str(n))["checkpoints"]) == 3
    # The person edits the same file after the turn, away from step 2's line.
    write_files(ws, {"big.txt": (ws / "big.txt").read_text().replace("line 15\n", "line 15 by the person\n")})
    before_revert = tree_state(ws)

    snap = Snapshot(tb)
    plan = tb.json("revert", f"#{n}.2", "--dry-run")
    snap.assert_unchanged()
    assert plan["verdict"] == "safe" and {o["path"]: o["action"] for o in plan["restored"]} == {
        "big.txt": "write", "two.txt": "delete"}
    assert "step #1.3 also changed big.txt after it" in plan["notices"]
    assert plan["next"][0]["step"] == f"{n}.2"

    result = tb.ok("revert", f"{n}.2")  # without '#' too
    assert result.text.splitlines()[0].startswith(f"SAFE: revert of #{n} done as #{n + 1}: 2 files changed")
    big = (ws / "big.txt").read_text()
    assert "line 10\n" in big and "by step 2" not in big
    for kept in ("line 2 by step 1", "line 18 by step 3", "line 15 by the person"):
        assert kept in big
    assert not (ws / "two.txt").exists()
    assert _states(tb)[n] == "partial"
    [entry] = [e for e in tb.json("log") if e["number"] == n + 1]
    assert entry["label"].startswith(f"revert step #{n}.2 of turn #{n}")
    assert result.text.endswith(f"next: 'takeback revert {n + 1}' takes this revert back\n")

    tb.ok("revert", str(n + 1))  # the step's revert taken back: exactly as before it
    assert tree_state(ws) == before_revert
    assert _states(tb)[n] == "applied"
    tb.ok("redo")  # and brought back again
    assert "line 10\n" in (ws / "big.txt").read_text() and _states(tb)[n] == "partial"
    assert git_state(ws) == git_before


def test_a_step_changed_since_in_the_same_lines_is_refused_and_forced_on_request(tb: Takeback) -> None:
    ws = tb.cwd
    write_files(ws, {"big.txt": LINES})
    n = _three_step_turn(tb)
    write_files(ws, {"big.txt": (ws / "big.txt").read_text().replace("line 10 by step 2\n", "line 10 by the person\n")})
    snap = Snapshot(tb)
    refused = tb(*("--json", "revert", f"#{n}.2"))
    assert refused.code == 11 and refused.json()["conflicts"][0]["path"] == "big.txt"
    assert f"'takeback revert {n}.2 --on-conflict force'" in refused.json()["next_action"]
    snap.assert_unchanged()
    assert tb("revert", f"#{n}.2", "--on-conflict", "skip").code == 10  # PARTIAL: only the clean file, two.txt
    assert not (ws / "two.txt").exists() and "line 10 by the person" in (ws / "big.txt").read_text()


def test_step_zero_and_a_missing_step_are_refused(tb: Takeback) -> None:
    write_files(tb.cwd, {"big.txt": LINES})
    n = _three_step_turn(tb)
    expect_error(tb("revert", f"#{n}.0"), 2, r"where turn #\d+ started, not one of its steps")
    expect_error(tb("revert", f"#{n}.4"), 3, r"has 3 checkpoints, not 4")


def _turn(tb: Takeback, files: dict[str, str], label: str) -> int:
    """One bracketed turn writing ``files``; its number."""
    tb.ok("begin", "--label", label)
    write_files(tb.cwd, files)
    tb.ok("end")
    return max(e["number"] for e in tb.json("log"))


def test_a_pathspec_takes_back_only_the_files_it_names(tb: Takeback) -> None:
    ws = tb.cwd
    n = _turn(tb, {"src/app.py": "def main():\n    return 2\n", "tests/test_a.py": "A = 1\n", "tests/deep/test_b.py": "B = 1\n",
                   "README.md": "# changed\n"}, "four files")
    snap = Snapshot(tb)
    plan = tb.json("revert", str(n), "--dry-run", "--", "src/app.py", "tests/**")
    snap.assert_unchanged()
    assert sorted(o["path"] for o in plan["restored"]) == ["src/app.py", "tests/deep/test_b.py", "tests/test_a.py"]
    assert plan["next"][0]["paths"] == ["src/app.py", "tests/**"]
    result = tb.ok("revert", str(n), "--", "src/app.py", "tests/**")
    assert result.text.startswith(f"SAFE: revert of #{n} done as #{n + 1}: 3 files changed")
    assert (ws / "src/app.py").read_text() == "def main():\n    return 1\n"
    assert not (ws / "tests").exists() and (ws / "README.md").read_text() == "# changed\n"
    assert _states(tb)[n] == "applied"  # the rest of the turn is still in place
    expect_error(tb("revert", str(n), "--", "docs/**"), 3, r"changed no file that docs/\*\* names \(it changed README.md")
    tb.ok("revert", str(n + 1))
    assert (ws / "tests/deep/test_b.py").read_text() == "B = 1\n"


def test_a_pathspec_on_one_step(tb: Takeback) -> None:
    ws = tb.cwd
    write_files(ws, {"big.txt": LINES})
    n = _three_step_turn(tb)
    tb.ok("revert", f"#{n}.2", "--", "two.txt")
    assert not (ws / "two.txt").exists() and "line 10 by step 2" in (ws / "big.txt").read_text()
    assert _states(tb)[n] == "partial"


APP = "".join(f"x{i} = {i}\n" for i in range(1, 61))


def test_one_hunk_is_taken_back_where_it_stands_now_and_the_rest_stays(tb: Takeback) -> None:
    ws = tb.cwd
    write_files(ws, {"src/app.py": APP})
    git_before = git_state(ws)
    changed = APP.replace("x5 = 5\n", "x5 = 'five'\n").replace("x40 = 40\n", "x40 = 'forty'\nx40b = 'new'\n")
    n = _turn(tb, {"src/app.py": changed}, "two hunks")
    # a later turn adds lines at the top (the hunk moves down by 2) and edits far from it
    later = "import os\nimport sys\n" + changed.replace("x55 = 55\n", "x55 = 'later'\n")
    m = _turn(tb, {"src/app.py": later}, "later")
    before_revert = tree_state(ws)
    snap = Snapshot(tb)
    refused = tb("--json", "revert", str(n), "--hunk", "src/app.py:20")
    assert refused.code == 2 and "lines 7 and 42-43" in refused.json()["message"]
    plan = tb.json("revert", str(n), "--hunk", "src/app.py:43", "--dry-run", "--patch")
    snap.assert_unchanged()
    assert f"turn #{m} also changed other lines of src/app.py after it" in plan["notices"]
    assert "-x40 = 'forty'\n-x40b = 'new'\n+x40 = 40\n" in plan["patch"]
    assert plan["next"][0]["hunk"] == "src/app.py:43"
    result = tb.ok("revert", str(n), "--hunk", "src/app.py:43")
    assert result.text.startswith(f"SAFE: revert of #{n} done as #{m + 1}: 1 file changed")
    assert (ws / "src/app.py").read_text() == later.replace("x40 = 'forty'\nx40b = 'new'\n", "x40 = 40\n")
    assert _states(tb)[n] == "applied"
    tb.ok("revert", str(m + 1))  # taken back exactly
    assert tree_state(ws) == before_revert
    assert git_state(ws) == git_before


def test_a_hunk_edited_since_is_a_conflict_and_a_later_turn_on_its_lines_is_named(tb: Takeback) -> None:
    ws = tb.cwd
    write_files(ws, {"src/app.py": APP})
    changed = APP.replace("x40 = 40\n", "x40 = 'forty'\n")
    n = _turn(tb, {"src/app.py": changed}, "one hunk")
    m = _turn(tb, {"src/app.py": changed.replace("x40 = 'forty'\n", "x40 = 'FORTY'\n")}, "on the same line")
    snap = Snapshot(tb)
    refused = tb("--json", "revert", str(n), "--hunk", "src/app.py:40")
    snap.assert_unchanged()
    data = refused.json()
    assert refused.code == 11 and data["conflicts"][0]["path"] == "src/app.py"
    assert f"turn #{m} also changed the lines of this hunk in src/app.py after it" in data["notices"]
    assert f"'takeback revert {n} --hunk src/app.py:40 --on-conflict markers'" in data["next_action"]


def test_a_binary_file_has_no_hunk(tb: Takeback) -> None:
    write_files(tb.cwd, {"logo.bin": "a\x00b\n"})
    n = _turn(tb, {"logo.bin": "a\x00c\n"}, "binary")
    expect_error(tb("revert", str(n), "--hunk", "logo.bin:1"), 2, r"logo.bin is binary .*take the whole file back")
    expect_error(tb("revert", str(n), "--hunk", "logo.bin"), 2, r"give a file and a line in it")


def test_the_hunk_of_a_file_the_turn_created_removes_it_as_the_whole_file_revert_does(tb: Takeback) -> None:
    """Found by the random sessions (``tests/core/test_properties_surgical.py``): a file the turn
    made is one hunk, and taking it back left an empty file; the file did not exist before the
    turn, so it goes, with the folder its making created; the revert's revert brings both back."""
    ws = tb.cwd
    write_files(ws, {"src/app.py": APP})
    n = _turn(tb, {"src/app.py": APP.replace("x3 = 3\n", "x3 = 'three'\n"), "src/made/new.py": "a = 1\r\nb = 2\r\nc = 3"}, "makes one")
    before_revert = tree_state(ws)
    result = tb.ok("revert", str(n), "--hunk", "src/made/new.py:2")
    assert result.text.startswith(f"SAFE: revert of #{n} done as #{n + 1}: 1 file changed")
    assert not (ws / "src/made").exists()
    assert "x3 = 'three'\n" in (ws / "src/app.py").read_text()  # the turn's other file stays
    tb.ok("revert", str(n + 1))
    assert tree_state(ws) == before_revert and (ws / "src/made").is_dir()
