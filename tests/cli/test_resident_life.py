"""The resident process's life and edges, driven through real hooks and its real socket: it ends
on SIGTERM, when another socket takes its place or an idle second passes (never under a request
in flight); a second ``resident run`` leaves it serving; a hook killed while it waits, a request
too large, a peer of another user, a change of the workspace's settings, more workspaces than it
holds, a sockets' folder that cannot be made or has no room, a socket taken by another program
and a start marker that cannot be written never lose a step or its answer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import environment, make_repo
from takeback.resident import address, wire

from .conftest import Takeback, expect_error
from .test_hooks import captured, failures, hook, turns
from .test_resident import resident, serving, started, wait_gone, write_step
from .test_resident_refusals import ask, its_fingerprint


def test_sigterm_ends_the_process_and_takes_its_socket_away(tb: Takeback) -> None:
    status = started(tb)
    os.kill(status["pid"], signal.SIGTERM)
    wait_gone(tb, status["pid"])
    assert not os.path.exists(status["socket"])
    assert resident(tb)["running"] is False


def test_a_stopped_process_that_keeps_being_asked_leaves_and_the_next_hook_starts_a_fresh_one(
        tb: Takeback, monkeypatch: pytest.MonkeyPatch) -> None:
    # Callers that come more often than once a second (hooks at 0.3 s, a script polling
    # `resident status`) kept a stopped process from the idle second it waited for: it refused
    # every hook ("stale") and never left, so every hook after it worked in-process.
    status = started(tb)
    path, print_ = status["socket"], its_fingerprint(tb, monkeypatch)
    assert tb.ok("resident", "stop").text.strip() == "stopped the resident process"
    answers: list[bytes] = []
    asking = threading.Event()
    asking.set()

    def keep_asking() -> None:
        while asking.is_set():
            try:
                answers.append(ask(path, wire.pack([b"status", print_]))[0])
            except OSError:  # the socket is gone: the process is leaving
                pass
            time.sleep(0.1)

    asker = threading.Thread(target=keep_asking)
    asker.start()
    try:
        wait_gone(tb, status["pid"])
    finally:
        asking.clear()
        asker.join()
    assert not os.path.exists(path)
    write_step(tb, "after.txt", "after\n", "toolu_after")  # in-process; it starts a fresh process
    fresh = started(tb)
    assert fresh["pid"] != status["pid"]
    write_step(tb, "served.txt", "served\n", "toolu_served")
    assert resident(tb)["requests"] > fresh["requests"]  # served by the fresh one


def test_a_socket_put_in_its_place_ends_the_process_and_is_left_there(tb: Takeback) -> None:
    status = started(tb)
    os.unlink(status["socket"])
    theirs = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        theirs.bind(status["socket"])
        wait_gone(tb, status["pid"])
        assert stat.S_ISSOCK(os.lstat(status["socket"]).st_mode)  # not removed by the leaving process
    finally:
        theirs.close()
        os.unlink(status["socket"])


def test_a_second_run_leaves_at_once_and_the_first_keeps_serving(tb: Takeback) -> None:
    status = started(tb)
    second = tb("resident", "run")
    assert (second.code, second.out, second.err) == (0, b"", "")
    assert resident(tb)["pid"] == status["pid"]


def test_an_idle_setting_that_is_not_a_number_means_ten_minutes(tb: Takeback) -> None:
    odd = Takeback(tb.cwd, {**tb.env, "TAKEBACK_RESIDENT_IDLE": "soon"})
    status = started(odd)
    assert status["idle_exit_seconds"] == 600
    assert odd.ok("resident", "stop").text.strip() == "stopped the resident process"
    wait_gone(odd, status["pid"])


def test_a_request_in_flight_keeps_an_idle_process_until_it_is_answered(tb: Takeback, monkeypatch: pytest.MonkeyPatch) -> None:
    proc, path = serving(tb, "1")
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    time.sleep(2.5)  # more than the idle second, several of the loop's one-second turns
    conn.sendall(wire.pack([b"status", its_fingerprint(tb, monkeypatch)]))
    conn.shutdown(socket.SHUT_WR)
    answer = wire.unpack(conn.recv(65536))
    conn.close()
    assert answer[0] == b"done" and json.loads(answer[1])["pid"] == proc.pid
    assert proc.wait(timeout=30) == 0  # then, a second without a request, it goes


def test_a_request_too_large_is_refused_and_the_process_keeps_serving(tb: Takeback, monkeypatch: pytest.MonkeyPatch) -> None:
    status = started(tb)
    assert ask(status["socket"], b"x" * (wire.MAX_BYTES + 1)) == [b"refused", b"request too large"]
    assert ask(status["socket"], wire.pack([b"status", its_fingerprint(tb, monkeypatch)]))[0] == b"done"


def test_a_hook_killed_while_it_waits_has_its_event_recorded_and_the_process_goes_on(tb: Takeback) -> None:
    """The agent kills its hook (a timeout) after the hook sent its event: the resident process
    still records it, cannot answer (the hook is gone), logs that, and serves the next hooks."""
    repo = tb.cwd
    status = started(tb)
    os.kill(status["pid"], signal.SIGSTOP)  # the hook's connection waits in the queue
    waiting = subprocess.Popen(
        [sys.executable, "-m", "takeback", "hook", "claude"], cwd=repo, env={**tb.env, "CLAUDECODE": "1"},
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    assert waiting.stdin is not None
    waiting.stdin.write(json.dumps(captured("claude", "UserPromptSubmit", repo)).encode())
    waiting.stdin.close()
    time.sleep(1.5)  # it has sent the event and waits for the answer
    waiting.kill()
    waiting.wait(timeout=30)
    os.kill(status["pid"], signal.SIGCONT)
    write_step(tb, "late.txt", "late\n", "toolu_late")
    hook(tb, "claude", captured("claude", "Stop", repo))

    now = resident(tb)
    assert now["pid"] == status["pid"] and now["requests"] == 4  # the killed hook's prompt included
    [turn] = turns(tb)
    assert [cp["label"] for cp in turn["checkpoints"]] == ["Write late.txt"]
    assert failures(tb) == (0, None)
    log = Path(address.sibling(status["socket"], ".log")).read_text()
    assert "a request failed" in log and "BrokenPipeError" in log


def test_a_peer_of_another_user_gets_no_answer(tb: Takeback, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process whose effective uid is another user's (it keeps root's file access through
    its file-system uid, so it can reach the socket) is sent nothing back."""
    if os.geteuid() != 0:
        pytest.skip("acting as another user needs root")
    status = started(tb)
    request = wire.pack([b"status", its_fingerprint(tb, monkeypatch)])
    peer = (
        "import ctypes, os, socket, sys\n"
        "os.seteuid(12345)\n"
        "ctypes.CDLL(None, use_errno=True).setfsuid(0)\n"
        "c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "c.connect(sys.argv[1])\n"
        "try:\n"
        "    c.sendall(bytes.fromhex(sys.argv[2])); c.shutdown(socket.SHUT_WR); got = c.recv(65536)\n"
        "except OSError:  # closed on it before it finished sending\n"
        "    got = b''\n"
        "sys.stdout.write(repr(got))\n"
    )
    proc = subprocess.run([sys.executable, "-c", peer, status["socket"], request.hex()],
                          capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stdout) == (0, "b''"), proc.stderr
    assert ask(status["socket"], request)[0] == b"done"  # its own user still is


