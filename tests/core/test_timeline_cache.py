"""The timeline cache keeps entry headers, not file lists (``engine/history.py``): opening a store
whose turns are huge, its printed ``status`` and its ``log`` lines read no file list from the log
(counted), an entry's full view reads its own and nothing else; the cache is written after one
big turn (file changes count, not log commits); a header's counts are the full view's, and follow
a checkpoint the editor later refused; a cache of an older format (5, every record; 6; 7, pages
without headers) still opens, from the log, and is written again in this one."""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path

import pytest

from helpers import make_repo
from takeback.core import render
from takeback.core.models import BatchChange, CheckpointRecorded, RecordEnvelope
from takeback.engine import timeline_cache as pages
from takeback.engine.engine import Engine
from takeback.engine.history import CACHE_AFTER_RECORDS, CACHE_ON_PUBLISH
from takeback.storage.store import Store


def _big_turn(engine: Engine, ws: Path, count: int, tag: str) -> None:
    changes = [BatchChange(path=str(ws / "big" / f"f{i}.txt"), after=f"{tag} {i}\n".encode()) for i in range(count)]
    engine.record_batch(changes, label=f"big {tag}")
    for change in changes:
        Path(change.path).parent.mkdir(exist_ok=True)
        Path(change.path).write_bytes(change.after or b"")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every log commit whose records (``meta.json``) are read, by any store."""
    reads: list[str] = []
    original = Store.read_meta

    def read_meta(self: Store, commit_oid: str) -> bytes:
        reads.append(commit_oid)
        return original(self, commit_oid)

    monkeypatch.setattr(Store, "read_meta", read_meta)
    return reads


def test_a_big_turn_writes_the_cache_and_opening_reads_no_file_list(tmp_path: Path, counted: list[str]) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    cache = engine.store.path / "timeline.json"
    _big_turn(engine, ws, CACHE_ON_PUBLISH + 10, "one")
    assert cache.exists()  # written by the publish of the big turn, not 50 log commits later
    _big_turn(engine, ws, CACHE_ON_PUBLISH + 10, "two")
    engine.record_batch([BatchChange(path=str(ws / "small.txt"), after=b"small\n")], label="small")
    (ws / "small.txt").write_bytes(b"small\n")
    assert json.loads(cache.read_text())["entry_count"] == 2  # the small turn is not cached yet

    counted.clear()
    again = Engine(ws)
    status = again.status()
    lines = again.entries(files=False)
    # the one log commit read is the small turn's, newer than the cache: neither open, status nor
    # the log's lines read a big turn's file list
    assert counted == [engine.store.head()] and again.history.lists_read == 0
    assert status.entries == 3 and status.undo_target == 3
    big = CACHE_ON_PUBLISH + 10
    assert [(e.file_count, e.additions, len(e.files)) for e in lines] == [(1, 1, 1), (big, big, 0), (big, big, 0)]

    printed = [render.entry_line(e) for e in render.log_for_terminal(lines)]  # what `takeback log` prints
    assert f" {big} files +{big} -0 " in printed[-1] and "1 file +1 -0" in printed[0]

    counted.clear()
    one = again.entry("1")  # the full view of one entry reads its own file list, and only it
    assert again.history.lists_read == 1 and len(counted) == 1
    assert len(one.files) == CACHE_ON_PUBLISH + 10 and one.files[0].path.startswith("big/")
    assert [e.model_dump() for e in again.entries()] == [e.model_dump() for e in engine.entries()]
    assert again.undo().verdict == "safe" and not (ws / "small.txt").exists()


def test_an_engine_whose_upkeep_waits_writes_the_cache_of_a_big_turn_in_its_upkeep(tmp_path: Path) -> None:
    """The resident process answers first (``defer_upkeep``): the big turn's publish leaves the
    cache to its upkeep, which writes it as the publish would have."""
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws, long_lived=True)
    engine.defer_upkeep()
    cache = engine.store.path / "timeline.json"
    cache.unlink(missing_ok=True)
    _big_turn(engine, ws, CACHE_ON_PUBLISH + 10, "one")
    assert not cache.exists() and engine.history.save_due
    engine.upkeep()
    assert json.loads(cache.read_text())["head"] == engine.store.head() and not engine.history.save_due
    engine.upkeep()  # nothing due: nothing written again
    assert json.loads(cache.read_text())["entry_count"] == 1
    engine.close()


def test_status_as_printed_reads_no_file_list_of_a_big_last_turn(tmp_path: Path, counted: list[str]) -> None:
    ws = make_repo(tmp_path / "ws")
    _big_turn(Engine(ws), ws, CACHE_ON_PUBLISH + 10, "one")
    counted.clear()
    again = Engine(ws)
    printed = again.status(files=False)
    assert counted == [] and again.history.lists_read == 0
    assert printed.last_entry is not None and printed.last_entry.file_count == CACHE_ON_PUBLISH + 10
    assert printed.undo_target == 1
    full = again.status()
    assert again.history.lists_read == 1 and full.last_entry is not None
    assert len(full.last_entry.files) == CACHE_ON_PUBLISH + 10


def test_file_changes_count_toward_the_cache_not_only_log_commits(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    _big_turn(engine, ws, CACHE_AFTER_RECORDS, "one")  # one log commit
    cache = engine.store.path / "timeline.json"
    cache.unlink(missing_ok=True)
    Engine(ws)
    assert json.loads(cache.read_text())["head"] == engine.store.head()


def test_a_header_counts_what_the_full_view_counts_and_follows_a_refused_checkpoint(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    _big_turn(engine, ws, CACHE_AFTER_RECORDS, "one")
    entry, checkpoint = engine.record_batch(
        [BatchChange(path=str(ws / "a.txt"), after=b"a\nb\n"), BatchChange(path=str(ws / "b.txt"), after=b"b\n")],
        label="two", applied=False,
    )
    Engine(ws)  # writes the cache
    again = Engine(ws)
    header = again.entries(files=False)[0]
    assert (header.file_count, header.additions) == (0, 0) and again.history.lists_read == 0
    engine.set_applied(checkpoint, True)  # the editor took it after all
    header = Engine(ws).entries(files=False)[0]
    assert (header.file_count, header.additions) == (2, 3)
    assert [(e.file_count, e.additions, e.deletions) for e in Engine(ws).entries(files=False)] == [
        (len(e.files), e.additions, e.deletions) for e in Engine(ws).entries()
    ]


def test_a_long_lived_engine_keeps_its_headers_until_a_record_changes_their_entry(tmp_path: Path) -> None:
    # the resident process answers ``log`` again and again with one engine: the headers are
    # built once, and again only for an entry a record changed (undone, checked, applied)
    ws = make_repo(tmp_path / "ws")
    writer = Engine(ws)
    _big_turn(writer, ws, CACHE_AFTER_RECORDS, "one")
    _, checkpoint = writer.record_batch([BatchChange(path=str(ws / "b.txt"), after=b"b\n")], label="two", applied=False)
    writer.record_batch([BatchChange(path=str(ws / "c.txt"), after=b"c\n")], label="three")
    (ws / "c.txt").write_bytes(b"c\n")
    Engine(ws)  # writes the cache: the headers below come from it, without file lists
    engine = Engine(ws, long_lived=True)
    first = engine.entries(files=False)
    again = engine.entries(files=False)
    assert all(a is b for a, b in zip(first, again, strict=True)) and engine.history.lists_read == 0

    engine.undo()  # takes #3 back: its header says so, #1's and #2's are the ones already built
    after = engine.entries(files=False)
    assert [e.state for e in after[1:]] == ["reverted", "not-applied", "applied"]
    assert after[1] is not first[0] and after[2] is first[1] and after[3] is first[2]
    engine.set_applied(checkpoint, True)
    engine.record_check(name="tests", command="true", exit_code=0, status="passed", turn="1")
    latest = engine.entries(files=False)
    assert (latest[2].state, latest[2].file_count) == ("applied", 1)
    assert latest[3] is not first[2] and latest[3].checks_passed
    assert [(e.state, e.file_count, e.checks_passed) for e in latest] == [
        (e.state, e.file_count, e.checks_passed) for e in Engine(ws).entries()
    ]


def test_a_cache_of_the_older_format_still_opens_and_is_written_again(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    for i in range(3):
        _big_turn(engine, ws, 20, str(i))
    cache = engine.store.path / "timeline.json"
    head = engine.store.head()
    records = [  # what a cache of format 5 (every record, each checkpoint's file list left in the log) held
        {**json.loads(r.model_dump_json()), **({"changes": []} if isinstance(r, CheckpointRecorded) else {})}
        for oid in reversed(engine.store.commit_chain(head, None))
        for r in RecordEnvelope.model_validate_json(engine.store.read_meta(oid)).records
    ]
    commits = {r["id"]: head for r in records if r["type"] == "checkpoint"}  # (wrong: never read)
    cache.write_text(json.dumps({"format": 5, "head": head, "records": records, "commits": commits, "summaries": {}}))
    again = Engine(ws)
    assert [len(e.files) for e in again.entries()] == [20, 20, 20]
    written = json.loads(cache.read_text())
    assert written["format"] == pages.FORMAT and written["head"] == engine.store.head()
    assert [len(e.files) for e in Engine(ws).entries()] == [20, 20, 20]


def _older_page(old: int) -> tuple[str, bytes]:
    """A page of format ``old``, named as that format named its pages: format 6 kept plain JSON
    pages (``<sha256>.json``, the per-path index in each entry); format 7 one zlib stream (the
    entries, then the per-path index) with no headers, under this format's suffix."""
    if old == 6:
        return f"{'0' * 64}.json", json.dumps({"format": 6, "entries": []}).encode()
    data = zlib.compress(json.dumps({"format": 7, "entries": []}).encode() + b"\n{}")
    return f"{hashlib.sha256(data).hexdigest()}.page", data


