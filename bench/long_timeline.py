#!/usr/bin/env python
"""Takeback benchmark: a long timeline, and a timeline of huge entries, beside a shadow git repository.

    python bench/long_timeline.py [--entries 10,1000,2000] [--huge 4] [--huge-files 5000]
                                  [--repeat 7] [--json out.json] [--keep]

Runs this checkout's code (``ROOT/server`` first on the path; the CLI as ``sys.executable -m
takeback`` with that path, ``TAKEBACK_RESIDENT=0`` so it is the in-process CLI that is measured).

A workspace of 3,000 files (bench/generate.py) gets turns of 3 files each, recorded in-process
(``engine.record_batch``, then the files are written, as an editor does; retention set to keep
every entry, its default keeps 500); after each turn the
whole-tree peer takes its snapshot into a shadow git directory (``add -A`` + ``commit``). Turn
``i`` touches files ``3i .. 3i+2`` of the pool (mod 3,000), so the turn 1,000 entries back is
not touched by any later turn and reverting it is clean. When the timeline reaches each of
``--entries``, in alternating rounds:

  open        ``Engine(workspace)`` (the engine-API open: cache, fold, journal), timed in a fresh
              process once its modules are loaded
  status      ``takeback status`` (CLI, in-process: ``TAKEBACK_RESIDENT=0``)
  log         ``takeback log`` (every entry) beside ``git log`` of the shadow repository
  log 20      ``takeback log --limit 20``
  log work    what ``takeback log`` does in its process once imported: open the engine, read
              the entries' headers, print every line (to a buffer); the CLI's start, its imports,
              is the CLI part's (issue 18), and a resident process leaves only this
  revert      ``engine.revert("#N", dry_run=True)`` of the turn 1,000 entries back (or #1):
              the plan of a revert, without writing; beside it the peer's ``git revert
              --no-commit`` of the same commit (then ``git reset --hard`` untimed)
  floor       ``python -c pass`` on the interpreter the CLI runs on

plus the per-turn cost of the last stretch of turns (median of record_batch against add+commit)
and the disk each turn adds (store against shadow repository: from the start, and over the last
stretch between two lengths). From the start, each side's whole footprint is judged: the store
from its creation, which pays for each first-touched file's before-image, and the shadow
repository from its ``git init``, whose initial snapshot of the whole tree is what a shadow tool
writes before its first turn (the before-images it restores from); the figure without that
snapshot is printed beside it, not judged (it charged the store for its before-images and the
shadow for none). Over the last stretch, with ``--entries`` past 1,000, every before-image is an
earlier turn's after-image on both sides. A second store holds ``--huge``
turns of ``--huge-files`` files each (every file of a workspace that size rewritten): open,
status and log there against the 10-entry figures.

Then *side by side*: a second 3,000-file store holding the shortest length (recorded the same
way), the long store at its longest length and the huge-entry store, every read cost of all
three measured in the same ``--repeat`` rounds, their order reversed every other round, so a
length's figure never sits minutes of load away from its baseline's (as the figures measured
while the timeline grew do: those are printed too, and judge only ``log`` against ``git log``).

Side by side too, ``log (CLI, through the resident)``: ``takeback log`` as the person runs it
while a session keeps the resident process (``resident run``, started for it, then stopped), the
stores in the same alternating rounds. The CLI measured above is the in-process one, the path
when no resident runs (its imports, ~0.3 s: the CLI part of issue 18, ``bench/cli_start.py``).

Goals (issue 18), the flatness ones judged side by side: open, status and ``log --limit 20`` at
the longest timeline and in the huge-entry store ≤ 1.3× their figure at the shortest; ``log``
≤ 2× ``git log`` (through the resident, and its work once imported) from 1,000 entries up
(``SERVED_FROM``: at 10 entries ``git log`` is its own start, 2-3 ms, where a Python process's
start alone is 11-15: printed there, not judged); the revert plan (the median of
``REVERT_CALLS`` plans per round, in a fresh process) at the longest ≤ 1.3× at the shortest,
judged on the two stores' plans paired in one process each round, their calls alternating
(``paired_plans``: a process is fast or slow as a whole); per-turn cost and disk
per turn below the shadow repository's.
A benchmark, not a test: prints PASS/FAIL and exits 0 unless it crashed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "server"))

from generate import generate, git_env  # noqa: E402
from run import clean_up, dir_bytes, edited, loadavg, machine_meta, output_options, progress, speed_probe, summarise  # noqa: E402

FLAT = 1.3
LOG_VS_GIT = 2.0
POOL = 3000
REVERT_CALLS = 20  # revert plans timed per round (their median is the round's figure)
SERVED_FROM = 1000  # the served log against git log is judged from this length up (see the docstring)


def _ms(t0: int) -> float:
    return (time.perf_counter_ns() - t0) / 1e6


class Bench:
    """One workspace, its Takeback store and its shadow git repository."""

    def __init__(self, base: Path, name: str, files: int, env: dict[str, str]) -> None:
        from takeback.engine.engine import Engine

        self.ws = base / name
        self.shadow = base / f"{name}-shadow.git"
        self.env = env
        os.environ.update(env)
        progress(f"{name}: generating {files:,} files ...")
        generate(self.ws, files)
        self.pool = sorted(
            p for p in subprocess.run(["git", "ls-files"], cwd=self.ws, capture_output=True, text=True,
                                      env=git_env(), check=True).stdout.split("\n") if p
        )
        self.sgit = ["git", f"--git-dir={self.shadow}", f"--work-tree={self.ws}"]
        self.git("init", "-q")
        self.git("config", "gc.auto", "0")
        self.shadow_empty = dir_bytes(self.shadow)  # git's own files: the footprint counts from here
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "initial snapshot")
        self.shadow_start = dir_bytes(self.shadow)
        self.engine = Engine(self.ws)
        self.store = Path(self.engine.status().store)
        self.store_start = dir_bytes(self.store)
        self.turns = 0
        self.record_ms: list[float] = []
        self.commit_ms: list[float] = []
        self.commits: list[str] = []

    def git(self, *args: str, out: bool = False) -> str:
        proc = subprocess.run([*self.sgit, *args], cwd=self.ws, env=git_env(), check=True, capture_output=True, text=True)
        return proc.stdout if out else ""

    def cli(self, *args: str) -> None:
        subprocess.run([sys.executable, "-m", "takeback", *args], cwd=self.ws, env=self.env, check=True,
                       capture_output=True)

    def in_process(self, what: str) -> float:
        """ms of ``_timed_work(what)`` in a fresh process, timed there once its modules are
        loaded: this process's heap (the long-lived engine that records the turns) would make
        the garbage collector's passes part of the figure."""
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--work", what, str(self.ws)],
                              env=self.env, check=True, capture_output=True, text=True)
        return float(proc.stdout.strip().splitlines()[-1])

    def turn(self, paths: list[str]) -> None:
        """One turn: ``paths`` edited, recorded by Takeback, then snapshot by the peer."""
        from takeback.core.models import BatchChange

        news = {p: edited((self.ws / p).read_bytes(), f"turn {self.turns}") for p in paths}
        changes = [BatchChange(path=str(self.ws / p), after=data) for p, data in news.items()]
        t0 = time.perf_counter_ns()
        self.engine.record_batch(changes, label=f"turn {self.turns}", agent="bench")
        self.record_ms.append(_ms(t0))
        for p, data in news.items():
            (self.ws / p).write_bytes(data)
        t0 = time.perf_counter_ns()
        self.git("add", "-A")
        self.git("commit", "-q", "-m", f"turn {self.turns}")
        self.commit_ms.append(_ms(t0))
        self.commits.append(self.git("rev-parse", "HEAD", out=True).strip())
        self.turns += 1

    def grow(self, count: int) -> None:
        for _ in range(count):
            i = self.turns
            self.turn([self.pool[(3 * i + k) % len(self.pool)] for k in range(3)])
            if self.turns % 250 == 0:
                progress(f"    {self.turns} turns")

    def measure(self, repeat: int, revert: bool = True) -> dict:
        """The read costs at this length, in alternating rounds."""
        timed: dict[str, list[float]] = {}
        for _ in range(repeat):
            self.measure_round(timed, revert)
        return self.summary(timed)

    def measure_round(self, timed: dict[str, list[float]], revert: bool = True) -> None:
        """One round of every read cost (and the floor) at this store's length, into ``timed``."""
        def add(key: str, t0: int) -> None:
            timed.setdefault(key, []).append(_ms(t0))

        timed.setdefault("open", []).append(self.in_process("open"))
        for key, argv in (("status", ["status"]), ("log", ["log"]), ("log20", ["log", "--limit", "20"])):
            t0 = time.perf_counter_ns()
            self.cli(*argv)
            add(key, t0)
        t0 = time.perf_counter_ns()
        self.git("log", out=True)
        add("git_log", t0)
        timed.setdefault("log_work", []).append(self.in_process("log"))
        t0 = time.perf_counter_ns()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        add("floor", t0)
        if revert:
            back = max(1, self.turns - 1000 + 1)  # turn numbers start at 1
            timed.setdefault("revert", []).append(self.in_process(f"revert:#{back}"))
            t0 = time.perf_counter_ns()
            self.git("revert", "--no-commit", self.commits[back - 1])
            add("git_revert", t0)
            self.git("reset", "-q", "--hard", "HEAD")

    def summary(self, timed: dict[str, list[float]]) -> dict:
        """``timed``'s medians and spreads, with this store's length, per-turn cost and disk."""
        out = {k: summarise(v) for k, v in timed.items() if v}
        tail = slice(-min(len(self.record_ms), 200), None)
        out.update(
            entries=self.turns,
            record=summarise(self.record_ms[tail]) if self.record_ms else None,
            add_commit=summarise(self.commit_ms[tail]) if self.commit_ms else None,
            store_bytes=dir_bytes(self.store) - self.store_start,
            shadow_bytes=dir_bytes(self.shadow) - self.shadow_start,
            shadow_whole=dir_bytes(self.shadow) - self.shadow_empty,
        )
        return out


