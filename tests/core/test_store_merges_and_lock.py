"""The store's pack merge when every pack outweighs the smaller ones, what the store knows after
its own merge, and its lock's contract.

On a real store in a temp folder: packs whose sizes grow geometrically (each more than twice
all the smaller ones together) are still merged once there are more than ``MAX_PACKS``, all into
one, every commit readable after; after its own merge the store still knows which objects it
holds without reading the packs' name tables again, and still follows another process's packs;
and letting go of a lock that is not held is refused, leaving
the store's lock free for other processes.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from takeback.storage import packs
from takeback.storage.lock import flock_within
from takeback.storage.store import MAX_PACKS, Store, merge_due


def _pack_sizes(store: Store) -> list[int]:
    return [p.stat().st_size for p in (Path(store.repo.path) / "objects" / "pack").glob("*.pack")]


def test_packs_each_outweighing_the_smaller_ones_are_merged_all_at_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    published = []
    for i in range(MAX_PACKS + 1):
        with store.locked():
            blob = store.write_blob(os.urandom(2 * sum(_pack_sizes(store)) + 512))  # random: it does not compress
            published.append(store.append(b'{"records": []}', {blob}, f"call {i}", store.head()))
        if i < MAX_PACKS:
            sizes = sorted(_pack_sizes(store))
            assert all(size > 2 * sum(sizes[:n]) for n, size in enumerate(sizes)), sizes
    assert len(_pack_sizes(store)) == 1  # the ninth pack made them too many: all merged into one
    again = Store(tmp_path / "store", tmp_path)
    assert again.commit_chain(published[-1]) == published and again.repair(deep=True) is False


def test_letting_go_of_a_lock_not_held_is_refused_and_takes_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    with pytest.raises(RuntimeError, match="outside a held lock"), store.released():
        pass
    fd = os.open(tmp_path / "store" / "lock", os.O_RDWR)
    try:
        assert flock_within(fd, 0)  # no one holds it
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    with store.locked():
        assert store.head() is None


def test_after_its_own_merge_the_store_knows_its_objects_and_still_follows_other_writers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A merge keeps the objects, so the ids known to be stored stay known: the next lock reads
    no pack's name table again (it read every one, a cost that grew with the store). Packs another
    process writes are still followed."""
    store = Store(tmp_path / "store", tmp_path)
    store.merge_later = True
    contents = [os.urandom(64) for _ in range(MAX_PACKS + 2)]
    for content in contents:
        with store.locked():
            store.write_blob(content)
    assert merge_due(store) and len(_pack_sizes(store)) == 1
    read: list[str] = []
    real = packs.index_ids
    monkeypatch.setattr(packs, "index_ids", lambda path: read.append(path.name) or real(path))
    with store.locked():
        assert store.write_blob(contents[0]) and not store._pending  # known stored: not queued again
    assert read == []
    other = Store(tmp_path / "store", tmp_path)
    with other.locked():
        oid = other.write_blob(b"written by another process")
    with store.locked():
        assert store._probably_stored(oid) and store.read_blob(oid) == b"written by another process"
    assert read  # the other process's pack was read
