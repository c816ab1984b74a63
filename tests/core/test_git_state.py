"""The person's git state never changes: refs, stash, log, index, config, hooks and HEAD are
identical before and after every kind of operation, and every byte under .git stays put.
Non-git folders work too."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import dot_git, git, git_state, make_repo, write_files
from takeback.core.models import BatchChange

from .support import full_state, open_engine


def busy_repo(path: Path) -> Path:
    """A repository with branches, tags, a stash, a hook, custom config, staged and untracked work."""
    repo = make_repo(path, {"lines.txt": "".join(f"line {i}\n" for i in range(20)), "app.py": "x = 1\n", "README.md": "r\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write_files(repo, {"feature.txt": "f\n"})
    git(repo, "add", "feature.txt")
    git(repo, "commit", "-q", "-m", "feature")
    git(repo, "tag", "v1")
    git(repo, "tag", "-a", "v1-annotated", "-m", "annotated")
    write_files(repo, {"app.py": "x = 'stashed'\n"})
    git(repo, "stash", "push", "-q", "-m", "person's stash")
    git(repo, "config", "user.signingkey", "ABC")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    write_files(repo, {"app.py": "x = 'staged'\n"})
    git(repo, "add", "app.py")  # the index differs from HEAD
    write_files(repo, {"app.py": "x = 'staged'\ny = 'unstaged'\n", "untracked.txt": "u\n"})
    return repo


def test_every_operation_leaves_git_state_alone(tmp_path: Path) -> None:
    repo = busy_repo(tmp_path / "ws")
    engine = open_engine(repo)
    state, raw = git_state(repo), dot_git(repo)

    def same(step: str) -> None:
        assert dot_git(repo) == raw, f"{step}: bytes under .git changed"
        assert git_state(repo) == state, f"{step}: the user's git state changed"

    def lines(**changes: str) -> str:
        out = [f"line {i}\n" for i in range(20)]
        for k, v in changes.items():
            out[int(k[1:])] = v + "\n"
        return "".join(out)

    engine.begin_turn(label="bracket")
    same("begin")
    write_files(repo, {"lines.txt": lines(l1="agent"), "gen/new.py": "new\n"})
    (repo / "README.md").unlink()
    (repo / "feature.txt").rename(repo / "renamed.txt")
    engine.end_turn(commands=["make"])
    same("end")
    engine.record_batch([BatchChange(path="batch.txt", after=b"b\n", before=None)])
    (repo / "batch.txt").write_text("b\n")
    same("record_batch")
    engine.apply_batch([BatchChange(path="applied.txt", after=b"a\n")])
    same("apply_batch")
    engine.record_check(None, "tests", "passed", command="pytest")
    same("record_check")
    engine.begin_turn()
    engine.record_batch([BatchChange(path="lines.txt", after=lines(l1="agent", l10="two").encode())])
    (repo / "lines.txt").write_text(lines(l1="agent", l10="two"))
    (repo / "extra.txt").write_text("written by a shell command\n")
    engine.end_turn()
    same("batch in a bracket")
    (repo / "lines.txt").write_text(lines(l1="agent", l10="person"))  # the person overlaps line 10

    assert engine.undo(dry_run=True).dry_run
    same("dry-run undo")
    assert engine.undo().verdict == "refused"
    same("aborted undo")
    for option in ("skip", "markers", "force"):
        result = engine.undo(on_conflict=option)
        assert result.applied, option
        same(f"undo --on-conflict {option}")
        engine.redo(on_conflict="force")
        same(f"redo after {option}")
    (repo / "lines.txt").write_text(lines(l1="agent", l10="two"))
    engine.revert("1")
    same("revert")
    engine.redo()
    same("redo")
    assert engine.restore("#1").verdict == "refused"  # the person's own rewrite of lines.txt is in the way
    same("aborted restore")
    assert engine.restore("#1", on_conflict="force").applied
    same("restore")
    # (the check above went on the apply_batch turn, which this restore took back: a reverted
    # turn is never green, so the dry run goes back to turn #1 instead)
    engine.restore("#1", dry_run=True)
    same("dry-run restore")
    engine.redo()
    engine.entries()
    engine.status()
    engine.diff("1")
    engine.file_at("1", "lines.txt", "before")
    same("reads")
    engine.gc()
    same("gc")
    assert git(repo, "stash", "list").count("person's stash") == 1


def test_inherited_git_environment_does_not_redirect_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Called from a git hook: GIT_DIR and GIT_INDEX_FILE point at the user's repository."""
    repo = busy_repo(tmp_path / "ws")
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(repo / ".git" / "objects"))
    raw = dot_git(repo)
    engine = open_engine(repo)
    engine.begin_turn()
    (repo / "hooked.txt").write_text("h\n")
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["hooked.txt"]
    engine.undo()
    engine.redo()
    assert dot_git(repo) == raw
    for name in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY"):
        monkeypatch.delenv(name)
    assert git(repo, "stash", "list").count("person's stash") == 1


