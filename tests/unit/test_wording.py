"""The words of an answer: the verdict, the tail of its message, each conflict's advice, the
"next" safe action, operation labels (``operations.py``'s message builders) and the CLI's
lines (``render.py``). Plans, entries and results are built by hand."""

from __future__ import annotations

import re

import pytest

from takeback.core import planning, render, wording
from takeback.core.merge import Version
from takeback.core.models import (
    MODE_FILE,
    Check,
    Checkpoint,
    Conflict,
    DroppedSpan,
    Entry,
    FileChange,
    FileOutcome,
    GcReport,
    NextStep,
    OperationResult,
    SkippedFile,
    check_on_conflict,
)
from takeback.core.planning import PathPlan, Plan
from takeback.errors import InvalidInput, NotFound

from .build import START, Log, change

UNDO = wording.step("undo", 4, None, done=False)
REVERT_4 = wording.step("undo", 4, None, done=True)
FORCE = "'takeback undo --on-conflict force' puts back the starting content where it overlaps your later edits (undoable)"


def clean(path: str = "a.txt") -> PathPlan:
    """A path the plan writes cleanly."""
    return PathPlan(path, Version(b"new\n", MODE_FILE), Version(b"old\n", MODE_FILE))


def skipped(path: str = ".env", blocked: bool = False) -> PathPlan:
    return PathPlan(path, None, None, skipped="secret file: its content is not stored", blocked=blocked)


def conflicted(path: str = "b.txt", markers_possible: bool = True, binary: bool = False,
               markers_written: bool = False) -> PathPlan:
    ours = Version(b"mine\n", MODE_FILE)
    conflict = Conflict(path=path, reason="overlapping edits in 1 place", markers_possible=markers_possible,
                        binary=binary, markers_written=markers_written)
    result = Version(b"<<<<<<< current\n", MODE_FILE) if markers_written else Version(ours.content, ours.mode)
    return PathPlan(path, ours, result, conflict=conflict)


def forced(path: str = "c.txt") -> PathPlan:
    conflict = Conflict(path=path, reason="forced: overlapping edits in 1 place; your version is kept in this operation's checkpoint")
    return PathPlan(path, Version(b"mine\n", MODE_FILE), Version(b"old\n", MODE_FILE), conflict=conflict, forced=True)


def entry(number: int = 5, kind: str = "undo", target_number: int | None = 4, **fields) -> Entry:
    return Entry(id=f"01ENTRY{number:019d}", number=number, kind=kind, created_at=START, target_number=target_number, **fields)


# ------------------------------------------------------------------ verdicts


@pytest.mark.parametrize("paths,verdict", [
    ([clean()], "safe"),
    ([], "safe"),
    ([clean(), forced()], "partial"),
    ([clean(), skipped()], "partial"),
    ([clean(), conflicted(markers_written=True)], "partial"),
    ([clean(), conflicted()], "partial"),
    ([skipped()], "refused"),
    ([conflicted()], "refused"),
], ids=["clean", "nothing", "forced over later edits is not safe", "skipped", "markers", "left in conflict", "only skipped", "only conflict"])
def test_verdict_safe_partial_refused(paths: list[PathPlan], verdict: str) -> None:
    assert wording.verdict(Plan(paths=paths)) == verdict


def test_tail_counts_each_kind_of_trouble() -> None:
    plan = Plan(paths=[clean(), skipped(), conflicted("m", markers_written=True), forced(), conflicted("x")])
    assert wording.tail(plan) == " (1 skipped, conflict markers written in 1, written over later edits in c.txt, 1 left in conflict)"


def test_tail_is_empty_for_a_clean_plan() -> None:
    assert wording.tail(Plan(paths=[clean()])) == ""


def test_notes_tail_points_at_show_when_the_target_has_notes() -> None:
    log = Log()
    turn = log.begin()
    log.checkpoint(turn, change("a", "1", "2"), notices=["a.bin over the size cap", "x skipped"])
    log.checkpoint(turn, change("a", "2", "3"), notices=["x skipped"])
    state = log.fold().entries[turn]
    assert wording.notes_tail(state) == "; #1 has 2 note(s) on what it did not record or store (takeback show 1)"


