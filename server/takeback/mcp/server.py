"""The MCP server process: one workspace's tools (``tools.py``) served on stdio.

Stdout carries the protocol and nothing else (the SDK points file descriptor 1 at stderr while
it serves, so a stray print cannot corrupt it); logs go to stderr. The workspace is opened once,
at start: a folder that cannot be served is one line on stderr and a non-zero exit, before
any protocol traffic.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import ValidationError

from .. import __version__
from ..core.terminal import quote_text
from ..engine.engine import Engine
from ..errors import InvalidInput, TakebackError
from ..workspace.locate import project_folder, workspace_root
from .tools import Tools, tool_error

INSTRUCTIONS = """\
Takeback records every agent turn in this workspace as checkpoints, so a turn can be undone
exactly. When the person asks to undo, revert or restore your work, use these tools instead of
editing files back by hand. list_turns, show_turn and diff_turn only read. undo, redo,
revert_turn and restore change files, in two steps: call without confirm_token to get the plan
(the files, a verdict, conflicts) and a token; show the plan to the person; only if they agree,
call again with the same arguments and the token. A confirmation is refused if anything changed
since the plan: then plan again and ask again. Edits made after a turn (the person's too) are
kept; overlapping ones are reported as conflicts and nothing is written unless on_conflict says so.
When the person points at less than a turn, revert_turn takes back just that: one step (turn
'12.3'), some files (paths) or one hunk (hunk: a file and a line of it as it stands now).
"""

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
_DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)


class _Server(MCPServer):
    """The SDK's server, with arguments that fail a tool's schema answered like the engine's own
    errors: one line naming each bad argument (the SDK's text spans many lines)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(str(part) for part in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.__cause__.errors()
            )
            return tool_error("invalid-input", f"invalid arguments for {name}: {problems}")


def build(tools: Tools) -> MCPServer:
    """The server with every tool registered, with its annotations."""
    server = _Server(name="takeback", version=__version__, instructions=INSTRUCTIONS)
    for method, title, hints in (
        (tools.list_turns, "List agent turns", _READ_ONLY),
        (tools.show_turn, "Show one turn", _READ_ONLY),
        (tools.diff_turn, "Diff of a turn", _READ_ONLY),
        (tools.undo, "Undo the last agent turn", _DESTRUCTIVE),
        (tools.redo, "Redo what was undone", _DESTRUCTIVE),
        (tools.revert_turn, "Revert a turn, a step, files or a hunk, keeping later ones", _DESTRUCTIVE),
        (tools.restore, "Restore files to a checkpoint", _DESTRUCTIVE),
    ):
        server.add_tool(method, title=title, annotations=hints.model_copy(update={"title": title}))
    return server


def start_folder(agent: str | None) -> str:
    """Where the workspace is looked for when none is named: the project folder the agent that
    started this server gave it (``--agent``; ``workspace/locate.py``), else the current folder
    (an agent may start its MCP servers in a subfolder, or elsewhere)."""
    project = project_folder(agent, os.environ)
    return project if project is not None and os.path.isdir(project) else os.getcwd()


def run(workspace: str | None, agent: str | None = None) -> int:
    """Serve ``workspace`` (default: the one ``start_folder`` belongs to, ``workspace/locate.py``)
    until the client closes stdin."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="takeback mcp: %(levelname)s %(name)s: %(message)s")
    try:
        if workspace is not None and not workspace.strip():
            raise InvalidInput("--workspace is empty: give a folder, or leave the option out to use the current folder")
        engine = Engine(Path(workspace if workspace is not None else workspace_root(start_folder(agent))))
    except TakebackError as exc:
        print(f"takeback: error: {' '.join(exc.message.split())}", file=sys.stderr)
        return exc.exit_status
    for problem in engine.config.problems:  # the repository's text: quoted for the terminal stderr may reach
        print(f"takeback: warning: {quote_text(problem)}", file=sys.stderr)
    try:
        build(Tools(engine)).run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()
    return 0
