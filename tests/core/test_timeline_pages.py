"""The timeline cache in pages (``engine/timeline_cache.py``, ``engine/history.py``): opening a
long timeline reads the index and no page (counted), and neither do ``status``, ``log --limit``
or the undo preview; every reader answers on a paged store what it answers on the same store
opened from the log alone (random timelines: turns, undo, redo, reverts of old turns, checks,
retention drops, the cache saved and the store opened again between any two steps); a missing,
torn or mismatched page is refused and the cache rebuilt from the log. Pages here hold 3 entries
and the tail 2, so a short timeline has many pages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import make_repo
from takeback.core.models import BatchChange, Entry
from takeback.engine import timeline_cache as pages
from takeback.engine.engine import Engine
from takeback.errors import TakebackError
from takeback.storage.store import Store

from .support import open_engine

BIG = {"max_entries": 100_000, "max_age_days": 36500}


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages, "PAGE_ENTRIES", 3)
    monkeypatch.setattr(pages, "TAIL_ENTRIES", 2)


@pytest.fixture
def page_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every page read, by name."""
    reads: list[str] = []
    original = pages.read_page

    def read_page(store: Path, ref: pages.PageRef, headers: bool = False) -> pages.PageRead:
        reads.append(ref.name)
        return original(store, ref, headers)

    monkeypatch.setattr(pages, "read_page", read_page)
    return reads


def _turn(engine: Engine, ws: Path, i: int, path: str | None = None) -> None:
    target = ws / (path or f"f{i % 4}.txt")
    engine.record_batch([BatchChange(path=str(target), after=f"turn {i}\n".encode())], label=f"turn {i}")
    target.write_bytes(f"turn {i}\n".encode())


def _saved(ws: Path) -> Engine:
    """The store opened with its cache just written (every entry but the tail in pages)."""
    engine = open_engine(ws, retention=BIG)
    engine.history.save_cache()
    return open_engine(ws, retention=BIG)


def _try(call: Any) -> Any:
    try:
        return call()
    except TakebackError as exc:
        return f"{type(exc).__name__}: {exc}"


def _head(entry: Entry) -> dict[str, Any]:
    """An entry as a header shows it (a header read from the cache has no file list)."""
    shown = entry.model_dump(exclude={"files", "state_hash", "checkpoints"})
    return {**shown, "file_count": entry.file_count,
            "checkpoints": [cp.model_dump(exclude={"paths"}) for cp in entry.checkpoints]}


def answers(engine: Engine) -> dict[str, Any]:
    """What every reader of the timeline answers (each through the engine, as the CLI asks)."""
    timeline = engine.timeline
    out: dict[str, Any] = {}  # first, while a paged store's older entries are not loaded: their pages' headers
    out["headers"] = [_head(e) for e in engine.entries(files=False)]
    out["log"] = [e.number for e in engine.entries(files=False, empty=False)]
    out["log before"] = [e.number for e in engine.entries(files=False, before=timeline.max_number - 3, limit=4)]
    printed = engine.status(files=False)
    status = printed.model_dump(exclude={"store_bytes", "last_recovery", "repairs", "last_entry", "open_turn", "open_turns"})
    status["entries shown"] = [_head(e) for e in (printed.last_entry, printed.open_turn, *printed.open_turns) if e]
    out["status"] = status
    out["targets"] = _try(lambda: [e and e.number for e in engine.targets(False)[:2]])
    out["log 2"] = [_head(e) for e in engine.entries(limit=2, files=False)]
    out["undo"] = _try(lambda: engine.undo(dry_run=True).model_dump(exclude={"duration_ms"}))
    out["redo"] = _try(lambda: engine.redo(dry_run=True).model_dump(exclude={"duration_ms"}))
    out["last green"] = _try(lambda: timeline.last_green().begun.number)
    numbers = range(1, timeline.max_number + 2)
    out["resolve"] = [_try(lambda n=n: timeline.resolve(f"#{n}").begun.entry) for n in numbers]
    out["last"] = _try(lambda: timeline.resolve("last").begun.number)
    out["revert"] = [_try(lambda n=n: engine.revert(str(n), dry_run=True).verdict) for n in numbers]
    out["entries"] = [e.model_dump() for e in engine.entries()]
    first = timeline.checkpoint_seq[0] if timeline.checkpoint_seq else None
    if first is not None:
        out["after"] = [cp.id for cp in timeline.checkpoints_after(first)]
        out["entries after"] = [s.begun.number for s in timeline.entries_after(first)]
        out["prefix"] = _try(lambda: timeline.resolve(timeline.order[0][:20]).begun.number)
        out["checkpoint"] = _try(lambda: timeline.resolve_checkpoint(f"#{timeline.ordered()[0].begun.number}.1").id)
    out["newest first"] = [(owner.begun.number, cp.id) for owner, cp in timeline.checkpoints_newest_first()]
    out["counts"] = (timeline.entry_count, timeline.turn_count, timeline.checkpoint_count, timeline.max_number,
                     list(timeline.open_ids), len(timeline.order), timeline.open_turn() is None)
    return out


