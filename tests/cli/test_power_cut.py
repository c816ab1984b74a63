"""A power cut at any point: the states it can leave in the store, and the store opened from each.

What a cut can leave is derived from a real run, not from a list: the ``takeback`` call is run
under ``strace`` (every open, write, rename, unlink and fsync, with the paths of the descriptors),
and from that trace each file of the store the call wrote and did not fsync afterwards may be
empty or cut short, each file it created or renamed into place without syncing the folder may be
missing (a rename missing leaves the temporary file there and the old file in place). The states
are those effects one by one in each form, then seeded random combinations, then all at once.
From each state the real CLI opens the store (``log``, ``status``, ``undo``): it must open
(never exit 7 or a traceback), every entry complete before the call must still be there, an
operation's own entry (published with fsync) must survive every state, and each torn file left
in place must have been set aside into ``quarantine/`` and named by ``status --json``.

The workspace's own files and the journal (``journal.json``, ``journal-backup/``,
``last-recovery.json``) are not cut here: ``test_power_cut_workspace.py`` cuts those. Both
read the ``strace`` log with ``powercut.py``.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import make_repo, tree_state, unmeasured, write_files

from . import powercut
from .conftest import isolated_env
from .powercut import path as _path

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed (scripts/setup-faults.sh installs it)")

_JOURNAL = ("journal.json", "journal-backup", "last-recovery.json", "lock")
# The files the store reads to open and to fold its timeline: one torn and left in place would
# be read; the others (libgit2's description, hooks/, info/, workspace.json, which is written
# anew when unreadable) are only required not to stop the store from opening.
_READ = re.compile(r"^(objects\.git/(objects/pack/|refs/|HEAD$|config$)|brackets/|timeline\.json$|timeline-pages/|key$|\.|.*\.tmp$)")


@dataclass
class Trace:
    """What a traced call did to the store, from strace's lines."""

    written: dict[str, bool] = field(default_factory=dict)  # path: data synced after the last write
    renames: list[tuple[str, str]] = field(default_factory=list)
    created: set[str] = field(default_factory=set)
    synced_dirs: list[tuple[int, str]] = field(default_factory=list)  # (line, folder)
    name_events: list[tuple[int, str, str]] = field(default_factory=list)  # (line, kind, path)


def parse_trace(text: str, store: Path) -> Trace:
    trace = Trace()
    root = str(store)
    for call in powercut.calls(text):
        if call.result < 0:
            continue
        number, name, args, line = call.number, call.name, call.args, call.line
        if name == "openat" and "O_CREAT" in line:
            path = _path(args[1])
            if path.startswith(root) and "O_RDWR|O_CREAT" not in line.replace("O_RDWR|O_CREAT|O_CLOEXEC, 0600", ""):
                trace.created.add(path)
                trace.name_events.append((number, "create", path))
        elif name in ("write", "pwrite64") and _path(args[0]).startswith(root):
            trace.written[_path(args[0])] = False
        elif name in ("fsync", "fdatasync"):
            path = _path(args[0])
            if path in trace.written:
                trace.written[path] = True
            else:
                trace.synced_dirs.append((number, path))
        elif name in ("rename", "renameat", "renameat2"):
            old, new = (_path(args[0]), _path(args[1])) if name == "rename" else (_path(args[1]), _path(args[3]))
            if new.startswith(root):
                trace.renames.append((old, new))
                trace.name_events.append((number, "rename", new))
                if old in trace.written:
                    trace.written[new] = trace.written.pop(old)
                trace.created.discard(old)
    return trace


def name_synced(trace: Trace, event: tuple[int, str, str]) -> bool:
    number, _kind, path = event
    return any(line > number and folder == str(Path(path).parent) for line, folder in trace.synced_dirs)


@dataclass
class Effect:
    kind: str  # "torn" (a written file cut), "unrenamed" (a rename missing), "uncreated" (a new file missing)
    path: str  # relative to the store
    old: str | None = None  # for "unrenamed": the temporary name, relative


