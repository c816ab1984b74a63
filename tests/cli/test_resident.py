"""The resident process (``takeback.resident``): hooks reach it, and its absence, crash, change
of code or other settings never lose a step.

Each test runs real ``takeback hook`` processes with real Claude Code payloads against a real
repository; the resident process is the real one the first hook starts in the background. The
test run's runtime folder is private to it (tests/conftest.py), so every process found there is
one these tests started.
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
import time
from pathlib import Path

import pytest

from helpers import environment
from takeback import oslite
from takeback.resident import address, wire

from .conftest import Takeback, expect_error, expect_ok
from .test_hooks import SHELL, captured, failures, hook, turns

WAIT_SECONDS = 30.0


def resident(tb: Takeback) -> dict:
    return tb.json("resident", "status")


def wait_running(tb: Takeback) -> dict:
    """The resident process's status once it serves (the first hook starts it in the background)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        status = resident(tb)
        if status["running"]:
            return status
        time.sleep(0.1)
    raise AssertionError("no resident process started")


def wait_gone(tb: Takeback, pid: int) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:
            os.waitpid(pid, os.WNOHANG)  # not our child: only for the odd case that it is
        except ChildProcessError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"resident process {pid} did not exit")


def started(tb: Takeback) -> dict:
    """A resident process serving ``tb``'s settings, started by a first (ignored-by-nobody) hook."""
    hook(tb, "claude", captured("claude", "Stop", tb.cwd))  # nothing open: records nothing, starts it
    return wait_running(tb)


def write_step(tb: Takeback, name: str, content: str, call: str) -> None:
    repo = tb.cwd
    tool = {"tool_name": "Write", "tool_use_id": call, "tool_input": {"file_path": str(repo / name), "content": content}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **tool))
    (repo / name).write_text(content)
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **tool))


def test_hooks_are_served_by_the_resident_process_the_first_hook_starts(tb: Takeback) -> None:
    assert resident(tb)["running"] is False
    first = started(tb)
    assert first["workspaces"] == [] and first["requests"] == 0  # the first hook did its work itself
    hook(tb, "claude", captured("claude", "UserPromptSubmit", tb.cwd))
    write_step(tb, "one.txt", "one\n", "toolu_1")
    hook(tb, "claude", captured("claude", "Stop", tb.cwd))

    status = resident(tb)
    assert status["pid"] == first["pid"] and status["requests"] == 4
    assert status["workspaces"] == [str(tb.cwd)]
    [turn] = turns(tb)
    assert [cp["label"] for cp in turn["checkpoints"]] == ["Write one.txt"]
    assert failures(tb) == (0, None)
    text = tb.ok("resident").text
    assert f"pid {first['pid']}" in text and str(tb.cwd) in text


