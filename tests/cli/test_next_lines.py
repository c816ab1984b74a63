"""Every ``next:`` does exactly what it says: each operation's ``next_action`` (from ``--json``)
names commands; the test runs the one it advertises and checks its effect on the files on disk
and on ``takeback log --json``'s states is exactly what the text promised — over timelines where
``takeback undo`` or ``takeback redo`` would act on something else than the entry just made."""

from __future__ import annotations

import re
import shlex
from helpers import tree_state, write_files
from takeback.core import wording
from takeback.core.models import NextStep

from .conftest import Takeback

LINES = "".join(f"line {i}\n" for i in range(1, 11))


def turn(tb: Takeback, files: dict[str, str], label: str) -> None:
    tb.ok("begin", "--label", label)
    write_files(tb.cwd, files)
    tb.ok("end")


def advertised(next_action: str, option: str | None = None) -> list[str]:
    """The command the text names (quoted: 'takeback …'): the last one, which takes the
    operation back, or the one with ``option`` (``--on-conflict force``)."""
    found = re.findall(r"'(takeback [^']*)'", next_action)
    assert found, next_action
    if option is not None:
        found = [c for c in found if option in c]
        assert len(found) == 1, next_action
    words = shlex.split(found[-1])
    assert words[0] == "takeback"
    return words[1:]


def run(tb: Takeback, args: list[str], code: int = 0) -> dict:
    result = tb("--json", *args)
    assert result.code == code, str(result)
    answer = result.json()
    if "next_action" in answer:  # the steps an editor says its own way are the commands the text quotes
        steps = [wording.cli(NextStep.model_validate(step)) for step in answer["next"]]
        assert re.findall(r"'(takeback [^']*)'", answer["next_action"]) == steps, answer
    return answer


def states(tb: Takeback) -> dict[int, str]:
    return {e["number"]: e["state"] for e in tb.json("log")}


def three_turns(tb: Takeback) -> list[dict[str, bytes]]:
    """Turns #1, #2, #3 each creating a file; the tree before and after each."""
    trees = [tree_state(tb.cwd)]
    for n, name in enumerate(("one", "two", "three"), 1):
        turn(tb, {f"{name}.txt": f"{name}\n"}, f"turn {n}")
        trees.append(tree_state(tb.cwd))
    return trees


def test_undo_of_the_newest_then_the_advertised_redo_brings_exactly_it_back(tb: Takeback) -> None:
    trees = three_turns(tb)
    undone = tb.json("undo")
    assert undone["next_action"] == "'takeback redo' brings turn #3 back"
    redone = run(tb, advertised(undone["next_action"]))
    assert (redone["operation"], redone["target_number"]) == ("redo", 4)
    assert tree_state(tb.cwd) == trees[3]
    assert states(tb) == {1: "applied", 2: "applied", 3: "applied", 4: "reverted", 5: "applied"}
    # and the redo's own next: undo takes back turn #3 again, the newest applied turn
    assert redone["next_action"] == "'takeback undo' takes turn #3 away again"
    again = run(tb, advertised(redone["next_action"]))
    assert again["target_number"] == 3
    assert tree_state(tb.cwd) == trees[2]
    assert states(tb)[3] == "reverted"


def test_redo_of_an_older_turn_after_a_later_one_does_not_advertise_undo(tb: Takeback) -> None:
    turn(tb, {"one.txt": "one\n"}, "turn 1")
    tb.ok("undo")  # #2
    before_two = tree_state(tb.cwd)
    turn(tb, {"three.txt": "three\n"}, "turn 3")  # a later turn, the newest applied one
    with_three = tree_state(tb.cwd)
    redone = tb.json("redo")  # #4 brings turn #1 back
    assert redone["target_number"] == 2
    assert "'takeback undo'" not in redone["next_action"]  # undo would take back turn #3
    assert redone["next_action"] == "'takeback revert 4' takes this redo back"
    taken = run(tb, advertised(redone["next_action"]))
    assert (taken["operation"], taken["target_number"]) == ("revert", 4)
    assert tree_state(tb.cwd) == with_three and "one.txt" not in before_two
    assert states(tb) == {1: "reverted", 2: "applied", 3: "applied", 4: "reverted", 5: "applied"}


def test_redo_of_a_revert_of_an_older_turn_advertises_a_revert_of_the_redo(tb: Takeback) -> None:
    trees = three_turns(tb)
    tb.ok("revert", "1")  # #4
    redone = tb.json("redo")  # #5 brings #1 back; undo would take #3
    assert redone["next_action"] == "'takeback revert 5' takes this redo back"
    run(tb, advertised(redone["next_action"]))
    assert tree_state(tb.cwd) == {k: v for k, v in trees[3].items() if k != "one.txt"}
    assert states(tb) == {1: "reverted", 2: "applied", 3: "applied", 4: "applied", 5: "reverted", 6: "applied"}


