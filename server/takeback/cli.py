"""The ``takeback`` command line: a thin adapter from arguments to engine calls.

Human output by default, ``--json`` on every command (the same models the language server
sends). Exit status 0 means the operation was carried out in full; every other status is
listed in ``EXIT_*`` below and in docs/cli.md. Errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shlex
import subprocess
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, overload

from . import __version__
from .errors import InvalidInput, TakebackError

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 10
EXIT_BROKEN = 11
EXIT_CHECK_FAILED = 12


class _UsageError(Exception):
    """Bad arguments; ``main`` reports it like any other error (one line, JSON with --json)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        raise _UsageError(f"{message} (see 'takeback --help')")


def _add_operation_flags(p: argparse.ArgumentParser) -> None:
    from .models import ON_CONFLICT

    p.add_argument("--dry-run", action="store_true", help="show exactly what would change, write nothing")
    p.add_argument(
        "--on-conflict",
        choices=ON_CONFLICT,
        default="abort",
        help="when later edits overlap: abort (default, write nothing), skip (only clean files), "
        "markers (write conflict markers), force (put back the turn's starting content)",
    )


def _add_global_flags(p: argparse.ArgumentParser, after_command: bool = False) -> None:
    """The options every command takes, before or after its name (``takeback --json status``
    and ``takeback status --json``). After the name they default to ``argparse.SUPPRESS``, so
    a flag given before the name is not reset by the command's own default."""
    unset = argparse.SUPPRESS if after_command else None
    p.add_argument("--workspace", "-C", default=unset, help="workspace folder (default: the current folder)")
    p.add_argument("--json", action="store_true", default=unset if after_command else False,
                   help="print machine-readable JSON")


def _add_install_args(p: argparse.ArgumentParser) -> None:
    from .install.agents import NAMES

    p.add_argument("agents", nargs="+", metavar="AGENT", choices=[*NAMES, "all"], help=f"{', '.join(NAMES)} or all")
    p.add_argument("--scope", choices=["user", "project"], default="user",
                   help="user (default): your own config; project: this repository's personal config where the agent has one")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="takeback",
        description="Exact undo for coding-agent turns: record, undo, redo, revert, restore.",
    )
    _add_global_flags(parser)
    parser.add_argument("--version", action="version", version=f"takeback {__version__}")
    global_flags = _Parser(add_help=False)
    _add_global_flags(global_flags, after_command=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, parents=[global_flags])

    p = command("begin", "open a turn; changes on disk until 'end' are recorded")
    p.add_argument("--label", help="the prompt or a summary")
    p.add_argument("--session", help="the agent conversation this turn belongs to")
    p.add_argument("--agent", help="which agent or tool is working")

    p = command("end", "close the open turn, recording what changed")
    p.add_argument("--command", dest="commands", action="append", default=[], help="a command the agent ran (repeatable)")
    p.add_argument("--turn", help="the open turn (checked, optional)")

    p = command("log", "the timeline, newest first")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--session", default=None)
    p.add_argument("--before", type=int, default=None, help="only entries numbered below this")

    p = command("show", "one turn: its files, checks and state")
    p.add_argument("turn")
    p.add_argument("--patch", action="store_true", help="also print its diff")

    p = command("diff", "unified diff of what a turn changed")
    p.add_argument("turn")
    p.add_argument("path", nargs="?")

    p = command("cat", "a file as a turn left it (or found it, with --before)")
    p.add_argument("turn")
    p.add_argument("path")
    p.add_argument("--before", action="store_true")

    p = command("undo", "revert the last applied agent turn")
    _add_operation_flags(p)
    p = command("redo", "re-apply what the last undo, revert or restore took away")
    _add_operation_flags(p)
    p = command("revert", "take back one turn's changes, keeping later edits")
    p.add_argument("turn")
    _add_operation_flags(p)
    p = command("restore", "bring files touched since a checkpoint back to their state then")
    p.add_argument("checkpoint", help="a checkpoint id, a turn (#N: its last checkpoint), #N.k (#N.0: where turn N started), or last-green")
    _add_operation_flags(p)

    p = command("check", "run a command and record its pass/fail on a turn")
    p.add_argument("--turn", default=None, help="default: the open turn, else the last one")
    p.add_argument("--name", default=None, help="default: the command's first word")
    p.add_argument("argv", nargs=argparse.REMAINDER, help="-- COMMAND ...")

    p = command("hook", "record an agent's hook event (its JSON payload on stdin); always exits 0, prints nothing")
    p.add_argument("agent", help="claude, codex, gemini, copilot, cursor, opencode, qwen, cline, windsurf or kiro")
    p.add_argument("event", nargs="?", help="the event, where the payload does not name it (Copilot CLI)")

    command("gc", "apply the retention policy now")
    command("status", "store size, open turn, undo/redo targets, recovery")
    p = command("serve", "run the language server on stdio")
    p.add_argument("--log-level", default="INFO")
    command("mcp", "serve the Model Context Protocol on stdio for the workspace (agents call its tools)")
    p = command("resident", "the per-user process that records agents' hook events (started by the first hook)")
    p.add_argument("action", choices=["status", "stop", "run"], nargs="?", default="status",
                   help="status (default): is it running, for which workspaces; stop: end it; run: serve in the foreground")
    p = command("install", "wire agents' hooks (and with --mcp the MCP server) into their own config")
    _add_install_args(p)
    p.add_argument("--mcp", action="store_true", help="also register 'takeback mcp' with the agent")
    p = command("uninstall", "take out what 'takeback install' wrote")
    _add_install_args(p)
    p = command("demo", "a scripted agent session in a throw-away repository")
    p.add_argument("--keep", action="store_true", help="keep the demo folder")
    return parser


