"""The work tree's watch (watch.py) and a long-lived engine's begin that reuses the last listing.

The watch may only ever err towards "changed": every case where something changed under the
tree must make the next begin list again, so a person's edit between two turns is never taken
for the agent's (promise 1)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from helpers import git, make_repo, write_files
from takeback.scanning import scan
from takeback.scanning.watch import TreeWatch

from .support import open_engine

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")

IGNORES = {".gitignore": "build/\n*.log\n", "src/app.py": "x = 1\n", "src/deep/mod.py": "y = 2\n", "docs/a.md": "a\n"}


def _watch(root: Path) -> TreeWatch:
    repo_ignored = {"build/"}
    watch = TreeWatch(str(root), lambda rel: rel in repo_ignored)
    watch.mark()
    return watch


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda ws: (ws / "src/deep/mod.py").write_text("y = 3\n"), id="a file written in a nested folder"),
        pytest.param(lambda ws: (ws / "docs/new.md").write_text("n\n"), id="a file created"),
        pytest.param(lambda ws: (ws / "docs/a.md").unlink(), id="a file removed"),
        pytest.param(lambda ws: os.rename(ws / "docs/a.md", ws / "src/a.md"), id="a file moved"),
        pytest.param(lambda ws: os.chmod(ws / "src/app.py", 0o755), id="a mode changed"),
        pytest.param(lambda ws: os.utime(ws / "src/app.py", (1, 1)), id="a time stamp changed"),
        pytest.param(lambda ws: (ws / "src/new").mkdir(), id="a folder created"),
        pytest.param(lambda ws: (ws / "x.log").write_text("ignored, but in a watched folder\n"), id="an ignored file"),
    ],
)
def test_any_change_under_a_watched_folder_ends_the_quiet(tmp_path: Path, change) -> None:
    ws = make_repo(tmp_path / "ws", dict(IGNORES))
    watch = _watch(ws)
    assert watch.quiet()
    change(ws)
    assert not watch.quiet()
    assert not watch.quiet()  # it stays so until the next mark
    watch.mark()
    assert watch.quiet()
    watch.close()


def test_a_new_folder_is_watched_from_the_next_mark(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(IGNORES))
    watch = _watch(ws)
    (ws / "src/new/deeper").mkdir(parents=True)
    assert not watch.quiet()
    watch.mark()
    assert watch.quiet()
    (ws / "src/new/deeper/file.py").write_text("z\n")
    assert not watch.quiet()
    watch.close()


def test_ignored_folders_git_s_folder_and_nested_repositories_are_not_watched(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(IGNORES))
    (ws / "build").mkdir()
    make_repo(ws / "vendor" / "lib")
    watch = _watch(ws)
    (ws / "build/out.o").write_bytes(b"\x00")
    (ws / ".git/info/exclude").write_text("# changed\n")
    (ws / "vendor/lib/inside.txt").write_text("not listed by git either\n")
    assert watch.quiet()
    watch.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "ws", dict(IGNORES))


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the listings made: of the whole tree, or of the files touched since the last one."""
    calls: list[int] = []
    whole, touched = scan.GitScanner._list_now, scan.GitScanner._relist

    def counted(self):
        calls.append(1)
        return whole(self)

    def counted_relist(self, *args):
        calls.append(1)
        return touched(self, *args)

    monkeypatch.setattr(scan.GitScanner, "_list_now", counted)
    monkeypatch.setattr(scan.GitScanner, "_relist", counted_relist)
    return calls


def _turn(engine, ws: Path, files: dict[str, str], label: str):
    engine.begin_turn(label=label)
    write_files(ws, files)
    return engine.end_turn()


def test_begin_reuses_the_last_listing_when_nothing_changed(repo: Path, listings: list[int]) -> None:
    engine = open_engine(repo, long_lived=True)
    _turn(engine, repo, {"src/app.py": "x = 'agent 1'\n"}, "one")
    assert engine._scan_cache.watching and len(listings) == 2
    second = _turn(engine, repo, {"docs/a.md": "agent 2\n"}, "two")
    assert len(listings) == 3  # the begin of turn two used the end of turn one
    assert [f.path for f in second.files] == ["docs/a.md"]
    engine.undo()
    engine.undo()
    assert (repo / "src/app.py").read_text() == "x = 1\n" and (repo / "docs/a.md").read_text() == "a\n"
    engine.close()


@pytest.mark.parametrize(
    "between",
    [
        pytest.param(lambda ws: (ws / "src/app.py").write_text("x = 'person'\n"), id="the person edits a file"),
        pytest.param(lambda ws: write_files(ws, {"notes/todo.md": "person\n"}), id="the person adds a file in a new folder"),
        pytest.param(lambda ws: git(ws, "add", "docs/a.md"), id="the person stages a file"),
        pytest.param(lambda ws: (ws / ".git/info/exclude").write_text("docs/\n"), id="the person changes info/exclude"),
        pytest.param(lambda ws: (ws / ".gitignore").write_text("build/\n"), id="the person changes .gitignore"),
    ],
)
def test_a_change_between_turns_makes_begin_list_again(repo: Path, listings: list[int], between) -> None:
    engine = open_engine(repo, long_lived=True)
    _turn(engine, repo, {"docs/a.md": "agent 1\n"}, "one")
    between(repo)
    before = len(listings)
    engine.begin_turn(label="two")
    assert len(listings) == before + 1
    write_files(repo, {"src/deep/mod.py": "y = 'agent 2'\n"})
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["src/deep/mod.py"]  # never the person's change
    engine.close()


