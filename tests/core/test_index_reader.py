"""The hand-written index reader (``scanning/indexfile.py``) against libgit2, over indexes real git wrote.

For random work trees (nested folders, odd names, symlinks, executables), random index states
(a commit, ``git add -N``: version 3 with extended flags, ``--assume-unchanged``, conflicts
written with ``--index-info``, files changed, deleted, added untracked or ignored, a file
changed within the index file's own timestamp: "racily clean"), the reader must give for any
paths the entries libgit2 parses from the whole file, field by field, and a diff of those
paths against that small index, lent to the repository, must list what the diff against the
repository's own index lists. An index the reader does not vouch for (version 4, a split
index) gives no table. And a look-up at a big index leaves the repository holding no parsed
index (checked by replacing the index file with bytes libgit2 cannot parse: a held index would
still be handed out).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygit2.ffi import C, ffi

from helpers import git, make_repo, write_files
from takeback.engine.engine import Engine
from takeback.scanning import indexfile, listing

from .support import open_engine
from .test_scan_listing import libgit2_reads_this_tests_config  # noqa: F401 - autouse fixture

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="memfd_create is Linux only")

NAMES = ["a", "b.txt", "c d.md", "é.py", "x-y", "long" * 20, "a.b", "a0", "sub"]
FUTURE = (int(time.time()) + 100_000) * 10**9 + 123  # a file time no other file has
FIELDS = ("ctime", "mtime", "dev", "ino", "mode", "uid", "gid", "file_size", "flags", "flags_extended")


def _entries(index: pygit2.Index) -> list[tuple]:
    """Every entry's fields as libgit2 holds them (stat data, id, flags, path)."""
    out = []
    for i in range(len(index)):
        e = C.git_index_get_byindex(index._index, i)
        row: list[object] = [ffi.string(e.path), bytes(ffi.buffer(e.id.id, 20))]
        for name in FIELDS:
            value = getattr(e, name)
            row.append((value.seconds, value.nanoseconds) if name.endswith("time") else int(value))
        out.append(tuple(row))
    return out


def _related(path: bytes, wanted: list[bytes]) -> bool:
    return any(path == w or path.startswith(w + b"/") or w.startswith(path + b"/") for w in wanted)


paths_st = st.lists(
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(lambda parts: "/".join(parts)),
    min_size=1, max_size=12, unique=True,
)


def _tree(ws: Path, paths: list[str]) -> list[str]:
    """Files at ``paths`` where one is not the folder of another (first wins)."""
    kept: list[str] = []
    for p in paths:
        if any(p.startswith(k + "/") or k.startswith(p + "/") for k in kept):
            continue
        kept.append(p)
    write_files(ws, {p: f"{p}\n" for p in kept})
    return kept


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paths=paths_st, data=st.data())
def test_the_reader_and_libgit2_agree(tmp_path_factory: pytest.TempPathFactory, paths: list[str], data: st.DataObject) -> None:
    ws = make_repo(tmp_path_factory.mktemp("ws"), {".gitignore": "*.log\nignored/\n"})
    files = _tree(ws, paths)
    pick = st.sampled_from(files)
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "files")
    changed = _index_states(ws, files, data, pick)
    index_file = ws / ".git" / "index"
    table = indexfile.IndexTable.build(str(index_file))
    version = int.from_bytes(index_file.read_bytes()[4:8], "big")
    if version not in (2, 3) or any((ws / ".git").glob("sharedindex.*")):  # v4, a split index
        assert table is None
        return
    assert table is not None
    full = pygit2.Index(str(index_file))
    everything = _entries(full)
    others = data.draw(st.lists(st.sampled_from([*files, "new.txt", "x.log", "ignored/f", "sub", "gone/x"]), max_size=4))
    asked = [p.encode() for p in dict.fromkeys(changed + others)]
    small = table.small_index(asked)
    assert small is not None
    assert _entries(small) == [e for e in everything if _related(e[0], asked)]
    for path in asked:
        assert table.contains(path) == any(e[0] == path for e in everything)
    own = pygit2.Repository(str(ws))
    expected = sorted(listing._look_up(own, asked)) if asked else []
    for lent in (small, _whole(table, asked)):  # past SMALL_MAX paths: the whole file, parsed
        lender = pygit2.Repository(str(ws))
        with indexfile.lent(lender, lent):
            found = sorted(listing._look_up(lender, asked, lent)) if asked else []
        assert found == expected


