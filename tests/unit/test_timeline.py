"""The timeline fold (``timeline.py``): records in, entries and their states out, and the
questions operations ask of it (which entry a name means, what undo and redo would target).
Each log is written by hand; no engine or store is involved."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from takeback.core.models import Check, CheckRecorded, DroppedSpan, EntriesDropped, PathChange
from takeback.core.timeline import Timeline, aggregate_files, relevant_steps, state_hash
from takeback.errors import InvalidInput, NotFound, NothingToDo

from .build import START, Log, change, version

# ------------------------------------------------------------------ states


def test_turn_with_an_applied_checkpoint_is_applied_once_ended() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    assert log.fold().entries[turn].state == "applied"


def test_turn_not_ended_is_open_and_the_open_turn() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    open_one = log.begin(session="s2")
    timeline = log.fold()
    assert timeline.entries[open_one].state == "open"
    assert timeline.open_turn().begun.entry == open_one
    assert [s.begun.entry for s in timeline.open_turns()] == [open_one]


def test_ending_one_sessions_turn_leaves_the_others_open() -> None:
    log = Log()
    first, second = log.begin(session="a"), log.begin(session="b")
    log.end(first)
    assert [s.begun.entry for s in log.fold().open_turns()] == [second]


def test_open_turns_of_several_sessions_are_listed_oldest_first_and_the_newest_is_the_open_turn() -> None:
    log = Log()
    one, two = log.begin(session="a"), log.begin(session="b")
    timeline = log.fold()
    assert [s.begun.entry for s in timeline.open_turns()] == [one, two]
    assert timeline.open_turn().begun.entry == two


def test_turn_ended_without_checkpoints_counts_as_applied() -> None:
    log = Log()
    turn = log.begin()
    log.end(turn)
    assert log.fold().entries[turn].state == "applied"


def test_turn_whose_every_checkpoint_the_editor_refused_is_not_applied() -> None:
    log = Log()
    turn = log.begin(source="edit")
    log.checkpoint(turn, change("a.txt", "1\n", "2\n"), applied=False)
    log.end(turn)
    assert log.fold().entries[turn].state == "not-applied"


def test_editor_refusing_an_ended_turns_only_batch_makes_it_not_applied_and_taking_it_applied() -> None:
    log = Log()
    turn = log.begin(source="edit")
    cp = log.checkpoint(turn, change("a.txt", "1\n", "2\n"))
    log.end(turn)
    log.applied(turn, cp, False)
    assert log.fold().entries[turn].state == "not-applied"
    log.applied(turn, cp, True)
    assert log.fold().entries[turn].state == "applied"


def test_undo_marks_its_target_reverted_by_the_undo() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    undo = log.operation("undo", turn, {turn: "reverted"}, change("a.txt", "2\n", "1\n"))
    timeline = log.fold()
    assert timeline.entries[turn].state == "reverted"
    assert timeline.entries[turn].reverted_by == undo
    assert timeline.entries[undo].state == "applied"


def test_partial_revert_marks_its_target_partial_and_names_who() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"), change("b.txt", "1\n", "2\n"))
    revert = log.operation("revert", turn, {turn: "partial"}, change("a.txt", "2\n", "1\n"), verdict="partial")
    state = log.fold().entries[turn]
    assert (state.state, state.reverted_by) == ("partial", revert)


def test_redo_of_an_undo_reverts_the_undo_and_reapplies_the_turn() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    undo = log.operation("undo", turn, {turn: "reverted"})
    redo = log.operation("redo", undo, {undo: "reverted", turn: "applied"})
    timeline = log.fold()
    assert timeline.entries[turn].state == "applied"
    assert timeline.entries[turn].reverted_by is None
    assert timeline.entries[undo].reverted_by == redo


def test_effects_naming_a_dropped_entry_are_ignored() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    log.operation("undo", turn, {turn: "reverted", "01GONE0000000000000000000X": "reverted"})
    assert log.fold().entries[turn].state == "reverted"


def test_records_of_an_entry_retention_dropped_are_skipped() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    later = Log()
    later.records = log.records[1:]  # the begin went with the dropped entry
    timeline = later.fold()
    assert turn not in timeline.entries
    assert timeline.record_count == len(later.records)


# ------------------------------------------------------------------ undo and redo targets


def test_undo_targets_the_newest_applied_turn() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    second = log.turn(change("a.txt", "2\n", "3\n"))
    assert log.fold().undo_target().begun.entry == second


def test_undo_targets_an_open_turn_with_checkpoints() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    open_one = log.begin()
    log.checkpoint(open_one, change("a.txt", "2\n", "3\n"))
    assert log.fold().undo_target().begun.entry == open_one


def test_undo_passes_over_a_turn_without_checkpoints() -> None:
    log = Log()
    first = log.turn(change("a.txt", "1\n", "2\n"))
    empty = log.begin()
    log.end(empty)
    assert log.fold().undo_target().begun.entry == first


def test_undo_after_an_undo_targets_the_turn_before_not_the_undo() -> None:
    log = Log()
    first = log.turn(change("a.txt", "1\n", "2\n"))
    second = log.turn(change("a.txt", "2\n", "3\n"))
    log.operation("undo", second, {second: "reverted"}, change("a.txt", "3\n", "2\n"))
    assert log.fold().undo_target().begun.entry == first


def test_undo_with_every_turn_reverted_has_nothing_to_do() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    log.operation("undo", turn, {turn: "reverted"})
    with pytest.raises(NothingToDo, match="nothing to undo"):
        log.fold().undo_target()


def test_redo_targets_the_newest_applied_undo() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    undo = log.operation("undo", turn, {turn: "reverted"})
    assert log.fold().redo_target().begun.entry == undo


@pytest.mark.parametrize("kind", ["revert", "restore"])
def test_redo_also_targets_a_revert_or_a_restore(kind: str) -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    operation = log.operation(kind, turn, {turn: "reverted"})
    assert log.fold().redo_target().begun.entry == operation


def test_redo_after_a_redo_has_nothing_left_to_redo() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    undo = log.operation("undo", turn, {turn: "reverted"})
    log.operation("redo", undo, {undo: "reverted", turn: "applied"})
    with pytest.raises(NothingToDo, match="nothing to redo"):
        log.fold().redo_target()


def test_redo_with_only_turns_has_nothing_to_do() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    with pytest.raises(NothingToDo):
        log.fold().redo_target()


# ------------------------------------------------------------------ naming entries


def test_resolve_takes_a_number_with_or_without_hash() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    second = log.turn(change("a.txt", "2\n", "3\n"))
    timeline = log.fold()
    assert timeline.resolve("2").begun.entry == second
    assert timeline.resolve(" #2 ").begun.entry == second


def test_resolve_last_means_the_newest_turn_not_an_operation() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    log.operation("undo", turn, {turn: "reverted"})
    assert log.fold().resolve("last").begun.entry == turn


def test_resolve_last_on_an_empty_timeline_is_not_found() -> None:
    with pytest.raises(NotFound, match="no turn yet"):
        Timeline().resolve("last")


def test_resolve_takes_a_full_id_in_any_case_and_a_unique_prefix() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    timeline = log.fold()
    assert timeline.resolve(turn.lower()).begun.entry == turn
    assert timeline.resolve(turn[:6]).begun.entry == turn


def test_resolve_refuses_an_ambiguous_prefix_and_lists_the_matches() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    log.turn(change("a.txt", "2\n", "3\n"))
    with pytest.raises(InvalidInput, match=r"ambiguous: it matches #1 \(01EN.*\), #2 \(01EN"):
        log.fold().resolve("01EN")


def test_resolve_refuses_an_empty_name() -> None:
    with pytest.raises(InvalidInput, match="empty turn"):
        Timeline().resolve("  ")


def test_resolve_a_number_never_used_says_how_many_entries_there_are() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    with pytest.raises(NotFound, match=r"no turn #9 .*\(it has 1 entries\)"):
        log.fold().resolve("9")


def test_resolve_a_number_retention_dropped_says_when_and_why() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    log.turn(change("a.txt", "2\n", "3\n"))
    dropped_at = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)
    kept = Log()
    kept.records = [EntriesDropped(id="01DROP", at=dropped_at, spans=[DroppedSpan(first=1, last=1, at=dropped_at, why="older than 30 days")]),
                    *log.records[3:]]
    with pytest.raises(NotFound, match=r"turn #1 was dropped by retention on 2026-0[12]-\d\d \(older than 30 days\)"):
        kept.fold().resolve("1")


def test_resolve_a_gap_with_no_dropped_record_still_says_retention() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    log.turn(change("a.txt", "2\n", "3\n"))
    kept = Log()
    kept.records = log.records[3:]
    with pytest.raises(NotFound, match="when is no longer recorded"):
        kept.fold().resolve("#1")


def test_resolve_anything_else_is_not_found_with_the_accepted_forms() -> None:
    with pytest.raises(NotFound, match="use a number like 17"):
        Timeline().resolve("yesterday")


# ------------------------------------------------------------------ naming checkpoints


def _steps_log() -> tuple[Log, list[str], list[str]]:
    log = Log()
    first = log.begin()
    a = [log.checkpoint(first, change("a.txt", "1\n", "2\n")), log.checkpoint(first, change("a.txt", "2\n", "3\n"))]
    log.end(first)
    second = log.begin()
    b = [log.checkpoint(second, change("b.txt", None, "b\n"))]
    log.end(second)
    return log, a, b


def test_checkpoint_hash_n_is_the_turns_last_and_n_k_its_kth() -> None:
    log, a, b = _steps_log()
    timeline = log.fold()
    assert timeline.resolve_checkpoint("#1").id == a[1]
    assert timeline.resolve_checkpoint("#1.1").id == a[0]
    assert timeline.resolve_checkpoint("2.1").id == b[0]


def test_checkpoint_n_0_is_the_last_one_recorded_before_the_turn_whichever_turn_holds_it() -> None:
    log, a, _b = _steps_log()
    assert log.fold().resolve_checkpoint("#2.0").id == a[1]


def test_checkpoint_n_0_of_the_oldest_turn_is_not_found_and_points_at_revert() -> None:
    log, _a, _b = _steps_log()
    with pytest.raises(NotFound, match="revert 1 takes the whole turn back"):
        log.fold().resolve_checkpoint("#1.0")


def test_checkpoint_index_beyond_the_turns_steps_is_not_found() -> None:
    log, _a, _b = _steps_log()
    with pytest.raises(NotFound, match="turn #1 has 2 checkpoints, not 3"):
        log.fold().resolve_checkpoint("#1.3")


def test_checkpoint_by_id_or_unique_prefix() -> None:
    log, a, _b = _steps_log()
    timeline = log.fold()
    assert timeline.resolve_checkpoint(a[0]).id == a[0]
    assert timeline.resolve_checkpoint(a[0][:-1].lower()).id == a[0]


def test_checkpoint_ambiguous_prefix_lists_them_as_n_k() -> None:
    log, _a, _b = _steps_log()
    with pytest.raises(InvalidInput, match=r"matches #1\.1 \(.*\), #1\.2 \(.*\), #2\.1"):
        log.fold().resolve_checkpoint("01CP")


def test_checkpoint_of_a_turn_without_any_is_not_found() -> None:
    log = Log()
    turn = log.begin()
    log.end(turn)
    with pytest.raises(NotFound, match="turn #1 has no checkpoint"):
        log.fold().resolve_checkpoint("#1")


def test_checkpoints_after_leave_out_batches_the_editor_refused() -> None:
    log = Log()
    turn = log.begin(source="edit")
    first = log.checkpoint(turn, change("a.txt", "1\n", "2\n"))
    log.checkpoint(turn, change("a.txt", "2\n", "3\n"), applied=False)
    third = log.checkpoint(turn, change("b.txt", None, "b\n"))
    log.end(turn)
    assert [cp.id for cp in log.fold().checkpoints_after(first)] == [third]


def test_entries_after_a_checkpoint_are_the_other_entries_with_later_checkpoints() -> None:
    log, a, _b = _steps_log()
    timeline = log.fold()
    assert [s.begun.number for s in timeline.entries_after(a[0])] == [2]


# ------------------------------------------------------------------ checks


def test_last_green_is_the_newest_turn_whose_latest_check_per_name_passed() -> None:
    log = Log()
    green = log.turn(change("a.txt", "1\n", "2\n"))
    log.check(green, "tests", "failed")
    log.check(green, "tests", "passed")
    red = log.turn(change("a.txt", "2\n", "3\n"))
    log.check(red, "tests", "failed")
    assert log.fold().last_green().begun.entry == green


def _checked(log: Log, entry: str, status: str, ran_on: str | None) -> None:
    log.records.append(CheckRecorded(id=log._id("CK"), at=START, entry=entry,
                                     check=Check(name="tests", status=status, ran_on=ran_on)))


def test_a_check_speaks_only_for_the_state_it_ran_on() -> None:
    log = Log()
    first = log.turn(change("a.txt", "1\n", "2\n"))
    _checked(log, first, "passed", "other")  # run while the files were not #1's end: counts for nothing
    assert log.fold().view(log.fold().entries[first]).checks_passed is None
    with pytest.raises(NothingToDo):
        log.fold().last_green()
    _checked(log, first, "passed", "end")
    assert log.fold().last_green().begun.entry == first


def test_a_check_run_before_its_turn_changed_more_no_longer_counts() -> None:
    log = Log()
    turn = log.begin()
    log.checkpoint(turn, change("a.txt", "1\n", "2\n"))
    _checked(log, turn, "passed", "end")
    log.checkpoint(turn, change("b.txt", None, "broken\n"))  # the turn went on after the check
    log.end(turn)
    timeline = log.fold()
    view = timeline.view(timeline.entries[turn])
    assert [c.ran_on for c in view.checks] == ["earlier"] and view.checks_passed is None
    with pytest.raises(NothingToDo):
        timeline.last_green()


def test_a_reverted_turn_is_never_green_and_an_undo_can_be() -> None:
    log = Log()
    base = log.turn(change("a.txt", "1\n", "2\n"))
    bad = log.turn(change("a.txt", "2\n", "3\n"))
    _checked(log, bad, "passed", "end")  # it passed when it was applied ...
    undo = log.operation("undo", bad, {bad: "reverted"}, change("a.txt", "3\n", "2\n"))
    timeline = log.fold()
    with pytest.raises(NothingToDo):  # ... but it is taken back now
        timeline.last_green()
    _checked(log, undo, "passed", "end")
    assert log.fold().last_green().begun.entry == undo
    assert base != undo


def test_last_green_without_any_passing_turn_says_how_to_record_checks() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    with pytest.raises(NothingToDo, match="takeback check -- COMMAND"):
        log.fold().last_green()


def test_checks_given_at_the_end_count_like_recorded_ones() -> None:
    log = Log()
    turn = log.begin()
    log.checkpoint(turn, change("a.txt", "1\n", "2\n"))
    log.end(turn, checks=[Check(name="lint", status="skipped")])
    timeline = log.fold()
    assert timeline.view(timeline.entries[turn]).checks_passed is True


# ------------------------------------------------------------------ tentative begins


def test_retracting_a_tentative_begin_restores_numbers_and_open_turns() -> None:
    log = Log()
    log.turn(change("a.txt", "1\n", "2\n"))
    timeline = log.fold()
    pending = Log()
    pending.number = 1
    pending.begin(session="s")
    timeline.add_tentative(pending.records[0])
    assert timeline.max_number == 2 and timeline.open_turn() is not None
    assert timeline.resolve("#2").begun.entry == pending.records[0].entry
    timeline.retract()
    assert (timeline.max_number, timeline.open_ids, len(timeline.order)) == (1, [], 1)
    with pytest.raises(NotFound):  # the retracted begin is no answer any more
        timeline.resolve("#2")


def test_resolve_by_number_reads_the_index_not_every_entry() -> None:
    log = Log()
    turns = [log.turn(change(f"f{i}.txt", None, "x\n")) for i in range(50)]
    timeline = log.fold()
    assert timeline.numbered == {i + 1: entry for i, entry in enumerate(turns)}

    class Untouchable(dict):  # type: ignore[type-arg]
        def values(self):  # type: ignore[no-untyped-def]
            raise AssertionError("resolve walked every entry")

    timeline.entries = Untouchable(timeline.entries)
    assert timeline.resolve("#37").begun.entry == turns[36]


def test_a_confirmed_tentative_begin_stays() -> None:
    timeline = Timeline()
    pending = Log()
    pending.begin()
    timeline.add_tentative(pending.records[0])
    timeline.confirm()
    timeline.retract()
    assert timeline.max_number == 1 and timeline.tentative is None


# ------------------------------------------------------------------ the entry view


def test_view_notes_a_checkpoint_the_editor_did_not_apply() -> None:
    log = Log()
    turn = log.begin(source="edit")
    cp = log.checkpoint(turn, change("a.txt", "1\n", "2\n"), applied=False)
    log.end(turn)
    timeline = log.fold()
    view = timeline.view(timeline.entries[turn])
    assert f"checkpoint {cp} was not applied by the editor" in view.notices
    assert view.files == []


@pytest.mark.parametrize("ended_by,source,noted", [
    ("next_prompt", "hook", "the next prompt arrived while it was open"),
    ("session_end", "bracket", "its session ended"),
    ("end_command", "hook", "'takeback end' ended it"),
    ("end_command", "cli", None),
    ("stop", "hook", None),
])
def test_view_notes_a_turn_ended_without_the_agents_stop(ended_by: str, source: str, noted: str | None) -> None:
    log = Log()
    turn = log.begin(source=source)
    log.checkpoint(turn, change("a.txt", "1\n", "2\n"))
    log.end(turn, ended_by=ended_by)
    timeline = log.fold()
    notices = timeline.view(timeline.entries[turn]).notices
    expected = [f"ended at its last step without the agent's stop: {noted}"] if noted else []
    assert notices == expected


def test_view_of_an_operation_names_its_target_verdict_and_skipped_files() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    undo = log.operation("undo", turn, {turn: "partial"}, verdict="partial", skipped=[".env"])
    timeline = log.fold()
    view = timeline.view(timeline.entries[undo])
    assert (view.target_number, view.verdict, view.notices) == (1, "partial", ["skipped .env"])


def test_view_is_rebuilt_after_a_later_record_changes_the_entry() -> None:
    log = Log()
    turn = log.turn(change("a.txt", "1\n", "2\n"))
    timeline = log.fold()
    assert timeline.view(timeline.entries[turn]).state == "applied"
    folded = len(log.records)
    log.operation("undo", turn, {turn: "reverted"})
    for record in log.records[folded:]:
        timeline.apply(record)
    assert timeline.view(timeline.entries[turn]).state == "reverted"


# ------------------------------------------------------------------ files of an entry


def test_files_take_the_first_before_and_the_last_after() -> None:
    log = Log()
    turn = log.begin()
    log.checkpoint(turn, change("a.txt", "1\n", "2\n", additions=1, deletions=1))
    log.checkpoint(turn, change("a.txt", "2\n", "3\n", additions=1, deletions=1))
    log.end(turn)
    timeline = log.fold()
    (only,) = timeline.view(timeline.entries[turn]).files
    assert (only.kind, only.before, only.after) == ("modified", version("1\n"), version("3\n"))
    assert (only.additions, only.deletions) == (2, 2)


def test_a_path_back_where_it_started_is_not_a_changed_file() -> None:
    files = aggregate_files(_checkpoints(change("a.txt", "1\n", "2\n"), change("a.txt", "2\n", "1\n")))
    assert files == []


def test_created_and_deleted_files_are_added_and_deleted() -> None:
    files = aggregate_files(_checkpoints(change("new.txt", None, "n\n"), change("old.txt", "o\n", None)))
    assert [(f.path, f.kind) for f in files] == [("new.txt", "added"), ("old.txt", "deleted")]


def test_a_move_named_by_renamed_from_is_one_renamed_file() -> None:
    files = aggregate_files(_checkpoints(change("old.txt", "x\n", None),
                                         change("new.txt", None, "x\ny\n", renamed_from="old.txt", additions=1)))
    assert [(f.path, f.kind, f.old_path, f.additions) for f in files] == [("new.txt", "renamed", "old.txt", 1)]


def test_unchanged_content_moving_is_paired_as_a_rename_with_no_line_changed() -> None:
    files = aggregate_files(_checkpoints(change("old.txt", "x\n", None, deletions=1),
                                         change("new.txt", None, "x\n", additions=1)))
    assert [(f.kind, f.old_path, f.additions, f.deletions) for f in files] == [("renamed", "old.txt", 0, 0)]


def test_withheld_content_is_never_paired_by_identity() -> None:
    secret = version("k=1\n", withheld="secret")
    gone = PathChange(path=".env", before=secret, after=None)
    came = PathChange(path=".env.local", before=None, after=secret)
    assert sorted(f.kind for f in aggregate_files(_checkpoints(gone, came))) == ["added", "deleted"]


def test_a_bracket_checkpoint_covers_its_paths_alone() -> None:
    log = Log()
    turn = log.begin()
    log.checkpoint(turn, change("a.txt", "1\n", "2\n"))
    log.checkpoint(turn, change("a.txt", "1\n", "3\n"), change("b.txt", None, "b\n"), bracket=True)
    log.end(turn)
    steps = relevant_steps(log.fold().entries[turn].checkpoints)
    assert [c.before for c in steps["a.txt"]] == [version("1\n")] and len(steps["a.txt"]) == 1
    assert len(steps["b.txt"]) == 1


def test_state_hash_names_the_result_not_the_order_or_the_start() -> None:
    one = aggregate_files(_checkpoints(change("a.txt", "1\n", "2\n"), change("b.txt", None, "b\n")))
    other_start = aggregate_files(_checkpoints(change("b.txt", "x\n", "b\n"), change("a.txt", "0\n", "2\n")))
    different = aggregate_files(_checkpoints(change("a.txt", "1\n", "3\n"), change("b.txt", None, "b\n")))
    assert state_hash(one) == state_hash(other_start)
    assert state_hash(one) != state_hash(different)


def _checkpoints(*changes):
    log = Log()
    turn = log.begin()
    for item in changes:
        log.checkpoint(turn, item)
    return log.fold().entries[turn].checkpoints


_PATHS = ("a.txt", "b.txt", "c/d.txt", ".env")
_CONTENTS = (None, "1\n", "2\n", "1\n2\n", "x\n")


@st.composite
def _entries(draw) -> tuple[Log, str]:
    """A turn of 1-4 checkpoints over a few paths (adds, edits, deletes, renames, secrets,
    bracket checkpoints, batches the editor refused or took later)."""
    log = Log()
    turn = log.begin()
    for _ in range(draw(st.integers(1, 4))):
        changes = []
        for path in draw(st.lists(st.sampled_from(_PATHS), min_size=1, max_size=3, unique=True)):
            before, after = draw(st.sampled_from(_CONTENTS)), draw(st.sampled_from(_CONTENTS))
            renamed = draw(st.sampled_from([None, *(p for p in _PATHS if p != path)])) if before is None else None
            changes.append(change(path, before, after, renamed_from=renamed, additions=draw(st.integers(0, 3)),
                                  deletions=draw(st.integers(0, 3))))
        cp = log.checkpoint(turn, *changes, bracket=draw(st.booleans()), applied=draw(st.booleans()))
        if draw(st.booleans()):
            log.applied(turn, cp, draw(st.booleans()))
    if draw(st.booleans()):
        log.end(turn)
    return log, turn


@settings(max_examples=200, deadline=None)
@given(_entries())
def test_an_entrys_summary_alone_and_its_view_agree(built: tuple[Log, str]) -> None:
    """``Timeline.summary`` (what the cache's pages keep for entries this process never showed)
    is worked out without the view; a fresh fold's summary and another's view must agree."""
    log, turn = built
    alone = log.fold()
    summary = alone.summary(alone.entries[turn])
    viewed = log.fold()
    view = viewed.view(viewed.entries[turn])
    assert summary == (len(view.files), view.additions, view.deletions) == viewed.summary(viewed.entries[turn])
