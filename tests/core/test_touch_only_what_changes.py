"""Touch only what changes: an undo, redo, revert or restore writes a file only when its bytes
or mode change (a file left as it is keeps its time stamp and inode, so editors and build tools
don't reload or rebuild), deletes only files the entries taken back created, and removes only
folders they made.

Over a real git repository: every file's (mtime_ns, inode) is taken before each operation (each
time stamp first set far in the past, so any write shows) and compared after. The files with no
reason to change include neighbours in the same folders, a file a later turn changed back (its
revert result equals what is on disk) and a file the person put back by hand.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import pytest

from helpers import make_repo, write_files
from takeback.core.models import OperationResult
from takeback.engine.engine import Engine

from .support import open_engine

FILES = {
    "README.md": "# demo\n",
    "docs/guide.md": "guide\n",
    "src/a.py": "a = 0\n",
    "src/b.py": "b = 0\n",
    "src/c.py": "c = 0\n",
    "src/d.py": "d = 0\n",
    "lib/util.py": "def util():\n    return 0\n",
    "lib/tool.sh": "#!/bin/sh\necho tool\n",
}
LONG_AGO = 1_000_000_000_000_000_000  # 2001, in nanoseconds


class Seen(NamedTuple):
    content: bytes
    exec_bit: bool
    mtime_ns: int
    ino: int


def _look(ws: Path) -> tuple[dict[str, Seen], set[str]]:
    """Every file (outside .git) and every folder of the workspace."""
    files: dict[str, Seen] = {}
    folders: set[str] = set()
    for folder, dirs, names in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".git"]
        folders.update(os.path.relpath(os.path.join(folder, d), ws) for d in dirs)
        for name in names:
            path = os.path.join(folder, name)
            st = os.lstat(path)
            with open(path, "rb") as handle:
                files[os.path.relpath(path, ws)] = Seen(handle.read(), bool(st.st_mode & 0o111), st.st_mtime_ns, st.st_ino)
    return files, folders


def _aged(ws: Path) -> tuple[dict[str, Seen], set[str]]:
    """The workspace looked at, each file's time stamp set far in the past first."""
    for rel in _look(ws)[0]:
        os.utime(ws / rel, ns=(LONG_AGO, LONG_AGO))
    return _look(ws)


def _operate(ws: Path, run, created: set[str] = frozenset(), made: set[str] = frozenset()) -> OperationResult:  # type: ignore[no-untyped-def, assignment]
    """Run one operation and check it touched only what changes: a file whose bytes and mode
    are the same after has its time stamp and inode unchanged; a file gone is one of ``created``
    (what the entries taken back created); a folder gone is one of ``made``."""
    before, folders_before = _aged(ws)
    result = run()
    after, folders_after = _look(ws)
    assert result.applied
    kept = {rel for rel, seen in before.items() if rel in after and after[rel][:2] == seen[:2]}
    touched = sorted(rel for rel in kept if after[rel][2:] != before[rel][2:])
    assert touched == [], f"{result.operation} rewrote files whose bytes and mode did not change: {touched}"
    assert set(before) - set(after) <= created, f"{result.operation} deleted a file the entry did not create"
    assert folders_before - folders_after <= made, f"{result.operation} removed a folder the entry did not make"
    changed = {rel for rel in set(before) | set(after) if rel not in kept}
    assert {o.path for o in result.restored} == changed  # what it says it changed is what changed
    return result


def _turn(engine: Engine, ws: Path, label: str, files: dict[str, str]) -> None:
    engine.begin_turn(label=label)
    write_files(ws, files)
    engine.end_turn()


@pytest.mark.parametrize("how", ["one by one", "all at once"])
def test_operations_touch_only_the_files_whose_bytes_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "all at once":
        monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")  # files rewritten in place, flushed with one syncfs
    ws = make_repo(tmp_path / "ws", dict(FILES))
    engine = open_engine(ws)
    _turn(engine, ws, "setup", {"docs/guide.md": "guide, revised\n"})  # #1: a checkpoint to restore to
    _turn(engine, ws, "agent", {  # #2: the turn taken back
        "src/a.py": "a = 2\n", "src/c.py": "c = 2\n", "src/d.py": "d = 2\n",
        "src/new.py": "new = 2\n", "pkg/deep/mod.py": "mod = 2\n",
    })
    _turn(engine, ws, "back", {"src/c.py": "c = 0\n"})  # #3: c.py as it was before #2
    write_files(ws, {"src/d.py": "d = 0\n"})  # the person puts d.py back by hand
    created, made = {"src/new.py", "pkg/deep/mod.py"}, {"pkg", "pkg/deep"}

    revert = _operate(ws, lambda: engine.revert("2"), created, made)
    assert {o.path for o in revert.restored} == {"src/a.py", "src/new.py", "pkg/deep/mod.py"}  # not c.py, not d.py
    assert (ws / "src/c.py").read_text() == "c = 0\n" and (ws / "src/d.py").read_text() == "d = 0\n"
    _operate(ws, engine.redo)  # takes the revert back: a.py, new.py and mod.py come back
    restore = _operate(ws, lambda: engine.restore("#1"), created, made)  # takes back #2 and #3
    assert {o.path for o in restore.restored} == {"src/a.py", "src/new.py", "pkg/deep/mod.py"}
    _operate(ws, engine.redo)
    undo = _operate(ws, engine.undo)  # the newest turn, #3: only c.py changes
    assert [o.path for o in undo.restored] == ["src/c.py"]
    _operate(ws, engine.redo)
