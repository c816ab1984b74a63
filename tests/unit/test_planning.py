"""Planning an operation (``revert.Planner``): what taking recorded changes back would do to
each file, given the files as they are now. The changes are hand-built; the planner reads
"now" from a dictionary (its ``read`` argument), and its content comes from a store folder in
a temp folder (``Capturer`` reads versions from there). No engine, no repository, nothing written
to a workspace, except where a test puts folders on disk to plan around."""

from __future__ import annotations

from pathlib import Path

import pytest

from takeback.config import Config
from takeback.core import planning, wording
from takeback.core.merge import Version
from takeback.core.models import MODE_EXEC, MODE_FILE, PathChange
from takeback.core.planning import PathPlan, Plan, Planner
from takeback.storage.store import Store
from takeback.workspace.capture import Capturer
from takeback.workspace.files import Workspace

from .build import Log, change, version

SIZE_CAP = 64


@pytest.fixture
def capture(tmp_path: Path) -> Capturer:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return Capturer(Store(tmp_path / "store", workspace), Workspace(workspace), Config(max_file_bytes=SIZE_CAP))


def recorded(capture: Capturer, path: str, before: str | bytes | None, after: str | bytes | None,
             mode: int = MODE_FILE, **extra) -> PathChange:
    """A change as a checkpoint records it: each side stored (or withheld) by the capture policy."""
    def side(text: str | bytes | None):
        if text is None:
            return None
        return capture.version(path, text.encode() if isinstance(text, str) else text, mode)
    return PathChange(path=path, before=side(before), after=side(after), **extra)


def disk(**files: str | bytes | None) -> dict[str, Version]:
    """The workspace now: keyword = path (``_`` for ``.``, ``__`` for ``/``), value = content."""
    out = {}
    for name, text in files.items():
        if text is not None:
            path = name.replace("__", "/").replace("_", ".")
            out[path] = Version(text.encode() if isinstance(text, str) else text, MODE_FILE)
    return out


def plan(capture: Capturer, now: dict[str, Version], *changes: PathChange, on_conflict: str = "abort",
         **planner) -> Plan:
    steps: dict[str, list[PathChange]] = {}
    for item in changes:
        steps.setdefault(item.path, []).append(item)
    return Planner(capture, now.get, on_conflict, label_theirs="before #1", **planner).plan(steps)


def content(text: str | bytes | None) -> Version | None:
    return None if text is None else Version(text.encode() if isinstance(text, str) else text, MODE_FILE)


# ------------------------------------------------------------------ clean plans


def test_a_file_untouched_since_gets_its_starting_content(capture: Capturer) -> None:
    result = plan(capture, disk(a_txt="new\n"), recorded(capture, "a.txt", "old\n", "new\n"))
    (only,) = result.paths
    assert (only.result, only.writes, only.merged) == (content("old\n"), True, False)
    assert wording.verdict(result) == "safe"


def test_a_file_already_back_as_it_started_is_not_written(capture: Capturer) -> None:
    result = plan(capture, disk(a_txt="old\n"), recorded(capture, "a.txt", "old\n", "new\n"))
    assert result.writes == [] and wording.verdict(result) == "safe"


def test_a_later_edit_elsewhere_in_the_file_is_kept_and_said_merged(capture: Capturer) -> None:
    result = plan(capture, disk(a_txt="1\nB\n3\n4\nlater\n"), recorded(capture, "a.txt", "1\nb\n3\n4\n5\n", "1\nB\n3\n4\n5\n"))
    (only,) = result.paths
    assert (only.result, only.merged) == (content("1\nb\n3\n4\nlater\n"), True)


def test_several_changes_to_a_path_are_taken_back_newest_first(capture: Capturer) -> None:
    result = plan(capture, disk(a_txt="3\n"), recorded(capture, "a.txt", "1\n", "2\n"), recorded(capture, "a.txt", "2\n", "3\n"))
    assert result.paths[0].result == content("1\n")


def test_a_created_file_unchanged_since_is_deleted(capture: Capturer) -> None:
    result = plan(capture, disk(new_txt="n\n"), recorded(capture, "new.txt", None, "n\n"))
    assert (result.paths[0].result, result.paths[0].writes) == (None, True)