def test_notes_tail_is_empty_without_notes() -> None:
    log = Log()
    turn = log.turn(change("a", "1", "2"))
    assert wording.notes_tail(log.fold().entries[turn]) == ""


# ------------------------------------------------------------------ conflict advice


def test_advice_for_a_conflict_that_can_take_markers_offers_markers_and_force() -> None:
    plan = Plan(paths=[conflicted()])
    wording.advise(plan, "takeback undo")
    assert plan.conflicts[0].advice == "'takeback undo --on-conflict markers' writes conflict markers into it; " + FORCE


def test_advice_for_a_binary_conflict_says_why_markers_cannot_go_in() -> None:
    plan = Plan(paths=[conflicted(markers_possible=False, binary=True)])
    wording.advise(plan, "takeback undo")
    assert plan.conflicts[0].advice == f"conflict markers cannot be written into it (it is binary); {FORCE}, or leave it as it is"


def test_advice_for_a_text_conflict_without_markers_offers_skip_when_other_files_are_clean() -> None:
    plan = Plan(paths=[clean(), conflicted(markers_possible=False)])
    wording.advise(plan, "takeback undo")
    assert plan.conflicts[0].advice == (
        "conflict markers cannot be written into it (only a text file both sides edited can take them); "
        f"{FORCE}, or leave it as it is ('takeback undo --on-conflict skip' changes only the clean files)"
    )


def test_advice_once_done_no_longer_offers_skip() -> None:
    plan = Plan(paths=[clean(), conflicted(markers_possible=False)])
    wording.advise(plan, "takeback undo", done=True)
    assert plan.conflicts[0].advice.endswith(", or it is left as it is")


def test_advice_for_written_markers_is_to_resolve_them_and_forced_gets_none() -> None:
    plan = Plan(paths=[conflicted(markers_written=True), forced()])
    wording.advise(plan, "takeback undo")
    assert [c.advice for c in plan.conflicts] == ["resolve the conflict markers (<<<<<<< … >>>>>>>) in it by hand", ""]


def test_next_action_with_nothing_written_lists_only_the_ways_that_work() -> None:
    plan = Plan(paths=[clean(), conflicted("m.txt"), conflicted("bin", markers_possible=False, binary=True)])
    assert wording.conflict_advice(UNDO, plan).text == (
        "nothing was written; choose: 'takeback undo --on-conflict skip' changes only the 1 clean file; "
        "'takeback undo --on-conflict markers' writes conflict markers into m.txt (the others cannot take markers) "
        f"to resolve by hand; {FORCE}"
    )


def test_next_action_with_nothing_written_and_no_clean_file_offers_no_skip() -> None:
    text = wording.conflict_advice(UNDO, Plan(paths=[conflicted()])).text
    assert text == f"nothing was written; choose: 'takeback undo --on-conflict markers' writes conflict markers to resolve by hand; {FORCE}"


def test_next_action_when_only_skipped_files_stand_in_the_way() -> None:
    assert wording.conflict_advice(UNDO, Plan(paths=[skipped()])).text == "nothing can be done automatically; the skipped files list why"


# ------------------------------------------------------------------ the next safe action once done


REDO_IT = wording.TakeBack("redo", None, "brings turn #4 back")


@pytest.mark.parametrize("back,expected", [
    (REDO_IT, "'takeback redo' brings turn #4 back"),
    (wording.TakeBack("undo", None, "takes turn #4 away again"), "'takeback undo' takes turn #4 away again"),
    (wording.TakeBack("revert", 5, "takes this redo back"), "'takeback revert 5' takes this redo back"),
])
def test_next_action_names_what_takes_the_operation_back(back: wording.TakeBack, expected: str) -> None:
    assert wording.next_action(entry(), Plan(paths=[clean()]), REVERT_4, back).text == expected


def test_next_action_after_markers_says_resolve_them_and_how_to_take_it_back() -> None:
    plan = Plan(paths=[clean(), conflicted("m.txt", markers_written=True)])
    assert wording.next_action(entry(), plan, REVERT_4, REDO_IT).text == (
        "resolve the conflict markers in m.txt; 'takeback revert 5' takes this back"
    )


