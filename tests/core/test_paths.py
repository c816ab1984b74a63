"""Paths: nothing outside the workspace is ever read or written. '..', absolute paths outside,
symlinked folders leading out and paths inside .git are refused with a clear error, and nothing
is written — not in the workspace, not outside, not in the store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import tree_state, write_files
from takeback.core.models import BatchChange
from takeback.errors import OutsideWorkspace
from takeback.workspace.files import Workspace

from .support import batch, full_state, nothing_written

OUTSIDE = b"outside content\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "x.txt").write_bytes(OUTSIDE)
    return folder


@pytest.fixture
def linked(ws: Path, outside: Path) -> Path:
    """The workspace holds a symlink to a folder outside it."""
    os.symlink(outside, ws / "outlink")
    return ws


def _cases(ws: Path, outside: Path) -> list[tuple[str, str]]:
    return [
        ("../escape.txt", "leads outside the workspace (contains '..')"),
        ("src/../../escape.txt", "leads outside the workspace (contains '..')"),
        (str(outside / "x.txt"), "is outside the workspace"),
        ("/etc/passwd", "is outside the workspace"),
        ("outlink/x.txt", "goes through a symlink that leads outside the workspace"),
        ("outlink/new/deeper.txt", "goes through a symlink that leads outside the workspace"),
        (".git/config", "is inside a .git folder, which Takeback never touches"),
        ("vendor/.git/HEAD", "is inside a .git folder, which Takeback never touches"),
        ("", "empty or contains a NUL byte"),
        ("bad\x00name", "empty or contains a NUL byte"),
        (".", "names the workspace root, not a file"),
    ]


CASE_IDS = ["dotdot", "dotdot-nested", "abs-outside", "abs-etc", "symlink-out", "symlink-out-new", "dot-git", "nested-dot-git", "empty", "nul", "root"]


@pytest.fixture(params=["git", "plain"])
def ws_kind(request: pytest.FixtureRequest) -> str:
    return request.param


CALLS = ["record_batch", "apply_batch", "renamed_from", "file_at", "diff"]


@pytest.mark.parametrize("index", range(len(CASE_IDS)), ids=CASE_IDS)
def test_outside_paths_are_refused(index: int, linked: Path, engine, outside: Path) -> None:
    ws = linked
    batch(engine, ws, {"inside.txt": "in\n"})
    path, message = _cases(ws, outside)[index]
    outside_before = tree_state(outside)
    for call in CALLS:
        if path == "" and call in ("renamed_from", "diff"):
            continue  # an empty optional path means 'none' there
        with nothing_written(engine, ws):
            with pytest.raises(OutsideWorkspace) as caught:
                if call == "record_batch":
                    engine.record_batch([BatchChange(path="ok.txt", after=b"ok\n"), BatchChange(path=path, after=b"evil\n")])
                elif call == "apply_batch":
                    engine.apply_batch([BatchChange(path="ok.txt", after=b"ok\n"), BatchChange(path=path, after=b"evil\n")])
                elif call == "renamed_from":
                    engine.record_batch([BatchChange(path="moved.txt", after=b"m\n", before=None, renamed_from=path)])
                elif call == "file_at":
                    engine.file_at("1", path)
                else:
                    engine.diff("1", path)
        assert message in str(caught.value), call
        assert caught.value.code == "outside-workspace" and caught.value.exit_status == 2
        assert tree_state(outside) == outside_before, call
        assert not (ws.parent / "escape.txt").exists()
        assert [e.number for e in engine.entries()] == [1]


def test_absolute_path_inside_is_accepted(ws: Path, engine) -> None:
    entry, _ = batch(engine, ws, {str(ws / "src" / "abs.txt"): "abs\n"})
    assert [f.path for f in entry.files] == ["src/abs.txt"]


def test_bracket_does_not_follow_a_symlinked_folder_out(linked: Path, engine, outside: Path) -> None:
    ws = linked
    engine.begin_turn()
    (outside / "x.txt").write_bytes(b"changed outside during the turn\n")
    (outside / "y.txt").write_bytes(b"new outside\n")
    (ws / "in.txt").write_text("inside\n")
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["in.txt"]
    outside_now = tree_state(outside)
    engine.undo()
    assert tree_state(outside) == outside_now


def test_revert_through_a_folder_later_swapped_for_an_outside_link(ws: Path, engine, outside: Path) -> None:
    """A turn wrote sub/x.txt; then sub/ was replaced by a symlink to a folder outside that holds
    the same file. Undo must not delete or write anything out there: the path is skipped with
    a reason naming the link (not the whole undo refused), and nothing is written."""
    batch(engine, ws, {"sub/x.txt": OUTSIDE})
    (ws / "sub" / "x.txt").unlink()
    (ws / "sub").rmdir()
    os.symlink(outside, ws / "sub")
    outside_before = tree_state(outside)
    with nothing_written(engine, ws, objects=False):
        result = engine.undo()
    assert (result.verdict, result.applied) == ("refused", False)
    assert [s.path for s in result.skipped] == ["sub/x.txt"]
    assert "sub is a symlink that leads outside the workspace" in result.skipped[0].reason
    assert tree_state(outside) == outside_before
    dry = engine.revert("1", dry_run=True)
    assert [s.path for s in dry.skipped] == ["sub/x.txt"] and not dry.restored
    assert tree_state(outside) == outside_before


def test_bracket_ignores_dot_git_contents(ws: Path, engine, ws_kind: str) -> None:
    if ws_kind == "plain":
        (ws / ".git").mkdir()
    engine.begin_turn()
    write_files(ws, {".git/takeback-probe": "should never be recorded\n", "sub/.git/HEAD": "ref: x\n", "ok.txt": "ok\n"})
    entry = engine.end_turn()
    assert all(".git" not in f.path.split("/") for f in entry.files)
    assert "ok.txt" in [f.path for f in entry.files]
    assert full_state(ws)[0]["ok.txt"] == b"ok\n"


_PARTS = ["a", "b", "in", "out", "inlink", "outlink", ".", "..", "", ".git", "é", "x y", "f.txt"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(_PARTS), min_size=1, max_size=5))
def test_reach_answers_what_rel_and_link_above_answer(tmp_path: Path, parts: list[str]) -> None:
    """``Workspace.reach`` (asked of every path an operation plans) gives its first answer
    without asking ``rel``: for any path, with folders, a link inside and one leading out on
    the way, it agrees with ``rel`` (refused or not) and ``link_above``."""
    ws = tmp_path / "reach"
    if not ws.exists():
        (ws / "in" / "a").mkdir(parents=True)
        (ws / "in" / "f.txt").write_bytes(b"x\n")
        (tmp_path / "away").mkdir()
        os.symlink(ws / "in", ws / "inlink")
        os.symlink(tmp_path / "away", ws / "outlink")
    workspace = Workspace(ws)
    path = "/".join(parts)
    link, outside = workspace.reach(path)
    try:
        workspace.rel(path)
        refused = None
    except OutsideWorkspace as exc:
        refused = str(exc)
    assert (None if outside is None else str(outside)) == refused
    assert link == workspace.link_above(path)
