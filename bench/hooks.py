#!/usr/bin/env python
"""Takeback benchmark: what an agent's hook costs the agent, as the agent sees it.

    .venv/bin/python bench/hooks.py [--sizes 1000,100000] [--repeat 15] [--json out.json]

For each size, a workspace of that many small source files (a git repository, everything
committed, as bench/generate.py makes it) gets Claude Code's hooks from ``takeback install
claude`` (into a temporary ``CLAUDE_CONFIG_DIR``). Each measurement is the time from spawning
the very command line install wrote (through ``/bin/sh -c``, as Claude Code runs it) to its exit,
with a real Claude Code payload (tests/cli/hook_payloads/claude.json) on stdin:

  prompt     UserPromptSubmit (opens a turn)
  edit pre   PreToolUse of an Edit of one ~10 KB file (keeps its before-image)
  edit post  PostToolUse of that Edit, after the file was changed (records the step)
  shell      PreToolUse + PostToolUse of a Bash call that changed 3 files in between (the
             time spent changing them is not counted): two spawns, summed
  stop       Stop (ends the turn)

beside, in the same rounds: ``python3 -c pass`` (the floor of any hook written in Python, on
the interpreter the hook runs on) and
``git status`` in the workspace with the 3 files changed. Medians over --repeat rounds after
--warmup rounds. The resident process (``takeback.resident``) is started by the warm-up and
serves every measured round; the same rounds are then measured with it turned off
(``TAKEBACK_RESIDENT=0``: each hook loads the engine itself), for comparison. Every round's
turn is checked afterwards (two steps, the right files), so a fast wrong hook cannot pass.

Targets (from the agents issue): prompt, stop, edit pre and edit post ≤ 40 ms at every size;
shell ≤ 80 ms at 1,000 files and ≤ 1.2 × ``git status`` at 100,000. A benchmark, not a test:
it prints PASS/FAIL and exits 0 either way (non-zero only on a crash). Everything lives in a
temporary folder, removed at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import math
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
from run import clean_up, edited, loadavg, machine_meta, output_options, progress, speed_probe, summarise  # noqa: E402

PAYLOADS = ROOT / "tests" / "cli" / "hook_payloads" / "claude.json"


def takeback_cli() -> list[str]:
    """The CLI of this checkout: its virtualenv's ``takeback``, else ``python -m takeback`` with
    this checkout's ``server`` first on the path (``bench_env``), as in a git worktree."""
    venv = ROOT / ".venv" / "bin" / "takeback"
    return [str(venv)] if venv.exists() else [sys.executable, "-m", "takeback"]


