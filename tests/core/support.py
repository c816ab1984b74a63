"""Helpers shared by the core tests: engines over real folders, snapshots, store inspection."""

from __future__ import annotations

import contextlib
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pygit2

from helpers import git_state, tree_state
from takeback.config import load_config
from takeback.core.models import BatchChange, OperationResult
from takeback.engine.engine import Engine


def open_engine(ws: Path, long_lived: bool = False, **overrides: Any) -> Engine:
    """An engine over ``ws`` with config overrides (e.g. ``max_file_bytes=100``); ``long_lived``
    as the language server opens it (watching the work tree)."""
    return Engine(ws, load_config(ws, overrides), long_lived=long_lived)


def _entries(root: Path) -> list[Path]:
    """Every file and symlink under ``root`` outside .git (symlinks to folders included)."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        out += [Path(folder) / d for d in dirs if (Path(folder) / d).is_symlink()]
        out += [Path(folder) / name for name in files]
    return out


def modes(root: Path) -> dict[str, int]:
    """Each file's kind and executable bit (lstat), for byte-and-mode exact comparisons."""
    out: dict[str, int] = {}
    for p in _entries(root):
        st = os.lstat(p)
        out[p.relative_to(root).as_posix()] = 0o120000 if p.is_symlink() else (0o100755 if st.st_mode & 0o111 else 0o100644)
    return out


def full_state(root: Path) -> tuple[dict[str, bytes], dict[str, int]]:
    """(path -> bytes or link text, path -> mode) of the whole tree: what exactness compares."""
    content = tree_state(root)
    for p in _entries(root):
        if p.is_symlink():
            content[p.relative_to(root).as_posix()] = os.readlink(p).encode()
    return content, modes(root)


def batch(engine: Engine, ws: Path, files: dict[str, bytes | str | None], **kwargs: Any):
    """What an editor does: record the batch (before-images from disk), then write it."""
    changes = [
        BatchChange(path=p, after=(c.encode() if isinstance(c, str) else c)) for p, c in files.items()
    ]
    result = engine.record_batch(changes, **kwargs)
    for p, c in files.items():
        target = ws / p
        if c is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(c.encode() if isinstance(c, str) else c)
    return result


def store_files(engine: Engine) -> dict[str, bytes]:
    """Every file of the store folder with its bytes (the lock files excluded: the store's and
    the merges', empty, made by whoever first takes them)."""
    out = {}
    for folder, _dirs, files in os.walk(engine.store.path):
        for name in files:
            p = Path(folder) / name
            if name in ("lock", "merge.lock"):
                continue
            out[p.relative_to(engine.store.path).as_posix()] = p.read_bytes()
    return out


def store_contains(store_path: Path, needle: bytes) -> list[str]:
    """Where ``needle`` appears in the store: raw file bytes, inflated loose objects, and every
    object the odb can read (packed ones too). Empty when it appears nowhere."""
    hits = []
    for folder, _dirs, files in os.walk(store_path):
        for name in files:
            p = Path(folder) / name
            raw = p.read_bytes()
            if needle in raw:
                hits.append(str(p))
            with contextlib.suppress(zlib.error):
                if needle in zlib.decompress(raw):
                    hits.append(f"{p} (inflated)")
    git_dir = store_path / "objects.git"
    if git_dir.exists():
        repo = pygit2.Repository(str(git_dir))
        for oid in repo.odb:
            if needle in repo.odb.read(oid)[1]:
                hits.append(f"object {oid}")
    return hits


@contextlib.contextmanager
def nothing_written(engine: Engine, ws: Path, objects: bool = True) -> Iterator[None]:
    """Asserts that the block changed neither the workspace, the user's git state, nor the
    store (the log head, and with ``objects`` every store file)."""
    is_git = (ws / ".git").exists()
    before_tree = full_state(ws)
    before_git = git_state(ws) if is_git else None
    before_head = engine.store.head()
    before_store = store_files(engine) if objects else None
    yield
    assert full_state(ws) == before_tree, "the workspace changed"
    if is_git:
        assert git_state(ws) == before_git, "the user's git state changed"
    assert engine.store.head() == before_head, "the operation log moved"
    if objects:
        after_store = store_files(engine)
        assert sorted(after_store) == sorted(before_store), "files were added to or removed from the store"
        changed = [name for name in after_store if after_store[name] != before_store[name]]
        assert not changed, f"store files changed: {changed}"


def net_of(changes: Iterable[dict]) -> dict:
    """The reference models' net change per unit of several changes in order ({unit: (before,
    after)} each): the first before and the last after, units back where they started left out."""
    out: dict = {}
    for change in changes:
        for unit, (before, after) in change.items():
            out[unit] = (out[unit][0] if unit in out else before, after)
    return {u: ba for u, ba in out.items() if ba[0] != ba[1]}


CONFLICT = object()
"""What ``take_back_unit`` answers for a unit changed since on both sides."""


def take_back_unit(now: object, before: object, after: object) -> object:
    """The reference models' one rule for taking a change of one unit (a line, a whole file)
    back from the value it has ``now``: what the change wrote goes back to what it replaced,
    a value already back stays, anything else was changed since (``CONFLICT``)."""
    if now == after:
        return before
    if now == before:
        return now
    return CONFLICT


def assert_result_shape(result: OperationResult) -> None:
    """Every operation answer carries a verdict, the three lists and a next action."""
    assert result.verdict in ("safe", "partial", "refused")
    assert isinstance(result.restored, list)
    assert isinstance(result.skipped, list)
    assert isinstance(result.conflicts, list)
    assert result.next_action and result.next_action.strip()
    assert result.message and result.message.strip()
    for skipped in result.skipped:
        assert skipped.reason.strip(), f"{skipped.path} skipped without a reason"
    for conflict in result.conflicts:
        assert conflict.reason.strip()