def from_log(ws: Path) -> dict[str, Any]:
    """The answers of the store opened from its log alone (the cache removed first, and again
    after: it was written from the log)."""
    engine = open_engine(ws, retention=BIG)
    pages.remove(engine.store.path)
    fresh = open_engine(ws, retention=BIG)
    assert fresh.timeline.is_whole
    found = answers(fresh)
    pages.remove(engine.store.path)
    return found


def _step(engine: Engine, ws: Path, i: int, step: str, arg: int) -> Engine:
    """One random step; answers the engine to go on with."""
    if step == "turn":
        _turn(engine, ws, i, f"f{arg}.txt")
    elif step == "undo":
        _try(lambda: engine.undo(on_conflict="abort"))
    elif step == "redo":
        _try(lambda: engine.redo(on_conflict="abort"))
    elif step == "revert":
        _try(lambda: engine.revert(str(max(1, engine.timeline.max_number - arg)), on_conflict="abort"))
    elif step == "check":
        _try(lambda: engine.record_check(None, "tests", "passed" if arg else "failed"))
    elif step == "gc":
        _try(lambda: open_engine(ws, retention={"max_entries": arg, "max_age_days": 36500}).gc())
        return open_engine(ws, retention=BIG)
    elif step == "save":
        engine.history.save_cache()
    else:
        return open_engine(ws, retention=BIG)
    return engine


STEP = st.one_of(
    st.tuples(st.just("turn"), st.integers(0, 3)),
    st.tuples(st.just("undo"), st.just(0)),
    st.tuples(st.just("redo"), st.just(0)),
    st.tuples(st.just("revert"), st.integers(1, 12)),
    st.tuples(st.just("check"), st.integers(0, 1)),
    st.tuples(st.just("gc"), st.integers(4, 9)),
    st.tuples(st.just("save"), st.just(0)),
    st.tuples(st.just("reopen"), st.just(0)),
)
STEPS = st.lists(STEP, min_size=8, max_size=30)


def _opened(ws: Path, long_lived: bool) -> Engine:
    """An engine on ``ws``; ``long_lived``: as the resident and the language server hold one (its
    saves start its timeline again from the cache written, ``History.save_cache``)."""
    engine = open_engine(ws, retention=BIG)
    if long_lived:
        engine.defer_upkeep()
    return engine


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS, long_lived=st.booleans())
def test_a_paged_store_answers_what_the_log_answers(
    tmp_path_factory: pytest.TempPathFactory, steps: list, long_lived: bool,
) -> None:
    ws = make_repo(tmp_path_factory.mktemp("ws"))
    engine = open_engine(ws, retention=BIG)
    for i in range(8):  # a few pages to begin with
        _turn(engine, ws, i)
    engine.history.save_cache()
    engine = _opened(ws, long_lived)
    for i, (step, arg) in enumerate(steps, 8):
        engine = _step(engine, ws, i, step, arg)
        if engine.history.save_later != long_lived:  # opened again by the step
            engine = _opened(ws, long_lived)
    # the engine that did it all, one opened from its cache, and one opened from the log agree
    engine.history.save_cache()
    paged = answers(_saved(ws))
    assert paged == answers(engine)
    assert paged == from_log(ws)