def served_logs(benches: dict[str, Bench], repeat: int, base: Path, env: dict[str, str]) -> dict[str, list[float]]:
    """ms of ``takeback log`` through a resident process (as the person runs it while a session
    keeps one: ``resident/forward.py``), every store in the same alternating rounds, each
    store's first call (its engine opened in the process) untimed. The process must have served
    every call (its count of commands), or the run is void."""
    from cli_start import Bench as Cli  # its launcher, and the resident process's start and stop

    runtime = base / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    served_env = {k: v for k, v in env.items() if k != "TAKEBACK_RESIDENT"}
    served_env.update(XDG_RUNTIME_DIR=str(runtime), TAKEBACK_RESIDENT_IDLE="600")
    cli = Cli(base, base, served_env, 0)
    order = list(benches)
    timed: dict[str, list[float]] = {name: [] for name in order}
    cli.start_resident()
    try:
        before = cli.resident()["cli_requests"]
        for name in order:
            _served_log(cli, benches[name].ws)
        for i in range(repeat):
            for name in (order if i % 2 == 0 else order[::-1]):
                timed[name].append(_served_log(cli, benches[name].ws))
        served = cli.resident()["cli_requests"] - before
        if served != len(order) * (repeat + 1):
            raise RuntimeError(f"the resident process served {served} of {len(order) * (repeat + 1)} log commands")
    finally:
        cli.stop_resident()
    return timed