def test_the_workspaces_settings_changed_between_turns_rule_the_next_turn(tb: Takeback) -> None:
    """The process reopens a workspace's engine when ``.takeback.toml`` changes: a pattern it
    adds withholds the next turn's matching file."""
    repo = tb.cwd
    pid = started(tb)["pid"]
    for n, settings in enumerate([None, '[secrets]\nextra_patterns = ["*.vault"]\n']):
        if settings is not None:
            (repo / ".takeback.toml").write_text(settings)
        hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
        write_step(tb, f"k{n}.vault", "key\n", f"toolu_v{n}")
        hook(tb, "claude", captured("claude", "Stop", repo))
    second, first = turns(tb)  # newest first
    assert {f["path"]: f["withheld"] for f in first["files"]} == {"k0.vault": None}
    assert {f["path"]: f["withheld"] for f in second["files"]} == {"k1.vault": "secret"}
    assert resident(tb)["pid"] == pid


def test_more_workspaces_than_it_holds_closes_the_least_recent(tb: Takeback, tmp_path: Path) -> None:
    started(tb)
    repos = [make_repo(tmp_path / f"ws{n}") for n in range(9)]
    for repo in repos:
        hook(tb, "claude", captured("claude", "UserPromptSubmit", repo), cwd=repo)
    assert resident(tb)["workspaces"] == [str(repo) for repo in repos[1:]]
    hook(tb, "claude", captured("claude", "Stop", repos[0]), cwd=repos[0])  # opened again
    assert resident(tb)["workspaces"] == [str(repo) for repo in repos[2:] + repos[:1]]
    first = Takeback(repos[0], tb.env)
    assert [t["kind"] for t in turns(first)] == ["turn"]


