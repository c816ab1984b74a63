"""Writing the person's files on odd file systems and around odd entries: a path spelled through
a symlink to the workspace, a broken link where a folder must come back, an immutable folder,
a file system that keeps no birth time and no inode flags (ramfs), and recovery meeting a
symlink where the folder it made was, or the person's file inside it.

Real folders, real mounts and ``chattr``, as root (skipped with the reason elsewhere); each
test checks what the person is told and what is on disk after.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from helpers import make_repo, new_file_system, write_files
from takeback.core.models import BatchChange
from takeback.engine.engine import Engine
from takeback.workspace.birth import born_ns
from takeback.workspace.journal import JournalFile

from .support import open_engine


def _turn(engine: Engine, ws: Path, change: object) -> None:
    engine.begin_turn(label="agent")
    change()  # type: ignore[operator]
    engine.end_turn()


def test_a_path_spelled_through_a_link_to_the_workspace_is_the_workspaces(tmp_path: Path) -> None:
    """An editor that opened the folder through a symlink names its files that way: the batch
    records the workspace's own path, and its undo writes the real file."""
    ws = make_repo(tmp_path / "ws", {"src/app.py": "one\n"})
    link = tmp_path / "link"
    link.symlink_to(ws)
    engine = open_engine(ws)
    entry, _ = engine.record_batch([BatchChange(path=str(link / "src" / "app.py"), after=b"two\n")])
    (ws / "src/app.py").write_text("two\n")
    assert [c.path for c in engine.entry(str(entry.number)).files] == ["src/app.py"]
    assert engine.undo().applied and (ws / "src/app.py").read_text() == "one\n"


def test_a_broken_link_where_a_folder_must_come_back_stops_the_undo(tmp_path: Path) -> None:
    """A turn deleted docs/guide.md and its folder; the person then put a broken link named
    docs: the undo writes nothing and says what is in the way and what to do."""
    ws = make_repo(tmp_path / "ws", {"docs/guide.md": "guide\n", "a.txt": "a\n"})
    engine = open_engine(ws)
    _turn(engine, ws, lambda: (shutil.rmtree(ws / "docs"), (ws / "a.txt").write_text("b\n")))
    (ws / "docs").symlink_to("nowhere")
    result = engine.undo()
    assert not result.applied and (ws / "a.txt").read_text() == "b\n" and (ws / "docs").is_symlink()
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("docs/guide.md", "docs is a broken link where a folder must be; remove it and run this again")
    ]
    (ws / "docs").unlink()
    assert engine.undo().applied and (ws / "docs/guide.md").read_text() == "guide\n" and (ws / "a.txt").read_text() == "a\n"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("chattr") is None, reason="needs root and chattr")
def test_an_immutable_folder_stops_the_undo_and_says_so(tmp_path: Path) -> None:
    """``chattr +i`` on the folder of a file the undo must write (root cannot write in it
    either): nothing is written, and the reason names the folder and the way out."""
    ws = make_repo(tmp_path / "ws", {"src/app.py": "one\n", "a.txt": "a\n"})
    engine = open_engine(ws)
    _turn(engine, ws, lambda: write_files(ws, {"src/app.py": "two\n", "a.txt": "b\n"}))
    subprocess.run(["chattr", "+i", str(ws / "src")], check=True)
    try:
        result = engine.undo()
    finally:
        subprocess.run(["chattr", "-i", str(ws / "src")], check=True)
    assert not result.applied and (ws / "a.txt").read_text() == "b\n" and (ws / "src/app.py").read_text() == "two\n"
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("src/app.py", "permission denied: folder src/ is immutable (chattr +i); 'chattr -i' it and run this again")
    ]
    assert engine.undo().applied and (ws / "src/app.py").read_text() == "one\n"