def test_opening_and_the_short_readers_read_no_page(tmp_path: Path, page_reads: list[str]) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, retention=BIG)
    for i in range(30):
        _turn(engine, ws, i)
    engine.record_check(None, "tests", "passed")
    log_reads: list[str] = []
    engine = _saved(ws)
    index = json.loads((engine.store.path / pages.CACHE_FILE).read_text())
    assert len(index["pages"]) == 10 and len(index["tail"]) == 2 and index["entry_count"] == 30
    page_reads.clear()
    original = Store.read_meta
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Store, "read_meta", lambda self, oid: log_reads.append(oid) or original(self, oid))
        engine = open_engine(ws, retention=BIG)
        status = engine.status(files=False)
        assert (status.entries, status.turns, status.undo_target, status.redo_target) == (30, 30, 30, None)
        assert [e.number for e in engine.entries(limit=2, files=False)] == [30, 29]
        assert engine.timeline.resolve("#29").begun.number == 29
        assert page_reads == [] and log_reads == []
        assert engine.undo(dry_run=True).verdict == "safe"  # (reads the last turn's file list: its own)
        assert engine.timeline.last_green().begun.number == 30
        assert page_reads == [] and len(log_reads) == 1
        _turn(engine, ws, 30)  # a new turn folded on top, and the cache written again
        engine.history.save_cache()
        assert page_reads == [index["pages"][-1]["name"]] or page_reads == []  # at most the last, not full, page
        page_reads.clear()
        log_reads.clear()
        assert open_engine(ws, retention=BIG).status(files=False).entries == 31
    assert page_reads == [] and log_reads == []
    assert engine.timeline.resolve("#3").begun.number == 3  # an older entry: the pages are read
    assert len(page_reads) == 9  # the full pages kept (the last one read at the save stays in memory)


def test_a_full_last_page_is_not_read_again_when_the_tail_moves_on(tmp_path: Path, page_reads: list[str]) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, retention=BIG)
    for i in range(8):  # 6 paged (two full pages), 2 in the tail
        _turn(engine, ws, i)
    engine = _saved(ws)
    page_reads.clear()
    _turn(engine, ws, 8)
    engine.history.save_cache()  # the tail's oldest goes into a new page
    assert page_reads == [] and engine.timeline.entry_count == 9
    index = json.loads((engine.store.path / pages.CACHE_FILE).read_text())
    assert [ref["count"] for ref in index["pages"]] == [3, 3, 1] and len(index["tail"]) == 2


def test_pages_of_big_turns_are_full_by_the_paths_they_changed(
    tmp_path: Path, page_reads: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page is full at ``PAGE_PATHS`` paths changed, before ``PAGE_ENTRIES`` entries: a save
    writes the last page again only while it is not full, so big turns do not make every save
    read and write a page that grows with them. The same answers as from the log."""
    monkeypatch.setattr(pages, "PAGE_PATHS", 5)
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, retention=BIG)
    for i in range(7):  # three files a turn: two turns fill a page (6 paths), not three
        engine.record_batch(
            [BatchChange(path=str(ws / f"d{i}" / f"{n}.txt"), after=f"turn {i}\n".encode()) for n in range(3)],
            label=f"big turn {i}",
        )
    engine = _saved(ws)
    index = json.loads((engine.store.path / pages.CACHE_FILE).read_text())
    assert [(ref["count"], ref["paths"]) for ref in index["pages"]] == [(2, 6), (2, 6), (1, 3)]
    page_reads.clear()
    _turn(engine, ws, 7)  # one file: the tail's oldest (3 paths) joins the last page
    engine.history.save_cache()
    assert page_reads == [index["pages"][-1]["name"]]  # the last page was not full: read to be written again
    index = json.loads((engine.store.path / pages.CACHE_FILE).read_text())
    assert [(ref["count"], ref["paths"]) for ref in index["pages"]] == [(2, 6), (2, 6), (2, 6)]
    page_reads.clear()
    _turn(engine, ws, 8)
    engine.history.save_cache()
    assert page_reads == []  # full by its paths: kept as it is
    index = json.loads((engine.store.path / pages.CACHE_FILE).read_text())
    assert [ref["count"] for ref in index["pages"]] == [2, 2, 2, 1]
    assert answers(_saved(ws)) == answers(engine) == from_log(ws)


def test_a_long_lived_engine_writes_again_only_the_pages_that_change(
    tmp_path: Path, page_reads: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once a save filled a page, a long-lived engine holds what an engine opening then would
    (the tail): the next saves write the entries leaving the tail, not every entry it folded
    since it opened. Until a page is full, it keeps what it wrote there (no page read)."""
    written: list[int] = []
    original = pages.write_page

    def write_page(*args: Any) -> pages.PageRef:
        ref = original(*args)
        written.append(ref.count)
        return ref

    monkeypatch.setattr(pages, "write_page", write_page)
    ws = make_repo(tmp_path / "ws")
    engine = _opened(ws, long_lived=True)
    for i in range(11):
        _turn(engine, ws, i)
    engine.history.save_cache()
    assert written == [3, 3, 3] and len(engine.timeline.loaded()) == 2  # 9 paged, 2 in the tail
    written.clear()
    page_reads.clear()
    for i in range(11, 13):
        _turn(engine, ws, i)
    engine.history.save_cache()
    assert written == [2] and len(engine.timeline.loaded()) == 4  # the two leaving the tail: no page full
    written.clear()
    _turn(engine, ws, 13)
    engine.history.save_cache()
    assert written == [3] and len(engine.timeline.loaded()) == 2 and page_reads == []  # full: the tail only
    written.clear()
    _turn(engine, ws, 14)
    engine.history.save_cache()
    assert written == [1] and page_reads == []
    assert answers(engine) == answers(_saved(ws)) == from_log(ws)


@pytest.mark.parametrize("damage", ["torn", "other", "missing"])
def test_a_bad_page_is_refused_and_the_cache_rebuilt_from_the_log(tmp_path: Path, damage: str) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, retention=BIG)
    for i in range(12):
        _turn(engine, ws, i)
    expected = from_log(ws)
    engine = _saved(ws)
    refs = [pages.PageRef.model_validate(ref) for ref in
            json.loads((engine.store.path / pages.CACHE_FILE).read_text())["pages"]]
    target = engine.store.path / pages.PAGES_DIR / f"{refs[1].name}{pages.PAGE_SUFFIX}"
    if damage == "torn":
        target.write_bytes(target.read_bytes()[:40])
    elif damage == "other":  # a valid page, but another one's entries
        target.write_bytes((engine.store.path / pages.PAGES_DIR / f"{refs[0].name}{pages.PAGE_SUFFIX}").read_bytes())
    else:
        target.unlink()
    again = open_engine(ws, retention=BIG)
    assert answers(again) == expected  # its entries folded from the log instead, never from the bad page
    assert not (engine.store.path / pages.CACHE_FILE).exists() and not target.exists()
    repairs = again.status().repairs
    assert len(repairs) == (1 if damage == "torn" else 0)
    again.history.save_cache()
    assert answers(_saved(ws)) == expected