def test_a_person_s_edit_between_turns_is_never_the_agent_s(repo: Path) -> None:
    """The same turns with and without the watch record the same files, and undoing the last
    turn keeps the person's edit made before it."""
    plain = make_repo(repo.parent / "plain", dict(IGNORES))
    results = []
    for ws, long_lived in ((repo, True), (plain, False)):
        engine = open_engine(ws, long_lived=long_lived)
        _turn(engine, ws, {"src/app.py": "x = 'agent'\n"}, "one")
        write_files(ws, {"src/app.py": "x = 'person'\n", "notes.md": "person\n"})
        last = _turn(engine, ws, {"src/app.py": "x = 'person'\nz = 'agent'\n", "docs/a.md": "agent\n"}, "two")
        results.append([(f.path, f.kind) for f in last.files])
        engine.undo()
        assert (ws / "src/app.py").read_text() == "x = 'person'\n" and (ws / "notes.md").exists()
        engine.close()
    assert results[0] == results[1] == [("docs/a.md", "modified"), ("src/app.py", "modified")]


def test_the_watch_is_off_by_setting_and_for_short_lived_engines(repo: Path, listings: list[int]) -> None:
    for engine in (open_engine(repo), open_engine(repo, long_lived=True, watch_tree=False)):
        _turn(engine, repo, {"docs/a.md": "agent\n"}, "one")
        count = len(listings)
        _turn(engine, repo, {"docs/a.md": "agent again\n"}, "two")
        assert len(listings) == count + 2 and not engine._scan_cache.watching


def _file_ops(ws: Path, rng, tracked: list[str]):
    """One random change a person or an agent makes to the tree."""
    folders = ["src", "src/deep", "docs", ""]
    name = f"f{rng.randrange(12)}.txt"
    folder = rng.choice(folders)
    path = ws / folder / name
    pick = rng.choice(tracked)
    choice = rng.randrange(11)
    if choice == 0:
        (ws / pick).write_text(f"changed {rng.random()}\n") if (ws / pick).is_file() else None
    elif choice == 1:
        git_content = git(ws, "show", f":{pick}")
        if (ws / pick).is_file() or not (ws / pick).exists():
            (ws / pick).write_text(git_content)  # back to what the index holds
    elif choice == 2:
        path.write_text(f"new {rng.random()}\n")
    elif choice == 3:
        (ws / folder / f"x{rng.randrange(5)}.log").write_text("ignored\n")
    elif choice == 4 and path.exists():
        path.unlink()
    elif choice == 5 and (ws / pick).is_file():
        (ws / pick).unlink()
    elif choice == 6 and path.exists():
        os.rename(path, ws / rng.choice(folders) / f"moved{rng.randrange(6)}.txt")
    elif choice == 7 and (ws / pick).is_file():
        os.chmod(ws / pick, 0o755 if rng.random() < 0.5 else 0o644)
    elif choice == 8:
        tmp = ws / folder / ".tmp-write"
        tmp.write_text(f"by rename {rng.random()}\n")
        os.replace(tmp, ws / pick if (ws / pick).parent.is_dir() else path)
    elif choice == 9 and rng.random() < 0.3:
        write_files(ws, {f"new{rng.randrange(3)}/inner.txt": "a new folder\n"})
    elif choice == 10 and rng.random() < 0.3:
        git(ws, "add", "-A", "docs") if (ws / "docs").is_dir() else None


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("lister", ["auto", "git"])
def test_a_listing_updated_with_the_touched_files_is_git_s_listing(
    repo: Path, seed: int, lister: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever changes between two listings, the listing made from the last one and the files
    the watch saw touched equals a listing of the whole tree (in-process, and by git)."""
    import random

    monkeypatch.setattr(scan, "LISTING", lister)
    rng = random.Random(seed)
    write_files(repo, {"src/deep/more.py": "z = 1\n", "docs/b.md": "b\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "more")
    tracked = git(repo, "ls-files").split()
    engine = open_engine(repo, long_lived=True)
    scanner = engine._scanner()
    for _ in range(120):
        for _ in range(rng.randrange(1, 4)):
            _file_ops(repo, rng, tracked)
        assert scanner._list() == scanner._list_now()[0]
    assert engine._scan_cache.relisted > 40  # most listings were the cheap kind
    engine.close()


def test_a_shell_step_after_an_edit_lists_only_the_touched_files(repo: Path, listings: list[int], monkeypatch) -> None:
    """An agent's edit between two listings costs a look at that file, not a listing of the tree."""
    whole = []
    real = scan.GitScanner._list_now
    monkeypatch.setattr(scan.GitScanner, "_list_now", lambda self: whole.append(1) or real(self))
    engine = open_engine(repo, long_lived=True)
    _turn(engine, repo, {"src/app.py": "x = 'agent 1'\n"}, "one")
    (repo / "docs/a.md").write_text("the person\n")
    second = _turn(engine, repo, {"src/deep/mod.py": "y = 'agent 2'\n"}, "two")
    assert [f.path for f in second.files] == ["src/deep/mod.py"]  # never the person's
    assert len(whole) == 1  # only the very first begin listed the whole tree
    engine.close()


def test_a_folder_holding_a_git_file_is_a_nested_repository_and_not_watched(tmp_path: Path) -> None:
    """A submodule or linked worktree has a ``.git`` file, not a folder: git lists it as one
    entry, so its files are not watched (a change there is not a change git would list)."""
    ws = make_repo(tmp_path / "ws", dict(IGNORES))
    (ws / "sub").mkdir()
    (ws / "sub/.git").write_text("gitdir: ../.git/modules/sub\n")
    (ws / "sub/deep").mkdir()
    watch = _watch(ws)
    (ws / "sub/file.txt").write_text("inside\n")
    (ws / "sub/deep/file.txt").write_text("inside\n")
    assert watch.quiet()
    (ws / "src/app.py").write_text("x = 9\n")
    assert not watch.quiet()
    watch.close()
