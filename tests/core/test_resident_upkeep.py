"""Work off the answer's path (``Engine.defer_upkeep``/``upkeep``, the resident process).

Pack merges: a store in a process that answers first (``Store.merge_later``) leaves a due merge
of its small packs for after the answer, and the resident does it once the hook's connection is
closed; past ``MAX_PACKS_WAITING`` packs a write merges at once, so the packs never pile up;
without the setting a write merges as before. The work tree's watch: never set up on a
bracket's path there (each bracket lists afresh until then), but by the upkeep, with a first
listing, after which a step asks only about the files it touched; a workspace named when the
process starts (``resident run --warm``) is made so before any request, which waits for it; a
session's start has its workspace made so on a thread, answered before that work is done. The
heap's free pages go back to the system after an answer when no other request is in flight.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from helpers import make_repo
from takeback.core.models import BatchChange
from takeback.engine.engine import Engine
from takeback.resident import server, wire
from takeback.scanning import listing, scan
from takeback.storage import packs
from takeback.storage import store as store_module
from takeback.workspace.capture import Capturer

from .support import open_engine
from .test_scan_big_index import spawned  # noqa: F401 - fixture: every process started


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
    monkeypatch.setattr(resident, "_answer", lambda fields, conn=None: order.append("answer") or [b"done", b""])
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


def test_a_hook_that_comes_while_the_upkeep_merges_is_answered_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge copies without the workspace's lock or the store's (``store.merge_due``): a
    large store's copy took seconds, and every hook waited for it."""
    ws = make_repo(tmp_path / "ws")
    resident = server.Resident(str(tmp_path / "run"), "print", 60.0)
    held = resident._held_for(str(ws))
    held.recording = True
    engine = held.engine_now()
    _record(engine, store_module.MAX_PACKS + 3)
    copying, go = threading.Event(), threading.Event()
    stage = packs.stage_entries

    def paused(pack_dir: Path, entries: dict, prefix: str) -> packs.StagedPack:
        staged = stage(pack_dir, entries, prefix)
        if prefix == packs.MERGING:
            copying.set()
            go.wait(30)
        return staged

    monkeypatch.setattr(packs, "stage_entries", paused)
    mine, theirs = socket.socketpair()
    payload = {"session_id": "sess", "cwd": str(ws), "hook_event_name": "UserPromptSubmit", "prompt": "go on"}
    request = [b"hook", b"print", b"claude", b"UserPromptSubmit", str(ws).encode(), wire.environment({"CLAUDECODE": "1"}),
               json.dumps(payload).encode()]
    with theirs:
        theirs.sendall(wire.pack(request))
        theirs.shutdown(socket.SHUT_WR)
        resident.active += 1
        first = threading.Thread(target=resident._serve_one, args=(mine,))
        first.start()
        assert theirs.recv(100) and copying.wait(30)  # answered; its upkeep's merge is copying
    answered = threading.Event()
    second = threading.Thread(target=lambda: (_hook(resident, ws, "Stop"), answered.set()))
    second.start()
    assert answered.wait(30), "a hook waited for the merge's copy"
    go.set()
    first.join(30)
    second.join(30)
    assert _packs(engine) <= store_module.MAX_PACKS
    assert [e.label for e in engine.entries()][:1] == ["go on"]
    held.close()


@pytest.mark.parametrize("in_flight", [0, 1])
def test_the_resident_gives_the_heap_back_after_an_answer_when_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      in_flight: int) -> None:
    """``malloc_trim`` after the answer and the upkeep, only when no other request is in flight
    (it would hold the allocator from it)."""
    resident = server.Resident(str(tmp_path / "run"), "print", 60.0)
    order: list[str] = []
    monkeypatch.setattr(resident, "_answer", lambda fields, conn=None: order.append("answer") or [b"done", b""])
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


def _hook(resident: server.Resident, ws: Path, event: str, **fields: object) -> None:
    """A Claude Code hook call as the resident gets it from ``takeback hook claude``."""
    payload = {"session_id": "sess", "cwd": str(ws), "hook_event_name": event, **fields}
    answer = resident._answer([b"hook", b"print", b"claude", event.encode(), str(ws).encode(), wire.environment({"CLAUDECODE": "1"}),
                               json.dumps(payload).encode()])
    assert answer == [b"done", b"", b"", b"0"]  # nothing unlogged, nothing for the agent to read, exit 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")