@pytest.mark.parametrize("old", [6, 7])
def test_a_cache_of_an_older_format_with_pages_is_replaced_and_its_pages_removed(tmp_path: Path, old: int) -> None:
    """Its index is refused as any older format is (its pages never read as this format's), the
    cache written again from the log, and the old pages swept away with it."""
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    for i in range(3):
        _big_turn(engine, ws, 2, str(i))
    cache = engine.store.path / "timeline.json"
    engine.history.save_cache()
    index = json.loads(cache.read_text())
    file_name, data = _older_page(old)
    old_page = engine.store.path / "timeline-pages" / file_name
    old_page.parent.mkdir(exist_ok=True)
    old_page.write_bytes(data)
    cache.write_text(json.dumps({**index, "format": old, "pages": [
        {"name": file_name.split(".")[0], "count": 0, "first": 1, "last": 1, "marks": [], "last_position": -1}]}))
    again = Engine(ws)
    assert [e.file_count for e in again.entries(files=False)] == [2, 2, 2]
    assert [len(e.files) for e in again.entries()] == [2, 2, 2]
    again.history.save_cache()
    assert json.loads(cache.read_text())["format"] == pages.FORMAT == 8 and not old_page.exists()
    assert again.status().repairs == []  # an older format is not damage: nothing set aside