def _served_log(cli: Any, ws: Path) -> float:
    t0 = time.perf_counter_ns()
    subprocess.run([str(cli.takeback), "log"], cwd=ws, env=cli.env, check=True, capture_output=True,
                   stdin=subprocess.DEVNULL)
    return _ms(t0)


def side_by_side(benches: dict[str, Bench], repeat: int) -> dict[str, dict]:
    """The read costs of every store measured in the same rounds, the stores' order reversed
    every other round: the flatness goals compare these, so the load of one minute never
    passes for the cost of a length (measured one after another while the timeline grows,
    the lengths sit minutes apart)."""
    timed: dict[str, dict[str, list[float]]] = {name: {} for name in benches}
    order = list(benches)
    for i in range(repeat):
        for name in (order if i % 2 == 0 else order[::-1]):
            benches[name].measure_round(timed[name], revert=name != "huge")
    return {name: bench.summary(timed[name]) for name, bench in benches.items()}


def _timed_work(what: str, ws: Path) -> float:
    """ms of the engine-API open (``open``), of what ``takeback log`` (text) does once its
    modules are loaded (``log``: open, the entries, every line printed, ``cli/reading.log``), or
    of a revert's plan (``revert:#N``: ``_timed_plans``)."""
    from takeback.core import render
    from takeback.engine.engine import Engine

    if what.startswith("revert:"):
        return _timed_plans(what.split(":", 1)[1], ws)
    t0 = time.perf_counter_ns()
    engine = Engine(ws)
    if what == "log":
        with contextlib.redirect_stdout(io.StringIO()):
            if hasattr(render, "log_for_terminal"):
                render.print_log(render.log_for_terminal(engine.entries(files=False)))
            else:  # a checkout before entry headers (to measure the "before")
                render.print_log(render.for_terminal(engine.entries()))
    took = _ms(t0)
    engine.close()
    return took