def test_a_deleted_file_comes_back_with_its_mode(capture: Capturer) -> None:
    result = plan(capture, {}, recorded(capture, "run.sh", "#!/bin/sh\n", None, mode=MODE_EXEC))
    assert result.paths[0].result == Version(b"#!/bin/sh\n", MODE_EXEC)


def test_paths_are_planned_in_path_order(capture: Capturer) -> None:
    result = plan(capture, disk(b="2", a="2"), recorded(capture, "b", "1", "2"), recorded(capture, "a", "1", "2"))
    assert [p.path for p in result.paths] == ["a", "b"]


# ------------------------------------------------------------------ conflicts and the on-conflict choice


def _overlap(capture: Capturer) -> tuple[dict[str, Version], PathChange]:
    return disk(a_txt="a\nX\nc\n"), recorded(capture, "a.txt", "a\nb\nc\n", "a\nB\nc\n")


def test_overlapping_edit_on_abort_is_a_blocking_conflict_that_could_take_markers(capture: Capturer) -> None:
    now, item = _overlap(capture)
    result = plan(capture, now, item)
    (conflict,) = result.blocking_conflicts
    assert (conflict.reason, conflict.markers_possible, conflict.markers_written) == ("overlapping edits in 1 place", True, False)
    assert result.writes == [] and wording.verdict(result) == "refused"


def test_on_conflict_markers_writes_the_marked_file(capture: Capturer) -> None:
    now, item = _overlap(capture)
    result = plan(capture, now, item, on_conflict="markers")
    (only,) = result.paths
    assert only.conflict.markers_written and only.writes
    assert only.result.content == b"a\n<<<<<<< current\nX\n=======\nb\n>>>>>>> before #1\nc\n"
    assert result.blocking_conflicts == []


def test_on_conflict_force_puts_the_start_back_and_says_forced(capture: Capturer) -> None:
    now, item = _overlap(capture)
    result = plan(capture, now, item, on_conflict="force")
    (only,) = result.paths
    assert (only.result, only.forced, only.writes) == (content("a\nb\nc\n"), True, True)
    assert only.conflict.reason.startswith("forced: overlapping edits in 1 place: the earlier content was put back there")
    assert "taking the operation back restores it" in only.conflict.reason
    assert result.blocking_conflicts == [] and wording.verdict(result) == "partial"  # written over later edits: not safe


def test_on_conflict_skip_takes_back_the_clean_file_only_and_is_partial(capture: Capturer) -> None:
    now, item = _overlap(capture)
    now.update(disk(b_txt="new\n"))
    result = plan(capture, now, item, recorded(capture, "b.txt", "old\n", "new\n"), on_conflict="skip")
    assert [p.path for p in result.writes] == ["b.txt"]
    assert wording.verdict(result) == "partial"


def test_markers_are_not_written_where_they_cannot_go(capture: Capturer) -> None:
    result = plan(capture, disk(new_txt="n, edited\n"), recorded(capture, "new.txt", None, "n\n"), on_conflict="markers")
    (only,) = result.paths
    assert (only.conflict.reason, only.conflict.markers_possible, only.writes) == ("changed since, so it is not removed", False, False)


def test_a_binary_conflict_says_binary(capture: Capturer) -> None:
    result = plan(capture, disk(logo="\0P"), recorded(capture, "logo", "\0b", "\0B"))
    assert (result.paths[0].conflict.binary, result.paths[0].conflict.markers_possible) == (True, False)


def test_a_file_deleted_since_that_the_revert_would_change_is_a_conflict(capture: Capturer) -> None:
    result = plan(capture, {}, recorded(capture, "a.txt", "a\n", "A\n"))
    assert result.paths[0].conflict.reason == "deleted since, but the revert would change it"


def test_a_conflict_in_an_older_change_stops_that_path_only(capture: Capturer) -> None:
    older = recorded(capture, "a.txt", "a\nb\nc\n", "a\nB\nc\n")
    newer = recorded(capture, "a.txt", "a\nB\nc\n", "a\nB\nc\nd\n")
    result = plan(capture, disk(a_txt="a\nX\nc\nd\n", b_txt="2"), older, newer, recorded(capture, "b.txt", "1", "2"))
    assert result.paths[0].conflict is not None and result.paths[1].result == content("1")


# ------------------------------------------------------------------ withheld content