def _dump(value: Any) -> Any:
    from pydantic import BaseModel  # imported here: 'takeback hook' for an event it ignores loads no pydantic

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _print_json(value: Any) -> None:
    print(json.dumps(_dump(value), indent=2, ensure_ascii=False))


@overload
def _text(value: str) -> str: ...
@overload
def _text(value: None) -> None: ...
def _text(value: str | None) -> str | None:
    """An argument kept as text: bytes that are not UTF-8 (a prompt cut mid-character, a
    non-UTF-8 locale) arrive as surrogates, which no JSON record can hold; they become U+FFFD."""
    if value is None:
        return None
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _content_json(content: bytes | None) -> dict[str, Any]:
    """File content for JSON: text when it is UTF-8, else base64 (never a lossy decode)."""
    if content is None:
        return {"exists": False, "content": None, "encoding": None}
    try:
        return {"exists": True, "content": content.decode("utf-8"), "encoding": "utf-8"}
    except UnicodeDecodeError:
        return {"exists": True, "content": base64.b64encode(content).decode("ascii"), "encoding": "base64"}


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw[:1] == ["hook"] and "-h" not in raw and "--help" not in raw:
        from .launch import main as launch  # the short path of 'takeback hook'

        sys.argv[1:] = raw
        return launch()
    parser = build_parser()
    try:
        args = parser.parse_args(raw)
    except _UsageError as exc:
        wants_json = "--json" in (raw[: raw.index("--")] if "--" in raw else raw)
        return _fail(wants_json, "usage", str(exc), EXIT_USAGE)
    if args.command == "serve":
        from .lsp.server import run

        return run(args.log_level)
    if args.command == "mcp":
        from .mcp.server import run as run_mcp

        return run_mcp(args.workspace)
    if args.command == "resident":
        from .resident.command import run as run_resident

        return run_resident(args.action, args.json)
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(keep=args.keep, as_json=args.json)
    try:
        if args.command in ("install", "uninstall"):
            return _run_install(args)
        return _run(args)
    except TakebackError as exc:
        return _fail(args.json, exc.code, exc.message, exc.exit_status)
    except KeyboardInterrupt:
        print("takeback: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``| head``): what was asked was still done
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # noqa: BLE001 - a bug or an environment failure (disk full …): still one line
        if os.environ.get("TAKEBACK_DEBUG"):
            traceback.print_exc()
        return _fail(args.json, "internal", f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)


def _fail(as_json: bool, code: str, message: str, status: int) -> int:
    """Report an error: one line on stderr (and a JSON object on stdout with --json)."""
    message = " ".join(message.split())  # messages that quote other errors may span lines
    if as_json:
        print(json.dumps({"error": code, "message": message}), file=sys.stdout)
    print(f"takeback: error: {message}", file=sys.stderr)
    return status


def _run_install(args: argparse.Namespace) -> int:
    from . import install
    from .install import render

    if args.command == "install":
        reports = install.install(args.agents, scope=args.scope, with_mcp=args.mcp, workspace=args.workspace)
    else:
        reports = install.uninstall(args.agents, scope=args.scope, workspace=args.workspace)
    if args.json:
        _print_json(render.as_json(reports))
    else:
        render.print_reports(reports, "installed" if args.command == "install" else "uninstalled")
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    from . import render
    from .engine import Engine

    if args.workspace is not None and not args.workspace.strip():
        raise InvalidInput("--workspace is empty: give a folder, or leave the option out to use the current folder")
    workspace = Path(args.workspace if args.workspace is not None else os.getcwd())
    engine = Engine(workspace)
    out = _print_json if args.json else None
    cmd = args.command

    if cmd == "begin":
        for problem in engine.config.problems:  # the settings this turn runs under: say what was refused
            print(f"takeback: warning: {problem}", file=sys.stderr)
        entry = engine.begin_turn(
            label=_text(args.label), session=_text(args.session), agent=_text(args.agent), source="cli"
        )
        (out or render.print_begun)(entry)
        return EXIT_OK
    if cmd == "end":
        entry = engine.end_turn(turn=args.turn, commands=[_text(c) for c in args.commands], ended_by="end_command")
        (out or render.print_entry)(entry)
        return EXIT_OK
    if cmd == "log":
        if args.limit is not None and args.limit < 1:
            raise InvalidInput("--limit must be 1 or more")
        entries = engine.entries(session=_text(args.session), limit=args.limit, before=args.before)
        (out or render.print_log)(entries)
        return EXIT_OK
    if cmd == "show":
        entry = engine.entry(args.turn)
        if out:
            data = entry.model_dump(mode="json")
            if args.patch:
                data["patch"] = engine.diff(args.turn)
            out(data)
        else:
            render.print_entry(entry)
            if args.patch:
                sys.stdout.write(engine.diff(args.turn))
        return EXIT_OK
    if cmd == "diff":
        text = engine.diff(args.turn, args.path)
        if out:
            out({"turn": args.turn, "path": args.path, "diff": text})
        else:
            sys.stdout.write(text)
        return EXIT_OK
    if cmd == "cat":
        content = engine.file_at(args.turn, args.path, "before" if args.before else "after")
        if out:
            out(_content_json(content))
        elif content is None:
            print(f"takeback: {args.path} did not exist {'before' if args.before else 'after'} that turn", file=sys.stderr)
            return EXIT_OK
        else:
            sys.stdout.buffer.write(content)
        return EXIT_OK
    if cmd in ("undo", "redo", "revert", "restore"):
        kwargs = dict(dry_run=args.dry_run, on_conflict=args.on_conflict)
        if cmd == "undo":
            result = engine.undo(**kwargs)
        elif cmd == "redo":
            result = engine.redo(**kwargs)
        elif cmd == "revert":
            result = engine.revert(args.turn, **kwargs)
        else:
            result = engine.restore(args.checkpoint, **kwargs)
        (out or render.print_result)(result)
        if result.verdict == "broken":
            return EXIT_BROKEN
        if result.verdict == "partial":
            return EXIT_PARTIAL
        return EXIT_OK
    if cmd == "check":
        command = list(args.argv)
        if command and command[0] == "--":
            command = command[1:]
        if not command:
            raise InvalidInput("check needs a command after '--', e.g. takeback check -- pytest -q")
        name = _text(args.name or Path(command[0]).name)
        # Name the turn before running anything: a bad --turn must not run the command.
        target = engine.entry(args.turn) if args.turn else (engine.status().open_turn or engine.entry("last"))
        try:
            # With --json, stdout carries only the JSON answer: the command's output goes to stderr.
            sys.stdout.flush()
            proc = subprocess.run(command, cwd=engine.workspace.root, stdout=sys.stderr.fileno() if out else None)
            code = proc.returncode
            status = "passed" if code == 0 else "failed"
        except FileNotFoundError:
            code, status = 127, "error"
        except PermissionError:
            code, status = 126, "error"
        entry = engine.record_check(target.id, name, status, command=_text(shlex.join(command)), exit_code=code)
        if out:
            out({"turn": entry.number, "name": name, "status": status, "exit_code": code})
        else:
            print(f"check {name}: {status} (exit {code}) recorded on turn #{entry.number}")
        return EXIT_OK if status == "passed" else EXIT_CHECK_FAILED
    if cmd == "gc":
        report = engine.gc()
        (out or render.print_gc)(report)
        return EXIT_OK
    if cmd == "status":
        store_status = engine.status()
        (out or render.print_status)(store_status)
        return EXIT_OK
    raise InvalidInput(f"unknown command {cmd}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
