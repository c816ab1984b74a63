"""The store's object writing: one pack per published call, merged as they pile up, pruned by gc.

Every check reads the store back through libgit2 and through the real git (``git fsck``), so the
packs are known to be valid git, not only readable by our own code.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pygit2
import pytest

from takeback.config import Config
from takeback.core.models import MODE_FILE, FileVersion
from takeback.errors import StoreError
from takeback.storage import packs
from takeback.storage.recent import RecentBlobs
from takeback.storage.store import MAX_PACKS, OPLOG_REF, Store
from takeback.workspace.capture import Capturer
from takeback.workspace.files import Version, Workspace


def _files(store: Store) -> list[str]:
    objects = Path(store.repo.path) / "objects"
    return sorted(str(p.relative_to(objects)) for p in objects.rglob("*") if p.is_file())


def _git(store: Store, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    return subprocess.run(
        ["git", f"--git-dir={store.repo.path}", *args], env=env, check=True, capture_output=True, text=True
    ).stdout


def _publish(store: Store, contents: list[bytes], label: str) -> str:
    """One engine call: content and log commit published together, under the store's lock."""
    with store.locked():
        blobs = {store.write_blob(c) for c in contents}
        return store.append(b'{"records": [], "label": "%s"}' % label.encode(), blobs, label, store.head())


