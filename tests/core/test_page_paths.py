"""The pages' per-path index (``timeline_cache.py``: what each checkpoint changed, kept apart
from the page's entries): reading the pages for an unlimited ``log`` leaves it unread, blame
reads it once and no file list of a paged checkpoint that did not change the file; an index
that is not valid (a path outside the workspace, a checkpoint left out, not JSON) is never
used: blame answers from the file lists, what the log answers, and the cache is removed to be
written again. Pages here hold 3 entries and the tail 2."""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path

import pytest

from helpers import make_repo
from takeback.engine import timeline_cache as pages
from takeback.engine.engine import Engine

from .support import open_engine
from .test_timeline_pages import BIG, _saved, _turn, from_log, small_pages  # noqa: F401  (the fixture)


def _blamed(engine: Engine, ws: Path, name: str) -> list[tuple[int | None, str]]:
    return [(line.origin.number, line.text) for line in engine.blame(str(ws / name)).lines]


@pytest.fixture
def index_reads(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every page's per-path index checked."""
    reads: list[bytes] = []
    original = pages.touched_of

    def touched_of(data: bytes) -> pages.TouchedKept:
        reads.append(data)
        return original(data)

    monkeypatch.setattr(pages, "touched_of", touched_of)
    return reads


def _store(tmp_path: Path) -> tuple[Path, Engine]:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, retention=BIG)
    for i in range(14):
        _turn(engine, ws, i, f"f{i % 5}.txt")
    return ws, _saved(ws)


def test_log_leaves_the_index_unread_and_blame_reads_only_its_file(tmp_path: Path, index_reads: list[bytes]) -> None:
    ws, engine = _store(tmp_path)
    assert [e.number for e in engine.entries(files=False)][-1] == 1  # every page's headers read
    assert (engine.history.headers_read, engine.history.pages_read) == (4, 0) and index_reads == []
    lists = engine.history.lists_read
    blamed = _blamed(engine, ws, "f1.txt")
    assert len(index_reads) == 4  # each page's index, once
    # the file lists read: f1.txt's own paged checkpoints (#2, #7, #12) and the tail's two (no paths kept)
    assert engine.history.lists_read - lists == 5
    assert blamed == [(12, "turn 11")]
    _blamed(engine, ws, "f2.txt")
    assert len(index_reads) == 4  # kept in memory


def _split(data: bytes) -> tuple[bytes, bytes, bytes]:
    """A page file's headers stream (still compressed), its entries JSON and its index JSON."""
    stream = zlib.decompressobj()
    stream.decompress(data)
    headers = data[: len(data) - len(stream.unused_data)]
    entries, _newline, touched = zlib.decompress(stream.unused_data).partition(b"\n")
    return headers, entries, touched


def _rewrite_index(engine: Engine, page: int, touched: bytes) -> None:
    """Put ``touched`` in place of page ``page``'s per-path index, the page renamed for its new
    bytes and the cache's index naming it (as a store not written by Takeback could)."""
    cache = engine.store.path / pages.CACHE_FILE
    index = json.loads(cache.read_text())
    ref = index["pages"][page]
    folder = engine.store.path / pages.PAGES_DIR
    old = folder / f"{ref['name']}{pages.PAGE_SUFFIX}"
    headers, entries, _touched = _split(old.read_bytes())
    data = headers + zlib.compress(entries + b"\n" + touched)
    ref["name"] = hashlib.sha256(data).hexdigest()
    (folder / f"{ref['name']}{pages.PAGE_SUFFIX}").write_bytes(data)
    old.unlink()
    cache.write_text(json.dumps(index))


def _kept(engine: Engine, page: int) -> dict:
    ref = json.loads((engine.store.path / pages.CACHE_FILE).read_text())["pages"][page]
    data = (engine.store.path / pages.PAGES_DIR / f"{ref['name']}{pages.PAGE_SUFFIX}").read_bytes()
    return json.loads(_split(data)[2])


@pytest.mark.parametrize("damage", ["outside", "left out", "not json", "not pairs"])
def test_an_index_that_is_not_valid_is_never_used(tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture) -> None:
    ws, engine = _store(tmp_path)
    expected = from_log(ws)
    truth = {name: _blamed(open_engine(ws, retention=BIG), ws, name) for name in ("f1.txt", "f3.txt")}
    kept = _kept(engine, 1)
    first = next(iter(kept))
    if damage == "outside":
        kept[first] = [["../outside.txt", ""]]
        bad = json.dumps(kept).encode()
    elif damage == "left out":
        del kept[first]
        bad = json.dumps(kept).encode()
    elif damage == "not json":
        bad = b"{not json"
    else:
        bad = json.dumps({key: [["f1.txt"]] for key in kept}).encode()
    _rewrite_index(engine, 1, bad)
    again = open_engine(ws, retention=BIG)
    assert {name: _blamed(again, ws, name) for name in truth} == truth  # the file lists' answer
    assert "per-path index is not used" in caplog.text
    assert not (again.store.path / pages.CACHE_FILE).exists()  # removed: written again from the log
    assert again.status().repairs == []
    again.history.save_cache()
    assert from_log(ws) == expected
    assert {name: _blamed(_saved(ws), ws, name) for name in truth} == truth


def test_a_save_reads_the_file_lists_of_the_entries_leaving_the_tail_only(tmp_path: Path) -> None:
    """A last page not full is written again with the entries that leave the tail: its own
    entries' paths come from its index, only the leaving entry's file list is read."""
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, retention=BIG)
    for i in range(7):  # 5 paged (3 + 2), 2 in the tail
        _turn(engine, ws, i, f"f{i % 5}.txt")
    engine = _saved(ws)
    _turn(engine, ws, 7, "f2.txt")
    lists = engine.history.lists_read
    engine.history.save_cache()  # the last page (2 entries) written again with #6, which leaves the tail
    assert engine.history.lists_read - lists == 1
    fresh = _saved(ws)
    assert {name: _blamed(fresh, ws, name) for name in ("f1.txt", "f2.txt")} == {
        name: _blamed(open_engine(ws, retention=BIG), ws, name) for name in ("f1.txt", "f2.txt")}


def test_a_page_without_its_index_is_refused_and_set_aside(tmp_path: Path) -> None:
    """A page whose bytes hash to its name but hold only entries (no per-path index after them,
    as no Takeback writes one) is refused like a torn one: its entries are folded from the log."""
    ws, engine = _store(tmp_path)
    expected = from_log(ws)  # (which removes the cache: written again below)
    engine = _saved(ws)
    cache = engine.store.path / pages.CACHE_FILE
    index = json.loads(cache.read_text())
    ref = index["pages"][0]
    folder = engine.store.path / pages.PAGES_DIR
    old = folder / f"{ref['name']}{pages.PAGE_SUFFIX}"
    headers, entries, _touched = _split(old.read_bytes())
    data = headers + zlib.compress(entries)
    ref["name"] = hashlib.sha256(data).hexdigest()
    (folder / f"{ref['name']}{pages.PAGE_SUFFIX}").write_bytes(data)
    old.unlink()
    cache.write_text(json.dumps(index))
    again = open_engine(ws, retention=BIG)
    assert [e.number for e in again.entries(files=False)] == [e["number"] for e in expected["entries"]]
    assert again.status().repairs == []  # (its headers are whole: ``log`` reads nothing else)
    assert [e.model_dump() for e in again.entries()] == expected["entries"]  # its records: refused
    assert len(again.status().repairs) == 1  # set aside, as a page that cannot be read
