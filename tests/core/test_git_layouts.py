"""Work trees laid out the less common ways git allows, and what git hides from a listing.

Each test builds the layout with the real git in a temp folder, runs a turn that edits a
tracked file, adds a file and deletes one (or the case's own steps), and checks what the turn
recorded, that undo gives back the tree exactly as it was at begin and redo the tree as it was
at end, and that the user's git state reads the same throughout.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers import git, make_repo, write_files
from takeback import scan

from .support import full_state, open_engine

FILES = {"README.md": "# demo\n", "src/app.py": "def main():\n    return 1\n", "src/util.py": "X = 1\n"}


@pytest.fixture(params=["auto", "git"])
def listing_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each layout listed in-process where the scanner chooses to ("auto": these trees are
    small) and by git (as on a large tree)."""
    monkeypatch.setattr(scan, "LISTING", request.param)
    yield request.param


def git_view(ws: Path) -> tuple[str, str, str]:
    """What the person's git says about the work tree (status, HEAD, refs)."""
    return (
        git(ws, "status", "--porcelain", "--untracked-files=all", "--ignored"),
        git(ws, "rev-parse", "HEAD"),
        git(ws, "for-each-ref"),
    )


def commit_all(ws: Path, files: dict[str, str | bytes]) -> None:
    write_files(ws, files)
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "initial")


def separate_git_dir(tmp: Path) -> Path:
    git(tmp, "init", "-q", "-b", "main", "--separate-git-dir", str(tmp / "elsewhere.git"), str(tmp / "ws"))
    commit_all(tmp / "ws", FILES)
    return tmp / "ws"


def linked_worktree(tmp: Path) -> Path:
    main = make_repo(tmp / "main", dict(FILES))
    git(main, "worktree", "add", "-q", str(tmp / "ws"))
    return tmp / "ws"


def symlinked_dot_git(tmp: Path) -> Path:
    """Android's ``repo`` layout: ``.git`` is a symlink into a folder beside the work tree."""
    make_repo(tmp / "made", {})
    (tmp / ".repo" / "projects").mkdir(parents=True)
    os.rename(tmp / "made" / ".git", tmp / ".repo" / "projects" / "ws.git")
    (tmp / "ws").mkdir()
    os.symlink("../.repo/projects/ws.git", tmp / "ws" / ".git")
    commit_all(tmp / "ws", FILES)
    return tmp / "ws"


def core_worktree(tmp: Path) -> Path:
    """The git folder sits above the work tree, which ``core.worktree`` names."""
    make_repo(tmp / "repo", {})
    (tmp / "repo" / "tree").mkdir()
    git(tmp / "repo", "config", "core.worktree", str(tmp / "repo" / "tree"))
    commit_all(tmp / "repo" / "tree", FILES)
    return tmp / "repo" / "tree"


def git_file_with_core_worktree(tmp: Path) -> Path:
    """A ``.git`` file naming a git folder whose ``core.worktree`` points back (older submodules)."""
    separate_git_dir(tmp)
    git(tmp / "ws", "config", "core.worktree", str(tmp / "ws"))
    return tmp / "ws"


LAYOUTS: dict[str, Callable[[Path], Path]] = {
    "separate git dir": separate_git_dir,
    "linked worktree": linked_worktree,
    "symlinked .git": symlinked_dot_git,
    "core.worktree": core_worktree,
    ".git file and core.worktree": git_file_with_core_worktree,
}


def edit_add_delete(ws: Path) -> None:
    (ws / "src/app.py").write_text("def main():\n    return 2\n")
    (ws / "new.txt").write_text("new\n")
    (ws / "src/util.py").unlink()


def run_turn(ws: Path, during: Callable[[Path], None], **config) -> tuple:
    """One bracketed turn: (the entry, the tree at begin, the tree at end, the engine)."""
    engine = open_engine(ws, **config)
    start = full_state(ws)
    engine.begin_turn(label="turn")
    during(ws)
    end = full_state(ws)
    return engine.end_turn(), start, end, engine


def undo_redo_exact(engine, ws: Path, start, end) -> None:
    result = engine.undo()
    assert result.applied and result.verdict == "safe", result
    assert full_state(ws) == start
    result = engine.redo()
    assert result.applied and result.verdict == "safe", result
    assert full_state(ws) == end


def kinds(entry) -> dict[str, str]:
    return {f.path: f.kind for f in entry.files}


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_layouts_record_what_git_sees(layout: str, tmp_path: Path, listing_by: str) -> None:
    ws = LAYOUTS[layout](tmp_path)
    before_git = git_view(ws)
    entry, start, end, engine = run_turn(ws, edit_add_delete)
    assert kinds(entry) == {"src/app.py": "modified", "new.txt": "added", "src/util.py": "deleted"}
    undo_redo_exact(engine, ws, start, end)
    engine.undo()
    assert git_view(ws) == before_git