def test_write_blob_ids_match_git_and_content_already_held_is_not_written_again(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    content = b"def main():\n    return 1\n" * 100
    with store.locked():
        oid = store.write_blob(content)
        assert oid == str(pygit2.hash(content))
        assert store.read_blob(oid) == content and store.has(oid)  # readable while still in memory
        assert _files(store) == []  # nothing on disk before the call publishes
    assert store.read_blob(oid) == content  # written when the lock was released
    files = _files(store)
    assert len(files) == 2 and all(f.startswith("pack/pack-") for f in files)
    assert store.write_blob(content) == oid
    assert _files(store) == files
    for content in (b"", b"\x00\x01binary\xff", os.urandom(300_000)):
        oid = store.write_blob(content)
        assert oid == str(pygit2.hash(content)) and store.read_blob(oid) == content


def test_what_one_hold_of_the_lock_stored_or_read_stays_in_memory_for_a_grace_after_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A big turn's end describes each file from the bytes its scan stored moments before: the
    whole hold keeps them in memory (up to ``HELD_BUDGET``), and so does the grace after it (a
    redo that follows an undo puts back the bytes the undo read); then the oldest go, down to
    the 4 MB kept between calls, by a timer. Seen with the packs moved away: what memory holds
    reads, the rest is missing."""
    monkeypatch.setattr(RecentBlobs, "GRACE", 1.0)
    store = Store(tmp_path / "store", tmp_path)
    contents = [b"%05d\n" % i + os.urandom(2000) for i in range(3000)]  # 6 MB, past BUDGET
    pack_dir = Path(store.repo.path) / "objects" / "pack"
    aside = tmp_path / "aside"

    def read_aside(oid: str) -> bytes:
        pack_dir.rename(aside)
        try:
            return store.read_blob(oid)
        finally:
            aside.rename(pack_dir)

    with store.locked():
        oids = [store.write_blob(c) for c in contents]
        store.flush()  # on disk, no longer waiting in memory
        assert [read_aside(o) for o in oids] == contents
    ended = time.monotonic()
    assert read_aside(oids[0]) == contents[0]  # the grace after the hold
    while time.monotonic() - ended < 30 and store._recent.size > RecentBlobs.BUDGET:
        time.sleep(0.05)
    assert time.monotonic() - ended >= 1.0
    assert read_aside(oids[-1]) == contents[-1]  # the newest stay, within BUDGET
    with pytest.raises(StoreError, match="missing"):
        read_aside(oids[1])  # the oldest went when the grace ended
    assert store.read_blob(oids[1]) == contents[1]


def test_a_file_found_to_be_a_recorded_version_is_read_back_from_memory(tmp_path: Path) -> None:
    """A redo writes back what the undo before it verified on disk: planning's comparison by id
    remembers the bytes it hashed, so the redo reads no pack for them."""
    ws = tmp_path / "ws"
    ws.mkdir()
    store = Store(tmp_path / "store", ws)
    content = b"kept\n" + os.urandom(500)
    oid = store.write_blob(content)
    store.flush()
    fresh = Store(tmp_path / "store", ws)  # another process: nothing in memory
    capture = Capturer(fresh, Workspace(ws), Config())
    version = FileVersion(oid=oid, mode=MODE_FILE, size=len(content))
    pack_dir = Path(fresh.repo.path) / "objects" / "pack"
    pack_dir.rename(tmp_path / "aside")
    with pytest.raises(StoreError, match="missing"):
        fresh.read_blob(oid)
    assert not capture.matches("f", version, Version(content + b"x", MODE_FILE))
    assert not capture.matches("f", version, Version(content[:-1] + b"?", MODE_FILE))  # same size, other bytes
    with pytest.raises(StoreError, match="missing"):
        fresh.read_blob(oid)
    assert capture.matches("f", version, Version(content, MODE_FILE))
    assert fresh.read_blob(oid) == content


def test_one_published_call_writes_one_pack_that_git_reads(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    contents = [b"a\n" * 500, b"b\r\n" * 500, os.urandom(5000)]
    tip = _publish(store, contents, "first")
    files = _files(store)
    assert len(files) == 2  # blobs, meta.json, tree and commit: one .pack and its .idx
    assert (Path(store.repo.path) / OPLOG_REF).read_text() == tip + "\n"
    assert not list(Path(store.repo.path).rglob("*.lock"))
    second = _publish(store, [contents[0], b"c\n"], "second")
    assert len(_files(store)) == 4
    assert store.commit_chain(second) == [tip, second]
    assert _git(store, "rev-parse", OPLOG_REF).strip() == second
    assert _git(store, "log", "--format=%s", OPLOG_REF).split() == ["second", "first"]
    assert _git(store, "cat-file", "blob", f"{second}:{packs.object_id('blob', b'c' + bytes([10]))}") == "c\n"
    _git(store, "fsck", "--full", "--strict", "--no-dangling")
    commit = store.repo[second]  # libgit2 reads what we wrote by hand
    assert [str(p) for p in commit.parent_ids] == [tip] and commit.message == "second"
    assert {e.name for e in commit.tree} == {"meta.json", *(store.hash_blob(c) for c in (contents[0], b"c\n"))}


def test_packs_are_merged_as_they_pile_up_and_a_handle_that_knew_the_old_ones_still_reads(tmp_path: Path) -> None:
    writer = Store(tmp_path / "store", tmp_path)
    reader = Store(tmp_path / "store", tmp_path)  # another process's view: it knows the first packs
    contents = [f"turn {i}\n".encode() * (i + 1) for i in range(3 * MAX_PACKS)]
    _publish(writer, contents[:1], "t0")
    assert reader.read_blob(writer.hash_blob(contents[0])) == contents[0]
    tips = [writer.head()]
    for i in range(1, len(contents)):
        tips.append(_publish(writer, contents[i : i + 1], f"t{i}"))
        assert len(writer._packs()) <= MAX_PACKS
    assert len(writer._packs()) < len(contents) // 2
    for c in contents:
        assert reader.read_blob(reader.hash_blob(c)) == c
    assert reader.commit_chain(reader.head()) == tips
    _git(writer, "fsck", "--full", "--strict", "--no-dangling")


def test_prune_keeps_only_what_is_named_and_folds_loose_objects_in(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    kept, dropped = b"kept\n", b"dropped\n"
    _publish(store, [kept], "one")
    store.write_blob(dropped)  # stored, never named by the log
    legacy = str(store.repo.create_blob(b"loose, as an older store wrote it\n"))
    (Path(store.repo.path) / "objects/pack/tmp_pack.pack_123_dead").write_bytes(b"PACK, half-written by a killed writer")
    assert any(len(f.split("/")[0]) == 2 for f in _files(store))
    keep = store.reachable({legacy})
    removed = store.prune(keep)
    assert removed == 1
    assert not store.has(store.hash_blob(dropped))
    assert store.read_blob(store.hash_blob(kept)) == kept
    assert store.read_blob(legacy) == b"loose, as an older store wrote it\n"
    files = _files(store)
    assert len(files) == 2 and all(f.startswith("pack/") for f in files)
    _git(store, "fsck", "--full", "--strict")


def test_content_another_process_pruned_is_written_again(tmp_path: Path) -> None:
    """A handle remembers the ids it packed so it need not ask libgit2 again; once another
    process's gc has pruned one of them, the handle must store that content anew, never take
    it for stored."""
    ours = Store(tmp_path / "store", tmp_path)
    theirs = Store(tmp_path / "store", tmp_path)
    kept = _publish(ours, [b"named by the log\n"], "kept")
    with ours.locked():
        loose_end = ours.write_blob(b"stored, then named by nothing\n")  # e.g. a bracket that was discarded
    assert ours.has(loose_end)
    theirs.prune(theirs.reachable())
    assert not Store(tmp_path / "store", tmp_path).has(loose_end)
    tip = _publish(ours, [b"stored, then named by nothing\n"], "again")
    fresh = Store(tmp_path / "store", tmp_path)
    assert fresh.read_blob(loose_end) == b"stored, then named by nothing\n"
    assert fresh.head() == tip and fresh.commit_chain(tip, None)[0] == kept
    _git(fresh, "fsck", "--strict", "--no-dangling")


def test_a_failed_call_writes_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    with pytest.raises(RuntimeError), store.locked():
        oid = store.write_blob(b"half-done\n")
        raise RuntimeError("the call failed")
    assert not store.has(oid) and _files(store) == []


def test_a_big_call_s_entries_made_on_the_worker_thread_are_the_pack_git_reads(tmp_path: Path) -> None:
    """From ``EntriesAhead.BATCH`` objects on, a call's entries are compressed on a worker
    thread as they come; the pack is the same valid git whichever made them, and a call that
    fails after handing batches over writes none of them."""
    store = Store(tmp_path / "store", tmp_path)
    batch = packs.EntriesAhead.BATCH
    with pytest.raises(RuntimeError), store.locked():
        dropped = [store.write_blob(b"dropped %d\n" % i) for i in range(2 * batch)]
        raise RuntimeError("the call failed")
    assert not any(store.has(o) for o in dropped) and _files(store) == []
    contents = [b"%d\n" % i + os.urandom(i % 3000) for i in range(3 * batch + 5)]  # three batches and a rest
    tip = _publish(store, contents, "big")
    _git(store, "fsck", "--full", "--strict", "--no-dangling")
    fresh = Store(tmp_path / "store", tmp_path)
    assert [fresh.read_blob(store.hash_blob(c)) for c in contents] == contents
    assert {e.name for e in fresh.repo[tip].tree} == {"meta.json", *(store.hash_blob(c) for c in contents)}
    assert not any(fresh.has(o) for o in dropped)


def test_a_stale_ref_lock_of_a_dead_writer_does_not_block_and_cas_holds(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    first = _publish(store, [b"1\n"], "one")
    lock = Path(store.repo.path) / (OPLOG_REF + ".lock")
    lock.write_text("0" * 40 + "\n")
    second = _publish(store, [b"2\n"], "two")
    assert store.head() == second
    store.prune(store.reachable())
    assert not lock.exists()  # gc clears what a killed writer left
    with pytest.raises(StoreError, match="moved while appending"):
        store.append(b"{}", set(), "stale", first)
    assert store.head() == second


def test_a_tree_never_names_content_the_store_does_not_hold(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    with pytest.raises(StoreError, match="does not hold"):
        store.append(b"{}", {"ab" * 20}, "broken", None)
    assert store.head() is None and _files(store) == []


def test_fsync_policy_on(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path, fsync=True)
    tip = _publish(store, [b"durable\n"], "synced")
    assert store.head() == tip and store.read_blob(store.hash_blob(b"durable\n")) == b"durable\n"
    _git(store, "fsck", "--full", "--strict", "--no-dangling")


def test_pack_index_with_large_offsets_is_read(tmp_path: Path) -> None:
    """Index v2 keeps offsets past 2 GiB in a separate table; reading must follow it."""
    entries = [packs.PackEntry(bytes([i]) * 20, offset, 7) for i, offset in enumerate((12, 3 << 31, 5 << 32))]
    idx = tmp_path / "x.idx"
    idx.write_bytes(packs._index_bytes(entries, b"\x01" * 20))
    assert packs.read_index(idx) == entries


def test_a_handle_reads_only_the_indexes_of_packs_added_since_and_all_after_a_gc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ids a handle knows packed are brought up to date when another process changed the
    packs: after its writes, only the new packs' indexes are read; after its gc (which drops
    objects), every index is read again, and content the gc dropped is written anew. A store
    opened anew on the same folder keeps what an older one read (``adopt_packed``)."""
    ours = Store(tmp_path / "store", tmp_path)
    theirs = Store(tmp_path / "store", tmp_path)
    _publish(ours, [b"one\n", b"two\n"], "first")
    with ours.locked():
        dropped = ours.write_blob(b"named by nothing\n")
    _publish(ours, [b"three\n"], "second")
    read: list[str] = []
    real = packs.index_ids
    monkeypatch.setattr(packs, "index_ids", lambda idx: read.append(idx.name) or real(idx))
    assert ours.has(ours.hash_blob(b"one\n")) and read == []  # known already
    theirs_new = _publish(theirs, [b"four\n"], "theirs")
    read.clear()  # (what the other handle read)
    with ours.locked():
        ours.write_blob(b"five\n")
    assert len(read) == 1, f"read {read}: every index again for one new pack"
    newest = {e.name for e in theirs.repo[theirs_new].tree} - {"meta.json"}
    assert all(ours.has(oid) for oid in newest)
    read.clear()
    theirs.prune(theirs.reachable())
    tip = _publish(ours, [b"named by nothing\n"], "again")  # dropped by the gc: written anew
    assert len(read) == len(ours._packs()) - 1  # (all but the pack just written)
    assert Store(tmp_path / "store", tmp_path).read_blob(dropped) == b"named by nothing\n"
    fresh = Store(tmp_path / "store", tmp_path)
    fresh.adopt_packed(ours)
    _publish(theirs, [b"six\n"], "theirs again")
    read.clear()
    assert _publish(fresh, [b"seven\n"], "adopted") and len(read) == 1, f"read {read}"
    assert fresh.head() is not None and fresh.commit_chain(fresh.head() or "", None)[-3] == tip
    _git(fresh, "fsck", "--strict", "--no-dangling")