def test_a_file_system_without_birth_times_keeps_the_folders_it_cannot_date(tmp_path: Path) -> None:
    """On ramfs (no birth time, no inode flags) Takeback cannot tell a folder a turn made from
    one the person had, so it removes none: the undo of a turn that added new/deep/x.txt takes
    the file back and leaves its folders; a folder made in a deleted file's place stays in the
    way, and the undo says so, until the person moves it."""
    with new_file_system(tmp_path / "ram", "ramfs") as ram:
        ws = make_repo(ram / "ws", {"a.txt": "a\n", "notes": "my notes\n"})
        assert born_ns(ws / "a.txt") is None
        engine = open_engine(ws)
        _turn(engine, ws, lambda: write_files(ws, {"new/deep/x.txt": "x\n", "a.txt": "b\n"}))
        assert engine.undo().applied and (ws / "a.txt").read_text() == "a\n"
        assert not (ws / "new/deep/x.txt").exists() and (ws / "new/deep").is_dir()

        def file_to_folder() -> None:
            (ws / "notes").unlink()
            (ws / "notes/sub").mkdir(parents=True)

        _turn(engine, ws, file_to_folder)
        result = engine.undo()
        assert not result.applied and (ws / "notes/sub").is_dir()
        assert [s.path for s in result.skipped] == ["notes"] and "a folder is in the way" in result.skipped[0].reason
        shutil.rmtree(ws / "notes")
        assert engine.undo().applied and (ws / "notes").read_text() == "my notes\n"


def _crashed_adding(ws: Path, engine: Engine) -> JournalFile:
    """The journal of an operation that was to add new/d.txt (making the folder new) and died
    before reaching the log: recovery rolls it back."""
    item = JournalFile(path="new/d.txt", before=None, after=engine.capture.version("new/d.txt", b"d\n", 0o100644),
                       new_folders=["new"])
    engine.journal.start("never-published", "revert", [item], {})
    return item


def test_recovery_keeps_the_persons_file_in_the_folder_the_operation_made(tmp_path: Path) -> None:
    """The file was written, then the person saved another file in a folder below the new one:
    recovery takes the operation's file back and leaves the person's, and its folders."""
    ws = make_repo(tmp_path / "ws", {"a.txt": "a\n"})
    engine = open_engine(ws)
    engine.journal.write_side(_crashed_adding(ws, engine), "after")
    write_files(ws, {"new/sub/mine.txt": "mine\n"})
    report = Engine(ws).last_recovery
    assert report is not None and report.action == "rolled-back" and report.left == []
    assert not (ws / "new/d.txt").exists() and (ws / "new/sub/mine.txt").read_text() == "mine\n"


def test_recovery_does_not_remove_a_folder_through_a_link(tmp_path: Path) -> None:
    """Before the file was written, the person made ``new`` a link to an empty folder of
    theirs: recovery finds nothing to take back and removes neither the link nor the folder."""
    ws = make_repo(tmp_path / "ws", {"a.txt": "a\n"})
    engine = open_engine(ws)
    _crashed_adding(ws, engine)
    (ws / "kept").mkdir()
    (ws / "new").symlink_to("kept")
    report = Engine(ws).last_recovery
    assert report is not None and report.action == "rolled-back" and report.left == []
    assert (ws / "new").is_symlink() and (ws / "kept").is_dir()


def test_recovery_does_not_remove_a_folder_outside_through_a_link(tmp_path: Path) -> None:
    """An operation that removes the emptied folder old/inner reached the log and died; the
    person then made ``old`` a link to a folder outside the workspace that holds an empty
    ``inner``: recovery rolls the rest forward and removes nothing outside."""
    ws = make_repo(tmp_path / "ws", {"a.txt": "a\n", "old/inner/gone.txt": "g\n"})
    engine = open_engine(ws)
    _turn(engine, ws, lambda: write_files(ws, {"b.txt": "b\n"}))
    committed = next(iter(engine.timeline.checkpoint_owner))
    version = engine.capture.version
    item = JournalFile(path="a.txt", before=version("a.txt", b"a\n", 0o100644), after=version("a.txt", b"a1\n", 0o100644))
    engine.journal.start(committed, "revert", [item], {}, folders=["old/inner"])
    shutil.rmtree(ws / "old")
    outside = tmp_path / "outside"
    (outside / "inner").mkdir(parents=True)
    (ws / "old").symlink_to(outside)
    report = Engine(ws).last_recovery
    assert report is not None and report.action == "rolled-forward" and report.left == []
    assert (ws / "a.txt").read_text() == "a1\n" and (outside / "inner").is_dir() and (ws / "old").is_symlink()


