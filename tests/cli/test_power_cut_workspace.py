"""A power cut during an operation: the states it can leave in the workspace and the journal, and
the real CLI opened from each.

``test_power_cut.py`` cuts the store's own files; this test cuts the rest an operation writes:
the person's files, ``journal.json``, ``journal-backup/`` and ``last-recovery.json``. Each
operation (an undo of a turn that modified, deleted and created files, one in a new folder, and
changed an executable bit; its redo; an undo merged with the person's later edit; a revert of a
middle turn; a restore) is run once for real under ``strace -f -y -xx``, which shows every write
with its bytes, every rename, unlink, mkdir, chmod and fsync. The disk a cut leaves is derived
from that trace, not from a list of cases:

- the call's changes are replayed, from the disk as it was before the call, up to a cut point:
  just before each call that touches a workspace file or the journal, and after the last call
  (the answer shown). The replay of the whole trace must give exactly the disk the call left
  (the check that the trace was read right);
- on top of that, what was not flushed may be lost: a file written and not fsynced afterwards
  may be empty or cut short, a rename, unlink, mkdir, rmdir or new file whose folder was not
  fsynced afterwards may be missing (a missing rename leaves the temporary file beside the old
  one), a chmod not fsynced afterwards may be missing. The states are all of those at once and
  each one alone, at each cut point (the same disk twice is checked once).

From each state the real CLI runs (``status --json``, which recovers, then ``log --json``, and
every few states an ``undo`` or ``redo``) and the test checks: it opens (no exit 7, no
traceback); when a journal was on disk, recovery ran and reported; every workspace file (its
bytes and its permission bits) is as before the operation or, all of them, as after it; once the
operation's answer was shown, as after; the timeline is the one before or the one after, and
says the same as the files; the person's later edit is kept; ``.git`` is byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import dot_git, make_repo, unmeasured

from . import powercut
from .conftest import isolated_env

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed (scripts/setup-faults.sh installs it)")

TRACED = ("openat,write,pwrite64,writev,lseek,ftruncate,rename,renameat,renameat2,fsync,fdatasync,unlink,unlinkat,"
          "mkdir,mkdirat,rmdir,fchmod,chmod,fchmodat,symlink,symlinkat,link,linkat,syncfs")
JOURNAL = ("journal.json", ".journal.json.", "journal-backup", "last-recovery.json")
UMASK = os.umask(0o022)
os.umask(UMASK)


@dataclass
class Op:
    """One change the traced call made to the disk (or an fsync, or its answer)."""

    kind: str  # open, write, truncate, rename, unlink, mkdir, rmdir, chmod, symlink, link, sync, answer
    path: str = ""
    other: str = ""  # a rename's or link's new name, a symlink's target
    data: bytes = b""
    offset: int | None = None  # a write's position (None: at the end, O_APPEND)
    mode: int = 0  # open's creation mode, mkdir's, chmod's; truncate's length
    flags: str = ""


def _fd(arg: str) -> int:
    return int(arg.split("<", 1)[0])


class _Reader:
    """Turns the calls of the log into ``Op`` (descriptor offsets followed through writes and seeks)."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.offsets: dict[int, tuple[int, bool]] = {}  # fd: (position, O_APPEND)
        self.answered = False

    def open(self, call: powercut.Call) -> None:
        flags = call.args[2]
        self.offsets[call.result] = (0, "O_APPEND" in flags)
        if "O_CREAT" in flags or "O_TRUNC" in flags:
            mode = int(call.args[3], 8) if len(call.args) > 3 else 0
            self.ops.append(Op("open", powercut.at_path(call.args[0], call.args[1]), mode=mode, flags=flags))

    def write(self, call: powercut.Call, offset: int | None = None) -> None:
        fd = _fd(call.args[0])
        if fd in (1, 2):
            if fd == 1 and not self.answered:
                self.answered = True
                self.ops.append(Op("answer"))
            return
        here, append = self.offsets.get(fd, (0, False))
        if offset is None:
            self.offsets[fd] = (here + call.result, append)
            offset = None if append else here
        self.ops.append(Op("write", powercut.path(call.args[0]), data=powercut.data(call.args[1])[: call.result], offset=offset))

    def read(self, call: powercut.Call) -> None:
        a, name = call.args, call.name
        if name == "openat":
            self.open(call)
        elif name == "write":
            self.write(call)
        elif name == "pwrite64":
            self.write(call, offset=int(a[3]))
        elif name == "writev":
            raise AssertionError(f"writev is not replayed: {call.line[:200]}")
        elif name == "lseek":
            self.offsets[_fd(a[0])] = (call.result, self.offsets.get(_fd(a[0]), (0, False))[1])
        elif name == "ftruncate":
            self.ops.append(Op("truncate", powercut.path(a[0]), mode=int(a[1])))
        elif name in ("rename", "renameat", "renameat2"):
            old, new = (powercut.path(a[0]), powercut.path(a[1])) if name == "rename" else (
                powercut.at_path(a[0], a[1]), powercut.at_path(a[2], a[3]))
            self.ops.append(Op("rename", old, new))
        elif name in ("unlink", "rmdir"):
            self.ops.append(Op(name, powercut.path(a[0])))
        elif name == "unlinkat":
            self.ops.append(Op("rmdir" if "AT_REMOVEDIR" in a[2] else "unlink", powercut.at_path(a[0], a[1])))
        elif name in ("mkdir", "mkdirat"):
            where = powercut.path(a[0]) if name == "mkdir" else powercut.at_path(a[0], a[1])
            self.ops.append(Op("mkdir", where, mode=int(a[-1], 8)))
        elif name in ("fchmod", "chmod"):
            self.ops.append(Op("chmod", powercut.path(a[0]), mode=int(a[1], 8)))
        elif name == "fchmodat":
            self.ops.append(Op("chmod", powercut.at_path(a[0], a[1]), mode=int(a[2], 8)))
        elif name in ("symlink", "symlinkat"):
            where = powercut.path(a[1]) if name == "symlink" else powercut.at_path(a[1], a[2])
            self.ops.append(Op("symlink", where, powercut.path(a[0])))
        elif name in ("link", "linkat"):
            old, new = (powercut.path(a[0]), powercut.path(a[1])) if name == "link" else (
                powercut.at_path(a[0], a[1]), powercut.at_path(a[2], a[3]))
            self.ops.append(Op("link", old, new))
        elif name in ("fsync", "fdatasync"):
            self.ops.append(Op("sync", powercut.path(a[0])))
        elif name == "syncfs":  # the whole file system (the workspace's and the state folder's, here one)
            self.ops.append(Op("sync", powercut.path(a[0]), flags="fs"))


