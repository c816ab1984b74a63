"""The store's pack merge when every pack outweighs the smaller ones, and its lock's contract.

On a real store in a temp folder: packs whose sizes grow geometrically (each more than twice
all the smaller ones together) are still merged once there are more than ``MAX_PACKS``, all into
one, every commit readable after; and letting go of a lock that is not held is refused, leaving
the store's lock free for other processes.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from takeback.storage.lock import flock_within
from takeback.storage.store import MAX_PACKS, Store


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
