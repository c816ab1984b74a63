"""Store.write_blob: content already stored is not written again, only refreshed."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from turnback.store import Store


def _loose(store: Store, oid: str) -> Path:
    return Path(store.repo.path) / "objects" / oid[:2] / oid[2:]


def test_write_blob_ids_match_git_and_existing_content_is_only_refreshed(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    content = b"def main():\n    return 1\n" * 100
    oid = store.write_blob(content)
    assert oid == str(pygit2.hash(content))
    assert store.read_blob(oid) == content
    path = _loose(store, oid)
    os.utime(path, (1_000_000_000, 1_000_000_000))
    objects_before = sorted(p.name for p in (Path(store.repo.path) / "objects").rglob("*"))
    assert store.write_blob(content) == oid
    assert path.stat().st_mtime > 1_000_000_000  # refreshed, as libgit2's freshen does
    assert sorted(p.name for p in (Path(store.repo.path) / "objects").rglob("*")) == objects_before


def test_write_blob_of_new_and_empty_content(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    for content in (b"", b"\x00\x01binary\xff", b"x" * 100_000):
        oid = store.write_blob(content)
        assert oid == str(pygit2.hash(content)) and store.has(oid)
        assert store.read_blob(oid) == content