def read_ops(text: str, roots: tuple[str, ...]) -> list[Op]:
    """The changes the call made under ``roots`` (the workspace, the state folder), its fsyncs
    and its answer, in order."""
    reader = _Reader()
    for call in powercut.calls(text):
        if call.result >= 0:
            reader.read(call)
    inside = lambda p: p.startswith(roots) or p + "/" in roots  # noqa: E731
    return [op for op in reader.ops if op.kind == "answer" or inside(op.path) or inside(op.other)]


# ---------------------------------------------------------------- replaying a prefix, with losses

def replay(ops: list[Op], lost: set[int]) -> None:
    """Carry ``ops`` out on the disk (as it was before the call), but those in ``lost``: a step
    whose file or folder is not there (its making was lost) is passed over."""
    for i, op in enumerate(ops):
        if i in lost or op.kind in ("sync", "answer"):
            continue
        try:
            _carry_out(op)
        except OSError:  # not there, or already there: its making (or removing) was lost
            continue


def _carry_out(op: Op) -> None:
    if op.kind == "open":
        fresh = not os.path.lexists(op.path)
        if fresh and "O_CREAT" in op.flags:
            fd = os.open(op.path, os.O_WRONLY | os.O_CREAT, op.mode & ~UMASK)
            os.close(fd)
        elif "O_TRUNC" in op.flags:
            os.truncate(op.path, 0)
    elif op.kind == "write":
        if not os.path.isfile(op.path):
            return
        with open(op.path, "r+b") as out:
            out.seek(op.offset if op.offset is not None else 0, os.SEEK_SET if op.offset is not None else os.SEEK_END)
            out.write(op.data)
    elif op.kind == "truncate":
        os.truncate(op.path, op.mode)
    elif op.kind == "rename":
        os.rename(op.path, op.other)
    elif op.kind == "unlink":
        os.unlink(op.path)
    elif op.kind == "rmdir":
        os.rmdir(op.path)
    elif op.kind == "mkdir":
        os.mkdir(op.path, op.mode & ~UMASK)
    elif op.kind == "chmod":
        os.chmod(op.path, op.mode)
    elif op.kind == "symlink":
        os.symlink(op.other, op.path)
    elif op.kind == "link":
        os.link(op.path, op.other)


