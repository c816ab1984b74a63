"""The scanners' less travelled paths, on real repositories and folders in temp folders.

What a bracket does when git fails, when a nested repository is broken or goes away, when a
file cannot be recorded (a name that is not UTF-8, a FIFO, a folder behind a symlink), when
a clean file's before-image cannot be worked out from the index (a missing object, a filter
that fails), and the walk scanner's own edges (an unreadable cache, a folder that vanishes).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pygit2
import pytest

from helpers import git, make_repo, write_files
from takeback.scanning import checkout, nested, scan
from takeback.scanning.scan import GitScanner, ScanCache, Skipped, WalkScanner, make_scanner
from takeback.workspace.files import Workspace

from .support import open_engine
from .test_scan_listing import libgit2_reads_this_tests_config  # noqa: F401 - autouse fixture

BASE = {"README.md": "# demo\n", "src/app.py": "A = 1\n", "src/util.py": "U = 1\n", "docs/guide.md": "g\n"}


def git_scanner(ws: Path, cache: ScanCache | None = None) -> GitScanner:
    scanner = make_scanner(Workspace(ws), ws.parent / "statcache.json", True, None, cache)
    assert isinstance(scanner, GitScanner)
    return scanner


# ---------------------------------------------------------------- git failing


def test_a_corrupt_index_makes_the_listing_fail_with_gits_message(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    scanner = git_scanner(ws)
    (ws / ".git" / "index").write_bytes(b"DIRC garbage")
    # in-process declines (not an index it can read), then git itself refuses: its words are kept
    with pytest.raises(RuntimeError, match=r"git diff-files failed: .*index file"):
        scanner._list()


def test_forced_in_process_listing_without_a_lister_is_an_error(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    scanner = git_scanner(ws)
    scanner.lister = None
    saved, scan.LISTING = scan.LISTING, "libgit2"
    try:
        with pytest.raises(RuntimeError, match="no in-process listing"):
            scanner._list()
    finally:
        scan.LISTING = saved


def test_a_lister_that_breaks_unexpectedly_falls_back_to_git(tmp_path: Path) -> None:
    """A pygit2 whose cffi layer changed fails with a TypeError, say: git answers instead
    (and the forced in-process mode lets the error through)."""
    ws = make_repo(tmp_path / "ws", dict(BASE))
    write_files(ws, {"src/app.py": "changed\n", "new.txt": "n\n"})
    scanner = git_scanner(ws)

    class Broken:
        def list_dirty(self, *args: object) -> list[bytes]:
            raise TypeError("cffi layer changed")

    scanner.lister = Broken()  # type: ignore[assignment]
    assert scanner._list() == {"src/app.py", "new.txt"}
    saved, scan.LISTING = scan.LISTING, "libgit2"
    try:
        with pytest.raises(TypeError):
            scanner._list()
    finally:
        scan.LISTING = saved


def test_no_index_file_means_no_clean_file_before_images(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    scanner = git_scanner(ws)
    assert scanner._index_entries(tmp_path / "no-index") is None
    assert scanner._index_entries(None) is None


def test_unreadable_paths_are_read_from_gits_messages(tmp_path: Path) -> None:
    """git's words (under LC_ALL=C) for what it could not read, for a workspace in a subfolder:
    paths outside it and lines that are no such message are passed over."""
    repo = make_repo(tmp_path / "repo", {**BASE, "app/main.py": "m\n"})
    scanner = git_scanner(repo / "app")
    stderr = (
        b"warning: could not open directory 'app/locked/': Permission denied\n"
        b"warning: could not open directory 'app/" + b"x" * 40 + b"\n"  # cut short by git
        b"warning: could not open directory 'other/': Permission denied\n"
        b"app/secret.txt: Permission denied\n"
        b"app/note: not an error message\n"
        b"hint: something else\n"
        b"warning: unable to access 'app/.gitignore': Too many levels of symbolic links\n"
    )
    assert scanner._unreadable_in(stderr) == {
        "locked": "it could not be read (permission denied)",
        "x" * 40: "it could not be read (path too long)",
        "secret.txt": "it could not be read (permission denied)",
    }
    scanner.skip = lambda rel: rel == "locked"
    assert "locked" not in scanner._unreadable_in(stderr)


# ---------------------------------------------------------------- files that cannot be recorded


def test_names_fifos_and_folders_behind_links_in_a_git_bracket(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    outside = tmp_path / "outside"
    write_files(outside, {"o.txt": "o\n"})
    engine = open_engine(ws)
    engine.begin_turn(label="odd files")
    bad = os.fsdecode(b"bad\xff.txt")
    (ws / bad).write_text("not UTF-8 in its name\n")
    (ws / "src" / "util.py").unlink()
    os.mkfifo(ws / "src" / "util.py")  # a FIFO where a tracked file was
    shutil.rmtree(ws / "docs")
    os.symlink(outside, ws / "docs")  # a folder replaced by a symlink: its files deleted, the link added
    write_files(outside, {"guide.md": "behind the link\n"})
    (ws / "README.md").write_text("edited\n")
    entry = engine.end_turn()
    assert {f.path: f.kind for f in entry.files} == {"README.md": "modified", "docs": "added", "docs/guide.md": "deleted"}
    text = "\n".join(entry.notices)
    assert "bad\\xff.txt: not recorded, its name is not valid UTF-8" in text
    assert "src/util.py: not recorded, it is a FIFO, not a file" in text


def test_skipped_covers_a_folder_and_all_it_holds() -> None:
    skipped = Skipped({"a/b": "why"})
    assert skipped.covers("a/b/c/d.txt") and skipped.covers("a/b")
    assert not skipped.covers("a/bc") and not skipped.covers("a")
    assert not Skipped().covers("a")
    assert scan.shown("line\nbreak") == "line\\nbreak"


def test_a_file_skipped_at_begin_stays_out_of_the_turn(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    bad = os.fsdecode(b"old\xfe.txt")
    (ws / bad).write_text("there before the turn\n")
    engine = open_engine(ws)
    engine.begin_turn(label="bad name before")
    (ws / bad).write_text("edited during the turn\n")
    (ws / "src" / "app.py").write_text("edited\n")
    entry = engine.end_turn()
    assert {f.path for f in entry.files} == {"src/app.py"}
    assert any(n.startswith("old\\xfe.txt: not recorded, its name is not valid UTF-8") for n in entry.notices)


# ---------------------------------------------------------------- clean files' before-images


def test_a_missing_object_gives_no_before_image(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    repo = pygit2.Repository(str(ws))
    oid = repo.index["src/app.py"].id
    loose = ws / ".git" / "objects" / str(oid)[:2] / str(oid)[2:]
    loose.unlink()
    repo = pygit2.Repository(str(ws))
    assert checkout.worktree_form(repo, "git", repo.index, "src/app.py") is None
    assert checkout.worktree_form(repo, "git", repo.index, "not/in/index") is None
    assert checkout.worktree_form(repo, "git", None, "src/app.py") is None


def test_a_failing_filter_makes_the_before_image_not_known(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {**BASE, ".gitattributes": "*.dat filter=broken\n", "x.dat": "data\n"})
    git(ws, "config", "filter.broken.clean", "cat")
    git(ws, "config", "filter.broken.smudge", "false")
    git(ws, "config", "filter.broken.required", "true")
    repo = pygit2.Repository(str(ws))
    with pytest.raises(checkout.NotKnown, match="git could not convert it"):
        checkout.worktree_form(repo, shutil.which("git") or "git", repo.index, "x.dat")
    # in a bracket: the file edited during the turn is left out, with the reason
    engine = open_engine(ws)
    engine.begin_turn(label="filter")
    (ws / "x.dat").write_text("edited\n")
    entry = engine.end_turn()
    assert "x.dat" not in {f.path for f in entry.files}
    assert any(n.startswith("x.dat: not recorded: git could not convert it") for n in entry.notices)


def test_attributes_are_looked_up_only_where_an_attribute_file_reaches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``checkout.Attributes``: with no attribute file anywhere, libgit2 is not asked; a
    ``.gitattributes`` on disk reaches its folder and those below, one only in the index too,
    and ``info/attributes`` every path. Counted with a real counter: the end of a turn over 30
    clean files of a repository without attribute files makes no attribute lookup, and where a
    folder's ``.gitattributes`` sets ``eol=crlf`` the before-image is still converted."""
    files = {f"plain/f{i}.txt": f"line {i}\n" for i in range(30)}
    ws = make_repo(tmp_path / "ws", {**BASE, **files, "conv/.gitattributes": "*.txt text eol=crlf\n", "conv/a.txt": "a\r\n"})
    repo = pygit2.Repository(str(ws))
    reach = checkout.Attributes(repo)
    assert not reach.may_set("plain/f0.txt") and not reach.may_set("src/app.py") and not reach.may_set("README.md")
    assert reach.may_set("conv/a.txt") and reach.may_set("conv/deeper/b.txt")
    (ws / "conv" / ".gitattributes").unlink()  # still in the index: libgit2 reads that entry
    assert checkout.Attributes(repo).may_set("conv/a.txt")
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "attributes").write_text("*.md text\n")
    assert checkout.Attributes(repo).may_set("README.md")
    (ws / ".git" / "info" / "attributes").unlink()
    git(ws, "checkout", "--", "conv/.gitattributes")

    asked: list[str] = []
    real = pygit2.Repository.get_attr

    def get_attr(self: pygit2.Repository, path: str, name: str, *args: object, **kwargs: object) -> object:
        asked.append(path)
        return real(self, path, name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pygit2.Repository, "get_attr", get_attr)
    engine = open_engine(ws)
    engine.begin_turn(label="edit every file")
    write_files(ws, {rel: "changed\n" for rel in files} | {"conv/a.txt": "changed\r\n"})
    entry = engine.end_turn()
    assert {f.path for f in entry.files} == set(files) | {"conv/a.txt"}
    assert set(asked) == {"conv/a.txt"}
    assert engine.undo().applied
    assert (ws / "conv" / "a.txt").read_bytes() == b"a\r\n" and (ws / "plain" / "f0.txt").read_text() == "line 0\n"