def test_a_failed_transaction_on_a_paged_store_is_forgotten(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, retention=BIG)
    for i in range(12):
        _turn(engine, ws, i, f"g{i}.txt")
    engine = _saved(ws)
    _turn(engine, ws, 12, "g12.txt")
    expected = answers(_saved(ws))
    assert not engine.timeline.is_whole
    with pytest.raises(RuntimeError, match="half-way"), engine.transaction():
        engine.record_check("2", "tests", "passed")  # an old entry: every page read, then changed
        assert engine.timeline.is_whole and engine.entry("2").checks
        raise RuntimeError("the caller failed half-way")
    assert not engine.entry("2").checks  # the timeline folded again from its cache and what followed
    assert answers(engine) == expected


def test_a_crash_between_the_pages_and_the_index_leaves_a_store_that_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, retention=BIG)
    for i in range(12):
        _turn(engine, ws, i, f"g{i}.txt")
    engine = _saved(ws)
    engine.revert("3")  # an old entry changed: every page is written again
    for i in range(12, 16):
        _turn(engine, ws, i, f"g{i}.txt")
    index = (engine.store.path / pages.CACHE_FILE).read_bytes()

    def crash(store: Path, data: bytes, named: set[str]) -> None:
        raise OSError("the power went out")

    with monkeypatch.context() as patch:
        patch.setattr(pages, "write_index", crash)
        engine.history.save_cache()  # the new pages are written, the index is not
    assert (engine.store.path / pages.CACHE_FILE).read_bytes() == index
    assert len(list((engine.store.path / pages.PAGES_DIR).iterdir())) > len(json.loads(index)["pages"])
    again = open_engine(ws, retention=BIG)
    assert again.timeline.is_whole  # the old index, its pages (the revert folded since reaches into them)
    assert again.history.pages_read == len(json.loads(index)["pages"])
    assert (engine.store.path / pages.CACHE_FILE).read_bytes() == index  # no page was refused
    assert answers(again) == from_log(ws)


def test_log_of_a_store_whose_newest_entry_reverted_a_paged_turn_reads_no_page(
    tmp_path: Path, page_reads: list[str],
) -> None:
    """An operation's header names its target's number: for a target in an older page it comes
    from the pages' headers (``Timeline.number_of``), so ``log`` still reads no page's records."""
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, retention=BIG)
    for i in range(12):
        _turn(engine, ws, i, f"g{i}.txt")
    assert engine.revert("#2").verdict == "safe"
    engine = _saved(ws)
    page_reads.clear()
    headers = engine.entries(files=False)
    assert page_reads == [] and engine.history.pages_read == 0
    assert [(e.number, e.kind, e.target_number) for e in headers[:2]] == [(13, "revert", 2), (12, "turn", None)]
    assert next(e for e in headers if e.number == 2).state == "reverted"
    assert [_head(e) for e in headers] == [_head(e) for e in open_engine(ws, retention=BIG).entries()]