def test_next_action_names_what_was_left_in_conflict_first() -> None:
    plan = Plan(paths=[clean(), conflicted("m.txt")])
    assert wording.next_action(entry(), plan, REVERT_4, REDO_IT).text == (
        "m.txt left in conflict: 'takeback revert 4 --on-conflict force' puts back the starting content where it overlaps your "
        "later edits (undoable); 'takeback redo' brings turn #4 back"
    )


def test_next_action_names_blocked_files_and_the_command_that_takes_them_back() -> None:
    plan = Plan(paths=[clean(), skipped("ro/a.txt", blocked=True)])
    assert wording.next_action(entry(), plan, REVERT_4, REDO_IT).text.startswith(
        "ro/a.txt skipped: once what stands in the way is fixed, 'takeback revert 4' takes them back too; "
    )


# ------------------------------------------------------------------ the steps beside the sentence


def _quoted(text: str) -> list[str]:
    return re.findall(r"'(takeback [^']*)'", text)


PLANS = [
    [clean()], [conflicted()], [clean(), conflicted()], [clean(), conflicted("m.txt"), conflicted("bin", markers_possible=False)],
    [clean(), conflicted(markers_written=True)], [clean(), skipped("ro", blocked=True)], [skipped("ro", blocked=True)],
    [skipped("ro", blocked=True), skipped("ro2", blocked=True)], [clean(), forced()], [skipped()],
    [clean(), conflicted("m.txt"), skipped("ro", blocked=True), conflicted("k.txt", markers_written=True)],
]
AGAIN = [wording.step("undo", 4, None, False), wording.step("redo", 4, None, False), wording.step("revert", 4, None, False),
         wording.step("restore", 3, "3.1", False)]
BACKS = [REDO_IT, wording.TakeBack("undo", None, "takes turn #4 away again"), wording.TakeBack("revert", 5, "takes this back")]


@pytest.mark.parametrize("paths", PLANS)
@pytest.mark.parametrize("again", AGAIN, ids=wording.cli)
def test_every_advice_quotes_exactly_its_steps_in_order(paths: list[PathPlan], again: NextStep) -> None:
    """One owner: the sentence (the CLI's words) and the steps (each client's) are built from
    the same values, so what one client offers, every other offers too."""
    plan = Plan(paths=paths)
    advices = [wording.conflict_advice(again, plan), wording.next_action(entry(), plan, again, BACKS[0])]
    if plan.blocked:
        advices.append(wording.blocked_advice(again, plan))
    advices += [wording.next_action(entry(), plan, again, back) for back in BACKS[1:]]
    for advice in advices:
        assert _quoted(advice.text) == [wording.cli(s) for s in advice.steps]
        assert all(step.does for step in advice.steps)


def test_steps_say_the_command_its_number_and_its_choice() -> None:
    plan = Plan(paths=[clean(), conflicted("m.txt")])
    advice = wording.conflict_advice(wording.step("revert", 7, None, False), plan)
    assert [(s.command, s.number, s.on_conflict) for s in advice.steps] == [
        ("revert", 7, "skip"), ("revert", 7, "markers"), ("revert", 7, "force")
    ]
    assert advice.steps[0].does == "changes only the 1 clean file"
    done = wording.next_action(entry(), Plan(paths=[clean()]), REVERT_4, REDO_IT)
    assert done.steps == [NextStep(command="redo", does="brings turn #4 back")]
    restore = wording.dry_run_advice(wording.step("restore", 3, "3.1", False), "skip")
    assert restore.steps == [NextStep(command="restore", checkpoint="3.1", on_conflict="skip", does="carries it out")]
    assert wording.cli(restore.steps[0]) == "takeback restore 3.1 --on-conflict skip"


def _take_back(log: Log, done: str, undo_next: str | None = None, redo_next: str | None = None) -> wording.TakeBack:
    timeline = log.fold()
    return wording.take_back(timeline.state(done), timeline, lambda: undo_next, lambda: redo_next)


