"""Odd names, unreadable files and symlinked folders: a turn always goes on.

What a bracket cannot record — a name that is not valid UTF-8, a file or folder it cannot read,
a FIFO where a file was — is set aside with a notice on the turn that names it; later begins,
ends and undos work, and the store stays readable. Names with newlines, backslashes, leading
dashes and the longest a file system allows are recorded and restored exactly. Nothing is read
through a symlinked folder: a folder replaced by a link leading out is its files deleted and
the link added, no byte from outside reaches the store, and undo puts the folder back.

Unreadable files need a user the file system says no to: as root (CI), the engine runs in a
forked child that drops to ``nobody`` over a folder that user owns.
"""

from __future__ import annotations

import os
import pickle
import shutil
import socket
import stat
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pygit2
import pytest
from pygit2.enums import ConfigLevel

from helpers import git, make_repo, write_files
from takeback.scanning import scan

from .support import full_state, open_engine, store_contains

FILES = {"README.md": "# demo\n", "src/app.py": "def main():\n    return 1\n"}
ODD = os.fsdecode(b"caf\xe9.txt")  # not valid UTF-8: os.fsdecode gives surrogate escapes
ODD_SHOWN = "caf\\xe9.txt"
OUTSIDE_SECRET = b"outside the workspace: never stored\n"
NOBODY = 65534


@pytest.fixture(params=["git", "git-cli", "plain"])
def ws_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """git: a repository listed the default way (in-process for this small tree); git-cli: the
    same listed by the git program; plain: a folder (walk scanner)."""
    if request.param == "git-cli":
        monkeypatch.setattr(scan, "LISTING", "git")
    return request.param


def _make_ws(root: Path, kind: str, files: dict[str, str]) -> Path:
    if kind == "plain":
        root.mkdir(parents=True)
        write_files(root, files)
        return root
    return make_repo(root, dict(files))


@pytest.fixture
def ws(ws_kind: str, tmp_path: Path) -> Path:
    return _make_ws(tmp_path / "ws", ws_kind, FILES)


def _later_turn_and_undo_redo(engine, ws: Path, before: Any, after: Any, state: Callable[[Path], Any] = full_state) -> None:
    """A later turn is recorded and undone; then the turn before it is undone (``before`` back
    exactly) and redone (``after`` back exactly)."""
    engine.begin_turn("later")
    write_files(ws, {"later.txt": "later\n"})
    assert [f.path for f in engine.end_turn().files] == ["later.txt"]
    for expected in (after, before):
        undone = engine.undo()
        assert undone.verdict == "safe", undone
        assert state(ws) == expected
    redone = engine.redo()
    assert redone.verdict == "safe", redone
    assert state(ws) == after


def _without(names: list[str], state: tuple) -> tuple:
    """A ``full_state`` leaving out ``names`` (files set aside: the person's, whatever happens)."""
    return tuple({k: v for k, v in part.items() if k not in names} for part in state)


# --------------------------------------------------------------------------- odd names


def test_a_name_that_is_not_utf8_is_set_aside_with_a_notice(ws: Path, ws_kind: str) -> None:
    engine = open_engine(ws)
    raw_ws = os.fsencode(ws)
    (ws / "old-odd").mkdir()
    (ws / "old-odd" / ODD).write_bytes(b"there before the turn\n")
    before = full_state(ws)
    engine.begin_turn("odd names")
    (ws / ODD).write_bytes(b"created by the agent\n")
    (ws / "old-odd" / ODD).write_bytes(b"edited by the agent\n")
    os.makedirs(raw_ws + b"/dir-\xff/inner")
    (ws / os.fsdecode(b"dir-\xff") / "inner" / "x.txt").write_bytes(b"in an odd folder\n")
    (ws / "ok.txt").write_text("recorded\n")
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["ok.txt"]
    shown = "\n".join(entry.notices)
    assert f"{ODD_SHOWN}: not recorded, its name is not valid UTF-8" in shown
    assert f"old-odd/{ODD_SHOWN}: not recorded" in shown
    assert "dir-\\xff" in shown
    odd = [ODD, f"old-odd/{ODD}", os.fsdecode(b"dir-\xff/inner/x.txt")]
    after = full_state(ws)

    # the store stays readable, and every later call works (a fresh process too)
    again = open_engine(ws)
    assert again.entry("last").notices == entry.notices
    _later_turn_and_undo_redo(
        again, ws, _without(odd, before), _without(odd, after), lambda ws: _without(odd, full_state(ws))
    )
    assert {p: c for p, c in full_state(ws)[0].items() if p in odd} == {p: c for p, c in after[0].items() if p in odd}