def _timed_plans(target: str, ws: Path) -> float:
    """The median ms of ``REVERT_CALLS`` plans of a revert of ``target`` (``dry_run``), after a
    first one untimed, in this fresh process (a millisecond's plan: one call is the timer's
    noise; in the benchmark's own process, whose heap holds the engine that recorded every turn,
    the garbage collector's passes were part of it: 0.3 against 0.4 ms at 10 and 2,000 entries,
    where cProfile counts the same 745-754 calls a plan)."""
    from takeback.engine.engine import Engine

    engine = Engine(ws)
    assert engine.revert(target, dry_run=True).verdict == "safe"
    plans = []
    for _ in range(REVERT_CALLS):
        t0 = time.perf_counter_ns()
        engine.revert(target, dry_run=True)
        plans.append(_ms(t0))
    engine.close()
    return statistics.median(plans)


def _paired_medians(plans: list[tuple[str, Path]]) -> list[float]:
    """The median ms of ``REVERT_CALLS`` plans of each revert (target, workspace), in this one
    process, their calls alternating: a fresh process is fast or slow as a whole (0.35-0.69 ms
    for the same plan in the eleventh round), so plans compared from two processes measure the
    processes; compared within one, the distance."""
    from takeback.engine.engine import Engine

    engines = [(Engine(ws), target) for target, ws in plans]
    for engine, target in engines:
        assert engine.revert(target, dry_run=True).verdict == "safe"
    timed: list[list[float]] = [[] for _ in engines]
    for _ in range(REVERT_CALLS):
        for (engine, target), into in zip(engines, timed, strict=True):
            t0 = time.perf_counter_ns()
            engine.revert(target, dry_run=True)
            into.append(_ms(t0))
    for engine, _ in engines:
        engine.close()
    return [statistics.median(each) for each in timed]


def paired_plans(short: Bench, long: Bench, repeat: int) -> list[float]:
    """Per fresh process (``repeat`` of them), the long store's revert plan 1,000 back over the
    short store's (``_paired_medians``), the order of the two swapped every other process."""
    ratios = []
    for i in range(repeat):
        sides = [(f"#{max(1, b.turns - 1000 + 1)}", b.ws) for b in (short, long)]
        order = sides if i % 2 == 0 else sides[::-1]
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--pair", *(str(x) for side in order for x in side)],
                              env=long.env, check=True, capture_output=True, text=True)
        first, second = map(float, proc.stdout.split()[-2:])
        short_ms, long_ms = (first, second) if i % 2 == 0 else (second, first)
        ratios.append(long_ms / short_ms)
    return ratios


def huge_store(base: Path, env: dict[str, str], turns: int, files: int) -> Bench:
    """A store of ``turns`` turns that each rewrote every one of ``files`` files."""
    bench = Bench(base, "huge", files, env)
    for i in range(turns):
        progress(f"    huge turn {i + 1} of {turns} ({len(bench.pool):,} files) ...")
        bench.turn(bench.pool)
    return bench


def _row(label: str, r: dict, key: str) -> str:
    s = r[key]
    return f"  {label:<26} {s['median']:9.1f} ms  (p10 {s['p10']:.1f}, p90 {s['p90']:.1f})"


