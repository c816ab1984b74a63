"""The in-process listing's and the tree watch's refusals and edges, on real files.

Where ``listing.py`` cannot promise git's answer it must decline (``Unsupported``) and the
scanner asks git; where a tree cannot be watched (``watch.py``) the engine lists every time.
Each case here is made real: a corrupt or truncated index, configuration git reads another
way, a global attributes file, ignore files that cannot be read, a folder gone between the
listing and the watch, a file system whose changes raise no event.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pygit2
import pytest

from helpers import make_repo, write_files
from takeback.scanning import listing, scan, watch
from takeback.scanning.scan import GitScanner, ScanCache, make_scanner
from takeback.workspace.files import Workspace

from .support import open_engine
from .test_scan_edges import deep_tree
from .test_scan_listing import libgit2_reads_this_tests_config  # noqa: F401 - autouse fixture

BASE = {"README.md": "# demo\n", "src/app.py": "A = 1\n", "src/util.py": "U = 1\n", "docs/guide.md": "g\n"}
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")


def git_scanner(ws: Path, cache: ScanCache | None = None) -> GitScanner:
    scanner = make_scanner(Workspace(ws), ws.parent / "statcache.json", True, None, cache)
    assert isinstance(scanner, GitScanner)
    return scanner


# ---------------------------------------------------------------- the index file


def test_an_index_that_is_not_one_or_is_cut_short_is_declined(tmp_path: Path) -> None:
    bogus = tmp_path / "index"
    bogus.write_bytes(b"NOPE" + b"\x00" * 20)
    with pytest.raises(listing.Unsupported, match="not an index file"):
        listing.read_small_index(bogus)
    header = b"DIRC" + (2).to_bytes(4, "big") + (3).to_bytes(4, "big")
    with pytest.raises(listing.Unsupported, match="truncated index"):
        listing.index_paths(header + b"\x00" * 30)
    assert listing.read_small_index(tmp_path / "absent") is None


# ---------------------------------------------------------------- configuration


def test_config_files_git_reads_from_the_environment() -> None:
    assert listing.git_config_files({"GIT_CONFIG_SYSTEM": "/s", "GIT_CONFIG_GLOBAL": "/g"}) == ["/s", "/g"]
    assert listing.git_config_files({"GIT_CONFIG_NOSYSTEM": "1", "HOME": "/h"}) == [
        "/h/.config/git/config", "/h/.gitconfig",
    ]
    assert listing.git_config_files({"GIT_CONFIG_NOSYSTEM": "yes"}) == []  # no HOME, no XDG
    assert listing.xdg_git_dir({}) is None
    with pytest.raises(listing.Unsupported, match="not a boolean"):
        listing.git_config_files({"GIT_CONFIG_NOSYSTEM": "maybe"})


def test_an_unreadable_configuration_file_is_declined(tmp_path: Path) -> None:
    broken = tmp_path / "config"
    broken.write_text("[core\n\tnot = valid = config\n")
    with pytest.raises(listing.Unsupported, match="unreadable configuration"):
        listing._influences_listing(str(broken))


def test_a_global_attributes_file_sends_the_listing_to_git(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    write_files(ws, {"src/app.py": "edited\n", "new.txt": "n\n"})
    attributes = Path(os.environ["XDG_CONFIG_HOME"]) / "git" / "attributes"
    attributes.parent.mkdir(parents=True, exist_ok=True)
    attributes.write_text("*.txt text\n")
    scanner = git_scanner(ws)
    assert scanner.lister is not None
    with pytest.raises(listing.Unsupported, match="a global attributes file exists"):
        scanner.lister.list_dirty(scanner.workdir, "")
    assert scanner._list() == {"src/app.py", "new.txt"}  # git answered


# ---------------------------------------------------------------- ignore files


def test_ignore_files_that_are_folders_or_cannot_be_read(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert listing._has_negation(str(folder)) is False  # git reads no rules from a folder
    a_file = tmp_path / "file"
    a_file.write_text("x\n")
    with pytest.raises(listing.Unsupported, match="unreadable ignore file"):
        listing._has_negation(str(a_file / "under-a-file"))


# ---------------------------------------------------------------- splitting the walk


def test_split_declines_unusual_folders(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    write_files(root, {"a/x.py": "x", "b/y.py": "y", "c/z.py": "z", "file": "f"})
    make_repo(root / "nest", {"n.py": "n"})
    r = os.fsencode(root)
    assert listing.split_paths(r, [(b"", b"b", {b"a", b"b", b"c"})]) == [[b"a"], [b"b", b"c", b"file", b"nest"]]
    assert listing.split_paths(r, [(b"file/", b"x", set())]) is None  # not a folder
    assert listing.split_paths(r, [(b"file", b"x", set())]) is None  # a file where the plan has a folder
    assert listing.split_paths(r, [(b"gone/", b"x", set())]) is None  # not there
    assert listing.split_paths(r, [(b"nest/", b"n.py", set())]) is None  # a nested repository
    assert listing.split_paths(r, [(b"a/", b"x.py", set())]) is None  # nothing before the median: one walk


def test_a_failing_half_of_a_split_walk_fails_the_listing(tmp_path: Path) -> None:
    """The other thread's error reaches the caller (the scanner then asks git)."""
    ws = make_repo(tmp_path / "ws", dict(BASE))
    broken = make_repo(tmp_path / "broken", dict(BASE))
    lister = listing.Lister(str(ws / ".git"), str(ws))
    repos = lister._walkers(2)
    repos[1] = pygit2.Repository(str(broken))  # the other thread's walker: its index is a folder now
    lister._walkers = lambda count: repos  # type: ignore[method-assign]
    (broken / ".git" / "index").unlink()
    (broken / ".git" / "index").mkdir()
    with pytest.raises(pygit2.GitError, match="index"):
        lister._parallel([[b"README.md"], [b"src"]])
    repos[1] = lister._open()  # a sound walker again: both halves answer
    (ws / "README.md").write_text("edited\n")
    assert [path for _status, path in lister._parallel([[b"README.md"], [b"src"]])] == [b"README.md"]


