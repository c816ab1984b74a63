"""The ``takeback`` command line: a thin adapter from arguments to engine calls.

Human output by default, ``--json`` on every command (the same models the language server
sends). Exit status 0 means the operation was carried out in full; every other status is listed
in ``output.py`` and in docs/cli.md. Errors are one line on stderr.

One module per command group, each adding its commands to the parser and naming the function
that runs each (``register``): ``turns`` (begin, end, check, mark), ``reading`` (log, show, diff,
cat, status), ``blaming`` (blame), ``exporting`` (export), ``operations`` (undo, redo, revert, restore), ``upkeep`` (gc), ``agents`` (hook,
install, uninstall), ``guarding`` (guard), ``servers`` (serve, mcp, resident, ui, demo), ``sharing`` (share push, fetch,
delete). ``main`` parses, looks the
command up in that table, and turns every error into one line. ``answer`` does the same for
the resident process, which serves the reading commands, the operations, ``begin`` and ``end``
(``resident/forward.py``).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..errors import StoreError, TakebackError
from .output import EXIT_INTERNAL, EXIT_USAGE, fail, guard_terminal
from .parser import Handler, UsageError, build_parser

if TYPE_CHECKING:
    from .context import Context, Lend


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw[:1] == ["hook"] and "-h" not in raw and "--help" not in raw:
        from ..launch import main as launch  # the short path of 'takeback hook'

        sys.argv[1:] = raw
        return launch()
    before = guard_terminal()  # every text written from here on: nothing a terminal acts on (output.py)
    try:
        return _run(raw, _parser(), before)
    finally:
        sys.stdout, sys.stderr = before


def answer(
    raw: list[str], cwd: str, may_serve: Callable[[argparse.Namespace], bool], lend: Lend | None = None
) -> int | None:
    """``main`` for the resident process (``resident/cli.py``): the command line ``raw`` as
    typed in ``cwd``, written to the streams the caller guarded (``guard_terminal``'s
    ``TerminalStream``), as with ``TAKEBACK_DEBUG`` unset. None, with nothing done, when
    ``may_serve`` refuses the parsed arguments. ``lend``: an engine the caller keeps, for
    the command's workspace (``context.Lend``)."""
    from .context import Context

    parser, handlers = _served_parser()
    with _parsing:  # one parser, built once, for every request this process serves
        args = _parse(raw, parser)
    if isinstance(args, int):
        return args
    if not may_serve(args):
        return None
    ctx = Context(args, cwd, lend)
    try:
        return _execute(ctx, handlers, debug=False)
    finally:
        ctx.close()


def _parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    # after the hook's short path: they load more
    from . import agents, blaming, exporting, guarding, operations, reading, servers, sharing, turns, upkeep

    return build_parser((turns, reading, blaming, exporting, operations, upkeep, agents, guarding, servers, sharing))


_served_parser = functools.cache(_parser)
_parsing = threading.Lock()


_AFTER_DASHES = {"revert": "paths", "guard": "line"}  # the commands whose words after ``--`` are one argument's


def _parse(raw: list[str], parser: argparse.ArgumentParser) -> argparse.Namespace | int:
    """The parsed arguments, or the exit status of a usage error (said in one line). For
    ``revert``, the words after ``--`` are its pathspec, for ``guard check`` the shell line,
    whatever options come before them (argparse would take the positionals before the options only)."""
    try:
        if "--" in raw:
            cut = raw.index("--")
            try:
                head = parser.parse_args(raw[:cut])
            except UsageError:
                head = None
            taker = _AFTER_DASHES.get(getattr(head, "command", None) or "")
            if head is not None and taker is not None:
                setattr(head, taker, [*getattr(head, taker), *raw[cut + 1 :]])
                return head
        return parser.parse_args(raw)
    except UsageError as exc:
        wants_json = "--json" in (raw[: raw.index("--")] if "--" in raw else raw)
        return fail(wants_json, "usage", str(exc), EXIT_USAGE)


def _run(raw: list[str], parsed: tuple, unguarded: tuple) -> int:
    from .context import Context

    parser, handlers = parsed
    args = _parse(raw, parser)
    if isinstance(args, int):
        return args
    if args.command in ("serve", "mcp", "ui"):
        sys.stdout, sys.stderr = unguarded  # a protocol's channel, or Textual's own screen: its bytes as they are
    return _execute(Context(args), handlers, debug=bool(os.environ.get("TAKEBACK_DEBUG")))


def _execute(ctx: Context, handlers: dict[str, Handler], debug: bool) -> int:
    """Run the command, every error turned into one line (``debug``: with its traceback)."""
    args = ctx.args
    try:
        return handlers[args.command](ctx)
    except TakebackError as exc:
        return fail(args.json, exc.code, exc.message, exc.exit_status)
    except KeyboardInterrupt:
        print("takeback: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``| head``): what was asked was still done
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # the disk refused (I/O error, no space) where no engine code says more: what and where
        where = f" ({exc.filename})" if exc.filename else ""
        why = (exc.strerror or type(exc).__name__).lower()
        return fail(args.json, "disk", f"the disk refused: {why}{where}; run it again once that is fixed", StoreError.exit_status)
    except Exception as exc:  # noqa: BLE001 - a bug or an environment failure (disk full …): still one line
        if debug:
            import traceback

            traceback.print_exc()
        return fail(args.json, "internal", f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)
