"""The command line's writing commands served by the resident process (``resident/forward.py``,
``resident/cli.py``, ``wire.ACCEPTED``): ``undo``, ``redo``, ``revert``, ``restore``, ``begin``
and ``end`` answered by that process with the same bytes and exit status as in-process; run
in-process when no process accepted them (none, another time zone or umask); and never run twice once
one accepted them, even when it is killed before answering (exit 13, one line, the journal
leaving the operation done once or not at all).

Real processes throughout: a real ``takeback resident run`` (started by hand, or with its
journal's start made to wait so it can be killed half-way through an undo), real clients.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import Takeback
from .test_cli_resident import _at_terminal, off, served_count, two_turns, warm  # noqa: F401 - the fixture
from .test_resident import WAIT_SECONDS, resident, wait_gone, wait_running

_LOST = re.compile(
    r"takeback: error: the resident process running this undo ended before it answered; the undo either finished "
    r"or was rolled back by its journal, and is not run again: see 'takeback log' and 'takeback status'\n"
)
# What differs between two runs of the same commands: entry ids, times, commits (their times).
_VARYING = re.compile(rb"\b01[0-9A-HJKMNP-TV-Z]{24}\b|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?|\b[0-9a-f]{40}\b")


def writes(tb: Takeback) -> int:
    return resident(tb)["cli_writes"]


def _sequence(tb: Takeback) -> list[tuple[int, bytes, str]]:
    """Every writing command, in both outputs, and their errors; normalised (``_VARYING``)."""
    out = []
    for args in (("undo",), ("redo",), ("--json", "undo"), ("--json", "redo"), ("revert", "1"),
                 ("restore", "#2.0", "--on-conflict", "skip"), ("revert", "99"), ("end",), ("redo",),
                 ("begin", "--label", "third"), ("--json", "end", "--command", "make"), ("--json", "begin"), ("end",),
                 ("undo", "--on-conflict", "markers")):
        if args[-1] in ("end", "make"):
            (tb.cwd / f"made-by-{len(out)}.txt").write_text("made\n")
        got = tb(*args)
        out.append((got.code, _VARYING.sub(b"?", got.out), _VARYING.sub(b"?", got.err.encode()).decode()))
    return out


def test_every_writing_command_answers_through_the_resident_as_in_process(warm: Takeback) -> None:
    store = warm.store()
    aside_store, aside_ws = store.parent / "store-aside", warm.cwd.parent / "ws-aside"
    shutil.copytree(store, aside_store)
    shutil.copytree(warm.cwd, aside_ws, symlinks=True)
    before, served_before = writes(warm), served_count(warm)

    served = _sequence(warm)
    assert writes(warm) == before + 14  # every one accepted, those that fail too
    assert served_count(warm) == served_before + 14
    shutil.rmtree(store)
    shutil.copytree(aside_store, store)
    shutil.rmtree(warm.cwd)
    shutil.copytree(aside_ws, warm.cwd, symlinks=True)
    local = _sequence(off(warm))
    assert served == local
    assert [code for code, _, _ in served] == [0, 0, 0, 0, 0, 0, 3, 5, 0, 0, 0, 0, 0, 0]


def test_a_writing_command_is_answered_by_the_resident_with_its_engine(warm: Takeback) -> None:
    before, opened = writes(warm), resident(warm)["engines_opened"]
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "takeback", "undo"], cwd=warm.cwd, env=warm.env,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith(b"SAFE: undo of #2 done as #3")
    imported = [line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines() if line.startswith("import time:")]
    assert not [name for name in imported if name.split(".")[0] in ("pygit2", "pydantic") or name.startswith("takeback.engine")]
    warm.ok("begin")
    (warm.cwd / "late.txt").write_text("late\n")
    assert "added     late.txt" in warm.ok("end").text
    assert writes(warm) == before + 3
    assert resident(warm)["engines_opened"] <= opened + 1  # the one the hooks use, kept between commands
    assert [e["kind"] for e in warm.json("log")][:3] == ["turn", "undo", "turn"]


def test_no_resident_or_one_that_refuses_runs_it_in_process_once(tb: Takeback) -> None:
    two_turns(tb)
    assert tb.ok("undo").text.startswith("SAFE: undo of #2 done as #3")  # no process: in-process
    assert resident(tb)["running"] is False  # not at a terminal: none started
    code, out, _ = _at_terminal(tb, "redo")  # a person at a terminal: done here, one started for the next
    assert code == 0 and out.startswith(b"SAFE: redo of #3 done as #4")
    pid = wait_running(tb)["pid"]
    tokyo = Takeback(tb.cwd, {**tb.env, "TZ": "Asia/Tokyo"})
    assert tokyo.ok("undo").text.startswith("SAFE: undo of #2 done as #5")  # refused (another time zone): here
    mask = os.umask(0o022)
    os.umask(mask)
    other = subprocess.run([sys.executable, "-m", "takeback", "redo"], cwd=tb.cwd, env=tb.env, capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=60, preexec_fn=lambda: os.umask(mask ^ 0o077))
    assert other.stdout.startswith(b"SAFE: redo of #5 done as #6")  # refused (another umask: the files it makes)
    assert writes(tb) == 0
    assert tb.ok("undo").text.startswith("SAFE: undo of #2 done as #7")  # served
    assert writes(tb) == 1
    assert [e["kind"] for e in tb.json("log")][:4] == ["undo", "redo", "undo", "redo"]
    tb.ok("resident", "stop")
    wait_gone(tb, pid)


def _lost_undo(tb: Takeback, kill: object) -> subprocess.CompletedProcess:
    """Run ``takeback undo`` through the resident process; ``kill()`` once it is under way there."""
    client = subprocess.Popen([sys.executable, "-m", "takeback", "undo"], cwd=tb.cwd, env=tb.env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    kill()  # type: ignore[operator]
    out, err = client.communicate(timeout=60)
    return subprocess.CompletedProcess(client.args, client.returncode, out, err.decode())


def _wait(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_resident_killed_once_it_accepted_is_never_run_again_not_done(warm: Takeback) -> None:
    """Killed while it waits for the store's lock (held here), after it accepted the undo."""
    pid, before = resident(warm)["pid"], writes(warm)
    lock = os.open(warm.store() / "lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        def kill() -> None:
            _wait(lambda: writes(warm) == before + 1, "the undo was not accepted")
            os.kill(pid, signal.SIGKILL)
        got = _lost_undo(warm, kill)
    finally:
        os.close(lock)
    assert (got.returncode, got.stdout) == (13, b"") and _LOST.fullmatch(got.stderr), got
    wait_gone(warm, pid)
    assert [e["kind"] for e in off(warm).json("log")] == ["turn", "turn"]  # not done, and not done again here
    assert warm.ok("undo").text.startswith("SAFE: undo of #2 done as #3")  # the socket left: in-process, once
    assert warm("--json", "undo").code == 0
    assert [e["kind"] for e in off(warm).json("log")] == ["undo", "undo", "turn", "turn"]


_HELD_AT_JOURNAL = (
    "import os, sys, time\nfrom takeback.workspace import journal\nstart = journal.Journal.start\n"
    "def held(self, *a, **k):\n    start(self, *a, **k)\n    open(os.environ['JOURNAL_MARK'], 'w').close()\n"
    "    time.sleep(600)\n"
    "journal.Journal.start = held\nfrom takeback.resident.command import run\nsys.exit(run('run', False))\n"
)


def test_a_resident_killed_half_way_through_an_undo_leaves_it_done_once_or_not_at_all(tb: Takeback, tmp_path: Path) -> None:
    """Killed once the undo's journal is written (its start made to wait there)."""
    two_turns(tb)
    notes, store = (tb.cwd / "notes.txt").read_bytes(), tb.store()
    mark = tmp_path / "journal-written"
    proc = subprocess.Popen([sys.executable, "-c", _HELD_AT_JOURNAL], cwd="/", env={**tb.env, "JOURNAL_MARK": str(mark)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        pid = wait_running(tb)["pid"]
        assert pid == proc.pid

        def kill() -> None:
            _wait(mark.exists, "the undo's journal was not written")
            os.kill(pid, signal.SIGKILL)
        got = _lost_undo(tb, kill)
    finally:
        proc.kill()
        proc.wait(timeout=WAIT_SECONDS)
    assert (got.returncode, got.stdout) == (13, b"") and _LOST.fullmatch(got.stderr), got
    assert (store / "journal.json").exists()  # the operation was under way
    status = off(tb)("--json", "status")  # the next command finds the journal and settles it
    assert "recovered an interrupted undo" in status.err
    kinds = [e["kind"] for e in off(tb).json("log")]
    assert kinds in (["turn", "turn"], ["undo", "turn", "turn"])  # done once or not at all: never twice
    notes_now = (tb.cwd / "notes.txt").read_bytes() if (tb.cwd / "notes.txt").exists() else None
    assert notes_now == (notes if kinds == ["turn", "turn"] else None)  # turn #2 made it
    assert not (store / "journal.json").exists()
