"""What opening the store finds torn, and what it leaves alone (``storage/repair.py``).

The CLI-level power-cut states are ``tests/cli/test_power_cut.py``; here the store is opened
in-process on hand-torn copies, for what a trace of one call does not reach: a pack whose
middle never reached the disk (its size and both ends right), a break in the middle of the
chain, a large index, and above all that a sound store — merged, pruned, large — is never
touched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from takeback.storage import packs
from takeback.storage.store import MAX_PACKS, Store

from .support import open_engine


def _publish(store: Store, contents: list[bytes], label: str) -> str:
    with store.locked():
        blobs = {store.write_blob(c) for c in contents}
        return store.append(b'{"records": [], "label": "%s"}' % label.encode(), blobs, label, store.head())


def _pack_of(store: Store, commit: str) -> str:
    for name in os.listdir(Path(store.repo.path) / "objects" / "pack"):
        if name.endswith(".idx") and commit in packs.commit_ids(Path(store.repo.path) / "objects" / "pack", name[:-4]):
            return name[:-4]
    raise AssertionError(f"no pack holds {commit}")


def _reports(store_path: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((store_path / "quarantine").glob("*/report.json"))]


def test_a_sound_store_is_never_touched(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    for i in range(3 * MAX_PACKS):  # merges on the way
        _publish(store, [f"content {i}\n".encode() * 50, os.urandom(200)], f"call {i}")
    head = store.head()
    assert store.repair(deep=True) is False
    store.prune(store.reachable())
    assert Store(tmp_path / "store", tmp_path).repair(deep=True) is False
    assert store.head() == head and not (tmp_path / "store" / "quarantine").exists()


def test_a_large_index_is_checked_by_its_size_and_ends(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    _publish(store, [b"blob %d\n" % i for i in range(3000)], "many")  # an index over 64 KiB
    pack_dir = Path(store.repo.path) / "objects" / "pack"
    (name,) = [p.stem for p in pack_dir.glob("*.idx")]
    assert (pack_dir / f"{name}.idx").stat().st_size > 64 << 10
    assert packs.problem(pack_dir, name) is None and packs.problem(pack_dir, name, deep=True) is None
    idx = pack_dir / f"{name}.idx"
    data = idx.read_bytes()
    idx.chmod(0o644)
    idx.write_bytes(data[: len(data) // 2])
    assert "cut short" in (packs.problem(pack_dir, name) or "")


def test_a_pack_torn_in_the_middle_is_found_when_a_read_fails(repo: Path) -> None:
    engine = open_engine(repo)
    for i in range(3):
        engine.begin_turn(label=f"turn {i + 1}")
        (repo / "src" / "app.py").write_text(f"def main():\n    return {i}\n" * 40)
        engine.end_turn()
    store = engine.store
    pack_dir = Path(store.repo.path) / "objects" / "pack"
    newest = _pack_of(store, store.head() or "")
    pack = pack_dir / f"{newest}.pack"
    data = bytearray(pack.read_bytes())
    data[12:-20] = bytes(len(data) - 32)  # size and both ends right, the objects never written
    pack.chmod(0o644)
    pack.write_bytes(bytes(data))
    reopened = open_engine(repo)
    with reopened.transaction():
        numbers = sorted(s.begun.number for s in reopened.timeline.ordered())
    assert numbers == [1, 2]
    (report,) = _reports(store.path)
    assert any(f["path"].endswith(f"{newest}.pack") and "torn" in f["problem"] for f in report["files"]), report
    assert report["log"]["now_subject"].startswith("turn #2")
    assert (Path(store.path) / "quarantine").is_dir() and not pack.exists()
    status = reopened.status()
    assert status.repairs and status.repairs[0].log_now == report["log"]["now"]


def test_a_break_in_the_middle_of_the_log_names_what_was_cut_off(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    commits = [_publish(store, [f"c{i}\n".encode()], f"call {i}") for i in range(4)]
    pack_dir = Path(store.repo.path) / "objects" / "pack"
    middle = _pack_of(store, commits[2])
    (pack_dir / f"{middle}.pack").chmod(0o644)
    (pack_dir / f"{middle}.pack").write_bytes(b"")
    again = Store(tmp_path / "store", tmp_path)
    assert again.head() == commits[1]
    (report,) = _reports(tmp_path / "store")
    assert report["log"] == {"was": commits[3], "now": commits[1], "now_subject": "call 1"}
    assert [line for line in report["lost"] if "call 3" in line and "cut off" in line]
    assert [line for line in report["lost"] if "call 2" in line and "content was lost" in line]  # named by published.log
    assert again.commit_chain(commits[1]) == commits[:2]


def test_an_empty_ref_goes_to_the_newest_whole_commit(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    commits = [_publish(store, [f"c{i}\n".encode()], f"call {i}") for i in range(3)]
    ref = Path(store.repo.path) / "refs" / "takeback" / "oplog"
    ref.write_bytes(b"")
    again = Store(tmp_path / "store", tmp_path)
    assert again.head() == commits[-1]
    (report,) = _reports(tmp_path / "store")
    assert report["files"] == [{"path": "objects.git/refs/takeback/oplog", "problem": "the log ref is empty"}]


def test_a_torn_key_is_set_aside_and_made_anew(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    digest = store.secret_digest(b"secret")
    (tmp_path / "store" / "key").write_bytes(b"\x01\x02")
    fresh = Store(tmp_path / "store", tmp_path)
    assert fresh.secret_digest(b"secret") != digest and len((tmp_path / "store" / "key").read_bytes()) == 32
    (report,) = _reports(tmp_path / "store")
    assert report["files"][0]["path"] == "key"


def test_a_torn_head_file_of_a_new_store_is_written_anew(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", tmp_path)
    _publish(store, [b"x\n"], "call")
    (Path(store.repo.path) / "HEAD").write_bytes(b"")
    (Path(store.repo.path) / "config").write_bytes(b"[co")
    again = Store(tmp_path / "store", tmp_path)
    assert again.read_meta(again.head() or "")
    (report,) = _reports(tmp_path / "store")
    assert sorted(f["path"] for f in report["files"]) == ["objects.git/HEAD", "objects.git/config"]



def test_many_objects_are_checked_through_the_pack_indexes_and_a_missing_one_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from takeback.storage import store as store_module

    store = Store(tmp_path / "store", tmp_path)
    count = store_module._MANY_OBJECTS + 10  # checked against the indexes' name tables, not one by one
    whole = _publish(store, [f"big {i}\n".encode() for i in range(count)], "big")
    assert Store(tmp_path / "store", tmp_path).head() == whole  # every blob there: untouched
    assert not _reports(tmp_path / "store")
    stored = [store.write_blob(f"big {i}\n".encode()) for i in range(count)]
    missing = Store.hash_blob(b"never written\n")
    read: list[str] = []
    original = packs.index_ids
    monkeypatch.setattr(packs, "index_ids", lambda path: read.append(path.name) or original(path))
    with store.locked():
        assert store_module.all_stored(store, stored)
        assert not store_module.all_stored(store, [*stored, missing])
        assert len(read) == 2 * len(store._packs())  # each check read every pack's index once
        read.clear()
        assert not store_module.all_stored(store, [*stored[:3], missing])  # a few: through libgit2
        assert read == []