def _whole(table: indexfile.IndexTable, asked: list[bytes]) -> pygit2.Index:
    saved = indexfile.SMALL_MAX
    indexfile.SMALL_MAX = -1
    try:
        found = table.index_for(asked)
    finally:
        indexfile.SMALL_MAX = saved
    assert found is not None and len(found) == len(pygit2.Index(table.path))
    return found


def _index_states(ws: Path, files: list[str], data: st.DataObject, pick: st.SearchStrategy[str]) -> list[str]:
    """Random changes of the work tree and the index after a commit; the paths changed."""
    changed = data.draw(st.lists(pick, max_size=3, unique=True))
    for path in changed:
        how = data.draw(st.sampled_from(["edit", "same-size", "delete", "chmod", "assume", "racy", "conflict"]))
        full = ws / path
        if how == "edit":
            full.write_text("changed, longer\n")
        elif how == "same-size":
            full.write_text(full.read_text().upper())
        elif how == "delete":
            full.unlink()
        elif how == "chmod":
            full.chmod(full.stat().st_mode | stat.S_IXUSR)
        elif how == "assume":
            git(ws, "update-index", "--assume-unchanged", path)
            full.write_text("hidden change\n")
        elif how == "racy":  # stat data unchanged (ctime not trusted), content changed
            git(ws, "config", "core.trustctime", "false")
            os.utime(full, ns=(FUTURE, FUTURE))
            git(ws, "update-index", path)
            full.write_text(full.read_text().swapcase())
            os.utime(full, ns=(FUTURE, FUTURE))
        else:
            blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=ws, input="theirs\n", text=True,
                                  capture_output=True, check=True).stdout.strip()
            info = "".join(f"100644 {blob} {stage}\t{path}\n" for stage in (1, 2, 3))
            subprocess.run(["git", "update-index", "--index-info"], cwd=ws, input=f"0 {'0' * 40}\t{path}\n" + info,
                           text=True, check=True)
    extra = data.draw(st.sampled_from(["none", "intent", "untracked", "ignored", "v4", "split", "racy-index"]))
    if extra == "intent":
        write_files(ws, {"new.txt": "intent\n"})
        git(ws, "add", "-N", "new.txt")
    elif extra == "untracked":
        write_files(ws, {"new.txt": "new\n", "gone/x": "x\n"})
    elif extra == "ignored":
        write_files(ws, {"x.log": "log\n", "ignored/f": "f\n"})
    elif extra == "v4":
        git(ws, "update-index", "--index-version", "4")
    elif extra == "split":
        git(ws, "update-index", "--split-index")
    elif extra == "racy-index":
        git(ws, "update-index", "--refresh", check=False)
    # Only the index file's time tells libgit2 whether an entry of unchanged stat data is to be
    # trusted ("racily clean": not when the file is as new as the index): either side of it.
    index_time = FUTURE + data.draw(st.sampled_from([-1, 0, 10**9]))
    os.utime(ws / ".git" / "index", ns=(index_time, index_time))
    return changed


@pytest.mark.parametrize("index_after_ns", [-1, 0, 10**9])
def test_the_index_files_time_decides_racily_clean_entries_as_for_libgit2(tmp_path: Path, index_after_ns: int) -> None:
    ws = make_repo(tmp_path / "ws", {"f.txt": "abc\n"})
    git(ws, "config", "core.trustctime", "false")
    os.utime(ws / "f.txt", ns=(FUTURE, FUTURE))
    git(ws, "update-index", "f.txt")
    (ws / "f.txt").write_text("ABC\n")  # same size, same times: only a racily clean entry is hashed
    os.utime(ws / "f.txt", ns=(FUTURE, FUTURE))
    os.utime(ws / ".git" / "index", ns=(FUTURE + index_after_ns,) * 2)
    expected = listing._look_up(pygit2.Repository(str(ws)), [b"f.txt"])
    assert expected == ([] if index_after_ns > 0 else [(3, b"f.txt")])  # 3: modified
    table = indexfile.IndexTable.build(str(ws / ".git" / "index"))
    assert table is not None
    small = table.small_index([b"f.txt"])
    assert small is not None
    lender = pygit2.Repository(str(ws))
    with indexfile.lent(lender, small):
        assert listing._look_up(lender, [b"f.txt"], small) == expected