def test_workspace_in_a_subfolder_of_a_repository(tmp_path: Path) -> None:
    repo = busy_repo(tmp_path / "ws")
    write_files(repo, {"pkg/mod.py": "m = 1\n", "pkg/.gitignore": "*.out\n"})
    git(repo, "add", "pkg")
    git(repo, "commit", "-q", "-m", "pkg")
    state, raw = git_state(repo), dot_git(repo)
    engine = open_engine(repo / "pkg")
    start = full_state(repo)
    engine.begin_turn()
    write_files(repo, {"pkg/mod.py": "m = 2\n", "pkg/x.out": "ignored\n", "outside-pkg.txt": "not ours\n"})
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["mod.py"]
    engine.undo()
    assert (repo / "pkg/mod.py").read_text() == "m = 1\n"
    assert (repo / "outside-pkg.txt").exists() and (repo / "pkg/x.out").exists()
    assert git_state(repo) == state and dot_git(repo) == raw
    assert start[0]["app.py"] == full_state(repo)[0]["app.py"]


def test_nested_repository_git_state_is_left_alone(tmp_path: Path) -> None:
    """A nested repository's files are recorded and restored like any other; its .git never."""
    repo = make_repo(tmp_path / "ws")
    nested = make_repo(repo / "vendor" / "lib", {"lib.py": "v = 1\n"})
    outer_state, inner_state = git_state(repo), git_state(nested)
    inner_raw = dot_git(nested)
    for scanner in (True, False):
        engine = open_engine(repo, git_scanner=scanner)
        engine.begin_turn()
        (nested / "lib.py").write_text("v = 2\n")
        (repo / "top.txt").write_text("t\n")
        entry = engine.end_turn()
        assert [f.path for f in entry.files] == ["top.txt", "vendor/lib/lib.py"]
        engine.undo()
        assert (nested / "lib.py").read_text() == "v = 1\n"
    assert git_state(repo) == outer_state and git_state(nested) == inner_state
    assert dot_git(nested) == inner_raw
    assert (nested / ".git").is_dir()


def test_non_git_folder_works_and_gets_no_repository(plain: Path, tmp_path: Path) -> None:
    engine = open_engine(plain)
    status = engine.status()
    assert status.git_repository is False and status.head is None
    start = full_state(plain)
    engine.begin_turn()
    write_files(plain, {"src/app.py": "changed\n", "new/file.txt": "n\n"})
    (plain / "README.md").unlink()
    entry = engine.end_turn()
    assert {f.path: f.kind for f in entry.files} == {"src/app.py": "modified", "new/file.txt": "added", "README.md": "deleted"}
    end = full_state(plain)
    engine.undo()
    assert full_state(plain) == start
    engine.redo()
    assert full_state(plain) == end
    for folder in (plain, *plain.parents):
        assert not (folder / ".git").exists(), f"a .git appeared in {folder}"
