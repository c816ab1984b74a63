"""``takeback export --agent-trace [RANGE]``: Takeback's line attribution as Agent Trace records
(the open spec, v0.1.0), one JSON object a line, for a git commit range or a set of turns;
``engine/agent_trace.py`` makes the records, this module parses and writes them."""

from __future__ import annotations

import json
import os

from .. import __version__
from ..core.render import for_terminal
from ..engine import agent_trace
from ..engine.engine import Engine
from ..errors import InvalidInput
from .context import Context
from .output import EXIT_OK, print_json, text
from .parser import AddCommand, Handler


def register(command: AddCommand) -> dict[str, Handler]:
    p = command("export", "write Takeback's line attribution in another tool's format (Agent Trace)")
    p.add_argument("--agent-trace", action="store_true", help="Agent Trace records (agent-trace.dev, v0.1.0), one JSON object a line")
    p.add_argument("range", nargs="?", default="HEAD",
                   help="a commit range (main..HEAD, HEAD~3..HEAD), one commit, or turns (#3..#7, #5); default HEAD")
    p.add_argument("--output", "-o", default=None, metavar="FILE", help="write the records to FILE instead of stdout")
    return {"export": export}


def export(ctx: Context) -> int:
    args = ctx.args
    if not args.agent_trace:
        raise InvalidInput("export: name the format, --agent-trace (the one export writes)")
    spec = text(args.range)
    tool = agent_trace.Tool("takeback", __version__)
    engine = Engine(ctx.root, create=False)  # reads only: where nothing was recorded, no store is made
    try:
        make = agent_trace.for_turns if agent_trace.is_turn_range(spec) else agent_trace.for_commits
        lines = [_line(record) for record in make(engine, spec, tool)]
    finally:
        engine.close()
    if args.output is None:
        for line in lines:
            print(line)
        return EXIT_OK
    path = os.path.join(ctx.cwd or os.getcwd(), text(args.output))
    with open(path, "w", encoding="ascii", newline="\n") as out:
        out.writelines(line + "\n" for line in lines)
    if ctx.json:
        print_json({"output": path, "records": len(lines)})
    else:
        print(f"wrote {len(lines)} Agent Trace record{'s' if len(lines) != 1 else ''} to {for_terminal(path)}")
    return EXIT_OK


def _line(record: dict) -> str:
    """One record as one line of ASCII JSON: nothing in it a terminal would act on (DEL too)."""
    return json.dumps(record, ensure_ascii=True, separators=(",", ":")).replace("\x7f", "\\u007f")
