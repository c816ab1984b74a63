"""The store's pack merge when every pack outweighs the smaller ones, what the store knows after
its own merge, a merge that copies without the store's lock, and its lock's contract.

On a real store in a temp folder: packs whose sizes grow geometrically (each more than twice
all the smaller ones together) are still merged once there are more than ``MAX_PACKS``, all into
one, every commit readable after; after its own merge the store still knows which objects it
holds without reading the packs' name tables again, and still follows another process's packs;
and letting go of a lock that is not held is refused, leaving
the store's lock free for other processes. A merge copies the packs without the store's lock
(``merge_due``): another writer and another process's open go on meanwhile, the open does not
take the merge's files for a crash's leftovers, a merge killed while copying leaves files the
next open sets aside and nothing lost, and a merge whose packs another process collected
meanwhile drops its copy.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from takeback.storage import packs, repair
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


def _piled_up(path: Path, count: int = MAX_PACKS + 2) -> tuple[Store, list[str], list[bytes]]:
    """A store whose merges wait for ``merge_due`` (as the resident's), ``count`` calls published,
    each its own pack; the published commits and contents."""
    store = Store(path, path.parent)
    store.merge_later = True
    published, contents = [], []
    for i in range(count):
        content = os.urandom(64 + i)
        with store.locked():
            blob = store.write_blob(content)
            published.append(store.append(b'{"records": []}', {blob}, f"call {i}", store.head()))
        contents.append(content)
    return store, published, contents


def _merging_files(store: Store) -> list[str]:
    return sorted(n for n in os.listdir(store._pack_dir) if n.startswith(packs.MERGING))


class _Paused:
    """``packs.stage_entries`` of a merge without the lock made to wait, once its files are
    written, until told to go on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.staged, self.go = threading.Event(), threading.Event()
        real = packs.stage_entries

        def stage(pack_dir: Path, entries: dict, prefix: str) -> packs.StagedPack:
            found = real(pack_dir, entries, prefix)
            if prefix == packs.MERGING:
                self.staged.set()
                assert self.go.wait(30)
            return found

        monkeypatch.setattr(packs, "stage_entries", stage)

    def merge(self, store: Store) -> tuple[threading.Thread, list[bool]]:
        answer: list[bool] = []
        thread = threading.Thread(target=lambda: answer.append(merge_due(store)))
        thread.start()
        assert self.staged.wait(30)
        return thread, answer


def test_a_merge_copies_without_the_store_lock_and_others_go_on_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, published, contents = _piled_up(tmp_path / "store")
    paused = _Paused(monkeypatch)
    thread, answer = paused.merge(store)
    assert _merging_files(store), "the merge's copy is not where it is written"
    fd = os.open(tmp_path / "store" / "lock", os.O_RDWR)
    try:
        assert flock_within(fd, 0), "the store's lock is held while the merge copies"
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    other = Store(tmp_path / "store", tmp_path)  # another process opens, and checks, meanwhile
    assert not repair.reports(tmp_path / "store"), "a merge at work was taken for a crash's leftovers"
    other.merge_later = True  # (its write would merge the same packs itself: another test's case)
    with other.locked():
        blob = other.write_blob(b"written while the merge copies")
        published.append(other.append(b'{"records": []}', {blob}, "meanwhile", other.head()))
    paused.go.set()
    thread.join(30)
    assert answer == [True] and not _merging_files(store)
    assert len(store._packs()) == 2  # the merged one, and the pack written meanwhile
    again = Store(tmp_path / "store", tmp_path)
    assert again.commit_chain(again.head() or "") == published and again.repair(deep=True) is False
    assert all(again.read_blob(again.hash_blob(c)) == c for c in [*contents, b"written while the merge copies"])


def test_a_merge_whose_packs_were_collected_meanwhile_drops_its_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, published, contents = _piled_up(tmp_path / "store")
    paused = _Paused(monkeypatch)
    thread, answer = paused.merge(store)
    other = Store(tmp_path / "store", tmp_path)
    other.prune(other.reachable())  # another process's gc: every pack rewritten as one
    collected = other._packs()
    paused.go.set()
    thread.join(30)
    assert answer == [True] and not _merging_files(store)
    assert store._packs() == collected, "the copy of packs gone was put in place"
    again = Store(tmp_path / "store", tmp_path)
    assert again.commit_chain(again.head() or "") == published
    assert all(again.read_blob(again.hash_blob(c)) == c for c in contents)


def test_a_merge_killed_while_copying_leaves_files_the_next_open_sets_aside(tmp_path: Path) -> None:
    store, published, contents = _piled_up(tmp_path / "store")
    killed = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from takeback.storage import packs\n"
        "from takeback.storage.store import Store, merge_due\n"
        "real = packs.stage_entries\n"
        "def stage(*args, **kwargs):\n"
        "    real(*args, **kwargs)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)  # killed once its copy is written, before it is put in place\n"
        "packs.stage_entries = stage\n"
        "store = Store(Path(sys.argv[1]), Path(sys.argv[1]).parent)\n"
        "merge_due(store)\n"
    )
    proc = subprocess.run([sys.executable, "-c", killed, str(tmp_path / "store")], capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert _merging_files(store), "the killed merge left nothing to find"
    again = Store(tmp_path / "store", tmp_path)
    assert not _merging_files(again)
    [report] = repair.reports(tmp_path / "store")
    assert all(Path(f["path"]).name.startswith(packs.MERGING) for f in report["files"]) and not report["lost"]
    assert again.commit_chain(again.head() or "") == published
    assert all(again.read_blob(again.hash_blob(c)) == c for c in contents)
