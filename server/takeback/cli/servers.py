"""Long-running programs: ``serve`` (the language server on stdio), ``mcp`` (the MCP server on
stdio), ``resident`` (the per-user process of agents' hooks), ``ui`` (the full-screen timeline,
``tui/``) and ``demo``."""

from __future__ import annotations

from .context import Context
from .parser import AddCommand, Handler


def register(command: AddCommand) -> dict[str, Handler]:
    p = command("serve", "run the language server on stdio")
    p.add_argument("--log-level", default="INFO")
    p = command("mcp", "serve the Model Context Protocol on stdio for the workspace (agents call its tools)")
    p.add_argument("--agent", metavar="AGENT",
                   help="the agent that starts it: its project folder, where it gives one (CLAUDE_PROJECT_DIR), "
                        "says which workspace to serve when -C does not")
    p = command("resident", "the per-user process that records agents' hook events (started by the first hook)")
    p.add_argument("action", choices=["status", "stop", "run"], nargs="?", default="status",
                   help="status (default): is it running, for which workspaces; stop: end it; run: serve in the foreground")
    p.add_argument("--warm", action="append", default=[], metavar="FOLDER",
                   help="with run: get the workspace of FOLDER ready at once (what the hook that starts it asks)")
    p = command("demo", "a scripted agent session in a throw-away repository")
    p.add_argument("--keep", action="store_true", help="keep the demo folder")
    p = command("ui", "a full-screen timeline: sessions, turns, steps, files and their diffs; keys undo, redo, revert, restore")
    p.add_argument("--no-mouse", action="store_true", help="leave the mouse to the terminal (to select text over SSH)")
    return {"serve": serve, "mcp": mcp, "resident": resident, "demo": demo, "ui": ui}


def serve(ctx: Context) -> int:
    from ..lsp.server import run

    return run(ctx.args.log_level)


def mcp(ctx: Context) -> int:
    from ..mcp.server import run

    return run(ctx.args.workspace, ctx.args.agent)


def resident(ctx: Context) -> int:
    from ..resident.command import run

    return run(ctx.args.action, ctx.json, ctx.args.warm)


def ui(ctx: Context) -> int:
    from ..tui.app import run

    return run(ctx.engine, mouse=not ctx.args.no_mouse)


def demo(ctx: Context) -> int:
    from ..demo import run_demo

    return run_demo(keep=ctx.args.keep, as_json=ctx.json)
