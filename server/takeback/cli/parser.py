"""The argument parser: the options every command takes, and each group's commands
(``register`` in each group module adds them and names the function that runs each)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn

from .. import __version__

if TYPE_CHECKING:
    from .context import Context

Handler = Callable[["Context"], int]
AddCommand = Callable[[str, str], argparse.ArgumentParser]


class UsageError(Exception):
    """Bad arguments; ``main`` reports it like any other error (one line, JSON with --json)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        raise UsageError(f"{message} (see 'takeback --help')")


def _add_global_flags(p: argparse.ArgumentParser, after_command: bool = False) -> None:
    """The options every command takes, before or after its name (``takeback --json status``
    and ``takeback status --json``). After the name they default to ``argparse.SUPPRESS``, so
    a flag given before the name is not reset by the command's own default."""
    unset = argparse.SUPPRESS if after_command else None
    p.add_argument(
        "--workspace", "-C", default=unset,
        help="workspace folder (default: the current folder's: its git work tree's top, or a folder in it with a store)",
    )
    p.add_argument("--json", action="store_true", default=unset if after_command else False,
                   help="print machine-readable JSON")
    p.add_argument("--no-pager", action="store_true", default=unset if after_command else False,
                   help="write a long answer straight out, not through less (pager.py)")


def build_parser(groups: Iterable[ModuleType]) -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
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

    handlers: dict[str, Handler] = {}
    for group in groups:
        handlers.update(group.register(command))
    return parser, handlers
