"""Operations at their edges, through the engine's public API on real repositories: an undo
whose target turn retention dropped afterwards is still taken back itself (the log commit that
held both the turn's end and the undo is rewritten to keep the undo only); an undo that only a
folder standing where its file comes back stops says so and what to do; a revert naming every
path of a turn takes the whole turn back (the turn is marked reverted); a dry-run restore while
a turn that changed nothing yet is open writes nothing and ends no turn; a link the person
re-pointed after a turn made it from a file is a conflict, not merged as text."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import make_repo, tree_state, write_files
from takeback.config import load_config
from takeback.engine.engine import Engine

from .support import open_engine


def test_an_undo_whose_turn_retention_dropped_can_still_be_taken_back(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    before = tree_state(ws)
    engine = open_engine(ws)
    engine.begin_turn(label="agent")
    write_files(ws, {"a.txt": "agent\n", "README.md": "agent readme\n"})
    after = tree_state(ws)
    undone = engine.undo()  # ends the open turn and takes it back: one log commit for both
    assert undone.verdict == "safe" and tree_state(ws) == before
    config = load_config(ws)
    config.retention.max_entries = 1
    kept = Engine(ws, config)
    report = kept.gc()
    assert report.removed_entries == 1 and [(s.first, s.last) for s in report.dropped] == [(1, 1)]
    assert [(e.number, e.state) for e in kept.entries()] == [(2, "applied")]
    result = kept.revert("2")
    assert result.verdict == "safe", result.message
    assert tree_state(ws) == after
    assert [(e.number, e.state) for e in open_engine(ws).entries()] == [(3, "applied"), (2, "reverted")]


def test_an_undo_stopped_only_by_a_folder_in_the_way_says_what_to_fix(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    engine.begin_turn(label="agent")
    (ws / "README.md").unlink()
    engine.end_turn()
    (ws / "README.md").mkdir()
    (ws / "README.md" / "mine.txt").write_text("the person's\n")
    state = tree_state(ws)
    result = engine.undo()
    assert result.verdict == "refused" and not result.applied
    assert result.message == (
        "undo of #1 refused: cannot change README.md (a folder is in the way (Takeback does not remove folders)); "
        "nothing was written"
    )
    assert result.next_action == "nothing was written; once what stands in the way of README.md is fixed, run 'takeback undo' again"
    assert tree_state(ws) == state and [e.state for e in engine.entries()] == ["applied"]


def test_a_revert_that_names_every_path_of_a_turn_reverts_the_turn(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    before = tree_state(ws)
    engine = open_engine(ws)
    engine.begin_turn(label="agent")
    write_files(ws, {"a.txt": "agent\n", "README.md": "agent readme\n"})
    engine.end_turn()
    result = engine.revert("1", paths=["a.txt", str(ws / "README.md")])
    assert result.verdict == "safe" and tree_state(ws) == before
    assert [(e.number, e.state) for e in engine.entries()] == [(2, "applied"), (1, "reverted")]


def test_a_dry_run_restore_while_an_idle_turn_is_open_changes_nothing(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    engine.begin_turn(label="first")
    write_files(ws, {"a.txt": "first\n"})
    first = engine.end_turn()
    assert first is not None
    engine.begin_turn(label="second")
    write_files(ws, {"a.txt": "second\n"})
    engine.end_turn()
    engine.begin_turn(label="thinking")  # open, nothing written yet
    state = tree_state(ws)
    result = engine.restore(first.checkpoints[-1].id, dry_run=True)
    assert not result.applied and result.message.startswith("dry run: restore of #1 would change 1 file")
    assert tree_state(ws) == state
    assert [(e.label, e.state) for e in engine.entries()] == [("thinking", "open"), ("second", "applied"), ("first", "applied")]


def test_a_link_the_person_repointed_after_a_turn_made_it_is_a_conflict(tmp_path: Path) -> None:
    """The turn turned the file ``current`` (holding the text "v1") into a link to v1; the person
    then pointed the link at v2. Undoing the turn must not write a regular file holding "v2"
    over the person's link (their edit, and the turn's, are not text to merge): a conflict."""
    ws = make_repo(tmp_path / "ws", {"current": "v1", "v1/app.txt": "one\n", "v2/app.txt": "two\n"})
    engine = open_engine(ws)
    engine.begin_turn(label="link it")
    (ws / "current").unlink()
    (ws / "current").symlink_to("v1")
    engine.end_turn()
    (ws / "current").unlink()
    (ws / "current").symlink_to("v2")
    result = engine.undo()
    assert result.verdict == "refused" and not result.applied
    assert [(c.path, c.reason) for c in result.conflicts] == [("current", "a symlink changed on both sides")]
    assert (ws / "current").is_symlink() and os.readlink(ws / "current") == "v2"