def test_revert_of_a_middle_turn_then_its_advertised_revert(tb: Takeback) -> None:
    trees = three_turns(tb)
    reverted = tb.json("revert", "2")
    assert reverted["next_action"] == "'takeback revert 4' takes this revert back"
    assert "two.txt" not in tree_state(tb.cwd)
    run(tb, advertised(reverted["next_action"]))
    assert tree_state(tb.cwd) == trees[3]
    assert states(tb) == {1: "applied", 2: "applied", 3: "applied", 4: "reverted", 5: "applied"}


def test_restore_then_its_advertised_revert(tb: Takeback) -> None:
    trees = three_turns(tb)
    restored = tb.json("restore", "1")
    assert tree_state(tb.cwd) == trees[1]
    assert restored["next_action"] == "'takeback revert 4' takes this restore back"
    run(tb, advertised(restored["next_action"]))
    assert tree_state(tb.cwd) == trees[3]
    assert states(tb) == {1: "applied", 2: "applied", 3: "applied", 4: "reverted", 5: "applied"}


def test_a_stopped_restore_names_the_checkpoint_as_typed_and_its_force_does_that(tb: Takeback) -> None:
    trees = three_turns(tb)
    (tb.cwd / "two.txt").write_text("the person's\n")  # a file turn #2 created, changed since
    stopped = tb("--json", "restore", "1")
    assert stopped.code == 11, str(stopped)
    text = stopped.json()["next_action"]
    assert "'takeback restore 1.1 --on-conflict force'" in text and not re.search(r"[0-9A-Z]{26}", text)
    forced = run(tb, advertised(text, "--on-conflict force"), code=10)
    assert forced["verdict"] == "partial"  # it wrote over the person's edit, and says where
    assert tree_state(tb.cwd) == trees[1]  # as it was at #1.1, over the person's edit
    assert states(tb) == {1: "applied", 2: "reverted", 3: "reverted", 4: "applied"}


def test_markers_written_then_the_advertised_revert_takes_them_out(tb: Takeback) -> None:
    write_files(tb.cwd, {"lines.txt": LINES})
    turn(tb, {"lines.txt": LINES.replace("line 5\n", "agent 5\n")}, "agent")
    write_files(tb.cwd, {"lines.txt": LINES.replace("line 5\n", "person 5\n")})
    person = tree_state(tb.cwd)
    marked = run(tb, ["undo", "--on-conflict", "markers"], code=10)
    assert b"<<<<<<<" in (tb.cwd / "lines.txt").read_bytes()
    assert marked["next_action"] == "resolve the conflict markers in lines.txt; 'takeback revert 2' takes this back"
    run(tb, advertised(marked["next_action"]))
    assert tree_state(tb.cwd) == person
    assert states(tb) == {1: "applied", 2: "reverted", 3: "applied"}


def _undo_leaving_a_conflict(tb: Takeback) -> tuple[dict, dict[str, bytes]]:
    """Turn #1 edits lines.txt and creates clean.txt; the person edits line 5 too; an undo
    with skip takes back clean.txt and leaves lines.txt in conflict (#2)."""
    write_files(tb.cwd, {"lines.txt": LINES})
    turn(tb, {"lines.txt": LINES.replace("line 5\n", "agent 5\n"), "clean.txt": "agent\n"}, "agent")
    write_files(tb.cwd, {"lines.txt": LINES.replace("line 5\n", "person 5\n")})
    before = tree_state(tb.cwd)
    undone = run(tb, ["undo", "--on-conflict", "skip"], code=10)
    assert undone["next_action"] == (
        "lines.txt left in conflict: 'takeback revert 1 --on-conflict force' puts back the starting content where it "
        "overlaps your later edits (undoable); 'takeback redo' brings turn #1 back"
    )
    assert "clean.txt" not in tree_state(tb.cwd)
    return undone, before


def test_an_undo_that_left_a_conflict_advertises_a_redo_that_brings_the_turn_back(tb: Takeback) -> None:
    undone, before = _undo_leaving_a_conflict(tb)
    redone = run(tb, advertised(undone["next_action"]))
    assert (redone["operation"], redone["target_number"]) == ("redo", 2)
    assert tree_state(tb.cwd) == before
    assert states(tb) == {1: "applied", 2: "reverted", 3: "applied"}


def test_an_undo_that_left_a_conflict_advertises_a_force_that_puts_back_the_start(tb: Takeback) -> None:
    start = tree_state(tb.cwd)
    undone, before = _undo_leaving_a_conflict(tb)
    forced = run(tb, advertised(undone["next_action"], "--on-conflict force"), code=10)
    assert (forced["operation"], forced["target_number"], forced["verdict"]) == ("revert", 1, "partial")
    assert tree_state(tb.cwd) == {**start, "lines.txt": LINES.encode()}  # the starting content, over the person's edit
    assert states(tb) == {1: "reverted", 2: "applied", 3: "applied"}
    run(tb, advertised(forced["next_action"]))  # its own next: a revert of it puts the person's edit back
    assert (tb.cwd / "lines.txt").read_bytes() == before["lines.txt"]