@pytest.mark.parametrize("tmpdir", ["a-file", "missing"])
def test_a_sockets_folder_that_cannot_be_made_keeps_hooks_in_process(tb: Takeback, tmp_path: Path, tmpdir: str) -> None:
    """No private runtime folder and ``$TMPDIR`` a file (or missing): no process can run, the
    command says why, and hooks record in-process."""
    tmp = tmp_path / "tmp"
    if tmpdir == "a-file":
        tmp.write_text("")
    env = {k: v for k, v in tb.env.items() if k != "XDG_RUNTIME_DIR"} | {"TMPDIR": str(tmp)}
    cannot = Takeback(tb.cwd, env)
    folder = tmp / f"takeback-{os.getuid()}"
    if tmpdir == "a-file":
        said = f"{folder} cannot be looked at (Not a directory); set XDG_RUNTIME_DIR"
    else:
        said = f"{folder} cannot be made (there is no folder {tmp}); set XDG_RUNTIME_DIR"
    expect_error(cannot("resident"), 9, re.escape(f"no resident process can run: {said}"))
    run = cannot("resident", "run")
    assert run.code == 9 and f"the resident process cannot run: {said}" in run.err, run
    write_step(cannot, "kept.txt", "kept\n", "call-kept")
    assert [f["path"] for f in turns(cannot)[-1]["files"]] == ["kept.txt"]
    assert not folder.exists()




def test_a_stores_folder_that_cannot_be_made_is_said_by_the_hook_and_then_recorded_again(tb: Takeback) -> None:
    """The stores' folder (``TAKEBACK_HOME``) becomes a file while the process serves: the
    process cannot open the workspace's engine, the in-process attempt cannot either, so the
    hook says why on stderr; once the folder is back, the next turn is recorded by the process."""
    repo = tb.cwd
    pid = started(tb)["pid"]
    state = Path(tb.env["TAKEBACK_HOME"])
    shutil.rmtree(state, ignore_errors=True)
    state.write_text("not a folder\n")
    said = hook(tb, "claude", captured("claude", "UserPromptSubmit", repo)).stderr
    assert said.startswith("takeback hook claude: StoreError: cannot open the store at ") and "Not a directory" in said
    state.unlink()
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    write_step(tb, "back.txt", "back\n", "toolu_back")
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    assert [f["path"] for f in turn["files"]] == ["back.txt"]
    status = resident(tb)
    assert status["pid"] == pid and status["requests"] == 5 and status["workspaces"] == [str(repo)]


def test_a_store_removed_between_turns_is_made_anew_by_the_process(tb: Takeback) -> None:
    """The person removes the stores' folder to reclaim disk: the process's engine of that
    store is closed and a fresh one makes the store anew, so the next turn is recorded (not
    one failed hook after another until the process leaves)."""
    repo = tb.cwd
    pid = started(tb)["pid"]
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    write_step(tb, "one.txt", "one\n", "toolu_one")
    hook(tb, "claude", captured("claude", "Stop", repo))
    shutil.rmtree(Path(tb.env["TAKEBACK_HOME"]))
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    write_step(tb, "two.txt", "two\n", "toolu_two")
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    assert [f["path"] for f in turn["files"]] == ["two.txt"]
    assert failures(tb) == (0, None)
    assert resident(tb)["pid"] == pid
    tb.ok("undo")
    assert not (repo / "two.txt").exists() and (repo / "one.txt").read_text() == "one\n"


