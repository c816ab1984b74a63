#!/usr/bin/env python
"""Takeback benchmark: cost of recording, undoing and bracketing a 3-file turn as the
workspace grows, beside the whole-tree git snapshot other tools take and beside `git status`.

    .venv/bin/python bench/run.py [--sizes 1000,20000,100000] [--repeat N] [--json out.json]

For each size, a workspace of that many small source files (a git repository, everything
committed) is generated in a temporary folder, then a fresh worker process (this script with
``--worker``) opens the engine in-process, as the language server does, and measures:

  record   engine.record_batch with 3 modified files of ~10 KB (the editor then writes them)
  undo     engine.undo of a 3-file turn
  bracket  engine.begin_turn + engine.end_turn with 3 files changed on disk in between
           (the time spent changing the files is not counted), turns back to back: the
           long-lived engine's begin reuses the last end's listing when its watch of the tree
           saw no change (scan.py, watch.py)
  bracket, tree touched
           the same, after one file was saved (same content) between the turns, so begin
           lists the tree again: what every begin costs without the watch
  status   `git status` on the same tree (3 files modified), as a subprocess, in
           alternation with the bracket
  snapshot the whole-tree approach: `git --git-dir=<separate dir> --work-tree=<workspace>
           add -A` + `commit` after 3 files changed (the separate repository holds an initial
           snapshot of the whole tree first)

Medians over --repeat runs (twice as many for record and undo, which take milliseconds),
after --warmup runs that are not counted. Before timing, --earlier untimed turns make the
store one in use (the first turns of a brand-new store are reported apart). It also reports the
store bytes each turn adds, Python-heap peaks per operation (tracemalloc) and the peak
resident set size of the worker process (VmHWM; see peak_rss_kb). A benchmark, not a test: it
prints PASS/FAIL against the targets and exits 0 either way (non-zero only on a crash).

Stores go under a TAKEBACK_HOME inside the temporary folder, never the real home; the store
and the separate git directory are checked to lie outside the workspace. git runs without
system or global config. Everything is removed at the end unless --keep is given.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from generate import HOT_FILES, generate, git_env  # noqa: E402

TARGETS = {
    "record_ms": 5.0,
    "record_flat_ratio": 1.5,
    "record_vs_snapshot_at": 20000,
    "record_vs_snapshot_factor": 20.0,
    "undo_ms": 20.0,
    "bracket_vs_status": 2.0,
}


# ---------------------------------------------------------------------------- helpers


def _ms(ns: int) -> float:
    return ns / 1e6


def summarise(samples_ms: list[float]) -> dict:
    ordered = sorted(samples_ms)
    n = len(ordered)
    return {
        "median": statistics.median(ordered),
        "min": ordered[0],
        "p10": ordered[max(0, int(n * 0.1))],
        "p90": ordered[min(n - 1, int(n * 0.9))],
        "n": n,
        "samples": [round(s, 3) for s in samples_ms],
    }


def dir_bytes(path: Path) -> int:
    """Apparent size of every file under ``path``, counted as the store counts its own."""
    from takeback.storage.store import folder_bytes

    return folder_bytes(path)


def edited(base: bytes, tag: str) -> bytes:
    """``base`` with one line changed and one line added: a typical small agent edit."""
    lines = base.split(b"\n")
    k = (sum(tag.encode()) * 7919) % max(1, len(lines) - 2) + 1
    lines[k] = lines[k] + b"  # changed " + tag.encode()
    lines.insert(k + 1, b"# added by " + tag.encode())
    return b"\n".join(lines)


def _proc_status_kb(field: str) -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def vm_rss_kb() -> int:
    """Resident set size now (KB)."""
    return _proc_status_kb("VmRSS")


def peak_rss_kb() -> int:
    """Peak resident set size of this process (KB): VmHWM, else getrusage's ru_maxrss.

    On Linux ru_maxrss is not reset by exec: a process started with vfork+exec (as
    subprocess does) reports its parent's peak if that was higher. VmHWM belongs to the
    process's own address space.
    """
    return _proc_status_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def remove_tree(root: Path) -> None:
    """rm -rf with a pool of threads: unlinking 100k files is latency-bound on a busy disk."""
    from concurrent.futures import ThreadPoolExecutor

    folders: list[tuple[str, list[str]]] = [(f, files) for f, _dirs, files in os.walk(root)]

    def unlink_all(item: tuple[str, list[str]]) -> None:
        for name in item[1]:
            try:
                os.unlink(os.path.join(item[0], name))
            except OSError:
                pass

    by_depth: dict[int, list[str]] = {}
    for folder, _files in folders:
        by_depth.setdefault(folder.count(os.sep), []).append(folder)
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(unlink_all, folders))
        for depth in sorted(by_depth, reverse=True):
            list(pool.map(lambda f: shutil.rmtree(f, ignore_errors=True), by_depth[depth]))
    shutil.rmtree(root, ignore_errors=True)


def clean_up(base: Path, keep: bool) -> None:
    """Remove a benchmark's temporary folder, or say where it was kept."""
    if keep:
        progress(f"kept {base}")
    else:
        progress(f"removing {base} ...")
        remove_tree(base)


