"""Work off the answer's path (``Engine.defer_upkeep``/``upkeep``, the resident process).

Pack merges: a store in a process that answers first (``Store.merge_later``) leaves a due merge
of its small packs for after the answer, and the resident does it once the hook's connection is
closed; past ``MAX_PACKS_WAITING`` packs a write merges at once, so the packs never pile up;
without the setting a write merges as before. The work tree's watch: never set up on a
bracket's path there (each bracket lists afresh until then), but by the upkeep, with a first
listing, after which a step asks only about the files it touched. The heap's free pages go
back to the system after an answer when no other request is in flight.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from helpers import make_repo
from takeback.core.models import BatchChange
from takeback.resident import server, wire
from takeback.storage import store as store_module

from .support import open_engine


def _packs(engine) -> int:
    return len(store_module._pack_names(engine.store._pack_dir))


def _record(engine, n: int) -> None:
    for i in range(n):
        engine.record_batch([BatchChange(path="README.md", after=f"version {i}\n".encode())], label=f"edit {i}")


def test_a_deferred_merge_waits_for_the_upkeep(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    engine.defer_upkeep()
    _record(engine, store_module.MAX_PACKS + 3)
    assert _packs(engine) > store_module.MAX_PACKS  # no write merged
    engine.upkeep()
    assert _packs(engine) <= store_module.MAX_PACKS
    assert not store_module.merge_due(engine.store)  # nothing left to merge
    assert engine.file_at(engine.entries()[0].id, "README.md") == f"version {store_module.MAX_PACKS + 2}\n".encode()
    _record(engine, store_module.MAX_PACKS_WAITING + 2)
    assert _packs(engine) <= store_module.MAX_PACKS_WAITING + 1  # past the limit a write merges at once


def test_without_deferral_a_write_merges_as_before(tmp_path: Path) -> None:
    engine = open_engine(make_repo(tmp_path / "ws"))
    _record(engine, store_module.MAX_PACKS + 3)
    assert _packs(engine) <= store_module.MAX_PACKS


def test_the_resident_merges_after_the_answer_is_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_repo(tmp_path / "ws")
    resident = server.Resident(str(tmp_path / "run"), "print", 60.0)
    held = resident._held_for(str(ws))
    held.recording = True  # as ``_record`` marks it: hooks record with this engine (upkeep is theirs)
    engine = held.engine_now()
    assert engine.store.merge_later
    _record(engine, store_module.MAX_PACKS + 3)
    order: list[str] = []
    monkeypatch.setattr(resident, "_answer", lambda fields: order.append("answer") or [b"done", b""])
    merge_due = store_module.merge_due
    mine, theirs = socket.socketpair()
    monkeypatch.setattr(store_module, "merge_due", lambda s: (order.append(f"merge, closed: {mine.fileno() == -1}"), merge_due(s)))
    with theirs:
        theirs.sendall(wire.pack([b"hook", b"print"]))
        theirs.shutdown(socket.SHUT_WR)
        resident.active += 1
        resident._serve_one(mine)
        assert theirs.recv(100)  # the answer came, and the connection was closed before the merge
    assert order == ["answer", "merge, closed: True"]
    assert _packs(engine) <= store_module.MAX_PACKS
    held.close()


@pytest.mark.parametrize("in_flight", [0, 1])
def test_the_resident_gives_the_heap_back_after_an_answer_when_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      in_flight: int) -> None:
    """``malloc_trim`` after the answer and the upkeep, only when no other request is in flight
    (it would hold the allocator from it)."""
    resident = server.Resident(str(tmp_path / "run"), "print", 60.0)
    order: list[str] = []
    monkeypatch.setattr(resident, "_answer", lambda fields: order.append("answer") or [b"done", b""])
    monkeypatch.setattr(server, "_TRIM", lambda pad: order.append(f"trim {pad}"))
    mine, theirs = socket.socketpair()
    with theirs:
        theirs.sendall(wire.pack([b"hook", b"print"]))
        theirs.shutdown(socket.SHUT_WR)
        resident.active += 1 + in_flight
        resident._serve_one(mine)
        assert theirs.recv(100)
    assert order == (["answer", "trim 0"] if not in_flight else ["answer"])
    assert resident.active == in_flight


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")
def test_the_watch_is_set_up_by_the_upkeep_not_by_a_step(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, long_lived=True)
    engine.defer_upkeep()
    cache = engine._scan_cache
    engine.begin_step("one", session="s")
    (ws / "README.md").write_text("one\n")
    entry = engine.end_step("one", "Bash one")
    assert entry is not None and [f.path for f in engine.entry(entry.id).files] == ["README.md"]
    assert cache.cold and not cache.watching  # the step listed the tree afresh, twice
    engine.upkeep()
    assert cache.watching and not cache.cold
    engine.begin_step("two", session="s")
    (ws / "src" / "app.py").write_text("two\n")
    entry = engine.end_step("two", "Bash two")
    assert entry is not None and [f.path for f in engine.entry(entry.id).files] == ["src/app.py"]
    assert cache.reused + cache.relisted >= 2  # both listings came from the upkeep's
    engine.close()
