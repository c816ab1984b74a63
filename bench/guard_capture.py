#!/usr/bin/env python
"""Takeback benchmark: what keeping a guarded call's state costs, and that it reads no tree.

    .venv/bin/python bench/guard_capture.py [--sizes 1000,50000] [--refs 200] [--repeat 30]

For each size, a workspace of that many tracked files (bench/generate.py), with ``--refs``
refs (half loose branches, half packed tags), a stash entry, and an ignored ``out/`` folder of
20 small files. Measured, in process (medians over --repeat runs):

  refs       ``gitstate.read(every_ref=True)``: HEAD, every ref, the index's checksum, the stash
  keep       ``lost.keep`` of ``out/``: its 20 files listed and copied into the store
  begin+     ``Engine.begin_step`` of a shell step with ``AtRisk(git=True, paths=("out/",))``
  begin      the same step without ``at_risk`` (what every step costs today)

and, for refs and keep, how many files they stat and folders they list (``os.lstat``,
``os.stat``, ``os.scandir``, ``os.open`` and ``open`` counted while they run): a number that does not
grow with the workspace says no tree is read. A benchmark, not a test: it prints and exits 0.
"""

from __future__ import annotations

import argparse
import builtins
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from generate import generate, git  # noqa: E402

from takeback.config import load_config  # noqa: E402
from takeback.core.models import AtRisk  # noqa: E402
from takeback.engine import lost  # noqa: E402
from takeback.engine.engine import Engine  # noqa: E402
from takeback.scanning import gitstate  # noqa: E402


def _median_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _counted(run: Callable[[], object]) -> dict[str, int]:
    """How many times ``run`` stats, lists and opens a path."""
    counts = {"lstat": 0, "stat": 0, "scandir": 0, "open": 0, "files opened": 0}
    originals = {name: getattr(os, name) for name in counts if name != "files opened"}
    builtin_open = builtins.open

    def opened(*args, **kwargs):
        counts["files opened"] += 1
        return builtin_open(*args, **kwargs)

    def wrap(name: str) -> Callable:
        def inner(*args, **kwargs):
            counts[name] += 1
            return originals[name](*args, **kwargs)
        return inner

    for name in originals:
        setattr(os, name, wrap(name))
    builtins.open = opened
    try:
        run()
    finally:
        for name, original in originals.items():
            setattr(os, name, original)
        builtins.open = builtin_open
    return counts


def _workspace(root: Path, size: int, refs: int) -> Path:
    generate(root, size)
    for i in range(refs // 2):
        git(["tag", f"t{i}"], root)
    git(["pack-refs", "--all"], root)
    for i in range(refs - refs // 2):
        git(["branch", f"b{i}"], root)
    (root / ".gitignore").write_text("out/\n")
    first = next(p for p in sorted(root.rglob("*.py")) if ".git" not in p.parts)
    first.write_text(first.read_text() + "# stashed\n")
    git(["stash", "-q"], root)
    (root / "out").mkdir()
    for i in range(20):
        (root / "out" / f"out{i}.o").write_bytes(os.urandom(2048))
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,50000")
    parser.add_argument("--refs", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TAKEBACK_HOME"] = str(Path(tmp) / "home")
        print(f"{'files':>8} {'refs ms':>8} {'keep ms':>8} {'begin+ ms':>10} {'begin ms':>9}  reads (refs | keep)")
        for size in (int(s) for s in args.sizes.split(",")):
            root = _workspace(Path(tmp) / f"ws{size}", size, args.refs)
            engine = Engine(root, load_config(root))
            git_dir = gitstate.find(root)
            assert git_dir is not None
            state = gitstate.read(git_dir, every_ref=True)
            assert state is not None and len(state["refs"]) >= args.refs and state["stash"]
            refs_ms = _median_ms(lambda: gitstate.read(git_dir, every_ref=True), args.repeat)
            keep_ms = _median_ms(lambda: lost.keep(engine.capture, engine.workspace, ("out/",), 1 << 26), args.repeat)
            engine.begin_step("warm", session="s")
            engine.end_step("warm", "warm")
            risky, plain = [], []
            for i in range(max(3, args.repeat // 3)):
                for at_risk, into in ((AtRisk(git=True, paths=("out/",)), risky), (None, plain)):
                    start = time.perf_counter()
                    engine.begin_step(f"k{i}{into is risky}", session="s", at_risk=at_risk)
                    into.append((time.perf_counter() - start) * 1000)
                    engine.end_step(f"k{i}{into is risky}", "bench")
            reads_refs = _counted(lambda: gitstate.read(git_dir, every_ref=True))
            reads_keep = _counted(lambda: lost.keep(engine.capture, engine.workspace, ("out/",), 1 << 26))
            print(f"{size:>8} {refs_ms:>8.2f} {keep_ms:>8.2f} {statistics.median(risky):>10.2f} "
                  f"{statistics.median(plain):>9.2f}  {reads_refs} | {reads_keep}")


if __name__ == "__main__":
    main()
