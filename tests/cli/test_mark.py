"""``takeback mark``: the person's own checkpoint, from the command line. A mark holds exactly
what changed on disk since the timeline last recorded it (not an agent's: no agent, no session),
its revert takes exactly that back and keeps the rest, ``restore`` goes back to it by number or
by ``mark:NAME``, a mark with no change is still a restore point, and ``log``, ``show`` and
``--json`` say which entries are marks. The user's git state is left alone throughout."""

from __future__ import annotations

from helpers import git_state, write_files

from .conftest import Takeback, expect_error


def agent_turn(tb: Takeback, files: dict[str, str], label: str, delete: tuple[str, ...] = ()) -> None:
    tb.ok("begin", "--label", label)
    write_files(tb.cwd, files)
    for rel in delete:
        (tb.cwd / rel).unlink()
    tb.ok("end")


def test_a_mark_holds_the_persons_edits_and_its_revert_takes_exactly_those_back(tb: Takeback) -> None:
    ws = tb.cwd
    git_before = git_state(ws)
    agent_turn(tb, {"src/app.py": "def main():\n    return 2\n", "new.txt": "agent's\n"}, "agent work", delete=("src/util.py",))
    # the person: edits a file the agent wrote, deletes one, puts back one the agent deleted;
    # a file no entry ever recorded is not theirs to claim (no known earlier state)
    write_files(ws, {"src/app.py": "def main():\n    return 3  # mine\n", "src/util.py": "mine again\n",
                     "untouched.txt": "never recorded\n"})
    (ws / "new.txt").unlink()
    mark = tb.json("mark", "before the refactor", "--json")
    assert mark["kind"] == "mark" and mark["label"] == "before the refactor" and mark["number"] == 2
    assert mark["agent"] is None and mark["session"] is None and mark["state"] == "applied"
    assert {f["path"]: f["kind"] for f in mark["files"]} == {"src/app.py": "modified", "new.txt": "deleted", "src/util.py": "added"}
    assert [cp["label"] for cp in mark["checkpoints"]] == ["the person's changes since the last entry"]

    # a later agent turn on another file stays when the mark is taken back
    agent_turn(tb, {"README.md": "# demo\nagent's line\n"}, "docs")
    tb.ok("revert", "2")
    assert (ws / "src/app.py").read_text() == "def main():\n    return 2\n"  # the agent's, as the person found it
    assert (ws / "new.txt").read_text() == "agent's\n" and not (ws / "src/util.py").exists()
    assert (ws / "README.md").read_text() == "# demo\nagent's line\n"
    assert (ws / "untouched.txt").read_text() == "never recorded\n"
    # the revert is an entry like any other: taking it back brings the person's edits again
    tb.ok("revert", "4")
    assert (ws / "src/app.py").read_text() == "def main():\n    return 3  # mine\n"
    assert (ws / "src/util.py").read_text() == "mine again\n" and not (ws / "new.txt").exists()
    assert git_state(ws) == git_before


def test_a_marks_revert_is_three_way(tb: Takeback) -> None:
    ws = tb.cwd
    agent_turn(tb, {"a.txt": "".join(f"line {i}\n" for i in range(1, 11))}, "agent")
    write_files(ws, {"a.txt": "".join(f"line {i}\n" for i in range(1, 11)).replace("line 2\n", "line 2 mine\n")})
    tb.ok("mark", "mine")
    # after the mark, the person edits the same file elsewhere: the revert keeps that edit
    (ws / "a.txt").write_text((ws / "a.txt").read_text().replace("line 9\n", "line 9 later\n"))
    tb.ok("revert", "mark:mine")
    assert (ws / "a.txt").read_text() == "".join(f"line {i}\n" for i in range(1, 11)).replace("line 9\n", "line 9 later\n")


def test_restore_to_a_mark_by_name_or_number_and_an_empty_mark_is_a_restore_point(tb: Takeback) -> None:
    ws = tb.cwd
    agent_turn(tb, {"a.txt": "one\n"}, "first")
    empty = tb.json("mark", "clean", "--json")
    assert empty["files"] == [] and len(empty["checkpoints"]) == 1
    agent_turn(tb, {"a.txt": "two\n", "b.txt": "b\n"}, "second")
    write_files(ws, {"a.txt": "two, and mine\n"})
    tb.ok("mark", "after second")
    agent_turn(tb, {"c.txt": "c\n"}, "third")

    tb.ok("restore", "mark:after second")  # the state the newest mark of that name recorded
    assert (ws / "a.txt").read_text() == "two, and mine\n" and (ws / "b.txt").exists() and not (ws / "c.txt").exists()
    tb.ok("restore", f"#{empty['number']}")  # the mark's number: the empty one is a restore point too
    assert (ws / "a.txt").read_text() == "one\n" and not (ws / "b.txt").exists()
    expect_error(tb("revert", str(empty["number"])), 4, match="holds no file change")
    expect_error(tb("restore", "mark:no such mark"), 3, match="no mark named")


def test_log_and_show_name_the_marks(tb: Takeback) -> None:
    ws = tb.cwd
    agent_turn(tb, {"a.txt": "agent\n"}, "agent work")
    write_files(ws, {"a.txt": "person\n"})
    tb.ok("mark", "my checkpoint")
    log = tb.ok("log").text.splitlines()
    assert "#2" in log[0] and " mark " in log[0] and log[0].endswith("my checkpoint") and "1 file" in log[0]
    assert " turn " in log[1]
    shown = tb.ok("show", "2").text
    assert "modified  a.txt  +1 -1" in shown
    assert "mark   your own checkpoint: 'takeback restore 2' goes back to it, 'takeback revert 2' takes back the file you changed" in shown
    entries = tb.json("log", "--json")
    assert [e["kind"] for e in entries] == ["mark", "turn"]
    # an empty mark is listed (it is no empty turn) and counted by status like any entry
    tb.ok("mark")
    assert [e["kind"] for e in tb.json("log", "--json")] == ["mark", "mark", "turn"]
    assert tb.json("status", "--json")["entries"] == 3


def test_a_mark_waits_for_an_open_bracket(tb: Takeback) -> None:
    tb.ok("begin", "--label", "agent at work")
    write_files(tb.cwd, {"a.txt": "agent\n"})
    expect_error(tb("mark", "now"), 5, match="turn #1 is open")
    end = tb.json("end", "--json")
    assert [f["path"] for f in end["files"]] == ["a.txt"]  # the bracket's, not a mark's


def test_undo_takes_back_the_last_agent_turn_never_a_mark(tb: Takeback) -> None:
    ws = tb.cwd
    (ws / "src/app.py").write_text("def main():\n    return 1\n\n\ndef other():\n    return 0\n")
    agent_turn(tb, {"src/app.py": "def main():\n    return 2\n\n\ndef other():\n    return 0\n"}, "agent work")
    (ws / "src/app.py").write_text("def main():\n    return 2\n\n\ndef other():\n    return 0  # mine\n")
    mark = tb.json("mark", "mine", "--json")
    undo = tb.json("undo", "--dry-run")
    assert undo["target_number"] == 1 and mark["number"] == 2
    tb.ok("undo")
    assert (ws / "src/app.py").read_text() == "def main():\n    return 1\n\n\ndef other():\n    return 0  # mine\n"
    assert {e["number"]: e["state"] for e in tb.json("log")}[2] == "applied"  # the mark stays as it was