# ---------------------------------------------------------------- nested repositories


def test_gitlinks_of_a_missing_or_unreadable_index(tmp_path: Path) -> None:
    assert nested.gitlinks(str(tmp_path / "none"), "git", str(tmp_path), dict(os.environ)) == frozenset()
    folder = tmp_path / "a-folder"
    folder.mkdir()  # stat works, reading does not
    assert nested.gitlinks(str(folder), "git", str(tmp_path), dict(os.environ)) == frozenset()
    # git cannot list an index outside a repository: no gitlinks, no error
    assert nested._gitlinks_listed("git", str(tmp_path), dict(os.environ)) == set()


def test_gitlink_hits_that_are_not_entries_are_passed_over() -> None:
    mode = b"\x00\x00\xe0\x00"
    header = b"DIRC" + (2).to_bytes(4, "big") + (1).to_bytes(4, "big")
    assert nested._gitlinks_in(header + b"\x00" * 8 + mode) == set()  # too short for its flags
    entry = mode + b"\x00" * 32 + (3).to_bytes(2, "big") + b"abc"  # no NUL after the name
    assert nested._gitlinks_in(header + entry) == set()
    assert nested._gitlinks_in(header + entry + b"\x00") == {"abc"}


def test_broken_and_vanishing_nested_repositories_get_notices(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    other = make_repo(tmp_path / "other", {"o.py": "O = 1\n"})
    make_repo(ws / "goes", {"g.py": "G = 1\n"})
    (ws / "broken").mkdir()
    (ws / "broken" / ".git").write_text("gitdir: /nowhere/at/all\n")
    os.symlink(other, ws / "linked")
    (ws / ".gitmodules").write_text(
        '[submodule "broken"]\n\tpath = broken\n[submodule "linked"]\n\tpath = linked\n'
    )
    engine = open_engine(ws)
    engine.begin_turn(label="nested")
    shutil.rmtree(ws / "goes" / ".git")
    (ws / "goes" / ".git").write_text("gitdir: /nowhere\n")  # still there, no longer a repository
    (ws / "src" / "app.py").write_text("edited\n")
    entry = engine.end_turn()
    assert "src/app.py" in {f.path for f in entry.files}
    text = "\n".join(entry.notices)
    assert "broken: a nested git repository whose changes are not recorded (git finds no work tree" in text
    assert "linked: a nested git repository whose changes are not recorded (its folder is a symlink)" in text
    assert "goes: a nested git repository at begin, not at the end of the turn" in text


def test_an_unparsable_gitmodules_is_passed_over(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    (ws / ".gitmodules").write_text("[submodule \"x\n\tpath = = =\n")
    scanner = git_scanner(ws)
    assert scanner._submodules() == set()


# ---------------------------------------------------------------- walk scanner


def test_walk_scanner_edges(tmp_path: Path) -> None:
    """The walk: a skipped path, a folder whose name is not UTF-8, a FIFO, a folder that
    vanishes, an info/exclude that is a folder, and a stat cache that is not a cache."""
    ws = tmp_path / "plain"
    write_files(ws, {"a.txt": "a\n", "store/kept.txt": "s\n", "sub/b.txt": "b\n"})
    bad_dir = os.fsdecode(b"d\xfe")
    write_files(ws, {f"{bad_dir}/c.txt": "c\n"})
    os.mkfifo(ws / "pipe")
    cache = tmp_path / "statcache.json"
    cache.write_text("[1, 2]")  # not a mapping: ignored
    scanner = WalkScanner(Workspace(ws), cache, lambda rel: rel == "store")
    found = dict(scan.walk_files(ws, scanner.skip, scanner.skipped))
    assert set(found) == {"a.txt", "sub/b.txt"}
    assert scanner.skipped == {bad_dir: "its name is not valid UTF-8 (rename it to have it recorded)"}
    assert scanner._load_cache() == {}


def test_walk_bracket_records_and_skips(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    write_files(ws, {"a.txt": "a\n", "b.txt": "b\n"})
    os.mkfifo(ws / "pipe")
    engine = open_engine(ws)
    engine.begin_turn(label="walk")
    (ws / "a.txt").unlink()
    os.mkfifo(ws / "a.txt")  # a FIFO where a file was: not a deletion
    (ws / "b.txt").write_text("edited\n")
    entry = engine.end_turn()
    assert {f.path: f.kind for f in entry.files} == {"b.txt": "modified"}
    assert any("a.txt: not recorded, it is a FIFO" in n for n in entry.notices)


def test_snapshot_helpers() -> None:
    v = {"oid": "0" * 40, "mode": 0o100644, "size": 1}
    git_snap = {"kind": "git", "dirty": {"a": None}, "nested": {"n": {"scan": {"dirty": {"x": v}}}, "u": {"unscanned": "why"}}}
    assert list(scan.snapshot_versions(git_snap)) == [v]
    assert scan.snapshot_sees(git_snap, "clean-at-begin", None)  # git: asked only of changed paths
    assert not scan.snapshot_sees(git_snap, "a", None)
    walk_snap = {"kind": "walk", "files": {}}
    assert not scan.snapshot_sees(walk_snap, "gone", None)
    assert scan.snapshot_kind({"kind": 3}) is None


def test_a_warning_from_git_about_an_ignore_file_names_no_path(tmp_path: Path) -> None:
    """git warns (and goes on) when a ``.gitignore`` is a symlink it will not follow; that line
    names no file the turn failed to read, so no notice may come of it."""
    ws = make_repo(tmp_path / "ws", dict(BASE))
    os.symlink("loop", ws / "src" / "loop")
    os.symlink("loop", ws / "src" / ".gitignore")
    engine = open_engine(ws)
    saved, scan.LISTING = scan.LISTING, "git"
    try:
        engine.begin_turn(label="odd ignore file")
        (ws / "src" / "app.py").write_text("edited\n")
        entry = engine.end_turn()
    finally:
        scan.LISTING = saved
    assert {f.path for f in entry.files} == {"src/app.py"}
    assert not [n for n in entry.notices if "warning" in n or "unable to access" in n]


def test_a_fifo_set_aside_at_begin_is_not_recorded_at_the_end(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    (ws / "src" / "util.py").unlink()
    os.mkfifo(ws / "src" / "util.py")  # tracked file replaced by a FIFO: dirty at begin, set aside
    engine = open_engine(ws)
    engine.begin_turn(label="fifo before")
    (ws / "src" / "util.py").unlink()
    (ws / "src" / "util.py").write_text("a file again\n")
    (ws / "README.md").write_text("edited\n")
    entry = engine.end_turn()
    assert {f.path for f in entry.files} == {"README.md"}
    assert any(n.startswith("src/util.py: not recorded, it is a FIFO") for n in entry.notices)


def test_a_file_moved_out_of_an_ignored_folder_is_not_the_turns(tmp_path: Path) -> None:
    """A folder moved keeps its files' ctimes: a file that appears that way was there before
    the turn, unseen (ignored), and undo must never delete it."""
    ws = make_repo(tmp_path / "ws", {**BASE, ".gitignore": "build/\n"})
    write_files(ws, {"build/old.txt": "made before the turn\n"})
    time.sleep(0.05)  # its ctime clearly before the turn (the kernel's file clock ticks coarsely)
    engine = open_engine(ws)
    engine.begin_turn(label="move")
    os.rename(ws / "build", ws / "out")
    entry = engine.end_turn()
    assert "out/old.txt" not in {f.path for f in entry.files}
    assert any(n.startswith("out/old.txt: there before the turn, untouched by it") for n in entry.notices)


def test_snapshots_from_before_rule_stamps_were_kept(tmp_path: Path) -> None:
    from takeback.core.models import FileVersion

    ws = Workspace(tmp_path)
    added = scan.Changed("new.txt", None, FileVersion(oid="0" * 40, mode=0o100644, size=1))
    assert not scan._RuleStamp.load({}).moved([], [added])
    notices: list[str] = []
    assert scan._older_files_left_out(ws, [added], {}, lambda rel: True, notices) == [added]
    assert notices == []
    assert scan._changed_ns(tmp_path / "gone") > 0  # gone counts as now
    assert scan._index_trailer(str(tmp_path / "no-index")) is None
    assert scan.name_problem("caf\u00e9.txt") is None


def test_rule_files_without_home_or_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    scanner = git_scanner(ws)
    monkeypatch.delenv("HOME")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    files = scanner._rule_files
    assert str(ws / ".git" / "info" / "exclude") in files
    assert not [f for f in files if f.endswith("/ignore")]


def test_walk_rules_without_an_exclude_file_and_a_bare_repository(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {**BASE, ".gitignore": "*.log\n"})
    (ws / ".git" / "info" / "exclude").unlink()
    rules = scan.IgnoreRules(ws)
    assert rules.ignored("x.log", False, [""]) and not rules.ignored("x.txt", False, [""])
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    assert isinstance(make_scanner(Workspace(bare), tmp_path / "c.json", True, None), WalkScanner)


def test_walk_passes_over_what_vanishes_while_it_walks(tmp_path: Path) -> None:
    """Files and folders removed (or a folder replaced by a symlink loop) between the walk's
    listing of a folder and its look at them: a real change made from the walk's own call."""
    root = tmp_path / "plain"
    write_files(root, {"a/f.txt": "a", "b/f.txt": "b", "c/f.txt": "c", "keep.txt": "k", "vanish.txt": "v"})
    changed: list[str] = []

    def skip(rel: str) -> bool:
        if rel == "vanish.txt":
            (root / "vanish.txt").unlink()  # gone before its stat
        elif "/" in rel and not changed:  # the first folder is being walked; the other two wait
            changed.extend(sorted({"a", "b", "c"} - {rel.split("/")[0]}))
            shutil.rmtree(root / changed[0])  # gone before its listing
            shutil.rmtree(root / changed[1])
            os.symlink(changed[1], root / changed[1])  # a loop where the folder was
        return False

    skipped = Skipped()
    found = {rel for rel, _st in scan.walk_files(root, skip, skipped)}
    [first] = {"a", "b", "c"} - set(changed)
    assert found == {"keep.txt", f"{first}/f.txt"}
    assert list(skipped) == [changed[1]] and "could not be read" in skipped[changed[1]]


def deep_tree(root: Path, depth: int) -> str:
    """Folders nested ``depth`` deep under ``root`` with 200-character names (made through
    folder descriptors, so the whole path may pass PATH_MAX); the deepest one's relative path."""
    name = "d" * 200
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as handle:
            handle.write("deep\n")
    finally:
        os.close(fd)
    return "/".join([name] * depth)


def test_walk_sets_aside_what_lies_past_the_longest_path(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_files(root, {"a.txt": "a\n"})
    deep_tree(root, 22)
    skipped = Skipped()
    found = {rel for rel, _st in scan.walk_files(root, None, skipped)}
    assert found == {"a.txt"}
    [(path, why)] = skipped.items()
    assert len(str(root / path)) >= 4096 and why.startswith("it could not be read")


def test_walk_bracket_with_a_bad_name_and_no_cache_hook(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    write_files(ws, {"a.txt": "a\n"})
    bad = os.fsdecode(b"bad\xfe.txt")
    (ws / bad).write_text("b\n")
    engine = open_engine(ws)
    engine.begin_turn(label="walk")
    (ws / "a.txt").write_text("edited\n")
    entry = engine.end_turn()
    assert {f.path for f in entry.files} == {"a.txt"}
    assert any(n.startswith("bad\\xfe.txt: not recorded, its name is not valid UTF-8") for n in entry.notices)


# ---------------------------------------------------------------- the index copy


def test_an_index_without_a_checksum_is_compared_in_full(tmp_path: Path) -> None:
    from takeback.scanning.indexcopy import IndexCopy

    ws = make_repo(tmp_path / "ws", dict(BASE))
    index = ws / ".git" / "index"
    whole = IndexCopy(index, 0, index.stat().st_size)  # a copy that is a whole file: parsed in place
    assert [e.path for e in whole.parsed()] == ["README.md", "docs/guide.md", "src/app.py", "src/util.py"]
    data = index.read_bytes()[:-20] + b"\x00" * 20  # as git >= 2.40 writes it under index.skipHash
    index.write_bytes(data)
    holder = tmp_path / "open-turn"
    holder.write_bytes(b"head" + data)
    copy = IndexCopy(holder, 4, len(data))
    assert copy.same_as(index)
    middle = len(data) // 2
    index.write_bytes(data[:middle] + bytes([data[middle] ^ 1]) + data[middle + 1:])  # same size and trailer
    assert not copy.same_as(index)
    assert not copy.same_as(tmp_path / "no-index")


def test_copy_range_without_sendfile_and_from_a_shrinking_file(tmp_path: Path) -> None:
    from takeback.errors import StoreError
    from takeback.scanning.indexcopy import copy_range

    source = tmp_path / "source"
    source.write_bytes(b"0123456789" * 10)
    target = tmp_path / "target"
    target.write_bytes(b"kept:")
    with open(source, "rb") as src, open(target, "ab") as out:  # O_APPEND: sendfile refuses it
        copy_range(src.fileno(), out.fileno(), 10, 25)
    assert target.read_bytes() == b"kept:" + (b"0123456789" * 10)[10:35]
    with open(source, "rb") as src, open(tmp_path / "t2", "wb") as out, pytest.raises(StoreError, match="shrank"):
        copy_range(src.fileno(), out.fileno(), 90, 50)


def test_relisting_without_a_cache_answers_gits_listing_for_the_touched_files(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    scanner = git_scanner(ws)  # no ScanCache: nothing to count
    (ws / "src" / "app.py").write_text("edited\n")
    (ws / "README.md").write_text("edited\n")
    relisted = scanner._relist({"old-untracked.txt", "docs/guide.md"}, {"docs/guide.md": "why"}, {"src/app.py", "docs/guide.md"})
    assert relisted == ({"old-untracked.txt", "src/app.py"}, {})  # README.md was not touched: not asked


def test_autocrlf_input_converts_nothing_on_checkout(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    git(ws, "config", "core.autocrlf", "input")
    repo = pygit2.Repository(str(ws))
    found = checkout.worktree_form(repo, "git", repo.index, "src/app.py")
    assert found is not None and found[0] == b"A = 1\n"


def test_a_snapshot_taken_before_nested_repositories_were_scanned_still_ends(tmp_path: Path) -> None:
    """An open turn's snapshot from an older Takeback has no "nested" key: its end records the
    outer repository's changes and opens no nested repository."""
    from takeback.scanning.indexcopy import IndexCopy

    ws = make_repo(tmp_path / "ws", dict(BASE))
    make_repo(ws / "inner", {"i.py": "I = 1\n"})
    engine = open_engine(ws)
    scanner = engine._scanner()
    assert isinstance(scanner, GitScanner)
    snapshot = scanner.begin(engine.capture.from_disk)
    assert set(snapshot.pop("nested")) == {"inner"}
    kept = tmp_path / "index-at-begin"
    shutil.copyfile(ws / ".git" / "index", kept)
    (ws / "src" / "app.py").write_text("edited\n")
    (ws / "inner" / "i.py").write_text("edited inside\n")
    changes = scanner.end(snapshot, IndexCopy(kept, 0, kept.stat().st_size), engine.capture.from_disk, engine.capture.version)
    assert [c.path for c in changes] == ["src/app.py"]


def test_the_store_inside_the_work_tree_never_enters_a_turn_even_when_staged(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    engine = open_engine(ws, store_dir=ws / ".tb")
    engine.begin_turn(label="stage the store")
    (ws / "src" / "app.py").write_text("edited\n")
    stored = sorted(p for p in (ws / ".tb").rglob("*") if p.is_file())
    assert stored
    git(ws, "add", "-f", str(stored[0].relative_to(ws)))  # the agent stages one of the store's files
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["src/app.py"]


def test_a_walk_scanner_without_a_cache_hook_writes_its_cache(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    write_files(ws, {"a.txt": "a\n", "sub/b.txt": "b\n"})
    engine = open_engine(ws)
    cache = tmp_path / "statcache.json"
    scanner = WalkScanner(Workspace(ws), cache, None)  # before_save left unset
    snapshot = scanner.begin(engine.capture.from_disk)
    assert set(snapshot["files"]) >= {"a.txt", "sub/b.txt"}
    assert {"a.txt", "sub/b.txt"} <= set(scanner._load_cache())
