#!/usr/bin/env python
"""Takeback benchmark: what a reading command costs at a prompt, beside a do-nothing Python.

    python bench/cli_start.py [--repeat 30] [--warmup 3] [--turns 5] [--long 2000] [--json out.json]

For a small workspace (200 files, a git repository, as bench/generate.py makes it) with a short
timeline (--turns turns), and, unless --long 0, a second one with a long timeline (--long turns,
recorded through the engine API), each round spawns, in turn and measured from spawn to exit:

  python -c pass       ``sys.executable -c pass``: the floor of any command written in Python
  python3 -c pass      whatever ``python3`` is on PATH (here it may be a shell shim), printed only
  git status           in the workspace
  status, log, show 1 (the newest turn past 500 turns: retention's default), undo --dry-run
                       ``takeback`` with the resident process warm (it answers them,
                       ``resident/forward.py``), then the same with ``TAKEBACK_RESIDENT=0``
                       (the whole command line loads in the process)

Rounds alternate every command, so all see the same load; medians and p10-p90 over --repeat
rounds after --warmup. Then the first call when no resident process runs (--first rounds: the
process is stopped, then ``status`` through a pipe: a refused connection, then in-process).
Before timing, every served answer is checked to be byte for byte the in-process one, and
afterwards the resident process's count of served commands must have grown by exactly the
number of warm calls (a fast wrong answer, or one that did not come from it, cannot pass).

``takeback`` is run as an installed one runs (``from takeback.launch import main``, the
console script's lines) from this checkout's ``server/`` folder (PYTHONPATH), so it measures
this tree's code in a worktree or a clean clone alike. Goal (issue 18): every command with the
resident warm ≤ 3 × ``python -c pass``. A benchmark, not a test: PASS/FAIL printed, exit 0
unless it crashed. Stores, the runtime folder and workspaces live in a temporary folder,
removed at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from generate import HOT_FILES, generate  # noqa: E402
from run import clean_up, loadavg, machine_meta, progress, speed_probe, summarise  # noqa: E402

COMMANDS = {"status": ["status"], "log": ["log"], "show": ["show", "1"], "undo --dry-run": ["undo", "--dry-run"]}
KEPT = 500  # the default retention keeps the newest 500 entries: a longer timeline shows its newest turn
GOAL_RATIO = 3.0
LAUNCHER = "#!{python}\nimport sys\nfrom takeback.launch import main\nif __name__ == '__main__':\n    sys.exit(main())\n"


def environment(base: Path) -> dict[str, str]:
    runtime = base / "runtime"
    runtime.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "TAKEBACK_"))}
    env.update(TAKEBACK_HOME=str(base / "home"), XDG_RUNTIME_DIR=str(runtime), GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=os.devnull, TAKEBACK_RESIDENT_IDLE="600", PYTHONPATH=str(ROOT / "server"))
    return env


def make_workspace(ws: Path, turns: int, env: dict[str, str]) -> None:
    """A 200-file repository with ``turns`` one-file turns, recorded through the engine API in a
    child process (this one must not import the package: it would not change what is timed,
    but keeps the benchmark's own process small)."""
    generate(ws, 200)
    script = (
        "import sys\nfrom pathlib import Path\nfrom takeback.engine.engine import Engine\n"
        "from takeback.core.models import BatchChange\n"
        "ws, n, hot = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]\nengine = Engine(ws)\n"
        "from run import edited\n"
        "for i in range(n):\n"
        "    path = ws / hot[i % len(hot)]\n"
        "    after = edited(path.read_bytes(), f'turn {i}')\n"
        "    engine.record_batch([BatchChange(path=str(path), after=after)], label=f'turn {i}', agent='bench')\n"
        "    path.write_bytes(after)\n"
        "engine.close()\n"
    )
    subprocess.run([sys.executable, "-c", script, str(ws), str(turns), *HOT_FILES], check=True, cwd=HERE,
                   env={**env, "PYTHONPATH": f"{ROOT / 'server'}{os.pathsep}{HERE}"})


class Bench:
    def __init__(self, base: Path, ws: Path, env: dict[str, str], turns: int) -> None:
        self.ws, self.env = ws, env
        self.commands = {**COMMANDS, "show": ["show", "1" if turns <= KEPT else str(turns)]}
        self.off = {**env, "TAKEBACK_RESIDENT": "0"}
        self.takeback = base / "bin" / "takeback"
        self.proc: subprocess.Popen | None = None
        if not self.takeback.exists():
            self.takeback.parent.mkdir(exist_ok=True)
            self.takeback.write_text(LAUNCHER.format(python=sys.executable))
            self.takeback.chmod(0o755)

    def run(self, argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(argv, cwd=self.ws, env=env or self.env, capture_output=True, stdin=subprocess.DEVNULL)

    def timed(self, argv: list[str], env: dict[str, str] | None = None) -> float:
        t0 = time.perf_counter_ns()
        self.run(argv, env)
        return (time.perf_counter_ns() - t0) / 1e6

    def tb(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return self.run([str(self.takeback), *args], env)

    def resident(self) -> dict:
        return json.loads(self.tb("--json", "resident", "status").stdout)

    def start_resident(self) -> None:
        self.proc = subprocess.Popen([str(self.takeback), "resident", "run"], cwd="/", env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(300):
            if self.resident().get("running"):
                return
            time.sleep(0.05)
        raise RuntimeError("the resident process did not start")

    def stop_resident(self) -> None:
        """Stop the resident process started here and wait for it to exit."""
        self.tb("resident", "stop")
        if self.proc is not None:
            self.proc.wait(timeout=60)
            self.proc = None

    def check_same(self) -> None:
        """Every served answer is the in-process one, byte for byte (else the run is void)."""
        for args in self.commands.values():
            served, local = self.tb(*args), self.tb(*args, env=self.off)
            if (served.returncode, served.stdout, served.stderr) != (local.returncode, local.stdout, local.stderr):
                raise RuntimeError(f"takeback {' '.join(args)}: the served answer differs: {served} vs {local}")
            if served.returncode != 0:
                raise RuntimeError(f"takeback {' '.join(args)} failed: {served}")

    def rounds(self, warmup: int, repeat: int) -> dict[str, dict]:
        samples: dict[str, list[float]] = {}
        before = self.resident()["cli_requests"]
        for i in range(warmup + repeat):
            took = {"python -c pass": self.timed([sys.executable, "-c", "pass"]),
                    "python3 -c pass": self.timed(["python3", "-c", "pass"]),
                    "git status": self.timed(["git", "status"])}
            for name, args in self.commands.items():
                took[f"{name} (resident)"] = self.timed([str(self.takeback), *args])
            for name, args in self.commands.items():
                took[f"{name} (in-process)"] = self.timed([str(self.takeback), *args], self.off)
            if i >= warmup:
                for name, value in took.items():
                    samples.setdefault(name, []).append(value)
        served = self.resident()["cli_requests"] - before
        if served != (warmup + repeat) * len(COMMANDS):
            raise RuntimeError(f"the resident process served {served} commands, not {(warmup + repeat) * len(COMMANDS)}")
        return {name: summarise(values) for name, values in samples.items()}

    def first_calls(self, rounds: int) -> dict:
        """``status`` with no resident process (through a pipe: it starts none)."""
        took, floor = [], []
        for _ in range(rounds):
            self.stop_resident()
            floor.append(self.timed([sys.executable, "-c", "pass"]))
            took.append(self.timed([str(self.takeback), "status"]))
        return {"status (no resident)": summarise(took), "python -c pass": summarise(floor)}


def measure(base: Path, name: str, turns: int, args: argparse.Namespace, env: dict[str, str]) -> dict:
    ws = base / name
    progress(f"{name}: a 200-file workspace with {turns} turns ...")
    started = time.perf_counter()
    make_workspace(ws, turns, env)
    made = time.perf_counter() - started
    bench = Bench(base, ws, env, turns)
    bench.start_resident()
    bench.check_same()
    progress(f"    {args.warmup}+{args.repeat} rounds ...")
    timed = bench.rounds(args.warmup, args.repeat)
    first = bench.first_calls(args.first)
    return {"workspace": name, "turns": turns, "made_seconds": round(made, 1), "rounds": timed, "first": first}


def verdicts(results: list[dict]) -> list[tuple[str, str, bool]]:
    out = []
    for r in results:
        floor = r["rounds"]["python -c pass"]["median"]
        for name in COMMANDS:
            ratio = r["rounds"][f"{name} (resident)"]["median"] / floor
            out.append((f"{name} ≤ {GOAL_RATIO:.0f} × python -c pass ({r['turns']} turns)", f"{ratio:.2f} ×", ratio <= GOAL_RATIO))
    return out


def report(results: list[dict], meta: dict) -> str:
    machine = ", ".join(str(meta[key]) for key in ("platform", "python", "git", "filesystem"))
    lines = [
        f"{meta['cpus']} cpus: {machine}; interpreter {sys.executable}",
        f"load average before/after: {meta['load_before']} / {meta['load_after']}; "
        f"speed probe before/after: {meta['probe_before']} / {meta['probe_after']} ms",
        f"spawn to exit, ms: median (p10-p90) of {meta['repeat']} alternating rounds after {meta['warmup']}",
        "",
    ]
    for r in results:
        floor = r["rounds"]["python -c pass"]["median"]
        lines += [f"{r['turns']} turns ({r['made_seconds']} s to record):", "", "| command | median | p10-p90 | × python -c pass |",
                  "|---|---|---|---|"]
        for name, s in [*r["rounds"].items(), *r["first"].items()]:
            lines.append(f"| {name} | {s['median']:.1f} | {s['p10']:.1f}-{s['p90']:.1f} | {s['median'] / floor:.2f} |")
        lines.append("")
    lines += ["| goal | measured | verdict |", "|---|---|---|"]
    lines += [f"| {goal} | {value} | {'PASS' if ok else 'FAIL'} |" for goal, value, ok in verdicts(results)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30, help="measured rounds (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="rounds not counted (default 3)")
    parser.add_argument("--turns", type=int, default=5, help="turns of the short timeline (default 5)")
    parser.add_argument("--long", type=int, default=2000, help="turns of the long timeline (default 2000; 0: none)")
    parser.add_argument("--first", type=int, default=5, help="first calls with no resident process (default 5)")
    parser.add_argument("--json", dest="json_out", help="write every figure and sample to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="takeback-cli-start-"))
    meta = {**machine_meta(base), "repeat": args.repeat, "warmup": args.warmup,
            "load_before": loadavg(), "probe_before": speed_probe()}
    env = environment(base)
    results = []
    try:
        for name, turns in (("short", args.turns), ("long", args.long)):
            if turns > 0:
                results.append(measure(base, name, turns, args, env))  # it leaves no resident process running
    finally:
        clean_up(base, args.keep)
    meta.update(load_after=loadavg(), probe_after=speed_probe())
    print(report(results, meta))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"meta": meta, "results": results, "verdicts": verdicts(results)}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