def test_a_non_utf8_name_that_was_dirty_at_begin_is_not_recorded_at_end(ws: Path) -> None:
    """Set aside at begin means set aside at end: its change is not guessed from the index."""
    (ws / ODD).write_bytes(b"untracked before\n")
    engine = open_engine(ws)
    engine.begin_turn()
    (ws / ODD).write_bytes(b"changed\n")
    entry = engine.end_turn()
    assert entry.files == []
    assert any(n.startswith(f"{ODD_SHOWN}: not recorded") for n in entry.notices)


@pytest.mark.parametrize("ws_kind", ["git", "git-cli"], indirect=True)  # an index to stage in
def test_a_tracked_non_utf8_name_staged_during_the_turn_is_set_aside(ws: Path) -> None:
    """The agent's ``git add`` makes the path clean again: it comes from the index, not the
    listing, and is set aside all the same."""
    (ws / ODD).write_bytes(b"committed\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "an odd name")
    engine = open_engine(ws)
    before = full_state(ws)
    engine.begin_turn()
    (ws / ODD).write_bytes(b"changed and staged\n")
    write_files(ws, {"README.md": "# changed\n"})
    git(ws, "add", "-A")
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["README.md"]
    assert entry.notices == [f"{ODD_SHOWN}: not recorded, its name is not valid UTF-8 (rename it to have it recorded)"]
    after = full_state(ws)
    _later_turn_and_undo_redo(engine, ws, _without([ODD], before), _without([ODD], after),
                              lambda ws: _without([ODD], full_state(ws)))
    assert (ws / ODD).read_bytes() == b"changed and staged\n"


def test_a_store_wedged_by_an_older_version_ends_its_open_turn(ws: Path, ws_kind: str) -> None:
    """An older version put a non-UTF-8 path into the open turn's begin snapshot; its end (and so
    every call after it) failed. That turn now ends, setting the path aside."""
    from takeback.engine import brackets

    (ws / ODD).write_bytes(b"there at begin\n")
    engine = open_engine(ws)
    begun = engine.begin_turn()
    folder = engine.store.path / "brackets"
    opened = brackets.read(folder, begun.id)
    assert opened is not None and opened.scan is not None
    side = "dirty" if ws_kind != "plain" else "files"
    version = engine.capture.version(ODD, b"there at begin\n", 0o100644).model_dump()
    opened.scan[side][ODD] = version  # what the older version kept
    opened.scan.pop("skipped", None)
    engine.store.flush()
    index = ws / ".git" / "index" if ws_kind != "plain" else None  # unchanged since begin
    brackets.write(folder, opened.begun, opened.scan, index, False)
    (ws / ODD).write_bytes(b"changed by the agent\n")
    write_files(ws, {"ok.txt": "ok\n"})
    again = open_engine(ws)
    entry = again.end_turn()
    assert [f.path for f in entry.files] == ["ok.txt"]
    assert f"{ODD_SHOWN}: not recorded, its name is not valid UTF-8 (rename it to have it recorded)" in entry.notices
    assert again.undo().verdict == "safe"
    assert (ws / ODD).read_bytes() == b"changed by the agent\n"


def test_a_non_utf8_path_is_refused_by_an_edit_batch(ws: Path) -> None:
    from takeback.core.models import BatchChange
    from takeback.errors import OutsideWorkspace

    engine = open_engine(ws)
    with pytest.raises(OutsideWorkspace, match="not valid UTF-8"):
        engine.record_batch([BatchChange(path=ODD, after=b"x\n")])
    assert engine.entries() == []


ODD_BUT_VALID = [
    "line\nbreak.txt",
    "back\\slash.txt",
    "-leading-dash.txt",
    "--help",
    "sp ace/ and\ttab.txt",
    "x" * 250 + ".txt",  # 254 bytes: about the longest name a file system takes
    "\u00e9t\u00e9/\u65e5\u672c.txt",
    "*star?[x].txt",
]


def test_names_with_odd_characters_are_recorded_and_restored_exactly(ws: Path) -> None:
    engine = open_engine(ws)
    write_files(ws, {"-leading-dash.txt": "there before\n"})
    before = full_state(ws)
    engine.begin_turn("odd but valid names")
    for name in ODD_BUT_VALID:
        write_files(ws, {name: f"content of {name!r}\n"})
    entry = engine.end_turn()
    assert sorted(f.path for f in entry.files) == sorted(ODD_BUT_VALID)
    assert entry.notices == []
    _later_turn_and_undo_redo(engine, ws, before, full_state(ws))


def test_a_path_too_long_to_read_is_set_aside(ws: Path, ws_kind: str) -> None:
    """A path longer than the system's limit (PATH_MAX) cannot be opened by its name."""
    engine = open_engine(ws)
    before = full_state(ws)
    engine.begin_turn()
    deep = ws / "deep"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY)
    try:
        name = "d" * 200
        for _ in range(24):  # 24 x 201 bytes: past 4096
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open("f.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"deep\n")
        os.close(out)
    finally:
        os.close(fd)
    write_files(ws, {"ok.txt": "ok\n"})
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["ok.txt"]
    if ws_kind != "git":  # libgit2 (the in-process listing) passes over it without a word
        assert any(n.startswith("deep/ddd") and "not recorded" in n for n in entry.notices), entry.notices
    shutil.rmtree(deep)  # never recorded: its removal is no one's turn (and full_state cannot walk it)
    _later_turn_and_undo_redo(engine, ws, before, full_state(ws))


# --------------------------------------------------------------------------- special files


def test_a_fifo_where_a_file_was_is_set_aside(ws: Path) -> None:
    write_files(ws, {"two\nlines.txt": "a name with a newline\n"})
    engine = open_engine(ws)
    engine.begin_turn()
    (ws / "README.md").unlink()
    os.mkfifo(ws / "README.md")
    (ws / "two\nlines.txt").unlink()
    os.mkfifo(ws / "two\nlines.txt")
    os.mkfifo(ws / "new.pipe")
    write_files(ws, {"ok.txt": "ok\n"})
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["ok.txt"]
    # a FIFO where a file was is named (on one line); one that was never a file is passed over,
    # as git does
    assert entry.notices == [
        "README.md: not recorded, it is a FIFO, not a file",
        "two\\nlines.txt: not recorded, it is a FIFO, not a file",
    ]
    undone = engine.undo()
    assert undone.verdict == "safe"
    assert stat.S_ISFIFO(os.lstat(ws / "README.md").st_mode)  # never written over
    assert not (ws / "ok.txt").exists()


def test_a_socket_where_a_changed_file_was_is_never_written_over(ws: Path) -> None:
    """Reading opens the file with no ``lstat`` first: a socket found where a turn's file was
    is something opening refuses (ENXIO), and reads as no file, as a FIFO does; an undo reports
    it as changed since and leaves it."""
    engine = open_engine(ws)
    engine.begin_turn()
    write_files(ws, {"README.md": "changed by the turn\n"})
    engine.end_turn()
    (ws / "README.md").unlink()
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(ws / "README.md"))
        assert engine.workspace.read("README.md") is None
        undone = engine.undo(on_conflict="abort")
        assert stat.S_ISSOCK(os.lstat(ws / "README.md").st_mode)  # never written over
        assert undone.verdict == "refused" and not undone.applied and "changed since" in undone.message
    finally:
        server.close()