def test_a_look_up_at_a_big_index_leaves_no_parsed_index_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing, "MAX_ENTRIES", 3)
    ws = make_repo(tmp_path / "ws", {"a.txt": "a\n", "b.txt": "b\n", "src/c.py": "c\n", "src/d.py": "d\n"})
    write_files(ws, {"src/c.py": "changed\n", "new.txt": "new\n"})
    lister = listing.Lister(str(ws / ".git"), str(ws))
    lister.ready()
    assert sorted(lister.list_dirty(str(ws), "", [b"src/c.py", b"new.txt", b"a.txt"])) == [b"new.txt", b"src/c.py"]
    assert lister.indexed("src/d.py") and not lister.indexed("new.txt")
    (ws / ".git" / "index").write_bytes(b"DIRC not an index at all, libgit2 refuses it" + bytes(40))
    with pytest.raises(pygit2.GitError):
        lister.repository().index  # noqa: B018 - a held index would be handed out without reading the file


def _two_steps(ws: Path) -> Engine:
    """A long-lived engine that recorded two shell steps (a clean file changed; a file changed
    and one made) the second of which was looked up in-process."""
    engine = open_engine(ws, long_lived=True)
    recorded = []
    for key, change in (("one", {"src/c.py": "c2\n"}), ("two", {"a.txt": "a2\n", "new.txt": "n\n"})):
        engine.begin_step(key, session="s", agent="claude")
        write_files(ws, change)
        entry = engine.end_step(key, f"Bash {key}")
        assert entry is not None
        recorded.append(sorted(f.path for f in engine.entry(entry.id).files))
    assert recorded == [["src/c.py"], ["a.txt", "new.txt"]]
    assert engine._scan_cache.relisted >= 1  # the second step's files were looked up in-process
    return engine


def test_a_long_lived_engines_shell_steps_leave_no_parsed_index_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The resident process's way: a long-lived engine, a watch, shell steps whose look-ups and
    ends read entries of a big index (a clean file changed: its before-image comes from the
    index). Between steps its repository holds no parsed index."""
    monkeypatch.setattr(listing, "MAX_ENTRIES", 3)
    ws = make_repo(tmp_path / "ws", {"a.txt": "a\n", "b.txt": "b\n", "src/c.py": "c\n", "src/d.py": "d\n"})
    engine = _two_steps(ws)
    lister = engine._scan_cache._lister
    assert lister is not None
    (ws / ".git" / "index").write_bytes(b"DIRC not an index at all, libgit2 refuses it" + bytes(40))
    with pytest.raises(pygit2.GitError):
        lister.repository().index  # noqa: B018 - a held index would be handed out without reading the file
    engine.close()


def test_where_the_reader_declines_the_index_libgit2_keeps_it_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No table (a version-4 index here, as on a system without memfd_create): the look-ups and
    a turn's end use libgit2's own parsed index as before, and record the same."""
    monkeypatch.setattr(listing, "MAX_ENTRIES", 3)
    ws = make_repo(tmp_path / "ws", {"a.txt": "a\n", "b.txt": "b\n", "src/c.py": "c\n", "src/d.py": "d\n"})
    git(ws, "update-index", "--index-version", "4")
    assert indexfile.IndexTable.build(str(ws / ".git" / "index")) is None
    engine = _two_steps(ws)
    lister = engine._scan_cache._lister
    assert lister is not None and lister.table() is None
    (ws / ".git" / "index").write_bytes(b"DIRC not an index at all, libgit2 refuses it" + bytes(40))
    assert len(lister.repository().index) == 4  # the index libgit2 keeps, parsed before
    engine.close()