def test_a_secret_file_cannot_be_brought_back(capture: Capturer) -> None:
    result = plan(capture, disk(_env="K=2\n"), recorded(capture, ".env", "K=1\n", "K=2\n"))
    assert result.skipped[0].reason == "secret file: its content is not stored (secrets policy), so it cannot be brought back"
    assert wording.verdict(result) == "refused"


def test_a_secret_file_the_turn_made_is_not_deleted(capture: Capturer) -> None:
    result = plan(capture, disk(_env="K=1\n"), recorded(capture, ".env", None, "K=1\n"))
    assert result.skipped[0].reason.startswith("secret file: not deleted, because its content is not stored")


def test_a_file_over_the_size_cap_says_its_size(capture: Capturer) -> None:
    big, bigger = "x" * (SIZE_CAP + 1), "y" * (SIZE_CAP + 2)
    result = plan(capture, disk(big_txt=bigger), recorded(capture, "big.txt", big, bigger))
    assert result.skipped[0].reason == f"file over the size cap ({SIZE_CAP + 1} bytes): its content was not stored"


def test_withheld_content_changed_since_is_skipped_and_says_so(capture: Capturer) -> None:
    result = plan(capture, disk(_env="K=3\n"), recorded(capture, ".env", "K=1\n", "K=2\n"))
    assert result.skipped[0].reason.endswith("; the file changed since")


def test_a_secret_already_as_it_started_needs_nothing(capture: Capturer) -> None:
    result = plan(capture, disk(_env="K=1\n"), recorded(capture, ".env", "K=1\n", "K=2\n"))
    assert (result.skipped, result.writes) == ([], [])


# ------------------------------------------------------------------ what stands in the way


def test_a_file_that_cannot_be_read_is_skipped_with_why(capture: Capturer) -> None:
    def unreadable(rel: str) -> Version | None:
        raise PermissionError(13, "Permission denied", rel)

    result = Planner(capture, unreadable, "abort", "before #1").plan({"a.txt": [recorded(capture, "a.txt", "1", "2")]})
    assert result.skipped[0].reason == "it could not be read (permission denied); it was left as it is"


def test_an_unwritable_path_is_skipped_as_blocked_only_when_it_would_be_written(capture: Capturer) -> None:
    refuse = lambda rel: "permission denied: the folder ro is not writable"  # noqa: E731
    result = plan(capture, disk(ro__a="2", ro__b="1"), recorded(capture, "ro/a", "1", "2"), recorded(capture, "ro/b", "1", "2"),
                  unwritable=refuse)
    assert result.blocked == ["ro/a"]
    assert [s.path for s in result.skipped] == ["ro/a"]


def test_a_folder_standing_where_a_file_comes_back_blocks_it(capture: Capturer, tmp_path: Path) -> None:
    (tmp_path / "ws" / "a.txt").mkdir()
    result = plan(capture, {}, recorded(capture, "a.txt", "1", None), layout=capture.workspace)
    assert result.blocked == ["a.txt"]
    assert result.skipped[0].reason.startswith("a folder is in the way")


def test_folders_a_deleted_files_changes_created_go_with_it(capture: Capturer, tmp_path: Path) -> None:
    (tmp_path / "ws" / "new" / "deep").mkdir(parents=True)
    result = plan(capture, disk(new__deep__f="n"), recorded(capture, "new/deep/f", None, "n", new_folders=["new", "new/deep"]),
                  layout=capture.workspace)
    assert result.folders == ["new", "new/deep"]


def test_a_file_coming_back_where_such_a_folder_holds_other_files_is_a_conflict(capture: Capturer, tmp_path: Path) -> None:
    (tmp_path / "ws" / "x").mkdir()
    (tmp_path / "ws" / "x" / "mine").write_text("person's\n")
    (tmp_path / "ws" / "x" / "f").write_text("n")
    result = plan(capture, disk(x__f="n"), recorded(capture, "x/f", None, "n", new_folders=["x"]),
                  recorded(capture, "x", "file\n", None), layout=capture.workspace)
    conflict = next(p.conflict for p in result.paths if p.path == "x")
    assert conflict.reason.startswith("x is now a folder, and it holds what the changes taken back did not put there (x/mine)")


def test_an_empty_folder_a_deletion_made_in_the_files_place_goes_first(capture: Capturer, tmp_path: Path) -> None:
    (tmp_path / "ws" / "x" / "sub").mkdir(parents=True)
    result = plan(capture, {}, recorded(capture, "x", "file\n", None, new_folders=["x"]), layout=capture.workspace)
    assert result.folders == ["x"] and result.paths[0].writes and not result.skipped