def test_the_collector_is_paused_while_the_cache_is_folded_and_on_again_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from takeback.core.timeline import Timeline

    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    for i in range(CACHE_AFTER_RECORDS):
        engine.record_batch([BatchChange(path=str(ws / "a.txt"), after=f"{i}\n".encode())], label=f"t{i}")
        (ws / "a.txt").write_bytes(f"{i}\n".encode())
    engine.close()
    Engine(ws).close()  # an open that folded this many records writes the cache
    assert (engine.store.path / "timeline.json").exists()
    seen: list[bool] = []
    original = Timeline.add_folded

    def add_folded(self: Timeline, state: object, positions: list[int]) -> None:
        seen.append(gc.isenabled())
        original(self, state, positions)  # type: ignore[arg-type]

    monkeypatch.setattr(Timeline, "add_folded", add_folded)
    again = Engine(ws)
    assert len(again.entries(files=False)) == CACHE_AFTER_RECORDS
    assert seen and not any(seen)  # every cached entry read with the collector paused
    assert gc.isenabled()  # and it is on again
    gc.disable()
    try:  # a collector someone else paused stays paused
        Engine(ws).close()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_log_quotes_a_label_that_needs_it_and_prints_the_others_as_they_are(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    engine.record_batch([BatchChange(path=str(ws / "a.txt"), after=b"1\n")], label="plain label")
    engine.record_batch([BatchChange(path=str(ws / "b.txt"), after=b"2\n")], label="bell \x07 and \x1b[2J")
    entries = engine.entries(files=False)
    shown = render.log_for_terminal(entries)
    assert shown[1] is entries[1]  # nothing to quote: not copied
    assert shown[0] is not entries[0] and "\x1b" not in (shown[0].label or "") and "\x07" not in (shown[0].label or "")
    assert entries[0].label == "bell \x07 and \x1b[2J"  # the entry itself is left as it was
    assert [e.file_count for e in shown] == [1, 1]


def test_what_a_pause_built_goes_to_the_oldest_generation_not_one_young_pass(tmp_path: Path) -> None:
    """After ``collector_paused`` built many objects they are in the oldest generation: the first
    allocation after the pause does not walk them all (counted: gc's callbacks); a few stay
    young; objects something else froze are left frozen."""
    import gc

    from takeback.engine.history import collector_paused

    passes: list[tuple[int, int]] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            passes.append((info["generation"], gc.get_count()[0]))

    gc.collect()
    gc.callbacks.append(seen)
    try:
        with collector_paused():
            built = [[i] for i in range(50_000)]  # tracked containers, far past gen 0's threshold
        assert gc.get_count()[0] < gc.get_threshold()[0]  # nothing pending for a young pass
        more = [[i] for i in range(100)]
        assert not [p for p in passes if p[0] == 0 and p[1] > 10_000], passes
        assert gc.get_freeze_count() == 0 and gc.isenabled()
        gc.collect()
        passes.clear()
        with collector_paused():  # a small call's objects stay young: a cycle it left is found at once
            more += [[i] for i in range(1000)]
        more += [[i] for i in range(10)]
        assert [p for p in passes if p[0] == 0 and p[1] >= 1000], passes
        gc.freeze()  # someone else's frozen objects stay frozen through a pause
        frozen = gc.get_freeze_count()
        with collector_paused():
            more += [[i] for i in range(50_000)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.callbacks.remove(seen)
        gc.unfreeze()
    del built, more


def test_an_entry_assembled_is_the_entry_model_construct_makes(tmp_path: Path) -> None:
    """``_Model.assembled`` puts the fields in place as ``model_construct`` does (the headers and
    views of ``log``); with fewer values it is ``model_construct`` itself."""
    from takeback.core.models import Checkpoint, Entry

    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    engine.record_batch([BatchChange(path=str(ws / "a.txt"), after=b"1\n")], label="one")
    entry = engine.entries()[0]
    values = {name: getattr(entry, name) for name in Entry.model_fields}
    a, b = Entry.assembled(**values), Entry.model_construct(**values)
    assert a == b and a.model_dump() == b.model_dump() and a.model_fields_set == b.model_fields_set
    assert a.__pydantic_private__ == b.__pydantic_private__ == {"_file_count": None} and a.__pydantic_extra__ is None
    a._file_count = 7
    assert a.file_count == 7 and Entry.assembled(**values).file_count == len(entry.files)
    cp = {name: getattr(entry.checkpoints[0], name) for name in Checkpoint.model_fields}
    assert Checkpoint.assembled(**cp) == Checkpoint.model_construct(**cp) == entry.checkpoints[0]
    assert Checkpoint.assembled(**cp).__pydantic_private__ is None
    fewer = {k: v for k, v in cp.items() if k != "bracket"}
    assert Checkpoint.assembled(**fewer) == Checkpoint.model_construct(**fewer)
