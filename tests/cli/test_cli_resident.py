"""The command line's reading commands served by the resident process (``resident/forward.py``,
``resident/cli.py``): the same bytes and exit status as in-process, really from that process,
and the in-process answer whenever it cannot give one (gone, killed half-way, other settings,
another time zone, a command it does not serve).

Each test runs real ``takeback`` processes against a real repository and a real resident
process (``takeback resident run``, started by hand); the in-process answer it is compared with
is the same command with ``TAKEBACK_RESIDENT=0``.
"""

from __future__ import annotations

import errno
import json
import os
import pty
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import environment, make_repo
from takeback.resident import address, wire

from .conftest import Takeback
from .test_hooks import captured, hook
from .test_resident import WAIT_SECONDS, resident, serving, wait_gone, wait_running, write_step

SERVED = [
    ("status",), ("--json", "status"), ("log",), ("log", "--limit", "1"), ("--json", "log"),
    ("show", "1"), ("show", "2", "--patch"), ("--json", "show", "2", "--patch"), ("diff", "1"),
    ("cat", "2", "notes.txt"), ("cat", "2", "notes.txt", "--before"),
    ("undo", "--dry-run"), ("--json", "undo", "--dry-run"), ("revert", "1", "--dry-run"),
    ("restore", "#1.0", "--dry-run"),
    # errors: one line, the same status
    ("show", "99"), ("--json", "show", "99"), ("log", "--limit", "0"), ("show",), ("redo", "--dry-run"),
    ("cat", "1", "missing.txt"),
]


def two_turns(tb: Takeback) -> None:
    tb.ok("begin", "--label", "first")
    (tb.cwd / "README.md").write_text("# demo\nmore\n")
    tb.ok("end")
    tb.ok("begin", "--label", "second \x1b[31mred")  # a label a terminal would act on
    (tb.cwd / "notes.txt").write_text("one\ntwo\n")
    tb.ok("end")


def off(tb: Takeback, **env: str) -> Takeback:
    """The same calls, in-process."""
    return Takeback(tb.cwd, {**tb.env, "TAKEBACK_RESIDENT": "0", **env})


def served_count(tb: Takeback) -> int:
    return resident(tb)["cli_requests"]


@pytest.fixture
def warm(tb: Takeback):
    """``tb`` with two turns and a resident process serving its settings."""
    two_turns(tb)
    proc, _ = serving(tb, "60")
    yield tb
    proc.terminate()
    proc.wait(timeout=WAIT_SECONDS)


def test_every_served_command_answers_as_in_process(warm: Takeback) -> None:
    here = off(warm)
    before = served_count(warm)
    for args in SERVED:
        served, local = warm(*args), here(*args)
        assert (served.code, served.out, served.err) == (local.code, local.out, local.err), f"{served}\n---\n{local}"
    assert served_count(warm) == before + len(SERVED)
    assert warm("show", "99").code != 0 and len(warm("show", "99").err.splitlines()) == 1


def test_the_answer_comes_from_the_resident_process_which_the_cli_process_does_not_load(warm: Takeback) -> None:
    before = served_count(warm)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "takeback", "log"], cwd=warm.cwd, env=warm.env,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0 and b"first" in proc.stdout
    imported = [line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines() if line.startswith("import time:")]
    assert "takeback.resident.forward" in imported
    assert not [name for name in imported if name.split(".")[0] in ("pygit2", "pydantic") or name.startswith("takeback.engine")]
    assert served_count(warm) == before + 1