def test_a_socket_taken_by_another_program_is_not_trusted(tb: Takeback, monkeypatch: pytest.MonkeyPatch) -> None:
    """Something else listens at the process's socket and streams more than any answer: the hook
    stops reading, takes no answer from it, and records the step itself."""
    with environment(tb.env):
        path = address.socket_path(address.private_folder(create=True) or "", address.fingerprint())
    taker = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    taker.bind(path)
    taker.listen(8)
    served = []

    def flood() -> None:
        conn, _ = taker.accept()
        with conn:
            try:
                conn.sendall(b"9" * (wire.MAX_BYTES + (1 << 20)))
            except OSError:  # the hook hung up once it had read enough
                served.append(True)

    thread = threading.Thread(target=flood, daemon=True)
    thread.start()
    try:
        hook(tb, "claude", captured("claude", "UserPromptSubmit", tb.cwd))
        thread.join(timeout=60)
        assert served == [True]
    finally:
        taker.close()
    write_step(tb, "mine.txt", "mine\n", "toolu_mine")
    hook(tb, "claude", captured("claude", "Stop", tb.cwd))
    [turn] = turns(tb)
    assert [f["path"] for f in turn["files"]] == ["mine.txt"] and failures(tb) == (0, None)


def test_a_start_marker_that_cannot_be_written_keeps_hooks_in_process(tb: Takeback, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder where the hook's start marker goes: no process is started, the hooks record
    in-process; once it is gone, the next hook starts one."""
    with environment(tb.env):
        path = address.socket_path(address.private_folder(create=True) or "", address.fingerprint())
    marker = Path(address.sibling(path, ".start"))
    marker.mkdir()
    hook(tb, "claude", captured("claude", "UserPromptSubmit", tb.cwd))
    write_step(tb, "kept.txt", "kept\n", "toolu_kept")
    hook(tb, "claude", captured("claude", "Stop", tb.cwd))
    assert resident(tb)["running"] is False
    [turn] = turns(tb)
    assert [f["path"] for f in turn["files"]] == ["kept.txt"]
    marker.rmdir()
    assert started(tb)["running"] is True


def test_a_runtime_folder_with_no_room_for_the_socket_is_said_and_hooks_record(tb: Takeback, tmp_path: Path) -> None:
    """The runtime folder is a real tmpfs whose inodes are all taken, the process's lock and log
    already there: ``resident run`` cannot make its socket, says the disk refused (exit 7) and
    leaves nothing behind; hooks record in-process."""
    if os.geteuid() != 0:
        pytest.skip("mounting a file system needs root")
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,nr_inodes=16,mode=0700", "tmpfs", str(runtime)], check=True)
    try:
        full = Takeback(tb.cwd, {**tb.env, "XDG_RUNTIME_DIR": str(runtime)})
        with environment(full.env):
            path = address.socket_path(address.private_folder(create=True) or "", address.fingerprint())
        for suffix in (".lock", ".log"):
            Path(address.sibling(path, suffix)).touch(mode=0o600)
        n = 0
        try:
            while True:
                (runtime / f"filler-{n}").touch()
                n += 1
        except OSError:
            pass
        run = full("resident", "run")
        assert (run.code, run.err) == (7, "takeback: error: the disk refused: no space left on device; run it again once that is fixed\n")
        assert not os.path.exists(path)
        write_step(full, "roomless.txt", "recorded\n", "toolu_room")
        [turn] = turns(full)
        assert [f["path"] for f in turn["files"]] == ["roomless.txt"]
        assert resident(full)["running"] is False
    finally:
        subprocess.run(["umount", "-l", str(runtime)], check=False)
