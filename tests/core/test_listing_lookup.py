"""The look-up of a few touched files at a big index (``listing._look_up``): one libgit2 diff per
path, given as a pathspec so its walks start and end at that path, answers exactly what the
literal path list answers, and what ``git status`` says of those paths: modified, deleted,
untracked (also inside an untracked folder), ignored, clean, absent, a folder with what it
holds, a file beside its own folder, names with spaces and other bytes; a name a pathspec
would read as a pattern (``a*b``, ``!x``, ``#x``, ``[ab]``, a trailing space) goes through the
literal list, so ``a*b`` never lists ``axb``. Each plain path is looked up through a pathspec
(counted)."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from helpers import git, make_repo, write_files
from takeback.scanning import listing

FILES = {
    "src/app.py": "app\n", "src/util.py": "util\n", "docs/a b.md": "space\n", "docs/é.md": "accent\n",
    "a*b": "star\n", "axb": "x\n", "!neg": "bang\n", "#hash": "hash\n", "[ab]": "brackets\n", "a": "a\n",
    "keep/clean.txt": "clean\n", ".gitignore": "*.log\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    ws = make_repo(tmp_path / "ws", FILES)
    write_files(ws, {
        "src/app.py": "changed\n", "axb": "changed\n", "a*b": "changed too\n", "docs/a b.md": "changed\n",
        "new/deep/file.txt": "untracked\n", "notes.txt": "untracked\n", "debug.log": "ignored\n", "ab": "untracked\n",
    })
    (ws / "src/util.py").unlink()
    found = pygit2.Repository(str(ws))
    found.index.read(False)
    return found


CASES = [
    [b"src/app.py"], [b"src/util.py"], [b"keep/clean.txt"], [b"no/such/file"], [b"new/deep/file.txt"],
    [b"new"], [b"debug.log"], [b"src"], [b"src", b"src/app.py"], [b"docs/a b.md"], ["docs/é.md".encode()],
    [b"a*b"], [b"axb"], [b"!neg"], [b"#hash"], [b"[ab]"], [b"a"], [b"ab"], [b"notes.txt", b"src/app.py", b"axb"],
    [b"src/app.py "], [b"src/"],
]


@pytest.mark.parametrize("paths", CASES, ids=[b",".join(c).decode("utf-8", "replace") for c in CASES])
def test_a_look_up_answers_what_the_literal_list_does(repo: pygit2.Repository, paths: list[bytes]) -> None:
    assert sorted(listing._look_up(repo, paths)) == sorted(set(listing._diff(repo, paths)))


def test_what_it_lists_is_what_git_lists(repo: pygit2.Repository) -> None:
    ws = Path(repo.workdir)
    paths = [b"src/app.py", b"src/util.py", b"keep/clean.txt", b"new", b"a*b", b"notes.txt", b"debug.log", b"ab"]
    listed = {raw for status, raw in listing._look_up(repo, paths) if status != 6}  # 6: ignored, not listed
    status = git(ws, "--literal-pathspecs", "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--", *[p.decode() for p in paths])
    by_git = {entry[3:].encode() for entry in status.split("\0") if entry}
    assert listed == by_git == {b"src/app.py", b"src/util.py", b"new/deep/file.txt", b"a*b", b"notes.txt", b"ab"}


def test_plain_paths_go_through_a_pathspec_and_patterns_do_not(repo: pygit2.Repository, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[list[bytes] | None, bool]] = []
    real = listing._diff

    def counting(found: pygit2.Repository, pathlist: list[bytes] | None, literal: bool = True) -> list[tuple[int, bytes]]:
        calls.append((pathlist, literal))
        return real(found, pathlist, literal)

    monkeypatch.setattr(listing, "_diff", counting)
    listing._look_up(repo, [b"src/app.py", b"notes.txt"])
    assert calls == [([b"src/app.py"], False), ([b"notes.txt"], False)]
    calls.clear()
    assert [raw for _, raw in listing._look_up(repo, [b"src/app.py", b"a*b"])] in ([b"a*b", b"src/app.py"], [b"src/app.py", b"a*b"])
    assert calls == [([b"src/app.py", b"a*b"], True)]