def test_a_workspace_named_at_start_is_ready_before_any_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   spawned: list[list[str]]) -> None:
    """``resident run --warm``: the engine, the watch and a listing are made before a request
    comes; the session's first shell step then makes no whole-tree listing (a big index: that
    would be git processes, counted) and still records what the command changed."""
    monkeypatch.setattr(listing, "MAX_ENTRIES", 3)  # a small repository stands for a big one
    ws = make_repo(tmp_path / "ws", {"README.md": "# demo\n", "src/app.py": "A = 1\n", "src/util.py": "U = 1\n", "docs/a.md": "a\n"})
    resident = server.Resident(str(tmp_path / "run"), "print", 60.0)
    thread = resident._warm_in_background([str(ws)])
    assert thread is not None
    thread.join()
    held = resident._held_for(str(ws))
    assert held.engine is not None and held.engine._scan_cache.watching and resident.active == 0
    assert any("diff-files" in argv for argv in spawned)  # the warm-up listed the tree (git, a big index)
    spawned.clear()
    _hook(resident, ws, "UserPromptSubmit", prompt="build it")
    bash = {"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "make"}}
    _hook(resident, ws, "PreToolUse", **bash)
    (ws / "src/app.py").write_text("A = 2\n")
    (ws / "src/new.py").write_text("N = 1\n")
    _hook(resident, ws, "PostToolUse", **bash)
    assert spawned == []  # no git process: no whole-tree listing at the step's start or end
    _hook(resident, ws, "Stop")
    [entry] = held.engine.entries()
    assert {f.path for f in held.engine.entry(entry.id).files} == {"src/app.py", "src/new.py"}
    held.close()


def test_a_hook_that_comes_while_the_workspace_is_made_ready_waits_for_it(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The workspace's lock is taken before the warm-up's thread starts (so before any request is
    accepted), and given back when it ends, also when the warm-up fails."""
    ws = make_repo(tmp_path / "ws")
    resident = server.Resident(str(tmp_path / "run"), "print", 60.0)
    going_on = threading.Event()

    def slow_upkeep(engine: Engine) -> None:
        going_on.wait(10)
        raise OSError("the warm-up failed")

    monkeypatch.setattr(Engine, "upkeep", slow_upkeep)
    thread = resident._warm_in_background([str(ws / "src")])  # a folder inside: its workspace is made ready
    assert thread is not None
    held = resident._held_for(str(ws))
    assert held.lock.locked() and resident.active == 1
    going_on.set()
    thread.join()
    assert not held.lock.locked() and resident.active == 0
    held.close()


def test_a_session_start_readies_its_workspace_on_a_thread_unless_a_request_holds_it(tmp_path: Path) -> None:
    """A session's start (``Resident.warm_soon``, through ``_record``) returns before the work:
    the workspace's lock is taken without waiting and the warm-up runs on a thread; nothing is
    recorded nor counted; a workspace a request holds is left to that request's upkeep, and one
    already ready is not made so again."""
    ws = make_repo(tmp_path / "ws")
    resident = server.Resident(str(tmp_path / "run"), "print", 60.0)
    held = resident._held_for(str(ws))
    with held.lock:  # a request in flight: the start does not wait for it
        assert resident.warm_soon(str(ws)) is None
    assert held.engine is None and not held.ready and resident.active == 0
    going_on = threading.Event()
    upkeep = Engine.upkeep

    def slow_upkeep(engine: Engine) -> None:
        going_on.wait(10)
        upkeep(engine)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Engine, "upkeep", slow_upkeep)
        _hook(resident, ws, "SessionStart", source="startup")  # answered (done, nothing unlogged) ...
        assert held.lock.locked() and not held.ready  # ... while the work goes on
        assert resident.status()["ready"] == [] and resident.active == 1
        going_on.set()
        with held.lock:
            pass
    assert held.ready and resident.status()["ready"] == [str(ws)] and resident.status()["requests"] == 0
    assert resident.warm_soon(str(ws)) is None and resident.status()["engines_opened"] == 1  # ready already
    assert held.engine is not None and held.engine.entries() == []  # nothing recorded
    held.close()
    assert not held.ready


def test_the_resident_s_threads_allocate_from_one_heap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """glibc's ``M_ARENA_MAX`` is 1 before any thread starts: the pages a request's or the
    warm-up's thread freed are the main heap's, which ``malloc_trim`` gives back."""
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(server, "_MALLOPT", lambda param, value: calls.append((param, value)) or 1)
    monkeypatch.setattr(server.signal, "signal", lambda *args: None)
    resident = server.Resident(str(tmp_path), "print", 60.0)
    resident.stopping = True  # serves nothing: leaves at once
    started = threading.active_count()
    assert resident.serve(os.open(os.devnull, os.O_RDONLY)) == 0
    assert calls == [(server.M_ARENA_MAX, 1)] and threading.active_count() == started


def test_the_upkeep_folds_what_another_process_published(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A long-lived engine's upkeep folds the records another process published since its last
    call (the language server runs it when its poller sees them), so the next request folds
    none of them; the cache they make due is written there too."""
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    engine.defer_upkeep()
    engine.status()
    other = open_engine(ws)  # another process's engine (its own lock file description)
    _record(other, 3)
    caplog.set_level("INFO", logger="takeback.engine")
    engine.upkeep()
    assert engine.history.head == other.store.head() and engine.history.replayed == 3
    assert "folded 3 log commit(s) another process published" in caplog.text
    engine.begin_turn(label="next")
    assert engine.history.replayed == 0  # the request folded nothing
    caplog.clear()
    engine.upkeep()  # its own records: nothing to say
    assert "folded" not in caplog.text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")
def test_the_upkeep_brings_the_listing_up_to_date_once_no_step_is_open(tmp_path: Path) -> None:
    """An edit step's end asks git nothing (the watch saw only the file it named), so the listing
    it leaves is behind by that file: the upkeep after the answer catches up, and the next shell
    step's begin asks about no file; while a step is open the upkeep leaves the listing alone, so
    that step's end can still tell by the watch alone that nothing else changed."""
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws, long_lived=True)
    engine.defer_upkeep()
    cache = engine._scan_cache
    engine.upkeep()  # the watch and its first listing
    engine.begin_step("edit", [str(ws / "README.md")], session="s")
    (ws / "README.md").write_text("edited\n")
    engine.upkeep()  # the step is open: the listing stays as it was
    assert cache.behind()
    relisted = cache.relisted
    entry = engine.end_step("edit", "Edit README.md")
    assert entry is not None and [f.path for f in engine.entry(entry.id).files] == ["README.md"]
    assert cache.relisted == relisted and cache.behind()  # its end scanned nothing
    engine.upkeep()
    assert cache.relisted == relisted + 1 and not cache.behind()
    reused = cache.reused
    engine.begin_step("quiet", session="s")  # a shell step that changes nothing
    assert cache.reused == reused + 1 and cache.relisted == relisted + 1  # the listing as the upkeep left it
    assert engine.end_step("quiet", "Bash pytest") is None
    (ws / "src" / "app.py").write_text("the person's, between two steps\n")
    engine.upkeep()
    assert cache.relisted == relisted + 2 and not cache.behind()
    engine.begin_step("shell", session="s")
    (ws / "src" / "new.py").write_text("new\n")
    entry = engine.end_step("shell", "Bash make")
    # the begin's snapshot held app.py as the person left it: the step claims only its own file
    assert entry is not None and [f.path for f in engine.entry(entry.id).files] == ["src/new.py"]
    engine.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")
def test_an_engine_opened_anew_for_a_command_keeps_the_work_tree_s_watch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the held engine cannot answer as a fresh one would (another process rewrote the
    timeline cache), the command gets a new engine, which keeps the watch, the listing and the
    known versions the old one kept (``Engine.adopt_tree``): its begin lists nothing and reads no
    file the old one knew; closing the old engine closes nothing of them."""
    monkeypatch.setattr(scan, "_RACY_NS", 0)
    ws = make_repo(tmp_path / "ws")
    notes = [f"notes/n{i}.md" for i in range(3)]
    resident = server.Resident(str(tmp_path / "run"), "print", 60.0)
    held = resident._held_for(str(ws))
    old = held.engine_now()
    old.upkeep()
    old.begin_turn(label="notes")
    (ws / "notes").mkdir()
    for rel in notes:
        (ws / rel).write_text(f"{rel}\n")
    old.end_turn()  # their content stored, their versions known
    old.upkeep()
    other = Engine(ws)  # another process writes the timeline cache
    with other.transaction():
        other.history.save_cache()
    other.close()
    assert not old.history.cache_unchanged()
    cache = old._scan_cache
    captured: list[str] = []
    from_disk = Capturer.from_disk
    monkeypatch.setattr(Capturer, "from_disk", lambda self, rel: (captured.append(rel), from_disk(self, rel))[1])
    with held.lent() as engine:
        assert engine is not None and engine is not old and held.opened == 2
        assert engine._scan_cache is cache and cache.watching and old._scan_cache is not cache
        reused = cache.reused
        entry = engine.begin_turn(label="next")
        assert cache.reused == reused + 1 and captured == []
        (ws / notes[0]).write_text("the agent's\n")
        engine.end_turn()
        assert [f.path for f in engine.entry(entry.id).files] == [notes[0]]
    assert cache.watching
    held.close()
    assert not cache.watching


def test_an_engine_with_other_settings_takes_over_no_watch(tmp_path: Path) -> None:
    """``Engine.adopt_tree`` between engines that read other settings (the watch turned off
    since) takes nothing over: the new engine keeps its own, and the old one's is left to close."""
    ws = make_repo(tmp_path / "ws")
    old = open_engine(ws, long_lived=True)
    old.upkeep()
    new = open_engine(ws, long_lived=True)
    new.config = new.config.model_copy(update={"watch_tree": False})
    kept, own = old._scan_cache, new._scan_cache
    new.adopt_tree(old)
    assert new._scan_cache is own and old._scan_cache is kept and kept.watching
    old.close()
    new.close()