# --------------------------------------------------------------------------- unreadable


def run_unprivileged(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` as a user without privileges: in-process when not root, else in a forked
    child that became ``nobody`` (an assertion failing there fails here, with its traceback)."""
    if os.geteuid() != 0:
        return fn(*args)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            payload = pickle.dumps(("ok", fn(*args)))
        except BaseException:
            payload = pickle.dumps(("error", traceback.format_exc()))
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as handle:
        data = handle.read()
    os.waitpid(pid, 0)
    if not data:
        raise AssertionError("the unprivileged child died without an answer")
    status, value = pickle.loads(data)
    if status == "error":
        raise AssertionError(f"in the unprivileged child:\n{value}")
    return value


@pytest.fixture
def owned(ws_kind: str) -> Iterator[Path]:
    """A folder ``nobody`` owns (as root), with a workspace in it and homes for the child."""
    base = Path(tempfile.mkdtemp(prefix="takeback-unprivileged-"))
    try:
        _make_ws(base / "ws", ws_kind, FILES)
        for name in ("home", "state"):
            (base / name).mkdir()
        if os.geteuid() == 0:
            for folder, dirs, files in os.walk(base):
                for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                    os.lchown(name, NOBODY, NOBODY)
        yield base
    finally:
        for folder, dirs, _files in os.walk(base):
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o755)  # rmtree must get in as a non-root user
        shutil.rmtree(base)


def _as_that_user(base: Path) -> None:
    """Environment of the child: everything it reads or writes under ``base``."""
    os.environ.update(HOME=str(base / "home"), TAKEBACK_HOME=str(base / "state"),
                      XDG_CONFIG_HOME=str(base / "home"), XDG_STATE_HOME=str(base / "state"))
    for level in (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM):
        pygit2.settings.search_path[level] = str(base / "home")


def _unreadable_file_turn(base: Path) -> list[str]:
    _as_that_user(base)
    ws = base / "ws"
    engine = open_engine(ws)
    write_files(ws, {"secret.txt": "no one may read this\n"})
    os.chmod(ws / "secret.txt", 0)
    os.chmod(ws / "src/app.py", 0)  # tracked in a repository
    before = full_state_readable(ws)
    engine.begin_turn("an unreadable file")
    write_files(ws, {"ok.txt": "recorded\n", "README.md": "# changed\n"})
    entry = engine.end_turn()
    assert sorted(f.path for f in entry.files) == ["README.md", "ok.txt"]
    _later_turn_and_undo_redo(engine, ws, before, full_state_readable(ws), full_state_readable)
    return entry.notices


def full_state_readable(ws: Path) -> dict[str, bytes]:
    """The files the unprivileged user can read, with their bytes."""
    out = {}
    for folder, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = Path(folder) / name
            try:
                out[path.relative_to(ws).as_posix()] = path.read_bytes()
            except PermissionError:
                out[path.relative_to(ws).as_posix()] = b"<unreadable>"
    return out


def test_an_unreadable_file_is_set_aside_and_turns_go_on(owned: Path, ws_kind: str) -> None:
    notices = run_unprivileged(_unreadable_file_turn, owned)
    assert "secret.txt: not recorded, it could not be read (permission denied)" in notices
    if ws_kind == "plain":  # git lists a tracked file only when its stat changed (the chmod did)
        assert "src/app.py: not recorded, it could not be read (permission denied)" in notices


def _undo_over_an_unreadable_file(base: Path) -> None:
    _as_that_user(base)
    ws = base / "ws"
    engine = open_engine(ws)
    engine.begin_turn()
    write_files(ws, {"README.md": "# changed\n", "ok.txt": "recorded\n"})
    engine.end_turn()
    os.chmod(ws / "README.md", 0)
    result = engine.undo()
    assert (result.verdict, result.applied) == ("partial", True), result
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("README.md", "it could not be read (permission denied); it was left as it is")
    ]
    assert [r.path for r in result.restored] == ["ok.txt"] and not (ws / "ok.txt").exists()
    os.chmod(ws / "README.md", 0o644)
    assert (ws / "README.md").read_bytes() == b"# changed\n"


def test_an_undo_skips_a_file_it_cannot_read(owned: Path) -> None:
    run_unprivileged(_undo_over_an_unreadable_file, owned)


def _unreadable_folder_turn(base: Path, opened_during: bool) -> list[str]:
    _as_that_user(base)
    ws = base / "ws"
    write_files(ws, {"private/data.db": "the person's\n"})
    os.chmod(ws / "private", 0)
    os.chmod(ws / "src", 0)  # tracked files in it, in a repository
    # The person's file is older than the turn: file times come from a coarse clock (a tick is
    # a few ms), and a file changed in the same tick as begin cannot be told from the turn's.
    time.sleep(0.03)
    engine = open_engine(ws)
    engine.begin_turn("an unreadable folder")
    write_files(ws, {"ok.txt": "recorded\n"})
    if opened_during:  # readable at end: its files were there before, never 'added'
        os.chmod(ws / "private", 0o755)
        os.chmod(ws / "src", 0o755)
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["ok.txt"]
    before = {k: v for k, v in full_state_readable(ws).items() if k != "ok.txt"}
    _later_turn_and_undo_redo(engine, ws, before, full_state_readable(ws), full_state_readable)
    if opened_during:
        assert (ws / "private" / "data.db").read_bytes() == b"the person's\n"
    return entry.notices


@pytest.mark.parametrize("opened_during", [False, True], ids=["stays-closed", "opened-during-turn"])
def test_an_unreadable_folder_is_set_aside_and_turns_go_on(owned: Path, ws_kind: str, opened_during: bool) -> None:
    notices = run_unprivileged(_unreadable_folder_turn, owned, opened_during)
    if ws_kind == "git" and opened_during:
        # libgit2 (the in-process listing of small trees) passes over an untracked folder it
        # cannot open without a word: opened during the turn, its files look added, but nothing
        # touched them since before begin (their ctime says so), so they are not the turn's.
        assert any(n.startswith("private/data.db: there before the turn, untouched by it") for n in notices), notices
    if ws_kind != "git":
        assert "private: not recorded, it could not be read (permission denied)" in notices
    if ws_kind == "plain":
        assert "src: not recorded, it could not be read (permission denied)" in notices


def _unreadable_in_a_subfolder_workspace(base: Path) -> list[str]:
    _as_that_user(base)
    ws = base / "ws" / "pkg"
    write_files(base / "ws", {"pkg/mod.py": "x = 1\n", "pkg/private/data.db": "mine\n", "other/private/data.db": "theirs\n"})
    os.chmod(ws / "private", 0)
    os.chmod(base / "ws" / "other" / "private", 0)
    engine = open_engine(ws)
    engine.begin_turn()
    write_files(ws, {"mod.py": "x = 2\n"})
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["mod.py"]
    return entry.notices


@pytest.mark.parametrize("ws_kind", ["git-cli"], indirect=True)  # git's own messages
def test_git_names_what_it_cannot_read_relative_to_a_subfolder_workspace(owned: Path) -> None:
    """The workspace is a folder inside the repository: git names paths from the repository's
    root; the notice names them from the workspace's, and says nothing of folders outside it."""
    notices = run_unprivileged(_unreadable_in_a_subfolder_workspace, owned)
    assert notices == ["private: not recorded, it could not be read (permission denied)"]


# --------------------------------------------------------------------------- symlinks leading out


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "app.py").write_bytes(OUTSIDE_SECRET)
    (folder / "more.py").write_bytes(OUTSIDE_SECRET + b"more\n")
    return folder


def test_a_folder_replaced_by_a_link_leading_out_is_recorded_without_reading_out(ws: Path, outside: Path) -> None:
    engine = open_engine(ws)
    write_files(ws, {"src/util.py": "untracked in a repository\n"})
    before = full_state(ws)
    engine.begin_turn("swap src for a link")
    shutil.rmtree(ws / "src")
    os.symlink(outside, ws / "src")
    entry = engine.end_turn()
    kinds = {f.path: f.kind for f in entry.files}
    assert kinds == {"src": "added", "src/app.py": "deleted", "src/util.py": "deleted"}
    assert store_contains(engine.store.path, OUTSIDE_SECRET) == []
    outside_before = full_state(outside)
    undone = engine.undo()
    assert undone.verdict == "safe", undone
    assert full_state(ws) == before
    assert full_state(outside) == outside_before
    assert store_contains(engine.store.path, OUTSIDE_SECRET) == []


def test_a_folder_replaced_by_a_link_inside_is_put_back(ws: Path) -> None:
    """The link leads to a folder inside holding the same file: undo must not read the file
    through the link (it would find it 'already as it was' and leave the folder out)."""
    write_files(ws, {"copy/app.py": (ws / "src" / "app.py").read_text()})
    engine = open_engine(ws)
    before = full_state(ws)
    engine.begin_turn()
    shutil.rmtree(ws / "src")
    os.symlink("copy", ws / "src")
    entry = engine.end_turn()
    assert {f.path: f.kind for f in entry.files} == {"src": "added", "src/app.py": "deleted"}
    undone = engine.undo()
    assert undone.verdict == "safe", undone
    assert full_state(ws) == before


def test_a_folder_replaced_by_a_link_leading_out_redoes_exactly(ws: Path, outside: Path) -> None:
    engine = open_engine(ws)
    engine.begin_turn()
    shutil.rmtree(ws / "src")
    os.symlink(outside, ws / "src")
    engine.end_turn()
    after = full_state(ws)
    assert engine.undo().verdict == "safe"
    assert engine.redo().verdict == "safe"
    assert full_state(ws) == after


def test_files_behind_a_link_are_never_read_even_if_the_listing_names_them(ws: Path, outside: Path, ws_kind: str) -> None:
    """A tracked file whose folder became a link is listed by git as changed; it is absent."""
    engine = open_engine(ws)
    engine.begin_turn()
    shutil.rmtree(ws / "src")
    os.symlink(outside, ws / "src")
    (outside / "app.py").write_bytes(OUTSIDE_SECRET + b"changed during the turn\n")
    entry = engine.end_turn()
    assert {f.path: f.kind for f in entry.files}["src/app.py"] == "deleted"
    assert store_contains(engine.store.path, OUTSIDE_SECRET) == []