def speed_probe() -> float:
    """ms for a fixed bit of CPU work (zlib and a Python loop): shows how busy the machine is."""
    import zlib

    text = b"".join(b"def handler_%d(request):\n    return request.value + %d\n" % (i, i) for i in range(200))
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter_ns()
        for _ in range(20):
            zlib.compress(text)
        sum(range(200_000))
        best = min(best, _ms(time.perf_counter_ns() - t0))
    return round(best, 2)


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- worker


def first_tracked_py(ws: Path, env: dict, exclude: set[str]) -> str:
    """A tracked Python file not in ``exclude``, read off git's list without holding all of it
    (100,000 names would raise the worker's peak memory)."""
    proc = subprocess.Popen(["git", "ls-files", "-z", "--", "*.py"], cwd=ws, env=env, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    rest = b""
    try:
        while chunk := proc.stdout.read(65536):
            *names, rest = (rest + chunk).split(b"\0")
            for name in names:
                if os.fsdecode(name) not in exclude:
                    return os.fsdecode(name)
    finally:
        proc.kill()
        proc.wait()
    raise SystemExit("no tracked Python file to touch")


def worker(ws: Path, shadow: Path, repeat: int, warmup: int, season: int) -> dict:
    """Measure one generated workspace; runs in its own process (clean memory figures)."""
    try:
        from takeback.core.models import BatchChange
        from takeback.engine.engine import Engine
    except ImportError:  # not installed in this interpreter: use the source tree
        sys.path.insert(0, str(ROOT / "server"))
        from takeback.core.models import BatchChange
        from takeback.engine.engine import Engine

    genv = git_env()
    runs = warmup + repeat
    fast_runs = warmup + 2 * repeat  # record and undo take milliseconds: twice the samples
    hot = [ws / p for p in HOT_FILES]
    base = {p: p.read_bytes() for p in hot}
    out: dict = {"hot_file_bytes": [len(base[p]) for p in hot]}
    counter = iter(range(1_000_000))

    def change_on_disk(tag: str) -> None:
        for p in hot:
            p.write_bytes(edited(base[p], f"{tag}-{next(counter)}"))

    def timed(fn) -> float:
        t0 = time.perf_counter_ns()
        fn()
        return _ms(time.perf_counter_ns() - t0)

    def keep(samples: list[float]) -> list[float]:
        return samples[warmup:]

    rss_start = vm_rss_kb()

    # --- the engine ---------------------------------------------------------------
    t0 = time.perf_counter_ns()
    engine = Engine(ws, long_lived=True)  # as the language server opens it (it watches the tree)
    out["engine_open_ms"] = _ms(time.perf_counter_ns() - t0)
    store = Path(engine.status().store).resolve()
    if store.is_relative_to(ws.resolve()) or shadow.resolve().is_relative_to(ws.resolve()):
        raise SystemExit(f"store {store} or {shadow} is inside the workspace {ws}")
    out["store"] = str(store)
    out["rss_after_open_kb"] = vm_rss_kb()
    rss_by_phase: dict[str, tuple[int, int]] = {}  # phase: (RSS, peak RSS) in KB after it
    out["rss_by_phase_kb"] = rss_by_phase

    def record_turns(tag: str, count: int) -> list[float]:
        """``count`` 3-file batches, each its own turn, recorded then written (as an editor does)."""
        samples = []
        for i in range(count):
            news = {p: edited(base[p], f"{tag}-{i}") for p in hot}  # stays ~10 KB
            changes = [BatchChange(path=str(p), after=news[p]) for p in hot]
            samples.append(timed(lambda: engine.record_batch(changes, label=f"bench {tag} {i}", agent="bench")))
            for p in hot:
                p.write_bytes(news[p])
        return samples

    # --- a') record in a brand-new store -----------------------------------------
    # A short timeline and few packs; reported apart from the steady state measured below.
    progress("    record_batch, new store ...")
    out["record_new_store"] = summarise(keep(record_turns("new-store", fast_runs)))
    rss_by_phase["record_new_store"] = (vm_rss_kb(), peak_rss_kb())

    # A store in use: a timeline of realistic length, packs merged a few times over. Not timed.
    progress(f"    {season} earlier turns (untimed) ...")
    record_turns("earlier", season)
    out["earlier_turns"] = season
    rss_by_phase["earlier"] = (vm_rss_kb(), peak_rss_kb())

    # --- d) the whole-tree snapshot into a separate git directory: set-up ------------
    sgit = ["git", f"--git-dir={shadow}", f"--work-tree={ws}"]

    def sh(*args: str) -> None:
        subprocess.run([*sgit, *args], cwd=ws, env=genv, check=True, stdout=subprocess.DEVNULL)

    # The initial snapshot: the separate repository starts from the workspace's pack and
    # index (what a first `add -A` would produce, without writing 100k loose objects), then
    # a real `add -A` + `commit` records the tree as it is now.
    progress("    whole-tree snapshot: initial snapshot ...")
    sh("init", "-q")
    sh("config", "gc.auto", "0")
    pack_dir = shadow / "objects" / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    for item in (ws / ".git" / "objects" / "pack").iterdir():
        shutil.copy2(item, pack_dir / item.name)
    shutil.copy2(ws / ".git" / "index", shadow / "index")
    t0 = time.perf_counter_ns()
    sh("add", "-A")
    sh("commit", "-q", "--allow-empty", "-m", "initial snapshot")
    out["snapshot_initial_ms"] = _ms(time.perf_counter_ns() - t0)
    rss_by_phase["snapshot_initial"] = (vm_rss_kb(), peak_rss_kb())

    # --- a) record a 3-file batch ---------------------------------------------------
    progress("    record_batch ...")
    size = dir_bytes(store)
    out["record"] = summarise(keep(record_turns("record", fast_runs)))
    out["record_bytes_per_turn"] = (dir_bytes(store) - size) / fast_runs
    rss_by_phase["record"] = (vm_rss_kb(), peak_rss_kb())

    # --- d) the whole-tree snapshot: 3 files changed, then add -A + commit -------------
    progress("    whole-tree snapshot (git add -A + commit into a separate git dir) ...")
    samples = []
    size = dir_bytes(shadow)
    for i in range(runs):
        change_on_disk("snapshot")
        samples.append(timed(lambda: (sh("add", "-A"), sh("commit", "-q", "-m", f"checkpoint {i}"))))
    out["snapshot"] = summarise(keep(samples))
    out["snapshot_bytes_per_turn"] = (dir_bytes(shadow) - size) / runs
    rss_by_phase["snapshot"] = (vm_rss_kb(), peak_rss_kb())

    # --- b) undo a 3-file turn ------------------------------------------------------
    progress("    undo ...")
    samples = []
    undo_bytes = 0
    for i in range(fast_runs):
        news = {p: edited(base[p], f"undo-{i}") for p in hot}
        engine.record_batch([BatchChange(path=str(p), after=news[p]) for p in hot], label=f"bench turn {i}", agent="bench")
        for p in hot:
            p.write_bytes(news[p])
        size = dir_bytes(store)
        result = None

        def undo() -> None:
            nonlocal result
            result = engine.undo()

        samples.append(timed(undo))
        undo_bytes += dir_bytes(store) - size
        if not (result.applied and result.verdict == "safe" and len(result.restored) == 3):
            raise SystemExit(f"undo did not restore 3 files: {result.verdict} {result.message}")
        if any(p.read_bytes() == news[p] for p in hot):
            raise SystemExit("undo left a file as the turn wrote it")
    out["undo"] = summarise(keep(samples))
    out["undo_bytes_per_op"] = undo_bytes / fast_runs
    rss_by_phase["undo"] = (vm_rss_kb(), peak_rss_kb())

    # --- c) begin + end with 3 files changed on disk in between, and e) git status -----
    # In alternation, so both sides of the ratio see the same machine load.
    progress("    begin/end bracket and git status, alternately ...")
    begin_s, end_s, total_s, status_s = [], [], [], []
    touched_begin_s, touched_end_s, touched_total_s = [], [], []
    touched = ws / first_tracked_py(ws, genv, exclude=set(HOT_FILES))
    bracket_bytes = 0
    reused_before = engine._scan_cache.reused
    for i in range(runs):
        size = dir_bytes(store)
        b = timed(lambda: engine.begin_turn(label=f"bench bracket {i}", agent="bench"))
        change_on_disk("bracket")  # not timed
        entry = None

        def end() -> None:
            nonlocal entry
            entry = engine.end_turn()

        e = timed(end)
        bracket_bytes += dir_bytes(store) - size
        if len(entry.files) != 3:
            raise SystemExit(f"bracket recorded {len(entry.files)} files, not 3: {[f.path for f in entry.files]}")
        begin_s.append(b)
        end_s.append(e)
        total_s.append(b + e)
        # the same tree, its 3 files modified
        status_s.append(
            timed(lambda: subprocess.run(["git", "status"], cwd=ws, env=genv, check=True, stdout=subprocess.DEVNULL))
        )
        # the person saves a file (same content) between the turns: begin must list the tree
        touched.write_bytes(touched.read_bytes())
        b = timed(lambda: engine.begin_turn(label=f"bench bracket {i}, tree touched", agent="bench"))
        change_on_disk("bracket")
        e = timed(end)
        if len(entry.files) != 3:
            raise SystemExit(f"bracket recorded {len(entry.files)} files, not 3: {[f.path for f in entry.files]}")
        touched_begin_s.append(b)
        touched_end_s.append(e)
        touched_total_s.append(b + e)
    out["bracket_begins_reused"] = engine._scan_cache.reused - reused_before
    out["bracket_touched"] = summarise(keep(touched_total_s))
    out["bracket_touched_begin"] = summarise(keep(touched_begin_s))
    out["bracket_touched_end"] = summarise(keep(touched_end_s))
    out["bracket"] = summarise(keep(total_s))
    out["bracket_begin"] = summarise(keep(begin_s))
    out["bracket_end"] = summarise(keep(end_s))
    out["bracket_bytes_per_turn"] = bracket_bytes / runs
    out["status"] = summarise(keep(status_s))
    rss_by_phase["bracket"] = (vm_rss_kb(), peak_rss_kb())

    # --- memory: Python-heap peak per operation (separate, untimed pass) --------------
    out["peak_rss_kb"] = peak_rss_kb()  # before tracemalloc adds its own bookkeeping
    import tracemalloc

    tracemalloc.start()

    def heap_peak(fn) -> int:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - start

    news = {p: edited(base[p], "mem") for p in hot}
    out["heap_peak_record_kb"] = heap_peak(
        lambda: engine.record_batch([BatchChange(path=str(p), after=news[p]) for p in hot], label="mem")
    ) / 1024
    for p in hot:
        p.write_bytes(news[p])
    out["heap_peak_undo_kb"] = heap_peak(engine.undo) / 1024

    def bracket() -> None:
        engine.begin_turn(label="mem")
        change_on_disk("mem")
        engine.end_turn()

    out["heap_peak_bracket_kb"] = heap_peak(bracket) / 1024
    tracemalloc.stop()

    # --- f) retention gc on the store in use -----------------------------------------
    # What runs when a store crosses its limit: each run drops the 20 oldest entries, rewrites
    # the operation log and repacks what is still referenced.
    progress("    retention gc ...")
    policy = engine.config.retention
    entries = engine.status().entries
    gc_samples = []
    for i in range(5):
        engine.config.retention = policy.model_copy(update={"max_entries": entries - 20 * (i + 1)})
        gc_samples.append(timed(engine.gc))
    engine.config.retention = policy
    out["gc"] = summarise(gc_samples)
    out["gc_entries"] = entries

    out["rss_start_kb"] = rss_start
    out["ru_maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out["store_bytes_total"] = engine.status().store_bytes
    out["entries"] = engine.status().entries
    return out


# ---------------------------------------------------------------------------- report


def _fmt_ms(v: float) -> str:
    return f"{v:.0f}" if v >= 100 else (f"{v:.1f}" if v >= 10 else f"{v:.2f}")


def _kb(v: float) -> str:
    return f"{v / 1024:.1f} KB"


def verdicts(results: list[dict]) -> list[tuple[str, str, bool | None]]:
    """(target, measured, passed) rows; passed None when the sizes run do not allow the check."""
    rows: list[tuple[str, str, bool | None]] = []
    by_size = {r["size"]: r for r in results}
    for r in results:
        m = r["record"]["median"]
        rows.append((f"record 3 files <= {TARGETS['record_ms']:g} ms at {r['size']:,} files", f"{m:.2f} ms", m <= TARGETS["record_ms"]))
    if len(results) >= 2:
        small, large = results[0], results[-1]
        ratio = large["record"]["median"] / small["record"]["median"]
        rows.append(
            (
                f"record flat: {large['size']:,} / {small['size']:,} files < {TARGETS['record_flat_ratio']:g}",
                f"{ratio:.2f}",
                ratio < TARGETS["record_flat_ratio"],
            )
        )
    at = TARGETS["record_vs_snapshot_at"]
    if at in by_size:
        r = by_size[at]
        factor = r["snapshot"]["median"] / r["record"]["median"]
        rows.append(
            (
                f"record >= {TARGETS['record_vs_snapshot_factor']:g}x faster than whole-tree snapshot at {at:,} files",
                f"{factor:.0f}x",
                factor >= TARGETS["record_vs_snapshot_factor"],
            )
        )
    else:
        rows.append((f"record vs whole-tree snapshot at {at:,} files", "size not run", None))
    for r in results:
        m = r["undo"]["median"]
        rows.append((f"undo 3-file turn <= {TARGETS['undo_ms']:g} ms at {r['size']:,} files", f"{m:.2f} ms", m <= TARGETS["undo_ms"]))
    for r in results:
        ratio = r["bracket"]["median"] / r["status"]["median"]
        rows.append(
            (
                f"begin+end <= {TARGETS['bracket_vs_status']:g}x git status at {r['size']:,} files",
                f"{ratio:.2f}x",
                ratio <= TARGETS["bracket_vs_status"],
            )
        )
    return rows


def report(results: list[dict], meta: dict) -> str:
    lines = []
    lines.append(
        f"Takeback benchmark: medians of {meta['repeat']} runs ({2 * meta['repeat']} for record and undo; "
        f"{meta['warmup']} warm-up runs excluded), times in ms"
    )
    lines.append(
        f"machine: {meta['cpus']} CPUs, {meta['platform']}, Python {meta['python']}, {meta['git']}, "
        f"pygit2 {meta['pygit2']} (libgit2 {meta['libgit2']}); temp folder on {meta['filesystem']}; "
        f"load average {meta['load_before']} -> {meta['load_after']}; CPU probe {meta['probe_before']} -> "
        f"{meta['probe_after']} ms (lower is a quieter machine)"
    )
    lines.append(
        f"store in use: {meta['earlier']} earlier turns recorded before timing (the 'new store' column "
        f"is the first turns of a brand-new store)"
    )
    lines.append("")
    head = (
        "| files | record | record, new store | undo | begin+end (begin / end) | git status "
        "| whole-tree add+commit | whole-tree / record | begin+end / status |"
    )
    lines.append(head)
    lines.append("|" + "|".join("---:" for _ in range(9)) + "|")
    for r in results:
        lines.append(
            f"| {r['size']:,} | {_fmt_ms(r['record']['median'])} | {_fmt_ms(r['record_new_store']['median'])} "
            f"| {_fmt_ms(r['undo']['median'])} "
            f"| {_fmt_ms(r['bracket']['median'])} ({_fmt_ms(r['bracket_begin']['median'])} / "
            f"{_fmt_ms(r['bracket_end']['median'])}) | {_fmt_ms(r['status']['median'])} "
            f"| {_fmt_ms(r['snapshot']['median'])} | {r['snapshot']['median'] / r['record']['median']:.0f}x "
            f"| {r['bracket']['median'] / r['status']['median']:.2f}x |"
        )
    lines.append("")
    lines.append(
        "begin+end when the tree changed between turns (a file saved before begin: begin lists the tree "
        "again, as every begin does without the watch):"
    )
    lines.append("")
    lines.append("| files | begin+end (begin / end) | git status | begin+end / status | begins that reused the last listing (back to back) |")
    lines.append("|---:|---:|---:|---:|---:|")
    for r in results:
        lines.append(
            f"| {r['size']:,} | {_fmt_ms(r['bracket_touched']['median'])} ({_fmt_ms(r['bracket_touched_begin']['median'])} / "
            f"{_fmt_ms(r['bracket_touched_end']['median'])}) | {_fmt_ms(r['status']['median'])} "
            f"| {r['bracket_touched']['median'] / r['status']['median']:.2f}x | {r['bracket_begins_reused']} of {meta['warmup'] + meta['repeat']} |"
        )
    if len(results) >= 2:
        lines.append("")
        small = results[0]
        lines.append(f"growth relative to {small['size']:,} files (median / median):")
        lines.append("")
        lines.append("| files | record | undo | begin+end | git status | whole-tree add+commit |")
        lines.append("|---:|---:|---:|---:|---:|---:|")
        for r in results:
            cells = [f"{r[k]['median'] / small[k]['median']:.2f}" for k in ("record", "undo", "bracket", "status", "snapshot")]
            lines.append(f"| {r['size']:,} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("spread (p10 - p90, ms):")
    lines.append("")
    lines.append("| files | record | undo | begin+end | git status | whole-tree add+commit |")
    lines.append("|---:|---:|---:|---:|---:|---:|")
    for r in results:
        cells = [f"{r[k]['p10']:.2f} - {r[k]['p90']:.2f}" for k in ("record", "undo", "bracket", "status", "snapshot")]
        lines.append(f"| {r['size']:,} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("store growth and memory:")
    lines.append("")
    lines.append(
        "| files | store bytes per recorded turn | per undo | per bracket turn | separate git dir per snapshot "
        "| heap peak record / undo / bracket (tracemalloc) | peak RSS (VmHWM) |"
    )
    lines.append("|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        lines.append(
            f"| {r['size']:,} | {_kb(r['record_bytes_per_turn'])} | {_kb(r['undo_bytes_per_op'])} "
            f"| {_kb(r['bracket_bytes_per_turn'])} | {_kb(r['snapshot_bytes_per_turn'])} "
            f"| {r['heap_peak_record_kb']:.0f} / {r['heap_peak_undo_kb']:.0f} / {r['heap_peak_bracket_kb']:.0f} KB "
            f"| {r['peak_rss_kb'] / 1024:.0f} MB |"
        )
    lines.append("")
    lines.append("retention gc on the store in use (drops the 20 oldest entries, rewrites the log, repacks; 5 runs):")
    lines.append("")
    lines.append("| files | entries before | gc median | p10 - p90 |")
    lines.append("|---:|---:|---:|---:|")
    for r in results:
        if "gc" in r:
            lines.append(
                f"| {r['size']:,} | {r['gc_entries']} | {_fmt_ms(r['gc']['median'])} "
                f"| {r['gc']['p10']:.0f} - {r['gc']['p90']:.0f} |"
            )
    lines.append("")
    lines.append("targets:")
    lines.append("")
    for target, measured, passed in verdicts(results):
        mark = "n/a " if passed is None else ("PASS" if passed else "FAIL")
        lines.append(f"  {mark}  {target}: {measured}")
    return "\n".join(lines)


def machine_meta(tmp: Path) -> dict:
    import pygit2

    fs = "unknown"
    try:
        best = ""
        for line in Path("/proc/mounts").read_text().splitlines():
            dev, mnt, kind = line.split()[:3]
            if str(tmp.resolve()).startswith(mnt) and len(mnt) > len(best):
                best, fs = mnt, f"{kind} ({dev} at {mnt})"
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(terse=True),
        "python": platform.python_version(),
        "git": subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip(),
        "pygit2": pygit2.__version__,
        "libgit2": pygit2.LIBGIT2_VERSION,
        "filesystem": fs,
    }


def output_options(parser: argparse.ArgumentParser) -> None:
    """The options every benchmark here takes: ``--json``, ``--tmpdir``, ``--keep``."""
    parser.add_argument("--json", dest="json_out", help="write every figure and sample to this file")
    parser.add_argument("--tmpdir", help="where to generate workspaces (default: the system temp folder)")
    parser.add_argument("--keep", action="store_true", help="keep the generated workspaces and stores")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,20000,100000", help="workspace sizes in files (comma-separated)")
    parser.add_argument(
        "--repeat", type=int, default=15,
        help="measured runs per operation, twice as many for record and undo (default 15)",
    )
    parser.add_argument("--warmup", type=int, default=3, help="warm-up runs per operation, not counted (default 3)")
    parser.add_argument(
        "--earlier", type=int, default=250,
        help="untimed turns recorded first, so the store is one in use (default 250)",
    )
    output_options(parser)
    parser.add_argument("--worker", nargs=2, metavar=("WORKSPACE", "SHADOW"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        result = worker(Path(args.worker[0]), Path(args.worker[1]), args.repeat, args.warmup, args.earlier)
        print(json.dumps(result))
        return 0

    sizes = sorted(int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip())
    base = Path(tempfile.mkdtemp(prefix="takeback-bench-", dir=args.tmpdir))
    home = base / "takeback-home"  # every store goes here, outside the workspaces
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "TAKEBACK_"))}
    env.update(TAKEBACK_HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    meta = machine_meta(base)
    meta.update(
        repeat=args.repeat, warmup=args.warmup, earlier=args.earlier, load_before=loadavg(),
        probe_before=speed_probe(), sizes=sizes, tmp=str(base),
    )
    started = time.perf_counter()
    results = []
    try:
        for n in sizes:
            ws = base / f"ws-{n}"
            progress(f"{n:,} files: generating {ws} ...")
            gen = generate(ws, n)
            os.sync()  # the generated tree reaches the disk now, not while the worker measures
            progress(
                f"    {gen['files']:,} tracked files in {gen['folders']:,} folders, {gen['bytes'] / 1e6:.0f} MB "
                f"(files {gen['write_seconds']} s, git {gen['git_seconds']} s)"
            )
            proc = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--worker", str(ws), str(base / f"snapshot-{n}.git"),
                 "--repeat", str(args.repeat), "--warmup", str(args.warmup), "--earlier", str(args.earlier)],
                env=env, stdout=subprocess.PIPE, check=True,
            )
            result = json.loads(proc.stdout.decode().strip().splitlines()[-1])
            result.update(size=n, generated=gen)
            results.append(result)
            progress(
                f"    record {result['record']['median']:.2f} ms, undo {result['undo']['median']:.2f} ms, "
                f"begin+end {result['bracket']['median']:.1f} ms, git status {result['status']['median']:.1f} ms, "
                f"whole-tree {result['snapshot']['median']:.1f} ms"
            )
        meta.update(load_after=loadavg(), probe_after=speed_probe(), seconds=round(time.perf_counter() - started, 1))
        print(report(results, meta))
        print(f"\n(run time {meta['seconds']} s, generation included)", flush=True)
        if args.json_out:
            Path(args.json_out).write_text(
                json.dumps({"meta": meta, "targets": TARGETS, "results": results,
                            "verdicts": [{"target": t, "measured": m, "passed": p} for t, m, p in verdicts(results)]}, indent=2)
            )
    finally:
        clean_up(base, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
