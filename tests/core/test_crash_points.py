"""Crash points: ``takeback`` killed at every one of its mutating system calls in turn.

For each command below (undo, redo, a revert of a middle turn, restore, a turn's end, a hook
step, an undo that merges with the person's later edit) the harness (``crashpoints.py``) lists
every write, rename, unlink, mkdir, fsync, created file … the real CLI process makes, then for
each one puts the workspace and the store back, runs the command again killed with SIGKILL at
exactly that call, opens the engine (recovery runs) and checks:

- the workspace is exactly as before the command or exactly as a clean run left it, and the
  timeline says the same (the command's entry is there exactly when its files are);
- every entry's content can be read (a diff of each), and finishing the command (running it
  again when it did not happen) ends in the clean run's workspace and timeline;
- the person's later edit (in the merged undo) is kept either way;
- ``.git`` is byte-identical;
- ``takeback log`` (the CLI) works and lists every entry, once per command.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import dot_git, make_repo, tree_state
from takeback.engine.engine import Engine

from . import crashpoints
from .crashpoints import Point, Snapshot

pytestmark = pytest.mark.skipif(crashpoints.strace_usable() is not None, reason=str(crashpoints.strace_usable()))

FILES = {
    "a.txt": "one\ntwo\nthree\nfour\nfive\n",
    "b.txt": "bee\n",
    "c.txt": "sea\n",
    "d/x.txt": "ex\n",
}
PAYLOADS = Path(__file__).parent.parent / "cli" / "hook_payloads"


def tb(ws: Path, *args: str, stdin: bytes | None = None) -> None:
    proc = crashpoints.run(ws, list(args), stdin)
    assert proc.returncode == 0, f"takeback {' '.join(args)}: {proc.stderr.decode(errors='replace')}"


def claude(ws: Path, event: str, **fields: object) -> bytes:
    """Claude Code's captured payload for ``event``, made this workspace's."""
    data = json.loads((PAYLOADS / "claude.json").read_text())["payloads"][event]
    text = json.dumps(data).replace("<OUT>/repo", str(ws)).replace("<OUT>", str(ws.parent))
    payload = json.loads(text)
    payload.update(fields)
    return json.dumps(payload).encode()


def turn(ws: Path, label: str, write: dict[str, str], delete: tuple[str, ...] = ()) -> None:
    tb(ws, "begin", "--label", label)
    for rel, text in write.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    for rel in delete:
        (ws / rel).unlink()
        if not any((ws / rel).parent.iterdir()) and (ws / rel).parent != ws:
            (ws / rel).parent.rmdir()
    tb(ws, "end")


@dataclass
class Scenario:
    """Sets up the workspace (``prepare``) and answers the command to kill, with its stdin."""

    prepare: Callable[[Path], tuple[list[str], bytes | None]]
    later_edit: dict[str, str] = field(default_factory=dict)  # the person's edit no outcome may lose


def _undo(ws: Path) -> tuple[list[str], bytes | None]:
    turn(ws, "edit, add and delete", {"a.txt": "ONE\ntwo\nthree\nfour\nfive\n", "n/new.txt": "new\n"}, ("c.txt",))
    return ["undo"], None


def _redo(ws: Path) -> tuple[list[str], bytes | None]:
    _undo(ws)
    tb(ws, "undo")
    return ["redo"], None


def _revert_middle(ws: Path) -> tuple[list[str], bytes | None]:
    turn(ws, "first", {"a.txt": "ONE\ntwo\nthree\nfour\nfive\n"})
    turn(ws, "middle", {"b.txt": "BEE\n", "e/y.txt": "why\n"}, ("d/x.txt",))
    turn(ws, "last", {"c.txt": "SEA\n"})
    return ["revert", "2"], None


def _restore(ws: Path) -> tuple[list[str], bytes | None]:
    turn(ws, "green", {"a.txt": "ONE\ntwo\nthree\nfour\nfive\n"})
    tb(ws, "check", "--", "true")
    turn(ws, "after it", {"b.txt": "BEE\n", "f.txt": "eff\n"})
    turn(ws, "and more", {}, ("c.txt",))
    return ["restore", "last-green"], None


def _end(ws: Path) -> tuple[list[str], bytes | None]:
    tb(ws, "begin", "--label", "the turn that ends")
    (ws / "a.txt").write_text("ONE\ntwo\nthree\nfour\nfive\n")
    (ws / "g/new.txt").parent.mkdir()
    (ws / "g/new.txt").write_text("gee\n")
    return ["end"], None


def _hook_step(ws: Path) -> tuple[list[str], bytes | None]:
    target = str(ws / "agent_written.txt")
    tool = {"tool_name": "Write", "tool_input": {"file_path": target, "content": "written by the agent\n"}}
    tb(ws, "hook", "claude", stdin=claude(ws, "UserPromptSubmit"))
    tb(ws, "hook", "claude", stdin=claude(ws, "PreToolUse", **tool))
    (ws / "agent_written.txt").write_text("written by the agent\n")
    return ["hook", "claude"], claude(ws, "PostToolUse", **tool, tool_response={"filePath": target, "success": True})


PERSON = "one\ntwo\nthree\nfour\nFIVE, typed by the person\n"


def _merged_undo(ws: Path) -> tuple[list[str], bytes | None]:
    turn(ws, "first line", {"a.txt": "ONE\ntwo\nthree\nfour\nfive\n", "b.txt": "BEE\n"})
    (ws / "a.txt").write_text("ONE\ntwo\nthree\nfour\nFIVE, typed by the person\n")  # after the turn
    return ["undo"], None


SCENARIOS = {
    "undo": Scenario(_undo),
    "redo": Scenario(_redo),
    "revert-middle": Scenario(_revert_middle),
    "restore": Scenario(_restore),
    "turn-end": Scenario(_end),
    "hook-step": Scenario(_hook_step),
    "merged-undo": Scenario(_merged_undo, later_edit={"a.txt": PERSON}),
}


def timeline(engine: Engine) -> list[tuple]:
    """What the timeline says, entry by entry: enough to tell before from after."""
    return [(e.number, e.kind, e.state, tuple(sorted(f.path for f in e.files))) for e in reversed(engine.entries())]


@dataclass
class Run:
    """One scenario set up, its clean outcome known, its snapshot kept."""

    ws: Path
    args: list[str]
    stdin: bytes | None
    snapshot: Snapshot
    after: dict[str, bytes]
    timeline_before: list[tuple]
    timeline_after: list[tuple]

    def finish(self, engine: Engine, done: bool) -> None:
        """Carry the command out if it did not happen, then check it ends as the clean run did."""
        if not done:
            tb(self.ws, *self.args, stdin=self.stdin)
            engine = Engine(self.ws)
        assert tree_state(self.ws) == self.after
        assert timeline(engine) == self.timeline_after


def _prepare(name: str, tmp_path: Path) -> Run:
    ws = make_repo(tmp_path / "ws", dict(FILES))
    args, stdin = SCENARIOS[name].prepare(ws)
    state = Path(crashpoints.environment()["TAKEBACK_HOME"])
    timeline_before = timeline(Engine(ws))
    snapshot = Snapshot(ws, state, tmp_path / "kept")
    proc = crashpoints.run(ws, args, stdin)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    run = Run(ws, args, stdin, snapshot, tree_state(ws), timeline_before, timeline(Engine(ws)))
    assert run.timeline_after != run.timeline_before
    log = crashpoints.run(ws, ["--json", "log"])
    assert log.returncode == 0 and len(json.loads(log.stdout)) == len(run.timeline_after)
    snapshot.put_back()
    return run


def _check(run: Run, point: Point, scenario: Scenario) -> None:
    engine = Engine(run.ws)  # recovery runs here; it must not raise
    now = tree_state(run.ws)
    before = run.snapshot.files
    assert now in (before, run.after), f"{point}: the workspace is neither all-before nor all-after"
    said = timeline(engine)
    assert said in (run.timeline_before, run.timeline_after), f"{point}: the timeline is half-way: {said}"
    done = said == run.timeline_after
    if before != run.after:
        assert (now == run.after) == done, f"{point}: the timeline says {'done' if done else 'not done'}, the files disagree"
    for rel, text in scenario.later_edit.items():
        assert (run.ws / rel).read_text().endswith(text.splitlines()[-1] + "\n"), f"{point}: the person's edit is lost"
    for entry in engine.entries():
        engine.diff(str(entry.number))  # every recorded content is readable
    assert engine.status().entries == len(said)
    assert dot_git(run.ws) == run.snapshot.git, f"{point}: .git changed"
    run.finish(engine, done)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_killed_at_every_mutating_call(name: str, tmp_path: Path) -> None:
    run = _prepare(name, tmp_path)
    found = crashpoints.trace_points(run.ws, run.args, tmp_path / "trace", run.stdin)
    assert len(found) >= 5, f"too few mutating calls traced: {found}"
    for point in found:
        run.snapshot.put_back()
        proc = crashpoints.inject(run.ws, run.args, point, "signal=KILL", run.stdin)
        assert proc.returncode == -9, f"{point}: not killed there ({proc.returncode}): {proc.stderr.decode(errors='replace')}"
        _check(run, point, SCENARIOS[name])


# ---------------------------------------------------------------- a disk error at every call

OPERATIONS = ["undo", "redo", "revert-middle", "restore", "merged-undo"]
NO_SPACE = {"write", "pwrite64", "writev", "openat", "ftruncate", "mkdir", "mkdirat", "symlink", "link"}


def _one_clear_line(point: Point, error: str, proc: subprocess.CompletedProcess[bytes]) -> None:
    err = proc.stderr.decode(errors="replace")
    assert "Traceback" not in err and "internal error" not in err, f"{point} {error}: {err}"
    if proc.returncode != 0:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("takeback: "), f"{point} {error}: {err}"


@pytest.mark.parametrize("name", OPERATIONS)
def test_a_disk_error_at_every_mutating_call(name: str, tmp_path: Path) -> None:
    """No space left (at each write, created file and folder) or an I/O error (at each rename,
    unlink, fsync …): one clear line, and nothing lost: all-before or all-after."""
    run = _prepare(name, tmp_path)
    found = crashpoints.trace_points(run.ws, run.args, tmp_path / "trace", run.stdin, kills_only=False)
    found = [p for p in found if not (p.name in ("write", "writev") and p.text.split("(", 1)[1].startswith(("1,", "2,")))]
    failed = 0
    for point in found:
        run.snapshot.put_back()
        error = "ENOSPC" if point.name in NO_SPACE else "EIO"
        proc = crashpoints.inject(run.ws, run.args, point, f"error={error}", run.stdin)
        _one_clear_line(point, error, proc)
        failed += proc.returncode != 0
        _check(run, point, SCENARIOS[name])
    assert failed, "no injected error made the command fail: the points are not where the writes are"


# ---------------------------------------------------------------- a real full disk

def _mount_small_disk(where: Path, size: str) -> str | None:
    """Mount a tmpfs of ``size`` at ``where``; why not, when it cannot be (not root …)."""
    where.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    return None if proc.returncode == 0 else f"cannot mount a small tmpfs here: {proc.stderr.strip() or proc.returncode}"


def _fill(disk: Path, leave: int) -> None:
    """Take all the space of ``disk`` but ``leave`` bytes."""
    st = os.statvfs(disk)
    free = st.f_bavail * st.f_frsize
    with open(disk / "filler", "wb") as out:
        if free > leave:
            os.posix_fallocate(out.fileno(), 0, free - leave)


def test_a_full_disk_at_every_size_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workspace and the store on a real small disk, filled to 0, 4, 8 … KiB left before
    an undo of large files: each run either succeeds or says in one line what and where, and
    the next command (still full, then with space again) finds everything all-before or
    all-after, nothing lost."""
    disk = tmp_path / "disk"
    why = _mount_small_disk(disk, "4m")
    if why is not None:
        pytest.skip(why)
    try:
        monkeypatch.setenv("TAKEBACK_HOME", str(disk / "state"))
        big = {f"m{i}.txt": (f"module {i} ".encode() * 3000).decode() for i in range(3)}
        ws = make_repo(disk / "ws", {**FILES, **big})
        turn(ws, "rewrite the big files", {name: text.upper() for name, text in big.items()}, ("c.txt",))
        args = ["undo"]
        state = disk / "state"
        timeline_before = timeline(Engine(ws))
        snapshot = Snapshot(ws, state, tmp_path / "kept")
        assert crashpoints.run(ws, args).returncode == 0
        run = Run(ws, args, None, snapshot, tree_state(ws), timeline_before, timeline(Engine(ws)))
        outcomes = []
        for leave in range(0, 160 * 1024, 4096):
            snapshot.put_back()
            _fill(disk, leave)
            proc = crashpoints.run(ws, args)
            point = Point("full disk", leave, f"{leave // 1024} KiB left")
            _one_clear_line(point, "ENOSPC", proc)
            still_full = crashpoints.run(ws, ["status"])  # recovery with the disk still full
            _one_clear_line(point, "ENOSPC", still_full)
            (disk / "filler").unlink()
            _check(run, point, Scenario(_undo))
            outcomes.append(proc.returncode)
            if outcomes[-2:] == [0, 0]:
                break
        assert outcomes[0] != 0 and outcomes[-1] == 0, outcomes
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.parametrize("name", ["undo", "merged-undo"])
def test_the_disk_stays_full_from_each_write_on(name: str, tmp_path: Path) -> None:
    """Every file created from the k-th one in the workspace on fails with no space left (and
    every open after it: the disk is failing), for each k: the roll-back's own writes fail too.
    The answer is one line naming what could not be put back; the journal keeps it and the next
    command puts it back: all-before, nothing lost. (Writes are not failed this way: the
    answer's own write to the terminal would fail with them.)"""
    run = _prepare(name, tmp_path)
    found = crashpoints.trace_points(run.ws, run.args, tmp_path / "trace", run.stdin, kills_only=False)
    writes = [p for p in found if p.name == "openat" and f"{run.ws}/" in p.text]
    kept = 0
    for point in writes:
        run.snapshot.put_back()
        proc = crashpoints.inject(run.ws, run.args, point, "error=ENOSPC", run.stdin, every_later=True)
        _one_clear_line(point, "ENOSPC", proc)
        assert proc.returncode != 0, f"{point}: the disk was full, yet it succeeded"
        kept += "could not be put back yet" in proc.stderr.decode()
        _check(run, point, SCENARIOS[name])
    assert kept, "no roll-back failed: the test did not reach the case it is for"