def effects_of(trace: Trace, store: Path) -> list[Effect]:
    """Every way the traced call's unsynced writes can be found after a cut."""
    found: list[Effect] = []
    rel = lambda p: str(Path(p).relative_to(store))  # noqa: E731
    for path, synced in trace.written.items():
        if not synced and Path(path).exists() and not rel(path).startswith(_JOURNAL):
            found.append(Effect("torn", rel(path)))
    for event in trace.name_events:
        path = event[2]
        if name_synced(trace, event) or rel(path).startswith(_JOURNAL) or not Path(path).exists():
            continue
        if event[1] == "rename":
            old = next(o for o, n in reversed(trace.renames) if n == path)
            found.append(Effect("unrenamed", rel(path), rel(old)))
        elif path in trace.created:
            found.append(Effect("uncreated", rel(path)))
    return found


def apply(effects: list[tuple[Effect, str]], before: Path, after: Path, target: Path, rng: random.Random) -> dict[str, bytes]:
    """Make ``target`` the store as a cut leaves it: ``after`` with ``effects`` (each with its
    form: "empty", "prefix" or "whole"); answers the torn files left (path: bytes)."""
    shutil.copytree(after, target, symlinks=True)
    torn: dict[str, bytes] = {}
    for effect, form in effects:
        here = target / effect.path
        if effect.kind == "unrenamed" and here.exists():
            content = here.read_bytes()
            here.unlink()
            if (before / effect.path).is_file():
                shutil.copy2(before / effect.path, here)
            assert effect.old is not None
            (target / effect.old).write_bytes(content)
            torn[effect.old] = content
            here = target / effect.old
        elif effect.kind == "uncreated" and here.exists():
            here.unlink()
            continue
        if effect.kind == "torn" or form != "whole":
            if not here.exists():
                continue
            content = here.read_bytes()
            cut = b"" if form == "empty" or len(content) < 2 else content[: rng.randrange(1, len(content))]
            here.chmod(0o644)
            here.write_bytes(cut)
            torn[str(here.relative_to(target))] = cut
    return torn


PAYLOADS = Path(__file__).parent / "hook_payloads" / "claude.json"


def _stdin(args: tuple[str, ...], ws: Path) -> tuple[tuple[str, ...], bytes]:
    """``("hook", "claude", "@Event")``: the hook command, with Claude Code's real payload for
    that event (captured, its folder made ``ws``) on stdin; other commands read nothing."""
    if not args or not args[-1].startswith("@"):
        return args, b""
    data = json.loads(PAYLOADS.read_text())["payloads"][args[-1][1:]]
    text = json.dumps(data).replace("<OUT>/repo", str(ws)).replace("<OUT>", str(ws.parent))
    return args[:-1], text.encode()


