#!/usr/bin/env python
"""Takeback benchmark: what the store's durability costs a recording, against a baseline in the same run.

    .venv/bin/python bench/store_durability.py [--repeat 40] [--tmpdir DIR] [--json out.json]

A hook's recording (a step's end, a turn's ``stop``) publishes one small pack and moves the log
ref. In the default mode nothing of it is flushed; flushing it (``fsync = true``, or what an
operation always does: ``Store.durable()``) is four flushes — the pack, its index, the pack
folder, the ref. This measures, in one process with the engine open (as the resident process
that serves hooks keeps it), in a git repository of 200 files:

  turn         begin_turn + end_turn with one file changed in between (the change not timed):
               the recording a ``stop`` hook makes, its publish not flushed (the default)
  turn, synced the same with the publish flushed (``Store.durable()``)
  open check   what opening the store now checks every time (``Store.repair()``: the packs'
               ends, the ref, the head commit), on a store of --turns turns
  fsync        one ``fsync`` of a freshly written 4 KB file in the same folder: the disk's own
               cost, for reading the rest

Rounds alternate plain and synced so both see the same machine load; medians, 90th and 99th
percentiles over --repeat rounds after 3 warm-up rounds. The difference between the two turn
rows is what flushing would add to a hook as the agent sees it (``bench/hooks.py`` measures
the hook itself). A benchmark, not a test: it prints the table and exits 0. Everything lives in
a temporary folder (on the disk --tmpdir names: measure where stores live), removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))

from takeback.config import load_config  # noqa: E402
from takeback.engine.engine import Engine  # noqa: E402


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def _workspace(root: Path, files: int) -> Path:
    ws = root / "ws"
    ws.mkdir()
    for i in range(files):
        (ws / f"f{i:04d}.py").write_text(f"def f{i}():\n    return {i}\n" * 20)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=ws, env=env, check=True)
    return ws


def _turn(engine: Engine, ws: Path, i: int, synced: bool) -> float:
    engine.begin_turn(label=f"round {i}")
    (ws / "f0001.py").write_text(f"# round {i}\n")
    start = time.perf_counter()
    with engine.store.durable() if synced else nullcontext():
        engine.end_turn()
    return (time.perf_counter() - start) * 1000


def _fsync_once(folder: Path, i: int) -> float:
    path = folder / f"probe-{i}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, os.urandom(4096))
        start = time.perf_counter()
        os.fsync(fd)
        return (time.perf_counter() - start) * 1000
    finally:
        os.close(fd)
        path.unlink()


def run(root: Path, repeat: int, turns: int) -> dict[str, list[float]]:
    os.environ["TAKEBACK_HOME"] = str(root / "state")
    ws = _workspace(root, 200)
    engine = Engine(ws, load_config(ws))
    for i in range(turns):
        _turn(engine, ws, i, False)
    rows: dict[str, list[float]] = {"turn": [], "turn, synced": [], "open check": [], "fsync": []}
    for i in range(repeat + 3):
        took = {
            "turn": _turn(engine, ws, i, False),
            "turn, synced": _turn(engine, ws, i, True),
            "fsync": _fsync_once(engine.store.path, i),
        }
        start = time.perf_counter()
        engine.store.repair()
        took["open check"] = (time.perf_counter() - start) * 1000
        if i >= 3:
            for name, value in took.items():
                rows[name].append(value)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--turns", type=int, default=20, help="turns recorded before timing")
    parser.add_argument("--tmpdir", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tb-durability-", dir=args.tmpdir) as tmp:
        rows = run(Path(tmp), args.repeat, args.turns)
    print(f"{'':14} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8}   ({args.repeat} rounds, load {os.getloadavg()[0]:.1f})")
    summary = {}
    for name, values in rows.items():
        summary[name] = {"p50": _pct(values, 0.5), "p90": _pct(values, 0.9), "p99": _pct(values, 0.99)}
        print(f"{name:14} {summary[name]['p50']:8.2f} {summary[name]['p90']:8.2f} {summary[name]['p99']:8.2f}")
    added = {q: summary["turn, synced"][q] - summary["turn"][q] for q in ("p50", "p90", "p99")}
    print(f"{'flush adds':14} {added['p50']:8.2f} {added['p90']:8.2f} {added['p99']:8.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "added": added, "samples": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