def test_after_an_undo_redo_is_named_only_when_it_would_redo_that_undo() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    two = log.turn(change("b.txt", "1\n", "2\n"))
    undo = log.operation("undo", two, {two: "reverted"}, change("b.txt", "2\n", "1\n"), previous={two: "applied"})
    assert _take_back(log, undo, redo_next=undo) == ("redo", None, "brings turn #2 back")
    other = log.operation("revert", two, {}, change("c.txt", None, "x\n"))  # (anything newer redo would take)
    assert _take_back(log, undo, redo_next=other) == ("revert", 3, "brings turn #2 back")
    assert _take_back(log, undo, redo_next=None).text == "takeback revert 3"


def test_after_a_redo_undo_is_named_only_when_it_would_take_that_very_turn() -> None:
    log = Log()
    one = log.turn(change("a.txt", "1\n", "2\n"))
    two = log.turn(change("b.txt", "1\n", "2\n"))
    revert = log.operation("revert", one, {one: "reverted"}, change("a.txt", "2\n", "1\n"), previous={one: "applied"})
    redo = log.operation("redo", revert, {revert: "reverted", one: "applied"}, change("a.txt", "1\n", "2\n"))
    # undo would take turn #2, the newest applied one: not what the redo brought back
    assert _take_back(log, redo, undo_next=two) == ("revert", 4, "takes this redo back")
    assert _take_back(log, redo, undo_next=one) == ("undo", None, "takes turn #1 away again")


@pytest.mark.parametrize("redone_kind,effects", [
    ("restore", "both"),  # a restore took back two turns: undo takes back one
    ("revert", "none"),  # a revert of some files: undo would take the whole turn
], ids=["restore", "some files"])
def test_after_a_redo_of_more_or_less_than_one_turn_only_a_revert_of_it_is_exact(redone_kind: str, effects: str) -> None:
    log = Log()
    one = log.turn(change("a.txt", "1\n", "2\n"))
    two = log.turn(change("b.txt", "1\n", "2\n"))
    took = {"both": {one: "reverted", two: "reverted"}, "none": {}}[effects]
    redone = log.operation(redone_kind, one, took, change("a.txt", "2\n", "1\n"))
    redo = log.operation("redo", redone, {redone: "reverted", **{e: "applied" for e in took}}, change("a.txt", "1\n", "2\n"))
    assert _take_back(log, redo, undo_next=two).text == "takeback revert 4"
    assert _take_back(log, redo, undo_next=one).text == "takeback revert 4"


def test_after_a_revert_or_restore_a_revert_of_it_takes_it_back() -> None:
    log = Log()
    one = log.turn(change("a.txt", "1\n", "2\n"))
    revert = log.operation("revert", one, {one: "reverted"}, change("a.txt", "2\n", "1\n"))
    assert _take_back(log, revert, redo_next=revert) == ("revert", 2, "takes this revert back")


def test_already_reverted_names_the_entry_to_revert_and_what_else_it_brings_back() -> None:
    log = Log()
    one = log.turn(change("a.txt", "1\n", "2\n"))
    two = log.turn(change("b.txt", "1\n", "2\n"))
    restore = log.operation("restore", one, {one: "reverted", two: "reverted"}, change("a.txt", "2\n", "1\n"))
    timeline = log.fold()
    assert wording.already_reverted(timeline.state(two), timeline.state(restore)) == (
        "turn #2 is already reverted by #3; run 'takeback revert 3' to bring it back (with the 1 other entry #3 took back)"
    )
    assert wording.already_reverted(timeline.state(two), None) == "turn #2 is already reverted"


@pytest.mark.parametrize("kind,checkpoint,done,expected", [
    ("undo", None, False, "takeback undo"),
    ("undo", None, True, "takeback revert 4"),
    ("redo", None, False, "takeback redo"),
    ("revert", None, False, "takeback revert 4"),
    ("restore", "3.1", True, "takeback restore 3.1"),
])
def test_command_that_runs_the_operation_again(kind: str, checkpoint: str | None, done: bool, expected: str) -> None:
    assert wording.command(kind, 4, checkpoint, done) == expected


