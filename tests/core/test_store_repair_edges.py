"""Repairs ``test_store_repair.py`` does not reach, on a real store in a temp folder.

A commit whose content blobs sit in an older pack that was torn (a bracket's begin stores its
blobs before its end publishes), a log of which nothing can be read whole, foreign commits in
the packs (one without a committer line, one that cannot be inflated) when the log has to go
back, an index damaged while a process has the store open, and questions asked of the store
about ids that are not blobs or not ids at all: each answered, never a crash, and the next open
sets the damage aside.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from takeback.errors import StoreError
from takeback.storage import packs
from takeback.storage.store import Store


def _publish(store: Store, contents: list[bytes], label: str) -> str:
    with store.locked():
        blobs = {store.write_blob(c) for c in contents}
        return store.append(b'{"records": [], "label": "%s"}' % label.encode(), blobs, label, store.head())


def _pack_dir(store: Store) -> Path:
    return Path(store.repo.path) / "objects" / "pack"


def _report(store_path: Path) -> dict:
    (report,) = [json.loads(p.read_text()) for p in (store_path / "quarantine").glob("*/report.json")]
    return report


def _cut(path: Path) -> None:
    path.chmod(0o644)
    path.write_bytes(path.read_bytes()[:40])


def test_a_commit_whose_blobs_were_in_a_torn_older_pack_is_cut_off(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    first = _publish(store, [b"one\n"], "call 1")
    with store.locked():  # a begin: the blobs go to disk in their own pack, nothing published
        blob = store.write_blob(b"what the turn began with\n" * 20)
    (early,) = [p for p in _pack_dir(store).glob("*.pack") if blob in [i.hex() for i in packs.index_ids(p.with_suffix(".idx"))]]
    second = store.append(b'{"records": []}', {blob}, "call 2", first)  # its end names them
    _cut(early)
    again = Store(tmp_path / "store", tmp_path)
    assert again.head() == first
    report = _report(tmp_path / "store")
    assert report["log"] == {"was": second, "now": first, "now_subject": "call 1"}
    assert any(line.startswith(second[:12]) for line in report["lost"]), report["lost"]
    assert any(f["path"].endswith(early.name) for f in report["files"])


def test_a_log_of_which_nothing_can_be_read_is_emptied_and_says_what_it_lost(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    only = _publish(store, [b"one\n"], "call 1")
    for pack in _pack_dir(store).glob("*.pack"):
        _cut(pack)
    again = Store(tmp_path / "store", tmp_path)
    assert again.head() is None
    report = _report(tmp_path / "store")
    assert report["log"] == {"was": only, "now": None, "now_subject": None}
    assert report["lost"] == [f"{only[:12]} (the log's head: it could not be read)"]
    assert not (Path(again.repo.path) / "refs" / "takeback" / "oplog").exists()  # set aside, none written


def test_foreign_commits_do_not_become_the_log_when_it_goes_back(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    first = _publish(store, [b"one\n"], "call 1")
    meta = packs.object_id("blob", b"{}")
    tree_data = b"100644 meta.json\x00" + bytes.fromhex(meta)
    tree = packs.object_id("tree", tree_data)
    headless = b"tree " + tree.encode()  # no author, no committer, no message: another tool's
    garbled = bytes.fromhex(packs.object_id("commit", b"tree x\n\nlost\n"))
    entries = {bytes.fromhex(meta): packs.pack_entry("blob", b"{}"), bytes.fromhex(tree): packs.pack_entry("tree", tree_data),
               bytes.fromhex(packs.object_id("commit", headless)): packs.pack_entry("commit", headless),
               garbled: packs.pack_entry("commit", b"tree x\n\nlost\n")[:2] + b"not zlib at all"}
    packs.write_entries(_pack_dir(store), entries)
    second = _publish(store, [b"two\n"], "call 2")
    newest = [p for p in _pack_dir(store).glob("*.idx") if bytes.fromhex(second) in packs.index_ids(p)]
    _cut(newest[0].with_suffix(".pack"))
    again = Store(tmp_path / "store", tmp_path)
    assert again.head() == first  # not the headless commit, whose time cannot be read
    lost = _report(tmp_path / "store")["lost"]
    assert f"{garbled.hex()[:12]} (unreadable) (cut off from the log)" in lost, lost
    assert any(line.startswith(second[:12]) for line in lost)


@pytest.mark.parametrize("damage", [b"not an index at all, only bytes" * 40, b""], ids=["not-an-index", "cut-short"])
def test_an_index_damaged_under_an_open_store_does_not_blind_it(damage: bytes, tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    _publish(store, [b"one\n"], "call 1")
    _publish(store, [b"two\n"], "call 2")
    running = Store(tmp_path / "store", tmp_path)  # opened while both packs were whole
    idx = sorted(_pack_dir(store).glob("*.idx"), key=lambda p: p.stat().st_mtime_ns)[0]
    data = idx.read_bytes()
    idx.chmod(0o644)
    idx.write_bytes(damage or data[: 8 + 256 * 4 + 10])  # the header, and a name table cut short
    assert running.has(packs.object_id("blob", b"two\n"))  # the whole pack still answers, through libgit2
    assert running.read_blob(packs.object_id("blob", b"two\n")) == b"two\n"
    Store(tmp_path / "store", tmp_path)
    assert any(f["path"].endswith(idx.name) for f in _report(tmp_path / "store")["files"])


def test_ids_that_are_not_blobs_or_not_ids(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    head = _publish(store, [b"one\n"], "call 1")
    with pytest.raises(StoreError, match=rf"object {head} in the store .* is a commit, not file content"):
        store.read_blob(head)
    assert store.has("not an id") is False
    with pytest.raises(StoreError, match="object not-an-id is missing from the store"):
        store.read_blob("not-an-id")


def test_a_folder_where_a_pack_index_must_be_is_set_aside_as_unreadable(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    first = _publish(store, [b"one\n"], "call 1")
    _publish(store, [b"two\n"], "call 2")
    idx = sorted(_pack_dir(store).glob("*.idx"), key=lambda p: p.stat().st_mtime_ns)[-1]
    idx.unlink()
    idx.mkdir()
    again = Store(tmp_path / "store", tmp_path)
    assert again.head() == first
    problems = {f["path"].rsplit("/", 1)[1]: f["problem"] for f in _report(tmp_path / "store")["files"]}
    assert problems[idx.name] == f"{idx.stem} cannot be read: Is a directory"
    assert not idx.exists() and not idx.with_suffix(".pack").exists()
