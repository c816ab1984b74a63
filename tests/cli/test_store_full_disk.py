"""A full disk or an I/O error while the store writes: one clear line, nothing lost, the store opens.

Two real faults: the store on a small tmpfs that fills up (``mount -t tmpfs -o size=…``, as
root; skipped with the reason where mounting is not allowed), and ``strace``'s fault injection
failing each write the call makes into the store in turn, with ENOSPC and with EIO (the writes
are found from a trace of the same call, not listed by hand).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import make_repo, new_file_system, unmeasured, write_files

from .conftest import isolated_env

_WRITE = re.compile(r"^(\d+) +(write|pwrite64)\((\d+)<([^>]*)>")


def _run(env: dict[str, str], ws: Path, *args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, sys.executable, "-m", "takeback", *args], cwd=ws, env=unmeasured(env), capture_output=True,
                          text=True, timeout=120)


def _numbers(env: dict[str, str], ws: Path) -> list[int]:
    proc = _run(env, ws, "log", "--json")
    assert proc.returncode == 0, proc.stderr
    return sorted(item["number"] for item in json.loads(proc.stdout))


def _one_clear_line(proc: subprocess.CompletedProcess[str], where: str) -> None:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode in (1, 7, 9), proc
    assert len(lines) == 1 and lines[0].startswith("takeback: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    assert where in lines[0], f"the message does not say where: {lines[0]}"


def _two_turns(tmp_path: Path, store: Path) -> tuple[dict[str, str], Path]:
    """A repository with two recorded turns, its store at ``store``; the environment and the folder."""
    env = {**isolated_env(tmp_path / "env"), "TAKEBACK_RESIDENT": "0", "TAKEBACK_STORE_DIR": str(store)}
    ws = make_repo(tmp_path / "ws", {"a.txt": "one\n"})
    for i in range(2):
        assert _run(env, ws, "begin", "--label", f"turn {i + 1}").returncode == 0
        write_files(ws, {"a.txt": f"one\n{i}\n"})
        assert _run(env, ws, "end").returncode == 0
    return env, ws


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with new_file_system(tmp_path / "disk", "tmpfs", "size=512k") as mount:
        yield mount


def test_full_disk_while_recording_says_where_and_loses_nothing(tmp_path: Path, small_disk: Path) -> None:
    env, ws = _two_turns(tmp_path, small_disk / "store")
    before = _numbers(env, ws)
    assert _run(env, ws, "begin", "--label", "too big").returncode == 0
    filler = small_disk / "filler"
    free = shutil.disk_usage(small_disk).free
    filler.write_bytes(b"\0" * max(free - 8192, 0))
    write_files(ws, {"big.bin": os.urandom(64 * 1024)})  # random: does not compress below what is left
    proc = _run(env, ws, "end")
    _one_clear_line(proc, str(small_disk / "store"))
    assert "No space left on device" in proc.stderr
    filler.unlink()
    assert _numbers(env, ws)[: len(before)] == before  # every entry still there, the store opens
    status = _run(env, ws, "status", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["open_turn"]["label"] == "too big"  # the turn is still open
    assert _run(env, ws, "end").returncode == 0  # and ends once there is room
    assert len(_numbers(env, ws)) == len(before) + 1


def _store_writes(trace: str, store: Path) -> list[tuple[str, int, str]]:
    """(system call, its ordinal among the main process's calls of it, path) of each write into
    the store: strace counts ``when`` per call and per process."""
    found: list[tuple[str, int, str]] = []
    ordinals: dict[str, int] = {}
    main = None
    for line in trace.splitlines():
        match = _WRITE.match(line)
        if match is None:
            continue
        main = main or match.group(1)
        if match.group(1) != main:
            continue
        call = match.group(2)
        ordinals[call] = ordinals.get(call, 0) + 1
        if match.group(4).startswith(str(store)) and not re.search(r"journal|last-recovery", match.group(4)):  # the journal's own tests
            found.append((call, ordinals[call], match.group(4)))
    return found


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed (scripts/setup-faults.sh installs it)")
@pytest.mark.parametrize("call", ["end", "undo"])
def test_each_store_write_failing_is_one_clear_line_and_loses_nothing(call: str, tmp_path: Path) -> None:
    env, ws = _two_turns(tmp_path, tmp_path / "store")
    if call == "end":
        assert _run(env, ws, "begin", "--label", "cut").returncode == 0
        write_files(ws, {"b.txt": "new\n"})
    saved = tmp_path / "saved"
    shutil.copytree(tmp_path / "store", saved)
    workspace = {p: (ws / p).read_bytes() for p in ("a.txt",)}
    traced = subprocess.run(
        ["strace", "-f", "-qq", "-y", "-s", "0", "-e", "trace=write,pwrite64", "-o", str(tmp_path / "trace"),
         sys.executable, "-m", "takeback", call], cwd=ws, env=unmeasured(env), capture_output=True, text=True, timeout=120,
    )
    if traced.returncode != 0 and "ptrace" in traced.stderr:
        pytest.skip(f"strace cannot trace here: {traced.stderr.strip()}")
    writes = _store_writes((tmp_path / "trace").read_text(errors="replace"), tmp_path / "store")
    assert writes, "the call wrote nothing into the store: the trace was not read"
    before = None
    for (syscall, ordinal, path), error in [(w, e) for w in writes for e in ("ENOSPC", "EIO")]:
        shutil.rmtree(tmp_path / "store")
        shutil.copytree(saved, tmp_path / "store")
        for name, content in workspace.items():
            (ws / name).write_bytes(content)
        if before is None:
            before = _numbers(env, ws)
        inject = ("strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=write,pwrite64",
                  "-e", f"inject={syscall}:error={error}:when={ordinal}")
        proc = _run(env, ws, call, prefix=inject)
        if proc.returncode != 0:
            try:
                _one_clear_line(proc, str(tmp_path / "store"))
            except AssertionError as exc:
                raise AssertionError(f"{error} at {syscall} {ordinal} ({path}): {exc}") from exc
        after = _numbers(env, ws)
        assert after[: len(before)] == before, f"{error} at write {ordinal} ({path}): entries lost"
        if proc.returncode != 0 and "undo" == call:
            assert {p: (ws / p).read_bytes() for p in workspace} == workspace, f"{error} at {path}: the workspace changed"