def bench_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` with this checkout's code first on the path (hooks and the resident inherit it)."""
    paths = [str(ROOT / "server"), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    return {**env, "PYTHONPATH": os.pathsep.join(paths)}


TAKEBACK = takeback_cli()
TIMED = ("prompt", "edit_pre", "edit_post", "shell", "stop", "python_pass", "git_status")
LIMIT_MS = 40.0
SHELL_SMALL_MS = 80.0
SHELL_LARGE_RATIO = 1.2


def payloads(ws: Path) -> dict[str, dict]:
    text = json.dumps(json.loads(PAYLOADS.read_text())["payloads"])
    return json.loads(text.replace("<OUT>/repo", str(ws)).replace("<OUT>", str(ws.parent)))


def hook_commands(env: dict[str, str]) -> dict[str, str]:
    """The command line ``takeback install claude`` wrote for each event."""
    subprocess.run([*TAKEBACK, "install", "claude"], env=env, check=True, capture_output=True)
    settings = json.loads((Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json").read_text())
    return {event: groups[0]["hooks"][0]["command"] for event, groups in settings["hooks"].items()}


class Rounds:
    """One workspace's hooks, spawned as Claude Code spawns them."""

    def __init__(self, ws: Path, env: dict[str, str]) -> None:
        self.ws, self.env = ws, env
        self.commands = hook_commands(env)
        self.payloads = payloads(ws)
        # The interpreter the hook itself runs on (the virtualenv's python3; a python3 on PATH may
        # be a shell shim, and the base interpreter outside the virtualenv may load more at start).
        self.python3 = sys.executable
        self.turns = 0

    def spawn(self, argv: list[str], stdin: bytes = b"", env: dict[str, str] | None = None, quiet: bool = True) -> float:
        t0 = time.perf_counter_ns()
        proc = subprocess.run(argv, input=stdin, cwd=self.ws, env=env or self.env, capture_output=True)
        took = (time.perf_counter_ns() - t0) / 1e6
        if proc.returncode != 0 or (quiet and proc.stdout):
            raise RuntimeError(f"{argv} failed: {proc.returncode} {proc.stdout!r} {proc.stderr!r}")
        return took

    def hook(self, event: str, env: dict[str, str], **fields: object) -> float:
        payload = {**self.payloads[event], **fields}
        return self.spawn(["/bin/sh", "-c", self.commands[event]], json.dumps(payload).encode(), env)

    def one(self, tag: str, env: dict[str, str]) -> dict[str, float]:
        """One turn: prompt, an Edit step, a Bash step changing 3 files, stop."""
        took: dict[str, float] = {}
        took["prompt"] = self.hook("UserPromptSubmit", env, prompt=f"bench turn {tag}")
        target = self.ws / HOT_FILES[0]
        edit = {"tool_name": "Edit", "tool_use_id": f"toolu_edit_{tag}",
                "tool_input": {"file_path": str(target), "old_string": "a", "new_string": "b"}}
        took["edit_pre"] = self.hook("PreToolUse", env, **edit)
        target.write_bytes(edited(target.read_bytes(), f"edit {tag}"))
        took["edit_post"] = self.hook("PostToolUse", env, **edit)
        bash = {"tool_name": "Bash", "tool_use_id": f"toolu_bash_{tag}", "tool_input": {"command": f"make {tag}"}}
        pre = self.hook("PreToolUse", env, **bash)
        for rel in HOT_FILES:
            path = self.ws / rel
            path.write_bytes(edited(path.read_bytes(), f"shell {tag}"))
        took["shell"] = pre + self.hook("PostToolUse", env, **bash)
        took["stop"] = self.hook("Stop", env)
        took["python_pass"] = self.spawn([self.python3, "-c", "pass"])
        took["git_status"] = self.spawn(["git", "status"], quiet=False)
        self.turns += 1
        return took

    def measure(self, env: dict[str, str], warmup: int, repeat: int, label: str) -> dict[str, dict]:
        samples: dict[str, list[float]] = {name: [] for name in TIMED}
        for i in range(warmup + repeat):
            took = self.one(f"{label}{i}", env)
            if i >= warmup:
                for name, value in took.items():
                    samples[name].append(value)
        return {name: summarise(values) for name, values in samples.items()}

    def check(self) -> None:
        """Every round made one turn of two steps with the right files (else the run is void)."""
        proc = subprocess.run([*TAKEBACK, "log", "--json"], cwd=self.ws, env=self.env, capture_output=True, check=True)
        turns = [e for e in json.loads(proc.stdout) if e["kind"] == "turn"]
        if len(turns) != self.turns:
            raise RuntimeError(f"{self.turns} turns were made, the timeline has {len(turns)}")
        for turn in turns:
            labels = [cp["label"] for cp in turn["checkpoints"]]
            files = sorted(f["path"] for f in turn["files"])
            if len(labels) != 2 or not labels[0].startswith("Edit ") or files != sorted(HOT_FILES):
                raise RuntimeError(f"turn #{turn['number']} is wrong: steps {labels}, files {files}")


def resident_pid(env: dict[str, str]) -> int | None:
    proc = subprocess.run([*TAKEBACK, "resident", "status", "--json"], env=env, capture_output=True, check=True)
    return json.loads(proc.stdout).get("pid")


def prepare(base: Path, n: int) -> tuple[Path, dict, dict[str, str], dict[str, str]]:
    """A generated workspace of ``n`` files under ``base`` with its own Takeback home, runtime
    folder and Claude Code settings: (workspace, what generate made, env, the hooks' env)."""
    ws = base / f"ws-{n}"
    progress(f"{n:,} files: generating {ws} ...")
    gen = generate(ws, n)
    os.sync()
    runtime = base / f"runtime-{n}"
    runtime.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "TAKEBACK_", "CLAUDE"))}
    env.update(
        TAKEBACK_HOME=str(base / f"home-{n}"), XDG_RUNTIME_DIR=str(runtime), CLAUDE_CONFIG_DIR=str(base / f"claude-{n}"),
        GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, TAKEBACK_RESIDENT_IDLE="600",
    )
    # An installed takeback starts from cached bytecode: with PYTHONDONTWRITEBYTECODE (set on the
    # development VM) every hook would compile its modules again, ~5 ms of each (as tests/cli/conftest.py).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
    env = bench_env(env)
    hook_env = {**env, "CLAUDECODE": "1", "CLAUDE_PROJECT_DIR": str(ws)}  # what Claude Code adds for its hooks
    return ws, gen, env, hook_env


def run_size(base: Path, n: int, warmup: int, repeat: int) -> dict:
    ws, gen, env, hook_env = prepare(base, n)
    rounds = Rounds(ws, env)
    rounds.one("start", hook_env)  # its first hook starts the resident process
    for _ in range(300):
        if resident_pid(env):
            break
        time.sleep(0.1)
    pid = resident_pid(env)
    if not pid:
        raise RuntimeError("the resident process did not start")
    progress(f"    resident process {pid}; measuring {warmup}+{repeat} rounds ...")
    resident = rounds.measure(hook_env, warmup, repeat, "r")
    if resident_pid(env) != pid:
        raise RuntimeError("the resident process changed during the measurement")
    progress("    the same without the resident process ...")
    in_process = rounds.measure({**hook_env, "TAKEBACK_RESIDENT": "0"}, warmup, repeat, "p")
    rounds.check()
    subprocess.run([*TAKEBACK, "resident", "stop"], env=env, capture_output=True)
    return {"size": n, "generated": gen, "resident": resident, "in_process": in_process}


def verdicts(results: list[dict]) -> list[tuple[str, str, bool]]:
    out = []
    for r in results:
        n, m = r["size"], r["resident"]
        for name in ("prompt", "edit_pre", "edit_post", "stop"):
            v = m[name]["median"]
            out.append((f"{name} ≤ {LIMIT_MS:.0f} ms at {n:,}", f"{v:.1f} ms", v <= LIMIT_MS))
        shell = m["shell"]["median"]
        if n <= 1000:
            out.append((f"shell pre+post ≤ {SHELL_SMALL_MS:.0f} ms at {n:,}", f"{shell:.1f} ms", shell <= SHELL_SMALL_MS))
        if n >= 100_000:
            ratio = shell / m["git_status"]["median"]
            out.append((f"shell pre+post ≤ {SHELL_LARGE_RATIO} × git status at {n:,}", f"{ratio:.2f} ×",
                        ratio <= SHELL_LARGE_RATIO))
    return out


def report(results: list[dict], meta: dict) -> str:
    lines = [
        f"machine: {meta['cpus']} cpus, {meta['platform']}, Python {meta['python']}, {meta['git']}, {meta['filesystem']}",
        f"load {meta['load_before']} → {meta['load_after']}; cpu probe {meta['probe_before']} → {meta['probe_after']} ms",
        f"medians of {meta['repeat']} rounds (after {meta['warmup']}), spawn to exit, ms",
        "",
        "| files | mode | prompt | edit pre | edit post | shell pre+post | stop | python3 -c pass | git status |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        for mode in ("resident", "in_process"):
            m = r[mode]
            cells = " | ".join(f"{m[name]['median']:.1f}" for name in TIMED)
            lines.append(f"| {r['size']:,} | {mode.replace('_', '-')} | {cells} |")
    lines += ["", "| target | measured | verdict |", "|---|---:|---|"]
    for target, measured, passed in verdicts(results):
        lines.append(f"| {target} | {measured} | {'PASS' if passed else 'FAIL'} |")
    return "\n".join(lines)


# --guard: pre-tool hooks that pass through the guard (issue 21), each a PreToolUse as Claude Code
# sends it; the PostToolUse that closes its step follows, untimed (the command is not run).
GUARD_CALLS: dict[str, tuple[str, dict]] = {
    "Bash npm test": ("Bash", {"command": "npm test"}),
    "Bash cd src && rm -rf build && make": ("Bash", {"command": "cd src && rm -rf build && make"}),
    "Bash git reset --hard": ("Bash", {"command": "git reset --hard"}),
    "Edit": ("Edit", {"file_path": HOT_FILES[0], "old_string": "a", "new_string": "b"}),
}
GUARD_IGNORE = "build/\n*.log\n.env\n"  # the workspace's .gitignore for the guard's rounds


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def spread(values: list[float]) -> dict:
    return {"p50": percentile(values, 0.5), "p90": percentile(values, 0.9), "p99": percentile(values, 0.99),
            "max": max(values), "n": len(values)}


def guard_answer(stdout: bytes) -> str:
    """What Claude Code reads from the hook: allow (nothing printed) or the permission decision."""
    if not stdout.strip():
        return "allow"
    out = json.loads(stdout).get("hookSpecificOutput", {})
    return str(out.get("permissionDecision") or "printed")


def guard_rounds(rounds: Rounds, env: dict[str, str], calls: int) -> dict:
    """``calls`` rounds of the four guarded pre-tool calls, each beside ``python3 -c pass``; a
    turn is ended and another begun every 10 rounds (untimed)."""
    samples: dict[str, list[float]] = {name: [] for name in (*GUARD_CALLS, "python3 -c pass")}
    answers: dict[str, set[str]] = {name: set() for name in GUARD_CALLS}
    for i in range(calls):
        if i % 10 == 0:
            if i:
                rounds.hook("Stop", env)
            rounds.hook("UserPromptSubmit", env, prompt=f"guard round {i}")
        for name, (tool, tool_input) in GUARD_CALLS.items():
            if tool == "Edit":
                tool_input = {**tool_input, "file_path": str(rounds.ws / tool_input["file_path"])}
            fields = {"tool_name": tool, "tool_use_id": f"toolu_guard_{i}_{len(samples[name])}", "tool_input": tool_input}
            payload = json.dumps({**rounds.payloads["PreToolUse"], **fields}).encode()
            t0 = time.perf_counter_ns()
            proc = subprocess.run(["/bin/sh", "-c", rounds.commands["PreToolUse"]], input=payload, cwd=rounds.ws, env=env,
                                  capture_output=True)
            samples[name].append((time.perf_counter_ns() - t0) / 1e6)
            answers[name].add(guard_answer(proc.stdout))
            rounds.hook("PostToolUse", env, **fields)
            samples["python3 -c pass"].append(rounds.spawn([rounds.python3, "-c", "pass"]))
    rounds.hook("Stop", env)
    return {"spread": {name: spread(v) for name, v in samples.items()}, "answers": {k: sorted(v) for k, v in answers.items()}}


def guard_profile(ws: Path, repeat: int) -> dict:
    """Inside one process, as the resident process has it: the engine open, the guard's view of
    the workspace (``hooks.guarding.workspace_view``) and ``classify`` for each call, median µs;
    and the ignore check alone for a few paths (built once, as on a hook's first question)."""
    from takeback.engine.engine import Engine
    from takeback.guard.classify import Call, classify
    from takeback.hooks.guarding import workspace_view

    engine = Engine(str(ws), long_lived=True)
    env = dict(os.environ)
    out: dict[str, float] = {}
    for name, (tool, tool_input) in GUARD_CALLS.items():
        call = Call(tool=tool, command=tool_input.get("command"),
                    paths=[str(ws / tool_input["file_path"])] if "file_path" in tool_input else None, cwd=str(ws))
        took = []
        for _ in range(repeat):
            t0 = time.perf_counter_ns()
            classify(call, workspace_view(engine, env))
            took.append((time.perf_counter_ns() - t0) / 1e3)
        out[f"view + classify: {name}"] = percentile(took, 0.5)
    t0 = time.perf_counter_ns()
    check = engine.ignore_check()
    out["ignore check built"] = (time.perf_counter_ns() - t0) / 1e3
    for rel in ("src/build", "src/build/", HOT_FILES[0], ".env", "a/b/c.log"):
        took = []
        for _ in range(repeat):
            t0 = time.perf_counter_ns()
            check(rel)
            took.append((time.perf_counter_ns() - t0) / 1e3)
        out[f"is_ignored({rel})"] = percentile(took, 0.5)
    engine.close()
    return out


def run_guard_size(base: Path, n: int, calls: int) -> dict:
    ws, gen, env, hook_env = prepare(base, n)
    (ws / ".gitignore").write_text(GUARD_IGNORE)
    (ws / "src" / "build").mkdir(parents=True, exist_ok=True)  # an ignored folder there: the compound call asks
    (ws / "src" / "build" / "out.o").write_text("object\n")
    rounds = Rounds(ws, env)
    rounds.one("start", hook_env)  # its first hook starts the resident process
    for _ in range(300):
        if resident_pid(env):
            break
        time.sleep(0.1)
    pid = resident_pid(env)
    progress(f"    resident process {pid}; {calls} rounds of {len(GUARD_CALLS)} guarded pre-tool calls ...")
    measured = guard_rounds(rounds, hook_env, calls)
    status = json.loads(subprocess.run([*TAKEBACK, "resident", "status", "--json"], env=env, capture_output=True).stdout)
    if resident_pid(env) != pid:
        progress("    the resident process changed during the measurement")
    subprocess.run([*TAKEBACK, "resident", "stop"], env=env, capture_output=True)
    progress("    in-process profile ...")
    profile = guard_profile(ws, 200)
    return {"size": n, "generated": gen, **measured, "profile": profile, "guard_loaded_ms": status.get("guard_loaded_ms")}


def guard_verdicts(results: list[dict]) -> list[tuple[str, str, bool]]:
    out = []
    for r in results:
        for name in GUARD_CALLS:
            s = r["spread"][name]
            out.append((f"PreToolUse {name} p50 ≤ {LIMIT_MS:.0f} ms at {r['size']:,}",
                        f"{s['p50']:.1f} ms (p99 {s['p99']:.1f})", s["p50"] <= LIMIT_MS))
    return out


def guard_report(results: list[dict], meta: dict) -> str:
    lines = [
        f"machine: {meta['cpus']} cpus, {meta['platform']}, Python {meta['python']}, {meta['git']}, {meta['filesystem']}",
        f"load {meta['load_before']} → {meta['load_after']}; cpu probe {meta['probe_before']} → {meta['probe_after']} ms",
        "spawn to exit through the resident process, ms", "",
        "| files | call | answer | p50 | p90 | p99 | max | n |", "|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        for name, s in r["spread"].items():
            answer = ", ".join(r["answers"].get(name, ["-"]))
            lines.append(f"| {r['size']:,} | {name} | {answer} | {s['p50']:.1f} | {s['p90']:.1f} | {s['p99']:.1f} | "
                         f"{s['max']:.1f} | {s['n']} |")
    lines += ["", "| files | in-process step | median µs |", "|---:|---|---:|"]
    for r in results:
        lines += [f"| {r['size']:,} | {k} | {v:.1f} |" for k, v in r["profile"].items()]
        lines.append(f"| {r['size']:,} | resident: guard loaded (import + first parse), once | {r['guard_loaded_ms']} ms |")
    lines += ["", "| target | measured | verdict |", "|---|---:|---|"]
    lines += [f"| {t} | {m} | {'PASS' if p else 'FAIL'} |" for t, m, p in guard_verdicts(results)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,100000", help="workspace sizes in files (comma-separated)")
    parser.add_argument("--repeat", type=int, default=15, help="measured rounds (default 15)")
    parser.add_argument("--warmup", type=int, default=3, help="rounds not counted (default 3)")
    parser.add_argument("--guard", type=int, default=0, metavar="CALLS",
                        help="instead: CALLS rounds of pre-tool hooks through the guard (issue 21; 200 or more)")
    output_options(parser)
    args = parser.parse_args(argv)
    sizes = sorted(int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip())
    base = Path(tempfile.mkdtemp(prefix="takeback-hooks-bench-", dir=args.tmpdir))
    meta = machine_meta(base)
    meta.update(repeat=args.repeat, warmup=args.warmup, load_before=loadavg(), probe_before=speed_probe())
    started = time.perf_counter()
    try:
        if args.guard:
            results = [run_guard_size(base, n, args.guard) for n in sizes]
        else:
            results = [run_size(base, n, args.warmup, args.repeat) for n in sizes]
        meta.update(load_after=loadavg(), probe_after=speed_probe(), seconds=round(time.perf_counter() - started, 1))
        print(guard_report(results, meta) if args.guard else report(results, meta))
        print(f"\n(run time {meta['seconds']} s, generation included)", flush=True)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps({
                "meta": meta, "results": results,
                "verdicts": [{"target": t, "measured": m, "passed": p}
                             for t, m, p in (guard_verdicts if args.guard else verdicts)(results)],
            }, indent=2))
    finally:
        clean_up(base, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
