"""The repository and work tree a workspace is in, kept between brackets (``scanning/discovery.py``):
through a run of real layout changes — a repository made and removed in a folder between the
workspace and its work tree, the ``.git`` folder replaced by a ``.git`` file naming another git
folder, ``core.worktree`` set elsewhere and back, a folder on the way swapped for a symlink, a linked
worktree — the kept answer is what
libgit2 answers afresh after each change; while nothing changes, libgit2 is asked once; a
change in the last clock ticks is not trusted yet."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from helpers import git, make_repo
from takeback.scanning import discovery
from takeback.scanning.discovery import KeptWorkTree, work_tree


def _settled() -> None:
    time.sleep(discovery.RACY_NS / 1e9 + 0.02)  # past the racy window: the answer may be kept


def _agree(kept: KeptWorkTree, root: Path) -> tuple[str, str] | None:
    """The kept answer, checked against a fresh one; asked again, libgit2 is not asked twice."""
    fresh = work_tree(root)
    assert kept.get(root) == fresh
    asked = kept.asked
    assert kept.get(root) == fresh
    assert kept.asked == asked or fresh is None  # kept, unless there was nothing to keep
    return fresh


def test_the_kept_work_tree_follows_every_layout_change(tmp_path: Path) -> None:
    top = make_repo(tmp_path / "top")
    root = top / "sub" / "deeper"
    root.mkdir(parents=True)
    kept = KeptWorkTree()
    _settled()
    assert _agree(kept, root) == (str(top / ".git") + "/", str(top))

    git(top / "sub", "init", "-q")  # a repository between the workspace and its work tree
    _settled()
    assert _agree(kept, root)[1] == str(top / "sub")

    shutil.rmtree(top / "sub" / ".git")
    _settled()
    assert _agree(kept, root)[1] == str(top)

    elsewhere = tmp_path / "gitdirs" / "top.git"  # .git becomes a file naming another git folder
    elsewhere.parent.mkdir()
    shutil.move(top / ".git", elsewhere)
    (top / ".git").write_text(f"gitdir: {elsewhere}\n")
    _settled()
    assert _agree(kept, root) == (str(elsewhere) + "/", str(top))

    other = tmp_path / "gitdirs" / "other.git"  # rewritten in place to name yet another
    shutil.copytree(elsewhere, other)
    (top / ".git").write_text(f"gitdir: {other}\n")
    _settled()
    assert _agree(kept, root) == (str(other) + "/", str(top))

    git(top, "config", "core.worktree", str(tmp_path / "gitdirs"))  # the work tree elsewhere: root is in none
    _settled()
    assert _agree(kept, root) is None
    git(top, "config", "--unset", "core.worktree")
    _settled()
    assert _agree(kept, root)[1] == str(top)

    other = make_repo(tmp_path / "other")  # a folder on the way swapped for a symlink to another repository
    (other / "sub" / "deeper").mkdir(parents=True)
    shutil.move(top / "sub", tmp_path / "old-sub")
    (top / "sub").symlink_to(other / "sub")
    _settled()
    assert _agree(kept, root) != (str(other) + "/", str(top))


def test_a_linked_worktree_is_kept_under_its_own_git_folder(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "side")
    kept = KeptWorkTree()
    _settled()
    found = _agree(kept, tmp_path / "linked")
    assert found is not None and found[1] == str(tmp_path / "linked") and "/worktrees/" in found[0]
    git(main, "worktree", "remove", "--force", str(tmp_path / "linked"))
    (tmp_path / "linked").mkdir()
    assert _agree(kept, tmp_path / "linked") is None


def test_an_answer_from_the_last_clock_ticks_is_asked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "ws")
    kept = KeptWorkTree()
    monkeypatch.setattr(discovery, "RACY_NS", 3600 * 10**9)  # every stamp is recent
    kept.get(repo)
    kept.get(repo)
    assert kept.asked == 2
    monkeypatch.setattr(discovery, "RACY_NS", 0)
    kept.get(repo)
    kept.get(repo)
    assert kept.asked == 3