def _run(env: dict[str, str], ws: Path, *args: str, store: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    if store is not None:
        env = {**env, "TAKEBACK_STORE_DIR": str(store)}
    argv, stdin = _stdin(args, ws)
    return subprocess.run([sys.executable, "-m", "takeback", *argv], cwd=ws, env=env, input=stdin, capture_output=True, timeout=120)


def traced(env: dict[str, str], ws: Path, store: Path, out: Path, *args: str) -> Trace:
    calls = "openat,write,pwrite64,rename,renameat,renameat2,fsync,fdatasync,unlink,unlinkat,link,linkat"
    argv, stdin = _stdin(args, ws)
    proc = subprocess.run(
        ["strace", "-f", "-qq", "-y", "-s", "0", "-e", f"trace={calls}", "-o", str(out), sys.executable, "-m", "takeback", *argv],
        cwd=ws, env=unmeasured({**env, "TAKEBACK_STORE_DIR": str(store)}), input=stdin, capture_output=True, timeout=120,
    )
    if proc.returncode != 0 and b"ptrace" in proc.stderr:
        pytest.skip(f"strace cannot trace here: {proc.stderr.decode(errors='replace').strip()}")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return parse_trace(out.read_text(errors="replace"), store)


def _entries(env: dict[str, str], ws: Path, store: Path, complete: bool = False) -> set[int]:
    """The entries ``log`` lists (``complete``: only those whose turn has ended)."""
    proc = _run(env, ws, "log", "--json", store=store)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    data = json.loads(proc.stdout)
    items = data if isinstance(data, list) else data.get("entries", [])
    return {item["number"] for item in items if not complete or item["state"] != "open"}


def states(found: list[Effect], seed: int) -> list[list[tuple[Effect, str]]]:
    """Each effect alone in each form, then random combinations, then all at once."""
    rng = random.Random(seed)
    out: list[list[tuple[Effect, str]]] = []
    for effect in found:
        forms = ["empty", "prefix"] if effect.kind == "torn" else ["whole", "empty", "prefix"] if effect.kind == "unrenamed" else ["whole"]
        out += [[(effect, form)] for form in forms]
    for _ in range(3):
        picked = [e for e in found if rng.random() < 0.5]
        out.append([(e, rng.choice(["empty", "prefix", "whole"] if e.kind != "torn" else ["empty", "prefix"])) for e in picked])
    out.append([(e, "empty" if e.kind == "torn" else "whole") for e in found])
    return [s for s in out if s]


def check_state(env: dict[str, str], ws: Path, store: Path, torn: dict[str, bytes], must_keep: set[int], undo: bool) -> None:
    """Open the store as a cut left it, with the real CLI, and check what must hold."""
    proc = _run(env, ws, "status", store=store)  # the first to open it: repairs, and says so
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
    kept = _entries(env, ws, store)
    assert must_keep <= kept, f"entries lost: {sorted(must_keep - kept)} (torn: {sorted(torn)})"
    status = json.loads(_run(env, ws, "status", "--json", store=store).stdout)
    named = {item["path"] for repair in status["repairs"] for item in repair["files"]}
    for path, content in torn.items():
        still = store / path
        if _READ.match(path) and still.exists() and still.read_bytes() == content:
            assert path in named, f"{path} left torn in place and not set aside"
    for repair in status["repairs"]:
        if repair["log_was"] and repair["log_was"] != repair["log_now"]:
            assert repair["lost"], f"the log went back without naming what it lost: {repair}"
        for item in repair["files"]:
            assert (Path(repair["folder"]) / item["path"]).exists(), f"{item['path']} named but not kept in quarantine"
    if undo:
        proc = _run(env, ws, "undo", "--json", store=store)
        assert proc.returncode in (0, 4, 10, 11) and b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
        assert _run(env, ws, "log", store=store).returncode == 0


def _scenario(
    tmp_path: Path, env: dict[str, str], prepare: list[tuple[str, ...]], call: tuple[str, ...], edit: bool,
) -> tuple[Path, Path, Path, Trace, Path]:
    ws = make_repo(tmp_path / "ws", {"a.txt": "one\n", "b.txt": "two\n"})
    store = tmp_path / "store"
    for i, args in enumerate(prepare):
        if args[0] == "turns":  # many turns at once, in one process (the engine's API)
            _turns_in_process(env, ws, store, int(args[1]))
            continue
        if args == ("drop-cache",):  # the timeline cache gone: the next call folds the log and writes it whole
            (store / "timeline.json").unlink(missing_ok=True)
            shutil.rmtree(store / "timeline-pages", ignore_errors=True)
            continue
        if args == ("edit",):
            write_files(ws, {"a.txt": f"one\nedit {i}\n"})
            continue
        if args == ("write",):  # what the agent's Write tool wrote (the payload names it)
            write_files(ws, {"agent_written.txt": "written by the agent's write tool\n"})
            continue
        proc = _run(env, ws, *args, store=store)
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    if edit:
        write_files(ws, {"b.txt": "two\nchanged by the cut call's turn\n"})
    before = tmp_path / "before"
    if store.exists():
        shutil.copytree(store, before, symlinks=True)
    else:
        before.mkdir()
    trace = traced(env, ws, store, tmp_path / "trace.txt", *call)
    after = tmp_path / "after"
    shutil.copytree(store, after, symlinks=True)
    return ws, store, before, trace, after


def _turns_in_process(env: dict[str, str], ws: Path, store: Path, n: int) -> None:
    code = (
        "import sys; from pathlib import Path; from takeback.core.models import BatchChange; "
        "from takeback.engine.engine import Engine\n"
        "ws = Path(sys.argv[1]); engine = Engine(ws)\n"
        "for i in range(int(sys.argv[2])):\n"
        "    path = ws / f'many/f{i}.txt'; path.parent.mkdir(exist_ok=True)\n"
        "    engine.record_batch([BatchChange(path=str(path), after=f'{i}\\n'.encode())], label=f'many {i}')\n"
        "    path.write_text(f'{i}\\n')\n"
        "engine.close()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(ws), str(n)], cwd=ws, env={**env, "TAKEBACK_STORE_DIR": str(store)},
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")


def _turns(n: int) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for i in range(n):
        out += [("begin", "--label", f"turn {i + 1}"), ("edit",), ("end",)]
    return out


CASES = {
    # a turn's end (a recording: no fsync in the default mode)
    "end": (_turns(2) + [("begin", "--label", "cut")], ("end",), True),
    # an undo (an operation: its publish is synced)
    "undo": (_turns(3), ("undo",), False),
    # a turn's end that merges the small packs (the merged pack is synced before the old go)
    "end-merging": (_turns(8) + [("begin", "--label", "cut")], ("end",), True),
    # the first turn's begin in a new store
    "first-begin": ([], ("begin", "--label", "first"), False),
    # the first call to open a timeline past the cache's inline tail whose cache was lost: it folds
    # the log and writes the cache whole (its pages, then its index: timeline-pages/, unflushed)
    "cache-pages": ([("turns", "60"), ("drop-cache",)], ("status",), False),
    # an agent's tool call recorded through Claude Code's hooks (its PostToolUse: the step's end)
    "hook-step": (
        _turns(2) + [("hook", "claude", "@UserPromptSubmit"), ("hook", "claude", "@PreToolUse"), ("write",)],
        ("hook", "claude", "@PostToolUse"), False,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_power_cut_states_open(case: str, tmp_path: Path) -> None:
    prepare, call, edit = CASES[case]
    env = {**isolated_env(tmp_path / "env"), "TAKEBACK_RESIDENT": "0", "CLAUDECODE": "1"}  # as Claude Code runs its hooks
    ws, store, before, trace, after = _scenario(tmp_path, env, prepare, call, edit)
    workspace = tree_state(ws)
    # An open turn is not complete: the call that ends it may lose it with its end (the newest entry).
    complete = _entries(env, ws, before, complete=True) if (before / "objects.git").exists() else set()
    found = effects_of(trace, store)
    assert found or case == "undo", "the call wrote nothing the test could cut: the trace was not read"
    if case == "undo":
        must_keep = _entries(env, ws, after)  # the operation's entry too: it was synced
        assert len(must_keep) == len(complete) + 1
        assert not [e for e in found if e.path.startswith("objects.git/objects/pack/pack-") or e.path.endswith("oplog")], found
    else:
        must_keep = complete
    if case == "end-merging":  # the merge happened, and its pack (with the old entries) was flushed before the old ones went
        packs_now = list((after / "objects.git" / "objects" / "pack").glob("*.pack"))
        assert len(packs_now) < len(list((before / "objects.git" / "objects" / "pack").glob("*.pack")))
        assert not [e for e in found if e.path.startswith("objects.git/objects/pack/")], found
    if case == "cache-pages":  # the states include a torn, missing or unrenamed page of the cache
        assert [e for e in found if e.path.startswith("timeline-pages/")], found
    rng = random.Random(17)
    for number, chosen in enumerate(states(found, seed=17)):
        target = tmp_path / f"cut-{number}"
        for rel, content in workspace.items():  # as the call left it (an undo of a state writes it)
            if not rel.startswith(".git/"):
                (ws / rel).write_bytes(content)
        torn = apply(chosen, before, after, target, rng)
        try:
            check_state(env, ws, target, torn, must_keep, undo=number % 4 == 0)
        except AssertionError as exc:
            raise AssertionError(f"state {number}: {[(e.kind, e.path, f) for e, f in chosen]}: {exc}") from exc
        shutil.rmtree(target)


def test_an_operation_flushes_the_packs_earlier_recordings_left_unflushed(tmp_path: Path) -> None:
    """An undo's log commit sits on the chain of the recordings before it, whose packs the
    default mode did not flush: its publish flushes them too, or a cut could tear its parent and
    take the undo (whose answer was shown) back with the log."""
    prepare, call, edit = CASES["undo"]
    env = {**isolated_env(tmp_path / "env"), "TAKEBACK_RESIDENT": "0"}
    _ws, store, before, _trace, _after = _scenario(tmp_path, env, prepare, call, edit)
    earlier = sorted(p.name for p in (before / "objects.git" / "objects" / "pack").glob("pack-*"))
    assert earlier, "the recordings before the undo wrote no pack"
    synced = (tmp_path / "trace.txt").read_text(errors="replace")
    flushed = {Path(m.group(1)).name for m in re.finditer(r"f(?:data)?sync\(\d+<([^>]*)>\) += 0", synced)}
    assert not [name for name in earlier if name not in flushed], f"left unflushed by the undo: {sorted(set(earlier) - flushed)}"