NOBODY = 65534


@contextlib.contextmanager
def as_nobody() -> Iterator[None]:
    """This process as the unprivileged user ``nobody`` (real and effective ids; root stays
    the saved id, to come back): permission bits and ownership then stop it, as they stop a
    person, which they never do for root."""
    groups = os.getgroups()
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, 0)
    os.setresuid(NOBODY, NOBODY, 0)
    try:
        yield
    finally:
        os.setresuid(0, 0, 0)
        os.setresgid(0, 0, 0)
        os.setgroups(groups)


@pytest.fixture
def nobodys(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A repository owned by ``nobody`` (with its store and config homes), where nobody can
    reach it; skipped unless the tests run as root."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to act as another user")
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="takeback-nobody-"))
    try:
        os.chmod(base, 0o755)
        ws = make_repo(base / "ws", {"src/app.py": "one\n", "a.txt": "a\n"})
        for name in ("state", "config", "home"):
            (base / name).mkdir()
        monkeypatch.setenv("TAKEBACK_HOME", str(base / "state"))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
        monkeypatch.setenv("HOME", str(base / "home"))
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(base)], check=True)
        levels = (pygit2.enums.ConfigLevel.GLOBAL, pygit2.enums.ConfigLevel.XDG)
        searched = [pygit2.settings.search_path[level] for level in levels]  # libgit2 found root's home once
        for level in levels:
            pygit2.settings.search_path[level] = str(base / "home")
        try:
            yield ws
        finally:
            for level, path in zip(levels, searched, strict=True):
                pygit2.settings.search_path[level] = path
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_read_only_folder_stops_the_undo_of_a_plain_user(nobodys: Path) -> None:
    ws = nobodys
    with as_nobody():
        engine = open_engine(ws)
        _turn(engine, ws, lambda: write_files(ws, {"src/app.py": "two\n", "a.txt": "b\n"}))
        os.chmod(ws / "src", 0o555)
        result = engine.undo()
        assert not result.applied and (ws / "a.txt").read_text() == "b\n" and (ws / "src/app.py").read_text() == "two\n"
        assert [(s.path, s.reason) for s in result.skipped] == [
            ("src/app.py", "permission denied: folder src/ is read-only; make it writable and run this again")
        ]
        os.chmod(ws / "src", 0o755)
        assert engine.undo().applied and (ws / "src/app.py").read_text() == "one\n"


def test_another_users_file_in_a_sticky_folder_stops_the_undo(nobodys: Path) -> None:
    """A shared folder like /tmp (mode 1777): a file of root's in it, which nobody may write
    in place but not replace; the undo says so and writes nothing."""
    ws = nobodys
    shared = ws / "shared"
    shared.mkdir()
    (shared / "x.txt").write_text("x\n")
    os.chmod(shared, 0o1777)
    os.chmod(shared / "x.txt", 0o666)
    with as_nobody():
        engine = open_engine(ws)
        _turn(engine, ws, lambda: write_files(ws, {"shared/x.txt": "changed\n", "a.txt": "b\n"}))
        result = engine.undo()
        assert not result.applied and (shared / "x.txt").read_text() == "changed\n" and (ws / "a.txt").read_text() == "b\n"
        assert [(s.path, s.reason) for s in result.skipped] == [("shared/x.txt", (
            "permission denied: shared/x.txt belongs to another user, and only a file's owner may replace it "
            "in its folder (sticky bit)"))]


def test_another_users_file_comes_back_as_the_persons(nobodys: Path) -> None:
    """A file of root's (mode 0666) in the person's own folder: the undo replaces it, with its
    bits; only root may give a file away, so it is then the person's."""
    ws = nobodys
    theirs = ws / "theirs.txt"
    theirs.write_text("root's\n")
    os.chmod(theirs, 0o666)
    with as_nobody():
        engine = open_engine(ws)
        _turn(engine, ws, lambda: write_files(ws, {"theirs.txt": "changed\n"}))
        assert engine.undo().applied
    assert theirs.read_text() == "root's\n" and theirs.stat().st_uid == NOBODY and theirs.stat().st_mode & 0o777 == 0o666
