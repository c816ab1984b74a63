"""``takeback blame FILE [-L a,b]``: who wrote each line of a file as it stands now (an agent's
turn and step, the person, or before the timeline); ``Engine.blame`` answers."""

from __future__ import annotations

import os

from ..core import render
from ..errors import InvalidInput
from .context import Context
from .output import EXIT_OK, print_json, text
from .parser import AddCommand, Handler


def register(command: AddCommand) -> dict[str, Handler]:
    p = command("blame", "who wrote each line of a file now: an agent's turn and step, the person, or before the timeline")
    p.add_argument("file", help="the file, from the current folder (as git blame takes it)")
    p.add_argument("-L", dest="lines", default=None, metavar="A,B",
                   help="only lines A to B (from 1; 'A,' to the end, ',B' from the top)")
    return {"blame": blame}


def line_range(spec: str | None) -> tuple[int | None, int | None]:
    """``-L``'s ``A,B`` (``A,`` and ``,B`` too; ``A`` alone: that line) as (first, last)."""
    if spec is None:
        return None, None
    first_text, comma, last_text = spec.partition(",")
    try:
        first = int(first_text) if first_text.strip() else None
        last = int(last_text) if last_text.strip() else None
    except ValueError:
        raise InvalidInput(f"-L {spec!r}: give lines as A,B (numbers from 1), such as -L 10,20") from None
    if not comma:
        last = first
    if (first is not None and first < 1) or (last is not None and last < 1):
        raise InvalidInput(f"-L {spec!r}: lines are counted from 1")
    return first, last


def blame(ctx: Context) -> int:
    args = ctx.args
    first, last = line_range(args.lines)
    path = os.path.join(ctx.cwd or os.getcwd(), text(args.file))  # as typed, from the folder it was typed in
    answer = ctx.engine.blame(path, first, last)
    if ctx.json:
        print_json(answer)
    else:
        render.print_blame(answer)
    return EXIT_OK