def test_a_resident_process_killed_between_a_steps_start_and_end_loses_nothing(tb: Takeback) -> None:
    repo = tb.cwd
    pid = started(tb)["pid"]
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    tool = {"tool_name": "Bash", "tool_use_id": "toolu_b", "tool_input": {"command": SHELL}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **tool))
    os.kill(pid, signal.SIGKILL)
    wait_gone(tb, pid)
    (repo / "gen.txt").write_text("generated\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **tool))  # in-process, and starts a new one
    hook(tb, "claude", captured("claude", "Stop", repo))

    [turn] = turns(tb)
    assert [cp["label"] for cp in turn["checkpoints"]] == [f"Bash: {SHELL}"]
    assert [f["path"] for f in turn["files"]] == ["gen.txt"]
    assert wait_running(tb)["pid"] != pid
    tb.ok("undo")
    assert not (repo / "gen.txt").exists()


def test_a_resident_process_that_dies_while_a_hook_waits_for_it_loses_nothing(tb: Takeback) -> None:
    """The hook has sent its event and waits; the process dies before answering: the hook
    records the event itself."""
    repo = tb.cwd
    pid = started(tb)["pid"]
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    os.kill(pid, signal.SIGSTOP)  # it accepts nothing more; the next hook's connection waits
    tool = {"tool_name": "Write", "tool_use_id": "toolu_w", "tool_input": {"file_path": str(repo / "w.txt"), "content": "w\n"}}
    env = {**tb.env, "CLAUDECODE": "1"}
    waiting = subprocess.Popen(
        [sys.executable, "-m", "takeback", "hook", "claude"], cwd=repo, env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    waiting.stdin.write(json.dumps(captured("claude", "PreToolUse", repo, **tool)).encode())
    waiting.stdin.close()
    time.sleep(1.0)
    assert waiting.poll() is None  # still waiting for the stopped process's answer
    os.kill(pid, signal.SIGKILL)
    assert waiting.wait(timeout=60) == 0
    assert waiting.stdout.read() == b""
    (repo / "w.txt").write_text("w\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **tool))
    hook(tb, "claude", captured("claude", "Stop", repo))

    [turn] = turns(tb)
    assert [cp["label"] for cp in turn["checkpoints"]] == ["Write w.txt"]
    assert failures(tb) == (0, None)


def test_changed_code_makes_the_process_step_aside_and_the_event_is_still_recorded(tb: Takeback, tmp_path: Path) -> None:
    """The change is made to a private copy of the package (``PYTHONPATH``: its own fingerprint,
    its own process): touching the checkout's own code would make every resident that the
    other test worker runs at that moment step aside too."""
    package = Path(address.__file__).resolve().parent.parent
    copy = tmp_path / "upgraded"
    shutil.copytree(package, copy / "takeback", ignore=shutil.ignore_patterns("__pycache__"))
    tb.env = {**tb.env, "PYTHONPATH": str(copy)}
    pid = started(tb)["pid"]
    assert str(copy / "takeback") in Path(f"/proc/{pid}/cmdline").read_text()  # the copy runs
    source = copy / "takeback" / "resident" / "address.py"
    info = source.stat()
    os.utime(source, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))  # as an upgrade would
    hook(tb, "claude", captured("claude", "UserPromptSubmit", tb.cwd))  # answered "stale": in-process
    write_step(tb, "two.txt", "two\n", "toolu_2")
    hook(tb, "claude", captured("claude", "Stop", tb.cwd))
    wait_gone(tb, pid)
    [turn] = turns(tb)
    assert [cp["label"] for cp in turn["checkpoints"]] == ["Write two.txt"]


def test_the_guard_is_loaded_once_the_process_listens_and_its_code_is_watched(tb: Takeback, tmp_path: Path) -> None:
    """The guard (its classifier and shell parser) is loaded off any hook's path, and a change
    to its code makes the process step aside like a change to the rest (a private copy, as above)."""
    package = Path(address.__file__).resolve().parent.parent
    copy = tmp_path / "upgraded"
    shutil.copytree(package, copy / "takeback", ignore=shutil.ignore_patterns("__pycache__"))
    tb.env = {**tb.env, "PYTHONPATH": str(copy)}
    status = started(tb)
    deadline = time.monotonic() + WAIT_SECONDS
    while status["guard_loaded_ms"] is None and time.monotonic() < deadline:
        time.sleep(0.1)
        status = resident(tb)
    assert status["guard_loaded_ms"] > 0 and status["requests"] == 0  # no hook asked for it
    source = copy / "takeback" / "guard" / "shell.py"
    info = source.stat()
    os.utime(source, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    hook(tb, "claude", captured("claude", "UserPromptSubmit", tb.cwd))  # answered "stale": in-process
    wait_gone(tb, status["pid"])
    assert len(turns(tb)) == 1


def test_a_request_with_other_settings_is_refused(tb: Takeback) -> None:
    """A caller whose settings differ never has work done under these (the socket is found by a
    checksum; the whole fingerprint must match)."""
    status = started(tb)
    def ask(data: bytes) -> list[bytes]:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(status["socket"])
        conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)
        answer = wire.unpack(conn.recv(65536))
        conn.close()
        return answer

    assert ask(wire.pack([b"status", b"takeback 0 elsewhere"])) == [b"refused", b"another setting"]
    assert ask(b'{"op": "status"}') == [b"refused", b"not a netstring"]  # not the wire format
    assert ask(wire.pack([b"status"]))[0] == b"refused"


def test_the_socket_lives_in_a_folder_only_the_user_can_enter(tb: Takeback) -> None:
    status = started(tb)
    folder = os.path.dirname(status["socket"])
    info = os.lstat(folder)
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(status["socket"]).st_mode) & 0o077 == 0


def test_a_runtime_folder_others_can_enter_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared-runtime"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    folder = address.private_folder(create=False)
    assert folder is None or not folder.startswith(str(shared))
    link = tmp_path / "link-runtime"
    link.symlink_to(shared)
    assert not oslite.is_private_folder(str(link), os.getuid())


def serving(tb: Takeback, idle: str) -> tuple[subprocess.Popen, str]:
    """``takeback resident run`` started by hand with ``TAKEBACK_RESIDENT_IDLE=idle``, once its
    socket is there (watched from here: a status command each time would come too late for a
    process that leaves after one idle second), and that socket."""
    env = {**tb.env, "TAKEBACK_RESIDENT_IDLE": idle}
    with environment(env):
        path = address.socket_path(address.folder_path(), address.fingerprint())
    proc = subprocess.Popen([sys.executable, "-m", "takeback", "resident", "run"], cwd="/", env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + WAIT_SECONDS
    while not os.path.exists(path):
        assert proc.poll() is None and time.monotonic() < deadline, "the resident process did not start"
        time.sleep(0.01)
    return proc, path


def test_idle_and_stop_end_the_process(tb: Takeback) -> None:
    proc, path = serving(tb, "1")
    assert proc.wait(timeout=WAIT_SECONDS) == 0  # a second of no request, then it exits
    assert not os.path.exists(path)
    assert resident(tb)["running"] is False

    pid = started(tb)["pid"]
    assert tb.ok("resident", "stop").text.strip() == "stopped the resident process"
    wait_gone(tb, pid)
    assert tb("resident", "stop").code == 4


def test_turned_off_hooks_work_in_process(tb: Takeback) -> None:
    off = Takeback(tb.cwd, {**tb.env, "TAKEBACK_RESIDENT": "0"})
    hook(off, "claude", captured("claude", "UserPromptSubmit", tb.cwd))
    write_step(off, "three.txt", "three\n", "toolu_3")
    hook(off, "claude", captured("claude", "Stop", tb.cwd))
    assert len(turns(tb)) == 1
    assert resident(off)["running"] is False and resident(off)["enabled"] is False


TAKEN = ["another-users", "open-to-others", "a-link", "a-file"]


@pytest.mark.parametrize("how", TAKEN)
def test_status_says_what_is_wrong_when_the_socket_folder_is_taken(tb: Takeback, tmp_path: Path, how: str) -> None:
    # No private runtime folder: the sockets go to $TMPDIR/takeback-<uid>, here a folder of this
    # test's own (never the real /tmp/takeback-<uid> other runs use).
    if how == "another-users" and os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in tb.env.items() if k != "XDG_RUNTIME_DIR"} | {"TMPDIR": str(tmp)}
    taken = Takeback(tb.cwd, env)
    folder = tmp / f"takeback-{os.getuid()}"
    assert resident(taken) == {"running": False, "enabled": True}  # not there yet: nothing wrong
    if how == "a-link":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        folder.symlink_to(elsewhere)
        said = r"is a symbolic link \(to .*elsewhere\), not a folder: another user may have put it there"
    elif how == "a-file":
        folder.write_text("")
        said = r"is not a folder"
    else:
        folder.mkdir(mode=0o700)
        if how == "another-users":
            os.chown(folder, 12345, 12345)
            said = rf"belongs to another user \(uid 12345\), not to you \(uid {os.getuid()}\): .*have it removed"
        else:
            folder.chmod(0o777)
            said = r"can be entered by others \(mode 0777\): remove it \('rm -r "
    pattern = rf"no resident process can run: {folder}.* {said}.*XDG_RUNTIME_DIR.*every hook works in-process"
    expect_error(taken("resident"), 9, pattern)
    expect_error(taken("--json", "resident", "status"), 9, pattern)
    run = taken("resident", "run")
    assert run.code == 9 and re.search(rf"the resident process cannot run: {folder}.* {said}", run.err), run
    # Hooks still record (in-process), and put nothing in the folder that is not theirs.
    before = sorted(os.listdir(folder)) if folder.is_dir() else None
    write_step(taken, "taken.txt", "recorded anyway\n", "call-taken")
    assert [f["path"] for f in turns(taken)[-1]["files"]] == ["taken.txt"]
    assert (sorted(os.listdir(folder)) if folder.is_dir() else None) == before

    # Once the folder is put right, status says so and the next hook starts a process.
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    else:
        shutil.rmtree(folder)
    assert resident(taken) == {"running": False, "enabled": True}
    assert started(taken)["running"] is True
    expect_ok(taken("resident", "stop"))


def test_status_with_resident_off_is_not_an_error_whatever_the_folder(tb: Takeback, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    (tmp / f"takeback-{os.getuid()}").mkdir(parents=True, mode=0o777)
    (tmp / f"takeback-{os.getuid()}").chmod(0o777)
    env = {k: v for k, v in tb.env.items() if k != "XDG_RUNTIME_DIR"} | {"TMPDIR": str(tmp), "TAKEBACK_RESIDENT": "0"}
    out = expect_ok(Takeback(tb.cwd, env)("resident")).text
    assert "TAKEBACK_RESIDENT is off" in out


def test_the_first_hook_starts_a_resident_that_makes_its_workspace_ready(tb: Takeback) -> None:
    """The session's first hook works in-process and starts the resident naming its workspace
    (``resident run --warm``): the process holds it before any request; the steps that follow
    are served by it."""
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    deadline = time.monotonic() + WAIT_SECONDS
    status = wait_running(tb)
    while status["workspaces"] != [str(repo)] and time.monotonic() < deadline:
        time.sleep(0.1)
        status = resident(tb)
    assert status["workspaces"] == [str(repo)] and status["requests"] == 0
    tool = {"tool_name": "Bash", "tool_use_id": "toolu_w", "tool_input": {"command": SHELL}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **tool))
    (repo / "gen.txt").write_text("generated\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **tool))
    hook(tb, "claude", captured("claude", "Stop", repo))
    assert resident(tb)["requests"] == 3
    [turn] = turns(tb)
    assert [f["path"] for f in turn["files"]] == ["gen.txt"]
    assert failures(tb) == (0, None)