def test_an_empty_folder_made_for_a_file_that_ends_absent_goes_where_a_file_comes_back(
    capture: Capturer, tmp_path: Path
) -> None:
    """Edit batches: README.md deleted, x/part.md created (making x), then x/part.md deleted."""
    (tmp_path / "ws" / "x").mkdir()
    result = plan(capture, {}, recorded(capture, "x", "file\n", None),
                  recorded(capture, "x/part.md", None, "p\n", new_folders=["x"]), recorded(capture, "x/part.md", "p\n", None),
                  layout=capture.workspace)
    assert result.folders == ["x"] and [p.path for p in result.writes] == ["x"]


def test_such_a_folder_holding_the_persons_file_stays_and_the_file_is_skipped(capture: Capturer, tmp_path: Path) -> None:
    (tmp_path / "ws" / "x" / "empty").mkdir(parents=True)
    (tmp_path / "ws" / "x" / "mine").write_text("person's\n")
    result = plan(capture, disk(x__mine="person's\n"), recorded(capture, "x", "file\n", None, new_folders=["x"]),
                  layout=capture.workspace)
    assert result.folders == [] and result.blocked == ["x"] and not result.conflicts
    assert result.skipped[0].reason.startswith("x is now a folder, made where the file was by the changes taken back, "
                                               "and it holds what they did not put there (x/mine)")


def test_a_file_coming_back_under_missing_folders_names_them(capture: Capturer) -> None:
    result = plan(capture, {}, recorded(capture, "gone/sub/f", "1", None), layout=capture.workspace)
    assert result.paths[0].new_folders == ["gone", "gone/sub"]


# ------------------------------------------------------------------ restoring into a turn, and paths out of reach


def _restored_to_first_step(bracket_a_after: str) -> list[PathChange]:
    """The bracket's changes a restore to step 1 takes back, in a turn whose step 1 made a.txt
    ``2`` and whose bracket recorded a.txt ``1`` -> ``bracket_a_after`` and b.txt created."""
    log = Log()
    turn = log.begin()
    at = log.checkpoint(turn, change("a.txt", "1\n", "2\n"))
    log.checkpoint(turn, change("a.txt", "1\n", bracket_a_after), change("b.txt", None, "b\n"), bracket=True)
    log.end(turn)
    timeline = log.fold()
    owner = timeline.entries[turn]
    (bracket,) = planning.from_checkpoint(owner, owner.checkpoints[0], timeline.checkpoints_after(at))
    return bracket.changes


def test_restore_inside_a_bracketed_turn_starts_the_bracket_from_the_checkpoint() -> None:
    assert [(c.path, c.before) for c in _restored_to_first_step("3\n")] == [("a.txt", version("2\n")), ("b.txt", None)]


def test_restore_drops_a_bracket_change_that_ends_where_the_checkpoint_left_it() -> None:
    assert [c.path for c in _restored_to_first_step("2\n")] == ["b.txt"]


def test_a_path_behind_a_symlink_is_set_aside_unless_the_plan_removes_that_link() -> None:
    link_goes = PathPlan("sub", Version(b"/elsewhere", MODE_FILE), None)
    plan = Plan(paths=[link_goes, PathPlan("sub/a", None, content("a")), PathPlan("other/b", None, content("b"))])
    planning.set_aside(plan, {"sub/a": ("sub", "sub is a symlink"), "other/b": ("other", "other is a symlink")})
    assert [(p.path, p.skipped) for p in plan.paths] == [("sub", None), ("sub/a", None), ("other/b", "other is a symlink")]


@pytest.mark.parametrize("ours,result,action,stats", [
    (None, "a\nb\n", "create", (2, 0)),
    ("a\nb\n", None, "delete", (0, 2)),
    ("a\nb\n", "a\nc\n", "write", (1, 1)),
])
def test_each_written_path_says_its_action_and_lines(ours, result, action: str, stats: tuple[int, int]) -> None:
    now = None if ours is None else Version(ours.encode(), MODE_FILE)
    outcome = planning.outcome("a.txt", now, content(result), merged=False)
    assert (outcome.action, (outcome.additions, outcome.deletions)) == (action, stats)