def _at_terminal(tb: Takeback, *args: str, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    """Run ``takeback ARGS`` with its stdout on a pseudo-terminal: status, what the terminal got, stderr."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "takeback", *args], cwd=tb.cwd, env=env or tb.env,
                            stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    got = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError as exc:
            assert exc.errno == errno.EIO  # the terminal's other side closed
            break
        if not data:
            break
        got += data
    os.close(master)
    err = proc.stderr.read() if proc.stderr else b""
    return proc.wait(timeout=60), got, err


def test_a_terminal_gets_the_same_bytes_as_in_process(warm: Takeback) -> None:
    before = served_count(warm)
    for args in (("show", "2", "--patch"), ("log",), ("show", "99")):
        served = _at_terminal(warm, *args)
        assert served == _at_terminal(warm, *args, env=off(warm).env)
    assert b"\\033[31m" in _at_terminal(warm, "log")[1]  # quoted, as on any terminal
    assert served_count(warm) == before + 4


def test_a_command_at_a_terminal_starts_the_resident_process_for_the_next(tb: Takeback) -> None:
    two_turns(tb)  # through pipes: none started
    assert resident(tb)["running"] is False
    code, out, _ = _at_terminal(tb, "status")
    assert code == 0 and b"2 agent turns" in out
    status = wait_running(tb)
    assert _at_terminal(tb, "status")[:2] == (code, out)
    assert served_count(tb) == 1
    tb.ok("resident", "stop")
    wait_gone(tb, status["pid"])


def test_a_resident_process_killed_mid_request_still_gives_the_answer(warm: Takeback) -> None:
    expected = off(warm)("log")
    pid = resident(warm)["pid"]
    os.kill(pid, signal.SIGSTOP)  # it takes the connection but never answers
    try:
        proc = subprocess.Popen([sys.executable, "-m", "takeback", "log"], cwd=warm.cwd, env=warm.env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.0)
        assert proc.poll() is None  # waiting for the answer
    finally:
        os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err.decode()) == (expected.code, expected.out, expected.err)
    wait_gone(warm, pid)
    again = warm("log")  # its socket is left behind: nobody answers there, in-process again
    assert (again.code, again.out, again.err) == (expected.code, expected.out, expected.err)


def test_other_settings_or_time_zone_are_never_served(warm: Takeback) -> None:
    before = served_count(warm)
    for env in ({"TAKEBACK_MAX_FILE_BYTES": "12345"}, {"TZ": "Asia/Tokyo"}, {"TZ": "America/Los_Angeles"}):
        other = Takeback(warm.cwd, {**warm.env, **env})
        got, expected = other("log"), off(warm, **env)("log")
        assert (got.code, got.out, got.err) == (expected.code, expected.out, expected.err)
    assert served_count(warm) == before
    path = resident(warm)["socket"]  # a caller with another fingerprint reaching this socket
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(path)
        conn.sendall(wire.pack([b"cli", b"takeback 0 elsewhere", os.fsencode(warm.cwd), b"log", b"", b"00"]))
        conn.shutdown(socket.SHUT_WR)
        assert wire.unpack(conn.makefile("rb").read()) == [b"refused", b"another setting"]


def _ask(tb: Takeback, *argv: str, umask: bytes | None = None) -> list[bytes]:
    """A ``cli`` request sent by hand, with this test's fingerprint (and ``umask``, if given:
    without it nothing that writes is served)."""
    with environment(tb.env):
        print_ = address.fingerprint().encode()
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(resident(tb)["socket"])
        request = [b"cli", print_, os.fsencode(tb.cwd), "\0".join(argv).encode(), b"", b"00"]
        conn.sendall(wire.pack(request + ([umask] if umask is not None else [])))
        conn.shutdown(socket.SHUT_WR)
        return wire.unpack(conn.makefile("rb").read())


def test_commands_not_served_are_refused_with_nothing_done(warm: Takeback) -> None:
    """Checked again once parsed: a command the resident process does not serve (it runs a
    program, names a folder from elsewhere, asks for help) is refused with nothing done, and
    then done once, in-process. (Before the fourth round of issue 18, ``undo`` and ``begin``
    were refused here too, as every command that writes: they are now served, accepted first,
    see test_cli_resident_write.py; what the caller took for a dry run, ``revert -- --dry-run``,
    is a revert of a turn named so, served as one.)"""
    before, oplog = served_count(warm), warm.oplog()
    assert _ask(warm, "log")[:2] == [b"done", b"0"]
    for argv in (("undo", "--dry-run", "-C", "src"), ("undo", "-C", "src"), ("gc",), ("check", "--", "true"),
                 ("--help",), ("status", "--workspace", "src")):
        assert _ask(warm, *argv) == [b"refused", b"not served"], argv
    assert warm.oplog() == oplog and served_count(warm) == before + 1
    mask = os.umask(0o022)
    os.umask(mask)
    assert _ask(warm, "revert", "--", "--dry-run") == [b"refused", b"not served"]  # no umask: it might write
    assert _ask(warm, "revert", "--", "--dry-run", umask=b"%o" % (mask ^ 0o007)) == [b"refused", b"another umask"]
    assert _ask(warm, "revert", "--", "--dry-run", umask=b"%o" % mask)[:3] == [b"accepted", b"done", b"3"]  # no such turn
    warm.fails(3, "revert", "--", "--dry-run")
    assert warm.oplog() == oplog
    warm.ok("undo")  # done once
    assert [e["kind"] for e in warm.json("log")][:2] == ["undo", "turn"]
    assert served_count(warm) == before + 5  # the revert twice, the undo and the log just above


def test_a_subfolder_and_a_named_workspace_are_the_same_workspace(warm: Takeback) -> None:
    sub = warm.cwd / "src"
    here = off(warm)
    before = served_count(warm)
    for args, served in ((("status",), 1), (("-C", str(warm.cwd), "log"), 1), (("-C", "..", "log"), 0),
                         (("--workspace", "../src", "log"), 0)):
        got, expected = warm(*args, cwd=sub), here(*args, cwd=sub)
        assert (got.code, got.out, got.err) == (expected.code, expected.out, expected.err)
        assert served_count(warm) == before + served
        before += served


def test_one_resident_process_serves_two_workspaces(warm: Takeback, tmp_path: Path) -> None:
    other = Takeback(make_repo(tmp_path / "second"), warm.env)
    other.ok("begin", "--label", "elsewhere")
    (other.cwd / "else.txt").write_text("x\n")
    other.ok("end")
    before = served_count(warm)
    for tb in (warm, other, warm):
        got, expected = tb("log"), off(tb)("log")
        assert (got.code, got.out, got.err) == (expected.code, expected.out, expected.err)
    assert b"elsewhere" in other("log").out and b"elsewhere" not in warm("log").out
    assert served_count(warm) == before + 5


@pytest.mark.parametrize(("argv", "sent"), [
    (["status"], True), (["--json", "log", "--limit", "3"], True), (["-C", "/abs", "show", "1"], True),
    (["--workspace=/abs", "diff", "1"], True), (["-C/abs", "cat", "1", "a"], True),
    (["undo", "--dry-run"], True), (["revert", "2", "--dry-run", "--on-conflict", "skip"], True),
    # Sent as commands that write (None: accepted first, never run twice); before the fourth round of
    # issue 18 these four were not sent (False), as every command that writes.
    (["undo"], None), (["undo", "--dry"], None), (["revert", "--", "--dry-run"], None), (["begin"], None),
    (["end", "--command", "make"], None), (["-C", "/abs", "restore", "#1.0"], None), (["undo", "-C", "rel"], False),
    (["check", "--", "status"], False), (["gc"], False), (["-C", "rel", "status"], False), (["--workspace=rel", "log"], False),
    (["-Crel", "log"], False), (["--work", "/abs", "log"], False), (["status", "--help"], False), (["-h"], False),
    (["--version"], False), (["resident", "status"], False), (["-C"], False), ([], False),
])
def test_which_command_lines_are_sent(argv: list[str], sent: bool | None) -> None:
    from takeback.resident.forward import eligible

    assert eligible(argv) is sent


def test_a_reader_gone_before_the_answer_ends_quietly_with_141_as_in_process(warm: Takeback) -> None:
    before = served_count(warm)
    got = []
    for env in (warm.env, off(warm).env):
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            proc = subprocess.run([sys.executable, "-m", "takeback", "log"], cwd=warm.cwd, env=env,
                                  stdout=write_end, stderr=subprocess.PIPE, timeout=60)
        finally:
            os.close(write_end)
        got.append((proc.returncode, proc.stderr))
    assert got[0] == got[1] == (141, b"")
    assert served_count(warm) == before + 1


# ---------------------------------------------------------------------- the engine it holds


def _same(tb: Takeback, *args: str) -> None:
    served, local = tb(*args), off(tb)(*args)
    assert (served.code, served.out, served.err) == (local.code, local.out, local.err), f"{served}\n---\n{local}"


def test_served_commands_read_with_the_engine_the_hooks_hold_and_open_none(warm: Takeback) -> None:
    hook(warm, "claude", captured("claude", "UserPromptSubmit", warm.cwd))
    write_step(warm, "hooked.txt", "from a hook\n", "toolu_h")
    hook(warm, "claude", captured("claude", "Stop", warm.cwd))
    status = resident(warm)
    assert status["requests"] == 4 and status["workspaces"] == [str(warm.cwd)] and status["engines_opened"] == 1
    before = status["cli_requests"]
    commands = [("status",), ("--json", "status"), ("log",), ("--json", "log"), ("show", "3"), ("undo", "--dry-run")]
    for args in commands:
        _same(warm, *args)
    assert b"Write hooked.txt" in warm("show", "3").out
    status = resident(warm)
    assert status["engines_opened"] == 1  # every served command used the hooks' engine: none opened
    assert status["cli_requests"] == before + len(commands) + 1
    hook(warm, "claude", captured("claude", "UserPromptSubmit", warm.cwd))  # the hooks go on with it
    write_step(warm, "later.txt", "later\n", "toolu_l")
    hook(warm, "claude", captured("claude", "Stop", warm.cwd))
    for args in commands:
        _same(warm, *args)
    assert resident(warm)["engines_opened"] == 1


def _interrupted_undo(tb: Takeback) -> None:
    """An undo run by another process, killed once its journal is written (before any file)."""
    code = (
        "import os\nfrom takeback.workspace import journal\nstart = journal.Journal.start\n"
        "def killed(self, *a, **k):\n    start(self, *a, **k)\n    os._exit(9)\n"
        "journal.Journal.start = killed\nfrom takeback.cli import main\nmain(['undo'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tb.cwd, env=off(tb).env, capture_output=True, timeout=60)
    assert proc.returncode == 9, proc.stderr


def _recovered_at(out: bytes) -> bytes:
    """``out`` with the time of the recovery it reports left out (when it ran)."""
    at = json.loads(out)["last_recovery"]["at"] if out.startswith(b"{") else None
    return out.replace(f'"at": "{at}"'.encode(), b'"at": ?') if at else re.sub(rb"recovery   [-0-9]+ [:0-9]+:", b"recovery   ?:", out)


def test_a_journal_another_process_left_is_recovered_and_reported_as_in_process(warm: Takeback) -> None:
    _same(warm, "status")  # the resident process now holds an engine for the workspace
    opened = resident(warm)["engines_opened"]
    store = Path(warm.json("status")["store"])
    _interrupted_undo(warm)
    assert (store / "journal.json").exists()
    aside = store.parent / "store-before"
    shutil.copytree(store, aside)
    notes = (warm.cwd / "notes.txt").read_bytes()

    served = [warm("--json", "status"), warm("status"), warm("log")]
    assert not (store / "journal.json").exists()
    assert resident(warm)["engines_opened"] > opened  # the held engine could not say it: a new one did
    assert json.loads(served[0].out)["last_recovery"]["operation"] == "undo"
    assert "recovered an interrupted undo" in served[0].err
    shutil.rmtree(store)
    shutil.copytree(aside, store)
    (warm.cwd / "notes.txt").write_bytes(notes)
    local = [off(warm)("--json", "status"), off(warm)("status"), off(warm)("log")]
    for got, expected in zip(served, local, strict=True):  # the same but for when each recovered
        assert (got.code, _recovered_at(got.out), got.err) == (expected.code, _recovered_at(expected.out), expected.err)
    assert _recovered_at(served[0].out) != served[0].out and _recovered_at(served[1].out) != served[1].out
    _same(warm, "status")  # the store put back: the held engine opened anew
    _same(warm, "--json", "status")


def test_a_settings_file_changed_between_two_served_commands_is_seen(warm: Takeback) -> None:
    settings = warm.cwd / ".takeback.toml"
    settings.write_text("fsync = true\n")
    _same(warm, "status")
    assert b"fsync on" in warm("status").out
    opened = resident(warm)["engines_opened"]
    before = os.stat(settings)
    with open(settings, "r+") as handle:  # the same file, the same size, the same time: only the text differs
        handle.write("fsync =false\n")
    os.utime(settings, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(settings)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    _same(warm, "status")
    assert b"fsync off" in warm("status").out
    assert resident(warm)["engines_opened"] == opened + 1
    settings.write_text("[retention]\nmax_entries = 1\n")  # a key a repository may not set: a problem shown
    _same(warm, "status")
    _same(warm, "--json", "status")
    assert b"settings" in warm("status").out


def test_a_served_command_that_fails_gives_the_engine_and_the_store_back(warm: Takeback) -> None:
    for args in (("show", "99"), ("cat", "1", "missing.txt"), ("redo", "--dry-run")):
        assert warm(*args).code != 0
    hook(warm, "claude", captured("claude", "UserPromptSubmit", warm.cwd))  # the same engine, its lock free
    write_step(warm, "after.txt", "after\n", "toolu_a")
    hook(warm, "claude", captured("claude", "Stop", warm.cwd))
    assert resident(warm)["requests"] == 4
    off(warm).ok("undo")  # another process takes the store's lock at once
    assert not (warm.cwd / "after.txt").exists()
    _same(warm, "status")
    _same(warm, "log")
    assert resident(warm)["engines_opened"] == 1