# ------------------------------------------------------------------ labels and notices


def test_operation_label_names_the_turn_and_its_label() -> None:
    log = Log()
    turn = log.turn(change("a", "1", "2"), label="add login")
    timeline = log.fold()
    assert wording.operation_label("undo", timeline.entries[turn], timeline) == "undo turn #1: add login"


def test_redo_label_names_the_turn_the_undo_took_back() -> None:
    log = Log()
    turn = log.turn(change("a", "1", "2"), label="add login")
    undo = log.operation("undo", turn, {turn: "reverted"})
    timeline = log.fold()
    assert wording.operation_label("redo", timeline.entries[undo], timeline) == "redo turn #1: add login"


def test_revert_of_an_operation_names_its_kind() -> None:
    log = Log()
    turn = log.turn(change("a", "1", "2"))
    undo = log.operation("undo", turn, {turn: "reverted"})
    timeline = log.fold()
    assert wording.operation_label("revert", timeline.entries[undo], timeline) == "revert undo #2"


def test_open_turn_notices_before_and_after_ending_them() -> None:
    log = Log()
    log.begin()
    state = log.fold().entries[log.records[0].entry]
    assert wording.open_turn_notices("undo", [state], ended=False) == ["turn #1 is open; carrying out this undo ends it first"]
    assert wording.open_turn_notices("undo", [state], ended=True) == [
        "turn #1 was still open; undo ended it first (what changed on disk during it is recorded as its changes)"
    ]


def test_only_paths_keeps_both_sides_of_a_rename() -> None:
    steps = {"new.txt": [change("new.txt", None, "x", renamed_from="old.txt")], "old.txt": [change("old.txt", "x", None)],
             "other": [change("other", "1", "2")]}
    assert sorted(planning.only_paths(steps, {"new.txt"}, 3)) == ["new.txt", "old.txt"]


def test_only_paths_refuses_a_path_the_turn_did_not_change() -> None:
    with pytest.raises(NotFound, match="turn #3 did not change nope.txt"):
        planning.only_paths({"a": [change("a", "1", "2")]}, {"nope.txt"}, 3)


def test_a_bad_on_conflict_choice_is_refused_with_the_choices() -> None:
    with pytest.raises(InvalidInput, match="on-conflict must be one of abort, skip, markers, force, not 'merge'"):
        check_on_conflict("merge")


# ------------------------------------------------------------------ the CLI's lines


@pytest.mark.parametrize("state,mark", [("applied", " "), ("reverted", "↶"), ("partial", "±"), ("open", "…"), ("not-applied", "✗")])
def test_entry_line_marks_each_state(state: str, mark: str) -> None:
    line = render.entry_line(entry(number=3, kind="turn", target_number=None, state=state))
    assert line.startswith(f"{mark} #3    turn    {state:<11} ")


def test_entry_line_shows_files_checks_target_agent_and_label() -> None:
    files = [FileChange(path="a", kind="modified"), FileChange(path="b", kind="added")]
    line = render.entry_line(entry(state="applied", files=files, additions=3, deletions=1, agent="claude", label="undo turn #4",
                                   checks=[Check(name="tests", status="failed")]))
    assert line.endswith("  2 files +3 -1 checks:FAILED → #4 [claude]  undo turn #4")


def test_entry_line_says_one_file_in_the_singular() -> None:
    assert "  1 file +0 -0" in render.entry_line(entry(files=[FileChange(path="a", kind="added")]))