def verdicts(points: list[dict], side: dict[str, dict]) -> list[tuple[str, str, bool]]:
    """PASS/FAIL per goal: the flatness goals from ``side`` (the stores side by side), the
    ``log`` against ``git log`` goals at every length as the timeline grew and side by side."""
    first, last = side["short"], side["long"]
    huge = side.get("huge")
    n0, n1 = first["entries"], last["entries"]
    out = []
    for key, name in (("open", "engine open"), ("status", "status"), ("log20", "log --limit 20")):
        ratio = last[key]["median"] / first[key]["median"]
        out.append((f"{name} at {n1} entries ≤ {FLAT}× at {n0}", f"{ratio:.2f}×", ratio <= FLAT))
        if huge is not None:
            ratio = huge[key]["median"] / first[key]["median"]
            out.append((f"{name} with {huge['entries']} huge entries ≤ {FLAT}× at {n0}", f"{ratio:.2f}×", ratio <= FLAT))
    for point, when in [*((p, "as it grew") for p in points), (first, "side by side"), (last, "side by side")]:
        if point["entries"] < SERVED_FROM:
            continue  # git log's own start (2-3 ms) is all there is to it: see the docstring
        for key, name in (("log_served", "log (CLI, through the resident)"), ("log_work", "log's work once imported")):
            if key in point:
                ratio = point[key]["median"] / point["git_log"]["median"]
                out.append((f"{name} ≤ {LOG_VS_GIT}× git log at {point['entries']} ({when})", f"{ratio:.2f}×",
                            ratio <= LOG_VS_GIT))
    ratio = last["revert_paired"]["median"] if "revert_paired" in last else last["revert"]["median"] / first["revert"]["median"]
    out.append((f"revert 1,000 back at {n1} ≤ {FLAT}× at {n0} (paired in one process)", f"{ratio:.2f}×", ratio <= FLAT))
    grown = points[-1]
    ratio = grown["record"]["median"] / grown["add_commit"]["median"]
    out.append((f"per-turn cost < shadow add+commit at {n1}", f"{ratio:.2f}×", ratio < 1))
    ratio = grown["store_bytes"] / max(1, grown["shadow_whole"])
    out.append((f"disk < shadow repository at {n1} (each side's whole footprint)", f"{ratio:.2f}×", ratio < 1))
    if len(points) > 1:  # where every before-image is an earlier turn's after-image on both sides
        prev = points[-2]
        ratio = (grown["store_bytes"] - prev["store_bytes"]) / max(1, grown["shadow_bytes"] - prev["shadow_bytes"])
        out.append((f"disk per turn from {prev['entries']} to {n1} < shadow repository's", f"{ratio:.2f}×", ratio < 1))
    return out


def _figures(lines: list[str], title: str, r: dict) -> None:
    lines.append(f"\n{title}:")
    for label, key in (("engine open (in-process)", "open"), ("status (CLI)", "status"), ("log (CLI)", "log"),
                       ("log (CLI, through the resident)", "log_served"),
                       ("log --limit 20 (CLI)", "log20"), ("log's work once imported", "log_work"),
                       ("git log (shadow)", "git_log"),
                       ("revert plan 1,000 back", "revert"), ("git revert (shadow)", "git_revert"),
                       ("python -c pass", "floor"), ("record a turn", "record"), ("add -A + commit", "add_commit")):
        if r.get(key):
            lines.append(_row(label, r, key))
    turns = max(1, r["entries"])
    lines.append(f"  disk per turn: store {r['store_bytes'] / turns / 1024:.1f} KiB, "
                 f"shadow {r['shadow_whole'] / turns / 1024:.1f} KiB with its initial snapshot, "
                 f"{r['shadow_bytes'] / turns / 1024:.1f} KiB without")


