"""The guard's ignore check (``Engine.ignore_check``, ``scanning/ignored.py``) answers what git
answers: ``git check-ignore`` (tracked files are not ignored) is the oracle, on real
repositories, with and without negated patterns (where libgit2 and git may disagree and git is
asked), in a workspace that is a repository's subfolder, and in a folder that is no repository
(the walk's ``.gitignore`` rules)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import git, make_repo, write_files
from takeback.guard.classify import Call, classify
from takeback.guard.rules import IGNORED
from takeback.hooks.guarding import workspace_view

from .support import open_engine

FILES = {
    "src/app.py": "x = 1\n",
    "src/gen/out.js": "built\n",
    "build/keep.txt": "tracked under an ignored folder\n",
    "logs/app.log": "log\n",
    "logs/keep.log": "kept\n",
    "deep/a/b/c.tmp": "tmp\n",
    ".env": "SECRET=1\n",
    "data/app.db": "db\n",
}
PATHS = [
    "src/app.py", "src/app.py/", "src/gen/out.js", "src/gen/", "src/gen", "build", "build/", "build/keep.txt",
    "build/other.o", "logs/app.log", "logs/keep.log", "logs/new.log", "logs/", "deep/a/b/c.tmp", "deep/a/b/",
    ".env", ".env.example", "data/app.db", "data/", "nothing/here.txt", "*.log", "src/*.tmp",
]


def check_ignore(repo: Path, rel: str) -> bool:
    proc = subprocess.run(["git", "check-ignore", "-q", "--", rel], cwd=repo, capture_output=True)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode == 0


def make(tmp_path: Path, ignore: str, sub_ignore: str = "") -> Path:
    nested = {"logs/.gitignore": sub_ignore} if sub_ignore else {}
    repo = make_repo(tmp_path / "ws", {"README.md": "hi\n", ".gitignore": ignore, **nested})
    write_files(repo, FILES)
    git(repo, "add", "-f", "build/keep.txt")
    git(repo, "commit", "-qm", "tracked under an ignored folder")
    return repo


PLAIN_RULES = "build/\n*.log\n*.tmp\n.env\ndata/*.db\nsrc/gen/\n"


@pytest.mark.parametrize(("ignore", "sub_ignore", "asks_git"), [
    (PLAIN_RULES, "", False),
    (PLAIN_RULES + "!keep.log\n", "", True),
    (PLAIN_RULES, "!keep.log\n", True),  # a nested negation under a parent's *.log (libgit2 #7283)
    ("*\n!*/\n!*.py\n!README.md\n!.gitignore\n", "", True),
])
def test_the_check_answers_as_git_check_ignore(tmp_path: Path, ignore: str, sub_ignore: str, asks_git: bool) -> None:
    repo = make(tmp_path, ignore, sub_ignore)
    engine = open_engine(repo)
    check = engine.ignore_check()
    got = {rel: check(rel) for rel in PATHS}
    expected = {rel: check_ignore(repo, rel) for rel in PATHS}
    # git answers "not ignored" for an ignored folder that holds a tracked file (build/keep.txt);
    # deleting it still deletes the ignored files beside that one: the guard's answer is "ignored".
    expected.update({rel: ignore.startswith("build/") for rel in ("build", "build/")})
    assert got == expected
    assert (check.asked_git > 0) == asks_git  # type: ignore[attr-defined]


def test_a_workspace_inside_a_repository_asks_with_its_prefix(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws", {"README.md": "hi\n", ".gitignore": "*.tmp\n", "pkg/.gitignore": "out/\n"})
    write_files(repo, {"pkg/a.tmp": "t\n", "pkg/out/x.js": "x\n", "pkg/src/a.py": "a\n"})
    check = open_engine(repo / "pkg").ignore_check()
    assert [check(p) for p in ("a.tmp", "out/", "out/x.js", "src/a.py", "out")] == [True, True, True, False, True]
    assert not check(".") and not check("/")  # the workspace itself: not "ignored" (classify.py says what deleting it is)


def test_when_git_cannot_answer_a_path_counts_as_ignored(tmp_path: Path) -> None:
    """No libgit2 answer and no git to ask: the guard asks rather than let something go unheld."""
    repo = make_repo(tmp_path / "ws", {"README.md": "hi\n", ".gitignore": "!keep.log\n*.tmp\n"})
    engine = open_engine(repo)
    check = engine.ignore_check()
    check.scanner.git = str(tmp_path / "no-such-git")  # type: ignore[attr-defined]
    check._libgit2 = None  # type: ignore[attr-defined]
    assert check("a.py") is True and check.asked_git == 1  # type: ignore[attr-defined]


def test_a_folder_that_is_no_repository_follows_its_gitignore_files(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    write_files(ws, {".gitignore": "build/\n*.log\n", "sub/.gitignore": "!keep.log\nsecret\n", "src/a.py": "a\n",
                     "build/x.o": "o\n", "sub/keep.log": "k\n", "sub/secret": "s\n", "other.log": "l\n"})
    check = open_engine(ws).ignore_check()
    assert not check(".")
    assert {p: check(p) for p in ("src/a.py", "build", "build/", "build/x.o", "other.log", "sub/keep.log", "sub/secret", "sub/")} == {
        "src/a.py": False, "build": True, "build/": True, "build/x.o": True, "other.log": True,
        "sub/keep.log": False, "sub/secret": True, "sub/": False,
    }


def test_the_guard_sees_ignored_files_through_the_engine(tmp_path: Path) -> None:
    repo = make(tmp_path, PLAIN_RULES)
    ws = workspace_view(open_engine(repo), {"HOME": str(tmp_path / "home")})
    assert classify(Call(command="npm test", cwd=str(repo)), ws).undoable
    assert classify(Call(command="cd src && rm -rf dist && make", cwd=str(repo)), ws).undoable
    verdict = classify(Call(command="rm -rf build data/app.db", cwd=str(repo)), ws)
    assert [f.effect for f in verdict.findings] == [IGNORED, IGNORED]
    assert not classify(Call(command="rm -f src/app.py", cwd=str(repo)), ws).findings