def test_result_lists_restored_skipped_conflicts_and_next(capsys: pytest.CaptureFixture[str]) -> None:
    result = OperationResult(
        operation="undo", verdict="partial", applied=True, message="undo of #4 done as #5: 1 file changed (1 skipped)",
        restored=[FileOutcome(path="a.txt", action="write", additions=1, deletions=2, merged=True)],
        skipped=[SkippedFile(path=".env", reason="secret file")],
        conflicts=[Conflict(path="m.txt", reason="overlapping edits in 1 place", markers_written=True, markers_possible=True,
                            advice="resolve the conflict markers"),
                   Conflict(path="logo.png", reason="binary file changed since; it cannot be merged", advice="force it")],
        notices=["turn #6 was still open"], next_action="'takeback redo' brings turn #4 back",
    )
    render.print_result(result)
    assert capsys.readouterr().out.splitlines() == [
        "PARTIAL: undo of #4 done as #5: 1 file changed (1 skipped)",
        "  note    turn #6 was still open",
        "  write   a.txt  +1 -2 (merged with later edits)",
        "  skipped .env: secret file",
        "  conflict m.txt: overlapping edits in 1 place — markers written",
        "  conflict logo.png: binary file changed since; it cannot be merged",
        "           force it",
        "next: 'takeback redo' brings turn #4 back",
    ]


def test_result_prints_a_dry_runs_patch_before_next(capsys: pytest.CaptureFixture[str]) -> None:
    result = OperationResult(operation="revert", verdict="safe", applied=False, dry_run=True, message="dry run",
                             patch="--- a/x\n+++ b/x", next_action="run it without --dry-run to carry it out")
    render.print_result(result)
    assert "--- a/x" not in capsys.readouterr().out  # a summary by default: the diff only when asked
    render.print_result(result, patch=True)
    assert capsys.readouterr().out.splitlines()[-3:] == ["--- a/x", "+++ b/x", "next: run it without --dry-run to carry it out"]


def test_a_long_answer_says_its_verdict_again_at_the_end(capsys: pytest.CaptureFixture[str]) -> None:
    many = [FileOutcome(path=f"f{i}.py", action="write", additions=1, deletions=1) for i in range(11)]
    result = OperationResult(operation="undo", verdict="safe", applied=False, dry_run=True, restored=many,
                             message="dry run: undo of #3 would change 11 files", next_action="run it")
    render.print_result(result)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == out[-2] == "SAFE: dry run: undo of #3 would change 11 files" and out[-1] == "next: run it"
    render.print_result(result.model_copy(update={"restored": many[:3]}))
    assert capsys.readouterr().out.count("SAFE:") == 1  # short: said once


def test_entry_details_list_steps_withheld_files_checks_and_who_reverted(capsys: pytest.CaptureFixture[str]) -> None:
    shown = entry(number=2, kind="turn", target_number=None, state="reverted", reverted_by="01UNDO",
                  checkpoints=[Checkpoint(id="c1", at=START, label="Edit a", paths=["a"]),
                               Checkpoint(id="c2", at=START, paths=["a", "b"], applied=False)],
                  files=[FileChange(path=".env", kind="modified", withheld="secret"),
                         FileChange(path="new", old_path="old", kind="renamed", binary=True)],
                  checks=[Check(name="tests", status="failed", exit_code=1)], commands=["pytest"])
    render.print_entry(shown)
    out = capsys.readouterr().out.splitlines()
    assert "  modified  .env  +0 -0 (content withheld: secret)" in out
    assert "  renamed   old → new  +0 -0 (binary)" in out
    assert "  step   #2.1 Edit a  (1 files)" in out
    assert "  step   #2.2 changes  (2 files)  (not applied)" in out
    assert "  ran    pytest" in out and "  check  tests: failed (exit 1)" in out
    assert out[-1] == "  reverted by 01UNDO"


def test_log_without_entries_says_how_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    render.print_log([])
    assert capsys.readouterr().out == "No turns recorded yet. Start one with 'takeback begin --label \"...\"'.\n"


def test_gc_report_names_dropped_spans_and_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    report = GcReport(removed_entries=3, removed_objects=7, bytes_before=3 * 1024 * 1024, bytes_after=512, kept_entries=9,
                      dropped=[DroppedSpan(first=1, last=3, at=START, why="over 500 entries"),
                               DroppedSpan(first=5, last=5, at=START, why="older than 30 days")])
    render.print_gc(report)
    assert capsys.readouterr().out.splitlines() == [
        "dropped 3 entries and 7 objects; store 3.0 MiB → 512 B; 9 entries kept",
        "  dropped #1–#3: over 500 entries",
        "  dropped #5: older than 30 days",
    ]

