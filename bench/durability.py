#!/usr/bin/env python
"""Takeback benchmark: what an operation's durability costs (undo and redo, journaled).

    .venv/bin/python bench/durability.py [--files 3,30,300] [--repeat 15] [--tmpdir DIR] [--json out.json]

An undo, redo, revert or restore flushes everything a power cut could otherwise tear before
its answer (``workspace/journal.py``): the objects the journal names, the journal and its
folder, each workspace file before its rename, the folders it changed, the log's ref, and the
store folder once the journal is gone. This measures that cost against a baseline in the same
run: the same undo and redo with ``os.fsync`` made a no-op in this process (everything else
identical: the same writes, renames and journal). For each size, one turn rewrites that many
files of ~4 KB (and adds one and deletes one) in a git repository; then undo and redo
alternate, durable and baseline interleaved round by round so both see the same machine load.
Medians (and 10th-90th percentiles) over --repeat rounds after 2 warm-up rounds, engine
in-process (as the language server runs it). A benchmark, not a test: it prints the table and
exits 0 (non-zero only on a crash). Everything lives in a temporary folder, removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from takeback.engine.engine import Engine  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _workspace(base: Path, count: int) -> Path:
    ws = base / f"ws{count}"
    for i in range(count + 1):
        path = ws / f"pkg{i % 8}" / f"mod{i:04d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {i}\n" + "x = 1\n" * 680)
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=ws, env=env, check=True)
    return ws


def _turn(engine: Engine, ws: Path, count: int) -> None:
    engine.begin_turn(label=f"rewrite {count} files")
    for i in range(count):
        path = ws / f"pkg{i % 8}" / f"mod{i:04d}.py"
        path.write_text(path.read_text().replace("x = 1", "x = 2"))
    (ws / "added.py").write_text("added = True\n")
    (ws / f"pkg{count % 8}" / f"mod{count:04d}.py").unlink()
    engine.end_turn()


@contextmanager
def _no_fsync() -> Iterator[None]:
    """The baseline: ``os.fsync`` does nothing (only in this process, only for the block)."""
    real = os.fsync
    os.fsync = lambda fd: None  # type: ignore[assignment]
    try:
        yield
    finally:
        os.fsync = real


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def _spread(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"median": statistics.median(ordered), "p10": at(0.1), "p90": at(0.9)}


def measure(base: Path, count: int, repeat: int) -> dict[str, dict[str, float]]:
    ws = _workspace(base, count)
    engine = Engine(ws)
    _turn(engine, ws, count)
    samples: dict[str, list[float]] = {"undo durable": [], "undo baseline": [], "redo durable": [], "redo baseline": []}
    for round_ in range(repeat + 2):
        for mode in ("durable", "baseline"):
            if mode == "baseline":
                with _no_fsync():
                    undo, redo = _timed(engine.undo), _timed(engine.redo)
            else:
                undo, redo = _timed(engine.undo), _timed(engine.redo)
            if round_ >= 2:
                samples[f"undo {mode}"].append(undo)
                samples[f"redo {mode}"].append(redo)
    return {name: _spread(values) for name, values in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", default="3,30,300")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--tmpdir", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="tb-durability-", dir=args.tmpdir))
    os.environ["TAKEBACK_HOME"] = str(base / "state")
    results: dict[str, dict[str, dict[str, float]]] = {}
    try:
        heads = ("undo durable", "undo baseline", "redo durable", "redo baseline")
        print(f"{'files':>6}  " + "  ".join(f"{h:>14}" for h in heads) + "  (ms, median [p10-p90])")
        for count in (int(n) for n in args.files.split(",")):
            results[str(count)] = row = measure(base, count, args.repeat)
            cells = [f"{row[k]['median']:6.1f} [{row[k]['p10']:.0f}-{row[k]['p90']:.0f}]" for k in row]
            print(f"{count:>6}  " + "  ".join(f"{c:>14}" for c in cells), flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"load": os.getloadavg(), "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