def report(points: list[dict], side: dict[str, dict], meta: dict) -> str:
    lines = [f"load {meta['load_before']} → {meta['load_after']}; speed probe {meta['probe_before']} → "
             f"{meta['probe_after']} ms; {meta['cpus']} cpus, {meta['platform']}, python {meta['python']}, {meta['git']}"]
    lines.append("\nAs the timeline grew (each length measured when reached, minutes apart):")
    for r in points:
        _figures(lines, f"{r['entries']} entries", r)
    lines.append("\nSide by side (every store in the same alternating rounds; the flatness verdicts):")
    for name, r in side.items():
        huge = f" (huge: {meta['huge_files']} files each)" if name == "huge" else ""
        _figures(lines, f"{r['entries']} entries{huge}", r)
    if "revert_paired" in side["long"]:
        r = side["long"]["revert_paired"]
        lines.append(f"\nrevert plan 1,000 back, long store over short, paired in each fresh process: "
                     f"{r['median']:.2f}× (p10 {r['p10']:.2f}, p90 {r['p90']:.2f})")
    lines.append("")
    for target, measured, passed in verdicts(points, side):
        lines.append(f"  {'PASS' if passed else 'FAIL'}  {target}: {measured}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", default="10,1000,2000", help="timeline lengths to measure at (comma-separated)")
    parser.add_argument("--huge", type=int, default=4, help="turns in the huge-entry store (0: none)")
    parser.add_argument("--huge-files", type=int, default=5000, help="files each huge turn rewrites")
    parser.add_argument("--repeat", type=int, default=7, help="measured rounds at each length")
    output_options(parser)
    parser.add_argument("--work", nargs=2, metavar=("WHAT", "WORKSPACE"), help=argparse.SUPPRESS)
    parser.add_argument("--pair", nargs=4, metavar=("TARGET", "WORKSPACE", "TARGET2", "WORKSPACE2"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.work:
        print(_timed_work(args.work[0], Path(args.work[1])))
        return 0
    if args.pair:
        print(" ".join(map(str, _paired_medians([(args.pair[0], Path(args.pair[1])), (args.pair[2], Path(args.pair[3]))]))))
        return 0
    lengths = sorted(int(s.replace("_", "")) for s in args.entries.split(",") if s.strip())
    base = Path(tempfile.mkdtemp(prefix="takeback-timeline-", dir=args.tmpdir))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "TAKEBACK_"))}
    config = base / "config.toml"  # retention would keep 500 entries: this timeline keeps them all
    config.write_text("[retention]\nmax_entries = 1000000\nmax_age_days = 36500\nmax_bytes = 1099511627776\n")
    env.update(TAKEBACK_HOME=str(base / "takeback-home"), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               TAKEBACK_CONFIG=str(config),
               TAKEBACK_RESIDENT="0", PYTHONPATH=os.pathsep.join([str(ROOT / "server"), os.environ.get("PYTHONPATH", "")]))
    meta = machine_meta(base)
    meta.update(load_before=loadavg(), probe_before=speed_probe(), entries=lengths, repeat=args.repeat,
                huge_files=args.huge_files, python3_pass_ms=_python3_pass())
    points: list[dict] = []
    try:
        short = Bench(base, "short", POOL, env)  # the shortest length, kept for the side-by-side rounds
        short.grow(lengths[0])
        bench = Bench(base, "long", POOL, env)
        for n in lengths:
            bench.grow(n - bench.turns)
            progress(f"  measuring at {n} entries ...")
            points.append(bench.measure(args.repeat))
            progress(f"    open {points[-1]['open']['median']:.1f} ms, log {points[-1]['log']['median']:.1f} ms, "
                     f"git log {points[-1]['git_log']['median']:.1f} ms")
        benches = {"short": short, "long": bench}
        if args.huge:
            benches["huge"] = huge_store(base, env, args.huge, args.huge_files)
        progress(f"  side by side: {', '.join(benches)}, {args.repeat} alternating rounds ...")
        side = side_by_side(benches, args.repeat)
        progress("  revert plans of the short and the long store, paired in each fresh process ...")
        side["long"]["revert_paired"] = summarise(paired_plans(short, bench, args.repeat))
        progress("  log through a resident process, the stores side by side ...")
        for name, samples in served_logs(benches, args.repeat, base, env).items():
            side[name]["log_served"] = summarise(samples)
        for each in benches.values():
            each.engine.close()
        meta.update(load_after=loadavg(), probe_after=speed_probe())
        print(report(points, side, meta))
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(
                {"meta": meta, "points": points, "side": side,
                 "verdicts": [{"target": t, "measured": m, "passed": p} for t, m, p in verdicts(points, side)]}, indent=2))
    finally:
        clean_up(base, args.keep)
    return 0


def _python3_pass() -> float | None:
    """``python3 -c pass`` (a pyenv shim here: printed beside the real floor, never used in a goal)."""
    try:
        t0 = time.perf_counter_ns()
        subprocess.run(["python3", "-c", "pass"], check=True, capture_output=True)
        return _ms(t0)
    except (OSError, subprocess.CalledProcessError):
        return None


if __name__ == "__main__":
    sys.exit(main())
