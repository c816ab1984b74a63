"""Recording from a terminal: ``begin``, ``end`` and ``check`` (turns), ``mark`` (the person's own checkpoint)."""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

from ..core import render
from ..core.terminal import quote_text
from ..errors import InvalidInput
from .context import Context
from .output import EXIT_CHECK_FAILED, EXIT_OK, text
from .parser import AddCommand, Handler


def register(command: AddCommand) -> dict[str, Handler]:
    p = command("begin", "open a turn; changes on disk until 'end' are recorded")
    p.add_argument("--label", help="the prompt or a summary")
    p.add_argument("--session", help="the agent conversation this turn belongs to")
    p.add_argument("--agent", help="which agent or tool is working")
    p.add_argument("--copy-all", action="store_true",
                   help="in a folder that is not a git repository, copy it whole even above first_copy_limit")

    p = command("end", "close the open turn, recording what changed")
    p.add_argument("--command", dest="commands", action="append", default=[], help="a command the agent ran (repeatable)")
    p.add_argument("--turn", help="the open turn (checked, optional)")

    p = command("check", "run a command and record its pass/fail on a turn")
    p.add_argument("--turn", default=None, help="default: the open turn, else the last one")
    p.add_argument("--name", default=None, help="default: the command's first word")
    p.add_argument("argv", nargs=argparse.REMAINDER, help="-- COMMAND ...")

    p = command("mark", "put your own checkpoint on the timeline, with the files you changed since the last entry")
    p.add_argument("name", nargs="?", help="what to call it ('takeback restore mark:NAME' goes back to it)")
    return {"begin": begin, "end": end, "check": check, "mark": mark}


def mark(ctx: Context) -> int:
    entry = ctx.engine.mark(text(ctx.args.name), source="cli")
    ctx.show(entry, render.print_entry)
    return EXIT_OK


def begin(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    for problem in engine.config.problems:  # the settings this turn runs under: say what was refused
        print(f"takeback: warning: {quote_text(problem)}", file=sys.stderr)
    entry = engine.begin_turn(
        label=text(args.label), session=text(args.session), agent=text(args.agent), source="cli", copy_all=args.copy_all,
    )
    ctx.show(entry, render.print_begun)
    return EXIT_OK


def end(ctx: Context) -> int:
    args = ctx.args
    entry = ctx.engine.end_turn(turn=args.turn, commands=[text(c) for c in args.commands], ended_by="end_command")
    ctx.show(entry, render.print_entry)
    return EXIT_OK


def check(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    command = list(args.argv)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise InvalidInput("check needs a command after '--', e.g. takeback check -- pytest -q")
    name = text(args.name or Path(command[0]).name)
    # Name the entry (and look at the files) before running anything: a bad --turn must not run
    # the command, and the check speaks for the files as they were when it started.
    target = engine.check_target(args.turn)
    try:
        # With --json, stdout carries only the JSON answer: the command's output goes to stderr.
        sys.stdout.flush()
        proc = subprocess.run(command, cwd=engine.workspace.root, stdout=sys.stderr.fileno() if ctx.json else None)
        code = proc.returncode
        status = "passed" if code == 0 else "failed"
    except FileNotFoundError:
        code, status = 127, "error"
    except PermissionError:
        code, status = 126, "error"
    entry = engine.record_check(target.entry.id, name, status, command=text(shlex.join(command)), exit_code=code,
                                ran_on=target)
    ctx.show({"turn": entry.number, "name": name, "status": status, "exit_code": code,
              "ran_on": "other" if target.differs else "end", "differs": target.differs},
             lambda shown: render.print_check(entry, shown))
    return EXIT_OK if status == "passed" else EXIT_CHECK_FAILED