@dataclass(frozen=True)
class Effect:
    """One thing a cut may lose: an op that did not reach the disk, or a file's last writes."""

    kind: str  # "lost" (the op at ``index``) or "torn" (the file ``path``: empty or cut short)
    index: int
    path: str
    what: str = "write"  # the op's kind

    def __str__(self) -> str:
        return f"{self.kind} {self.what} {self.path}"


def _synced_after(ops: list[Op], i: int, paths: set[str]) -> bool:
    return any(op.kind == "sync" and (op.path in paths or op.flags == "fs") for op in ops[i + 1:])


def _folder_synced_after(ops: list[Op], i: int, folder: str) -> bool:
    """Whether a change in ``folder`` at op ``i`` reached the disk: the folder was fsynced
    later, or removed later and that removal reached the disk (an rmdir needs it empty)."""
    return _synced_after(ops, i, {folder}) or any(
        op.kind == "rmdir" and op.path == folder and _folder_synced_after(ops, j, os.path.dirname(folder))
        for j, op in enumerate(ops) if j > i)


def effects(ops: list[Op], area: tuple[str, ...]) -> list[Effect]:
    """What a cut after ``ops`` may lose in ``area`` (the workspace and the journal's files):
    each change of a name not followed by an fsync of its folder, each chmod and each file's
    writes not followed by an fsync of that file (under whichever name it then had)."""
    names: dict[str, set[str]] = {}  # a file's current path: every path it had (fsyncs name any)
    last_write: dict[str, int] = {}
    found: list[Effect] = []
    for i, op in enumerate(ops):
        if op.kind == "rename":
            names[op.other] = names.pop(op.path, {op.path}) | {op.other}
            if op.path in last_write:
                last_write[op.other] = last_write.pop(op.path)
        elif op.kind in ("write", "truncate"):
            last_write[op.path] = i
        names.setdefault(op.path, {op.path})
        if not (op.path.startswith(area) or op.other.startswith(area)):
            continue
        if op.kind in ("rename", "unlink", "rmdir", "mkdir", "symlink", "link") or (op.kind == "open" and "O_CREAT" in op.flags):
            where = op.other if op.kind in ("rename", "link") else op.path
            later = [o for o in ops[i + 1:] if o.kind in ("rename", "unlink") and o.path == where]
            if op.kind == "open" and later:
                continue  # a new file renamed or removed later: that change is the one that may be lost
            if not _folder_synced_after(ops, i, os.path.dirname(where)):
                found.append(Effect("lost", i, where, op.kind))
        elif op.kind == "chmod" and not _synced_after(ops, i, names.get(op.path, {op.path})):
            found.append(Effect("lost", i, op.path, op.kind))
    for path, i in last_write.items():
        if path.startswith(area) and not _synced_after(ops, i, names.get(path, {path})):
            found.append(Effect("torn", i, path))
    return found


def states(found: list[Effect], alone: bool) -> list[tuple[Effect, ...]]:
    """Every effect at once, then (with ``alone``) each alone."""
    out: list[tuple[Effect, ...]] = [tuple(found)]
    if alone and len(found) > 1:
        out += [(e,) for e in found]
    return out


