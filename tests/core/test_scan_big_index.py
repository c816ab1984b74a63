"""A long-lived engine's shell step in a repository whose index is too big to list in-process.

Past ``listing.MAX_ENTRIES`` index entries the whole tree is listed by git, but the files a
tree watch saw touched since the last listing are asked of libgit2 in-process, with the index
it keeps parsed: a shell step starts no git process while the index is unchanged (counted),
an index rewritten by ``git add`` between steps is read again, and where libgit2 could answer
otherwise (a negated ignore pattern or a ``.gitattributes`` above a touched file) git is asked.
The limit is set to 3 entries so a small real repository stands for a big one.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import git, make_repo, write_files
from takeback.scanning import listing
from takeback.scanning.scan import GitScanner

from .support import open_engine
from .test_scan_listing import libgit2_reads_this_tests_config  # noqa: F401 - autouse fixture

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")

BASE = {
    ".gitignore": "*.log\n",
    "README.md": "# demo\n",
    "src/app.py": "A = 1\n",
    "src/util.py": "U = 1\n",
    "src/pkg/mod.py": "M = 1\n",
    "docs/guide.md": "g\n",
}


@pytest.fixture(autouse=True)
def big_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing, "MAX_ENTRIES", 3)


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """Every process the code under test starts (argv), as it starts it."""
    started: list[list[str]] = []
    original = subprocess.Popen.__init__

    def counting(self: subprocess.Popen, args: list[str], *rest: object, **kwargs: object) -> None:
        started.append(list(args))
        original(self, args, *rest, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(subprocess.Popen, "__init__", counting)
    yield started


def _step(engine, key: str, change: dict[str, str]) -> set[str]:
    """One shell step changing ``change``; the files its checkpoint recorded."""
    engine.begin_step(key, session="s", agent="claude")
    write_files(engine.workspace.root, change)
    entry = engine.end_step(key, f"Bash {key}")
    if entry is None:
        return set()
    return {f.path for f in engine.entry(entry.id).files}


def test_a_shell_step_asks_no_git_while_the_index_is_unchanged(tmp_path: Path, spawned: list[list[str]]) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    engine = open_engine(ws, long_lived=True)
    assert _step(engine, "first", {"src/app.py": "A = 2\n"}) == {"src/app.py"}  # lists the tree: git
    assert any("diff-files" in argv for argv in spawned)
    spawned.clear()
    change = {"src/util.py": "U = 2\n", "src/pkg/new.py": "N = 1\n", "build.log": "ignored\n", "docs/guide.md": "g2\n"}
    assert _step(engine, "second", change) == {"src/util.py", "src/pkg/new.py", "docs/guide.md"}
    assert _step(engine, "nothing", {}) == set()
    assert spawned == []  # the touched files were asked in-process, against the index held parsed
    assert engine._scan_cache.relisted >= 1
    # the record is git's answer: what git lists now is what the steps left dirty
    out = subprocess.run(["git", "status", "--porcelain", "-uall"], cwd=ws, capture_output=True, text=True, check=True)
    assert {line[3:] for line in out.stdout.splitlines()} == {"src/app.py", "src/util.py", "src/pkg/new.py", "docs/guide.md"}


def test_an_index_changed_by_git_add_between_steps_is_read_again(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    engine = open_engine(ws, long_lived=True)
    _step(engine, "first", {"src/app.py": "A = 2\n"})
    scanner = engine._scanner()
    assert isinstance(scanner, GitScanner) and scanner.lister is not None
    held = scanner._index_entries(scanner.index_file())
    assert held is not None and "src/pkg/new.py" not in held
    write_files(ws, {"src/pkg/new.py": "N = 1\n"})
    git(ws, "add", "src/pkg/new.py")
    again = scanner._index_entries(scanner.index_file())
    assert again is not None and "src/pkg/new.py" in again
    # a step that stages and commits what it changes still records its change, from the index copy
    engine.begin_step("commit", session="s")
    write_files(ws, {"src/util.py": "U = 3\n"})
    git(ws, "commit", "-qam", "agent commits")
    entry = engine.end_step("commit", "Bash: git commit")
    assert entry is not None
    assert engine.file_at(entry.id, "src/util.py", "before") == b"U = 1\n"
    assert engine.file_at(entry.id, "src/util.py", "after") == b"U = 3\n"


@pytest.mark.parametrize("rule", ["negation", "attributes"])
def test_git_is_asked_where_libgit2_could_answer_otherwise(tmp_path: Path, rule: str, spawned: list[list[str]]) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    if rule == "negation":
        write_files(ws, {"src/.gitignore": "*.tmp\n!keep.tmp\n"})
    else:
        write_files(ws, {"src/.gitattributes": "*.md linguist-documentation\n"})
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "rules")
    engine = open_engine(ws, long_lived=True)
    _step(engine, "first", {"docs/guide.md": "g2\n"})
    spawned.clear()
    assert _step(engine, "second", {"src/util.py": "U = 2\n"}) == {"src/util.py"}
    assert any("diff-files" in argv for argv in spawned)  # declined in-process: git answered
    spawned.clear()
    assert _step(engine, "third", {"docs/guide.md": "g3\n"}) == {"docs/guide.md"}
    if rule == "negation":  # no ignore file above docs/ has a negation: answered in-process
        assert spawned == []


def test_a_whole_tree_listing_of_a_big_index_is_declined(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    lister = listing.Lister(str(ws / ".git"), str(ws))
    with pytest.raises(listing.Unsupported, match="index entries"):
        lister.list_dirty(str(ws), "")
    write_files(ws, {"src/app.py": "A = 2\n"})
    assert lister.list_dirty(str(ws), "", [b"src/app.py", b"src/util.py"]) == [b"src/app.py"]
    (ws / "src" / "pkg" / "mod.py").unlink()
    (ws / "src" / "pkg" / "mod.py").mkdir()
    with pytest.raises(listing.Unsupported, match="folder"):
        lister.list_dirty(str(ws), "", [b"src/pkg/mod.py"])


def test_the_upkeep_parses_the_index_the_look_ups_then_use(tmp_path: Path, spawned: list[list[str]]) -> None:
    """``Engine.upkeep`` (a long-lived process's, after an answer or at its start) readies the
    in-process look-ups (``Lister.ready``): the repository whose index it parsed is the one the
    next step's look-up uses, not one opened (and its index parsed) on that step's path."""
    ws = make_repo(tmp_path / "ws", dict(BASE))
    engine = open_engine(ws, long_lived=True)
    engine.defer_upkeep()
    engine.upkeep()
    lister = engine._scan_cache._lister
    assert lister is not None
    ready = lister._repos[0]
    spawned.clear()
    assert _step(engine, "first", {"src/app.py": "A = 2\n"}) == {"src/app.py"}
    assert spawned == [] and lister._repos[0] is ready
    engine.close()
