"""The stamp of the last power-cut check of a big log head (``storage/checked.py``): an open after
it reads nothing of the head (counted), and every state a power cut or a damaged store can leave
that the stamp does not name exactly (a pack lost or cut short, the ref rolled back, the stamp
torn, of another format) gets the full check of today, and its repair."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import make_repo
from takeback.engine.engine import Engine
from takeback.storage import checked, packs, repair
from takeback.storage import store as store_module
from takeback.storage.store import Store

from .test_timeline_cache import _big_turn  # (engine, ws, count, tag): a turn recorded, then its files written

BIG = checked.BIG + 40  # files of a big turn: its tree names more than ``checked.BIG`` objects


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kind of every object any store reads from disk (or memory), in order."""
    kinds: list[str] = []
    original = Store._read

    def counted(self: Store, hexid: str) -> tuple[str, bytes]:
        found = original(self, hexid)
        kinds.append(found[0])
        return found

    monkeypatch.setattr(Store, "_read", counted)
    return kinds


def _two_big_turns(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A workspace, its store folder and the log's two commits (oldest first), after two big turns."""
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    _big_turn(engine, ws, BIG, "one")
    _big_turn(engine, ws, BIG, "two")
    chain = engine.store.commit_chain(engine.store.head() or "")
    store = engine.store.path
    engine.close()
    return ws, store, chain


def _packs_holding(store: Path, oid: str) -> list[Path]:
    pack_dir = store / "objects.git" / "objects" / "pack"
    return [idx for idx in sorted(pack_dir.glob("pack-*.idx")) if bytes.fromhex(oid) in set(packs.index_ids(idx))]


def test_an_open_after_a_checked_big_head_reads_nothing_of_it(tmp_path: Path, reads: list[str]) -> None:
    ws, path, chain = _two_big_turns(tmp_path)
    (path / checked.FILE).unlink(missing_ok=True)  # as a store the stamp is new to
    reads.clear()
    Store(path, ws)  # the full check: the head, its tree and meta.json read; then stamped
    assert reads.count("tree") == 1 and reads.count("commit") == 1 and (path / checked.FILE).exists()
    reads.clear()
    store = Store(path, ws)
    assert reads == [], "an open with a valid stamp read the head's objects"
    assert store.head() == chain[-1]
    reads.clear()
    engine = Engine(ws)  # the engine's open too (the timeline cache holds the head)
    assert engine.status().entries == 2


def test_a_small_head_is_checked_at_every_open_and_never_stamped(
    tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    _big_turn(engine, ws, 3, "small")
    path = engine.store.path
    engine.close()
    stat_rounds: list[int] = []
    original = checked.packs_now
    monkeypatch.setattr(checked, "packs_now", lambda *args: stat_rounds.append(1) or original(*args))
    for _ in range(2):
        reads.clear()
        Store(path, ws)
        assert reads.count("tree") == 1
    assert not (path / checked.FILE).exists()
    assert not stat_rounds, "an open without a stamp stat'ed the packs for one"


def test_the_newest_commits_pack_lost_after_the_stamp_is_still_repaired(tmp_path: Path) -> None:
    ws, path, (first, second) = _two_big_turns(tmp_path)
    Store(path, ws)
    assert (path / checked.FILE).exists()
    for idx in _packs_holding(path, second):  # the pack of the newest commit (and its blobs) gone
        idx.unlink()
        idx.with_suffix(".pack").unlink()
    store = Store(path, ws)
    assert store.head() == first, "the log still names a commit the store lost"
    [report] = repair.reports(path)
    assert report["log"]["was"] == second and report["log"]["now"] == first and report["lost"]
    assert Engine(ws).status().entries == 1


def test_a_pack_cut_short_after_the_stamp_is_set_aside(tmp_path: Path) -> None:
    ws, path, (first, second) = _two_big_turns(tmp_path)
    Store(path, ws)
    [idx] = _packs_holding(path, second)
    pack = idx.with_suffix(".pack")
    data = pack.read_bytes()
    pack.chmod(0o644)
    pack.write_bytes(data[: len(data) // 2])
    store = Store(path, ws)
    assert store.head() == first
    [report] = repair.reports(path)
    assert pack.name in {Path(f["path"]).name for f in report["files"]}


def test_a_ref_rolled_back_is_checked_and_stamped_again(tmp_path: Path, reads: list[str]) -> None:
    ws, path, (first, _second) = _two_big_turns(tmp_path)
    Store(path, ws)
    (path / "objects.git" / "refs" / "takeback" / "oplog").write_text(first + "\n")  # the ref's write lost
    reads.clear()
    store = Store(path, ws)
    assert store.head() == first and reads.count("tree") == 1, "the stamp of another head was trusted"
    reads.clear()
    Store(path, ws)
    assert reads == [] and not repair.reports(path)  # stamped again, for the head there is now


@pytest.mark.parametrize("how", ["cut short", "empty", "another format", "another digest"])
def test_a_torn_or_foreign_stamp_is_no_stamp(tmp_path: Path, reads: list[str], how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, path, chain = _two_big_turns(tmp_path)
    Store(path, ws)
    stamp = path / checked.FILE
    data = stamp.read_bytes()
    if how == "cut short":
        stamp.write_bytes(data[: len(data) - 10])
    elif how == "empty":
        stamp.write_bytes(b"")
    elif how == "another format":
        monkeypatch.setattr(checked, "FORMAT", checked.FORMAT + 1)
    else:
        stamp.write_bytes(data.replace(b"\n", b" \n", 1))
    reads.clear()
    store = Store(path, ws)
    assert reads.count("tree") == 1 and store.head() == chain[-1]
    assert checked.vouches(path, chain[-1], lambda: checked.packs_now(store._pack_dir, store._packs()))  # written anew


def test_a_pack_added_or_resized_is_not_vouched_for(tmp_path: Path, reads: list[str]) -> None:
    ws, path, chain = _two_big_turns(tmp_path)
    store = Store(path, ws)
    sizes = checked.packs_now(store._pack_dir, store._packs())
    assert sizes is not None and checked.vouches(path, chain[-1], lambda: sizes)
    name = next(iter(sizes))
    assert not checked.vouches(path, chain[-1], lambda: {**sizes, name: [sizes[name][0] + 1, sizes[name][1]]})
    assert not checked.vouches(path, chain[-1], lambda: {**sizes, "pack-" + "0" * 40: [32, 1100]})
    assert not checked.vouches(path, chain[0], lambda: sizes)
    assert not checked.vouches(path, chain[-1], lambda: None)


def test_a_store_kept_open_checks_again_only_what_another_process_wrote(tmp_path: Path, reads: list[str]) -> None:
    """A long-lived process (the resident, the language server: ``check_again`` before each
    command) does not read again, nor stamp, a head it published itself: no power cut can have
    torn it while the process lives. A head another process published, or a ref moved under it,
    it checks as an open would, and repairs."""
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws, long_lived=True)
    _big_turn(engine, ws, BIG, "one")
    path = engine.store.path
    (path / checked.FILE).unlink(missing_ok=True)
    reads.clear()
    assert not store_module.check_again(engine.store, ws)
    assert reads == [] and not (path / checked.FILE).exists(), "its own head was read again"
    other = Engine(ws)  # another process's engine: its store's writes are not this one's
    _big_turn(other, ws, BIG, "two")
    first, second = other.store.commit_chain(other.store.head() or "")
    other.close()
    reads.clear()
    assert not store_module.check_again(engine.store, ws)
    assert reads.count("tree") == 1 and engine.store.head() == second, "another process's head was trusted"
    reads.clear()
    assert not store_module.check_again(engine.store, ws)
    assert reads == []  # checked once: vouched for until the packs or the ref change
    (path / "objects.git" / "refs" / "takeback" / "oplog").write_text(first + "\n")  # moved under it, no pack added
    reads.clear()
    assert not store_module.check_again(engine.store, ws)
    assert reads.count("tree") == 1 and engine.store.head() == first
    for idx in _packs_holding(path, first):  # the head's pack lost under the open store
        idx.unlink()
        idx.with_suffix(".pack").unlink()
    assert store_module.check_again(engine.store, ws), "a head whose pack is gone was not repaired"
    assert engine.store.head() != first
    engine.close()


def test_a_big_operation_stamps_its_head_and_another_process_reads_nothing_of_it(tmp_path: Path, reads: list[str]) -> None:
    """An operation publishes with every pack and the ref flushed: the process that publishes a
    big one stamps its head as a check would, and the next open elsewhere (the resident after
    the language server's undo) reads nothing of it. A turn's head, published unflushed under
    the default settings, is not stamped by its writer."""
    ws, path, _chain = _two_big_turns(tmp_path)
    (path / checked.FILE).unlink(missing_ok=True)
    engine = Engine(ws, long_lived=True)
    (path / checked.FILE).unlink(missing_ok=True)  # (the open's own check stamped the turn's head)
    _big_turn(engine, ws, BIG, "three")
    assert not (path / checked.FILE).exists(), "an unflushed turn's head was stamped"
    result = engine.undo()
    assert result.applied and all((ws / "big" / f"f{i}.txt").read_text() == f"two {i}\n" for i in range(BIG))
    head = engine.store.head()
    assert head is not None and checked.vouches(path, head, lambda: checked.packs_now(engine.store._pack_dir, engine.store._packs()))
    reads.clear()
    store = Store(path, ws)
    assert reads == [] and store.head() == head, "another process's open read the operation's head again"