def cut_short(path: str, form: str) -> None:
    if os.path.isfile(path) and not os.path.islink(path):
        content = Path(path).read_bytes()
        Path(path).write_bytes(b"" if form == "empty" or len(content) < 2 else content[: len(content) // 2])


# ---------------------------------------------------------------- the disk as a value

def disk(root: Path, skip_git: bool = True) -> dict[str, tuple[int, bytes]]:
    """Every file and folder under ``root`` with its permission bits and bytes (a link: its target)."""
    out: dict[str, tuple[int, bytes]] = {}
    for folder, dirs, files in os.walk(root):
        if skip_git:
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in dirs:
            p = Path(folder) / name
            out[str(p.relative_to(root)) + "/"] = (stat.S_IMODE(p.lstat().st_mode), b"")
        for name in files:
            p = Path(folder) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (stat.S_IMODE(st.st_mode), os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
    return out


def fingerprint(*trees: dict[str, tuple[int, bytes]]) -> str:
    digest = hashlib.sha256()
    for tree in trees:
        for path, (mode, content) in sorted(tree.items()):
            digest.update(f"{path}\0{mode}\0".encode() + hashlib.sha256(content).digest())
    return digest.hexdigest()


# ---------------------------------------------------------------- the operations

PERSON = "five, typed by the person after the turn\n"


def _run(env: dict[str, str], ws: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "takeback", *args], cwd=ws, env=env, capture_output=True, timeout=120)


def tb(env: dict[str, str], ws: Path, *args: str) -> None:
    proc = _run(env, ws, *args)
    assert proc.returncode == 0, f"takeback {' '.join(args)}: {proc.stderr.decode(errors='replace')}"


def turn(env: dict[str, str], ws: Path, label: str, write: dict[str, str], delete: tuple[str, ...] = (),
         executable: tuple[str, ...] = ()) -> None:
    tb(env, ws, "begin", "--label", label)
    for rel, text in write.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    for rel in delete:
        (ws / rel).unlink()
    for rel in executable:
        (ws / rel).chmod(0o755)
    tb(env, ws, "end")


def _undo(env: dict[str, str], ws: Path) -> list[str]:
    turn(env, ws, "modify, delete, create in a new folder, make executable",
         {"a.txt": "ONE\ntwo\nthree\nfour\nfive\n", "n/new.txt": "new\n"}, ("c.txt",), ("run.sh",))
    return ["undo"]


def _redo(env: dict[str, str], ws: Path) -> list[str]:
    _undo(env, ws)
    tb(env, ws, "undo")
    return ["redo"]


def _merged_undo(env: dict[str, str], ws: Path) -> list[str]:
    turn(env, ws, "first line", {"a.txt": "ONE\ntwo\nthree\nfour\nfive\n", "b.txt": "BEE\n"})
    (ws / "a.txt").write_text("ONE\ntwo\nthree\nfour\n" + PERSON)
    return ["undo"]


def _revert_middle(env: dict[str, str], ws: Path) -> list[str]:
    turn(env, ws, "first", {"a.txt": "ONE\ntwo\nthree\nfour\nfive\n"})
    turn(env, ws, "middle", {"b.txt": "BEE\n", "e/y.txt": "why\n"}, ("d/x.txt",), ("run.sh",))
    turn(env, ws, "last", {"c.txt": "SEA\n"})
    return ["revert", "2"]


def _restore(env: dict[str, str], ws: Path) -> list[str]:
    turn(env, ws, "green", {"a.txt": "ONE\ntwo\nthree\nfour\nfive\n"})
    tb(env, ws, "check", "--", "true")
    turn(env, ws, "after it", {"b.txt": "BEE\n", "f/g.txt": "gee\n"}, (), ("run.sh",))
    turn(env, ws, "and more", {}, ("c.txt",))
    return ["restore", "last-green"]


OPERATIONS = {
    "undo": _undo,
    "redo": _redo,
    "merged-undo": _merged_undo,
    "revert-middle": _revert_middle,
    "restore": _restore,
}
FILES = {"a.txt": "one\ntwo\nthree\nfour\nfive\n", "b.txt": "bee\n", "c.txt": "sea\n", "d/x.txt": "ex\n", "run.sh": "#!/bin/sh\n"}


@dataclass
class Call:
    """One operation set up, traced, its before and after known."""

    name: str
    env: dict[str, str]
    ws: Path
    state: Path
    store: Path
    args: list[str]
    ops: list[Op]
    before: dict[str, tuple[int, bytes]]
    after: dict[str, tuple[int, bytes]]
    state_after: dict[str, tuple[int, bytes]]
    log_before: list[tuple]
    log_after: list[tuple]
    status_before: tuple
    status_after: tuple
    git: dict[str, str]
    kept: Path
    checked: set[tuple] = field(default_factory=set)

    def put_back(self) -> None:
        """The workspace (but ``.git``, which nothing writes: each check says so) and the state
        folder as they were before the call."""
        for name in os.listdir(self.ws):
            if name != ".git":
                here = self.ws / name
                shutil.rmtree(here) if here.is_dir() and not here.is_symlink() else here.unlink()
        top = str(self.kept / "ws")
        shutil.copytree(top, self.ws, symlinks=True, dirs_exist_ok=True, ignore=lambda d, _n: [".git"] if d == top else [])
        shutil.rmtree(self.state)
        shutil.copytree(self.kept / "state", self.state, symlinks=True)


def position(status: dict) -> tuple:
    """Where ``status --json`` says the timeline is: its length, its newest entry, what undo
    and redo would act on."""
    last = status["last_entry"] or {}
    return status["entries"], last.get("id"), last.get("state"), status["undo_target"], status["redo_target"]


def _position(env: dict[str, str], ws: Path) -> tuple:
    proc = _run(env, ws, "status", "--json")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return position(json.loads(proc.stdout))


def timeline(env: dict[str, str], ws: Path) -> list[tuple]:
    proc = _run(env, ws, "log", "--json")
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
    return [(e["number"], e["kind"], e["state"], e["label"]) for e in json.loads(proc.stdout)]


def _set_up(name: str, tmp_path: Path, extra: dict[str, str] | None = None) -> Call:
    env = {**isolated_env(tmp_path / "env"), "TAKEBACK_RESIDENT": "0", "PYTHONDONTWRITEBYTECODE": "1", **(extra or {})}
    ws = make_repo(tmp_path / "ws", dict(FILES)).resolve()
    (ws / "run.sh").chmod(0o644)
    args = OPERATIONS[name](env, ws)
    state = Path(env["TAKEBACK_HOME"]).resolve()
    before, log_before, status_before, git = disk(ws), timeline(env, ws), _position(env, ws), dot_git(ws)
    kept = tmp_path / "kept"
    shutil.copytree(ws, kept / "ws", symlinks=True)
    shutil.copytree(state, kept / "state", symlinks=True)
    out = tmp_path / "trace"
    proc = subprocess.run(
        ["strace", "-f", "-qq", "-y", "-xx", "-s", "1000000", "-e", f"trace={TRACED}", "-o", str(out),
         sys.executable, "-m", "takeback", *args],
        cwd=ws, env=unmeasured(env), capture_output=True, timeout=120,
    )
    if proc.returncode != 0 and b"ptrace" in proc.stderr:
        pytest.skip(f"strace cannot trace here: {proc.stderr.decode(errors='replace').strip()}")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    stores = list((state / "stores").iterdir())
    assert len(stores) == 1, stores
    ops = read_ops(out.read_text(), (f"{ws}/", f"{state}/"))
    after, state_after = disk(ws), disk(state, skip_git=False)
    call = Call(name, env, ws, state, stores[0], args, ops, before, after, state_after, log_before, timeline(env, ws),
                status_before, _position(env, ws), git, kept)
    assert call.after != call.before and call.log_after != call.log_before and call.status_after != call.status_before
    return call


def _area(call: Call) -> tuple[str, ...]:
    return (f"{call.ws}/", *(f"{call.store}/{name}" for name in JOURNAL))


def _touches(op: Op, area: tuple[str, ...]) -> bool:
    return op.path.startswith(area) or op.other.startswith(area) or op.path + "/" in area


def _check(call: Call, cut: int, whole_log: bool, follow_up: bool) -> None:
    """Open the workspace and the store as the cut left them, with the real CLI."""
    journal = (call.store / "journal.json").exists()
    proc = _run(call.env, call.ws, "status", "--json")
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 0 and "Traceback" not in err, err
    status = json.loads(proc.stdout)
    if journal:
        assert status["last_recovery"] is not None, "a journal was on disk, and no recovery was reported"
        assert not (call.store / "journal.json").exists(), "recovery left the journal"
    now = disk(call.ws)
    assert now in (call.before, call.after), "the workspace is neither all-before nor all-after: " + ", ".join(
        sorted(p for p in set(now) | set(call.after) | set(call.before) if now.get(p) not in (call.before.get(p), call.after.get(p))))
    if any(op.kind == "answer" for op in call.ops[:cut]):
        assert now == call.after, "the answer was shown, and the workspace is not all-after"
    where = position(status)
    assert where in (call.status_before, call.status_after), f"the timeline is half-way: {where}"
    assert (where == call.status_after) == (now == call.after), "the timeline and the files disagree"
    if whole_log:
        said = timeline(call.env, call.ws)
        assert said == (call.log_after if now == call.after else call.log_before), f"the log is not the one before or after: {said}"
    if call.name == "merged-undo":
        assert (call.ws / "a.txt").read_text().endswith(PERSON), "the person's later edit is lost"
    assert dot_git(call.ws) == call.git, ".git changed"
    if follow_up:  # the timeline goes on: undo acts (or says why not), and the log lists it
        proc = _run(call.env, call.ws, "undo")
        err = proc.stderr.decode(errors="replace")
        assert proc.returncode in (0, 4, 10, 11) and "Traceback" not in err, err
        assert len(timeline(call.env, call.ws)) == where[0] + (proc.returncode in (0, 10))


def cut_points(ops: list[Op], area: tuple[str, ...]) -> list[int]:
    """Just before each op that touches the area, and after the last."""
    return [i for i, op in enumerate(ops) if _touches(op, area)] + [len(ops)]


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_a_power_cut_during_an_operation_leaves_the_workspace_whole(name: str, tmp_path: Path) -> None:
    _cut_everywhere(_set_up(name, tmp_path))


@pytest.mark.parametrize("name", ["undo", "redo", "merged-undo"])
def test_a_power_cut_during_a_big_operation_leaves_the_workspace_whole(name: str, tmp_path: Path) -> None:
    """The way a big operation writes (every file under a temporary name, one ``syncfs``, the
    renames, one ``syncfs``: ``TAKEBACK_SYNCFS_FROM=1`` takes it from the first file on)."""
    call = _set_up(name, tmp_path, {"TAKEBACK_SYNCFS_FROM": "1"})
    assert any(op.flags == "fs" for op in call.ops), "the operation did not flush with syncfs"
    _cut_everywhere(call)


def _cut_everywhere(call: Call) -> None:
    area = _area(call)
    call.put_back()
    replay(call.ops, set())
    assert disk(call.ws) == call.after, "replaying the whole trace does not give the workspace the call left"
    assert disk(call.state, skip_git=False) == call.state_after, "replaying the whole trace does not give the store the call left"
    checked = 0
    for cut in cut_points(call.ops, area):
        prefix = call.ops[:cut]
        # Each effect alone where most are pending: just before a flush, and at the end.
        alone = cut == len(call.ops) or (call.ops[cut].kind == "sync" and os.path.isdir(call.ops[cut].path))
        answered = any(op.kind == "answer" for op in prefix)
        for chosen in states(effects(prefix, area), alone):
            lost = {e.index for e in chosen if e.kind == "lost"}
            form = "empty" if len(chosen) > 1 else "short"
            torn = sorted(e.path for e in chosen if e.kind == "torn")
            # The same changes carried out (fsyncs change nothing on disk) are the same disk: checked once.
            seen = (frozenset(i for i, op in enumerate(prefix) if op.kind != "sync" and i not in lost), form, tuple(torn), answered)
            if seen in call.checked:
                continue
            call.checked.add(seen)
            call.put_back()
            replay(prefix, lost)
            for path in torn:
                cut_short(path, form)
            disk_seen = (fingerprint(disk(call.ws), disk(call.state, skip_git=False)), answered)
            if disk_seen in call.checked:  # reached by other changes lost
                continue
            call.checked.add(disk_seen)
            try:
                _check(call, cut, whole_log=checked % 4 == 0, follow_up=checked % 6 == 0)
            except AssertionError as exc:
                raise AssertionError(f"cut before op {cut} ({call.ops[cut - 1].kind if cut else '-'}), lost "
                                     f"{[str(e) for e in chosen]}: {exc}") from exc
            checked += 1
    assert checked >= 5, f"only {checked} states: the trace was not read"