# ---------------------------------------------------------------- the tree watch


@linux_only
def test_a_tree_that_cannot_be_watched(tmp_path: Path) -> None:
    with pytest.raises(watch.Unavailable, match="statfs"):
        watch.TreeWatch(str(tmp_path / "absent"), lambda rel: False)
    with pytest.raises(watch.Unavailable, match="whose changes may not raise events"):
        watch.TreeWatch("/proc", lambda rel: False)
    cache = ScanCache(watch_tree=True)
    assert cache.wants_watch
    assert cache.before_listing("/proc", lambda rel: False, None) is None
    assert not cache.wants_watch and not cache.watching  # each bracket lists the tree from now on
    assert cache.before_listing("/proc", lambda rel: False, None) is None


@linux_only
def test_a_folder_gone_between_listing_and_watch_is_passed_over(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    write_files(root, {"keep/a.txt": "a", "gone/b.txt": "b", "file-now/c.txt": "c"})

    def ignored(rel: str) -> bool:  # asked while the folder is listed: the folder goes right then
        if rel == "gone/":
            shutil.rmtree(root / "gone")
        elif rel == "file-now/":
            shutil.rmtree(root / "file-now")
            (root / "file-now").write_text("a file where the folder was\n")
        return False

    tree = watch.TreeWatch(str(root), ignored)
    try:
        assert tree.mark() is None  # the first mark knows nothing of before
        assert tree.folders == 2  # the root and keep/: the others were gone when their turn came
        assert not tree.quiet()  # the removals raised events while the folders were being watched
        assert tree.mark() is None
        assert tree.folders == 2 and tree.quiet()
        (root / "keep" / "a.txt").write_text("edited\n")
        assert not tree.quiet()
        assert tree.touched() == {"keep/a.txt"}
    finally:
        tree.close()
    with pytest.raises(watch.Unavailable, match="closed"):
        tree.mark()
    assert tree.touched() is None
    assert not tree.quiet()


@linux_only
def test_a_folder_event_makes_the_touched_files_unknown(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    write_files(root, {"a/x.txt": "x"})
    tree = watch.TreeWatch(str(root), lambda rel: False)
    try:
        tree.mark()
        (root / "b").mkdir()
        (root / "a" / "x.txt").write_text("after the folder event\n")
        assert tree.touched() is None
        assert tree.mark() is None
    finally:
        tree.close()


@linux_only
def test_scan_cache_hands_back_the_touched_files(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    cache = ScanCache(watch_tree=True)
    root = str(ws)
    assert cache.touched_since(root, 0) is None  # no watch yet
    assert cache.before_listing(root, lambda rel: False, None, ("key",)) is None
    cache.after_listing(("key",), {"x"}, {})
    (ws / "src" / "app.py").write_text("edited\n")
    assert cache.touched_since(root, 0) is None  # the watch began after that time
    assert cache.touched_since(root + "-other", 10**20) is None
    assert cache.touched_since(root, 10**20) == {"src/app.py"}
    assert cache.before_listing(root, lambda rel: False, None, ("key",)) == ({"x"}, {}, {"src/app.py"})
    cache.after_listing(("key",), set(), {})
    (ws / ".gitignore").write_text("*.log\n")
    assert cache.before_listing(root, lambda rel: False, None, ("key",)) is None  # the rules moved: list all
    cache.close()
    cache.after_listing(("key",), set(), {})  # no watch: nothing kept
    assert cache.listing(("key",)) is None


@linux_only
def test_long_lived_engine_lists_again_when_git_cannot_answer_for_the_touched_files(tmp_path: Path) -> None:
    """A watched engine asks git about the files touched since the last listing; when that
    fails it lists the whole tree, and the turn is recorded all the same."""
    ws = make_repo(tmp_path / "ws", dict(BASE))
    engine = open_engine(ws, long_lived=True)
    engine.begin_turn(label="one")
    (ws / "src" / "app.py").write_text("one\n")
    engine.end_turn()
    (ws / "src" / "util.py").write_text("between\n")
    original = GitScanner._list_paths
    asked: list[list[str] | None] = []

    def only_the_tree(self: GitScanner, only: list[str] | None) -> tuple[set[str], dict[str, str]]:
        asked.append(only)
        if only is not None:  # the touched files: git is not there for them
            raise OSError("git vanished")
        return original(self, only)

    GitScanner._list_paths = only_the_tree  # type: ignore[method-assign]
    try:
        engine.begin_turn(label="two")
    finally:
        GitScanner._list_paths = original  # type: ignore[method-assign]
    assert asked == [["src/util.py"], None]  # the touched file, then the whole tree
    (ws / "src" / "util.py").write_text("agent\n")
    entry = engine.end_turn()
    [change] = entry.files
    assert change.path == "src/util.py" and change.kind == "modified"


@linux_only
def test_a_folder_past_the_longest_path_cannot_be_watched(tmp_path: Path) -> None:
    """inotify cannot watch a folder whose path passes PATH_MAX: the tree is not watched (each
    bracket lists it), and a long-lived engine still records its turns."""
    ws = make_repo(tmp_path / "ws", dict(BASE))
    deep_tree(ws / "deep", 22)
    with pytest.raises(watch.Unavailable, match="cannot watch"):
        watch.TreeWatch(str(ws), lambda rel: False).mark()
    engine = open_engine(ws, long_lived=True)
    engine.begin_turn(label="deep")
    (ws / "src" / "app.py").write_text("edited\n")
    entry = engine.end_turn()
    assert not engine._scan_cache.wants_watch
    assert "src/app.py" in {f.path for f in entry.files}


_NO_FREE_DESCRIPTOR = """
import os, resource, sys
from takeback.scanning import watch
watch._libc()  # the C library loaded while descriptors are still free
highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
try:
    while True:
        os.open(os.devnull, os.O_RDONLY)  # take every descriptor still free
except OSError:
    pass
try:
    watch.TreeWatch(sys.argv[1], lambda rel: False)
except watch.Unavailable as exc:
    print(exc)
"""


@linux_only
def test_no_descriptor_left_for_inotify_means_no_watch(tmp_path: Path) -> None:
    """A process out of file descriptors (its limit lowered in a child process) cannot start a
    watch: it says why, and the caller lists the tree instead."""
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", _NO_FREE_DESCRIPTOR, str(tmp_path)], capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    # where the C library is looked up again (ctypes.util needs a temporary file) or where inotify
    # itself asks for a descriptor: either way the watch is refused, with the reason
    assert re.fullmatch(r"no C library: .*|inotify_init1: Too many open files", proc.stdout.strip()), proc.stdout
