"""Agents: ``hook`` (run by an agent's hooks; it takes the short path in ``launch.py``, so its
entry here only documents it in ``--help``), ``install`` and ``uninstall``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from ..core.render import for_terminal
from .context import Context
from .output import EXIT_OK, print_json
from .parser import AddCommand, Handler


class _AgentNames:
    """The agents ``install`` knows, and ``all``, read from ``install/agents.py`` only when an
    ``install``/``uninstall`` argument is checked or its help shown: every other command would
    pay for importing it (about 10 ms) while its parser is built."""

    def _names(self) -> list[str]:
        from ..install.agents import NAMES

        return [*NAMES, "all"]

    def __iter__(self) -> Iterator[str]:  # argparse lists the choices in its messages
        return iter(self._names())

    def __contains__(self, value: object) -> bool:
        return value in self._names()


def _add_install_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("agents", nargs="+", metavar="AGENT", choices=_AgentNames(), help="one of %(choices)s")
    p.add_argument("--scope", choices=["user", "project"], default="user",
                   help="user (default): your own config; project: this repository's personal config where the agent has one")


def register(command: AddCommand) -> dict[str, Handler]:
    p = command("hook", "record an agent's hook event (its JSON payload on stdin); always exits 0, prints nothing")
    p.add_argument("agent", help="claude, codex, gemini, copilot, cursor, opencode, qwen, cline, windsurf or kiro")
    p.add_argument("event", nargs="?", help="the event, where the payload does not name it (Copilot CLI)")
    p = command("install", "wire agents' hooks (and with --mcp the MCP server) into their own config")
    _add_install_args(p)
    p.add_argument("--mcp", action="store_true", help="also register 'takeback mcp' with the agent")
    p.add_argument("--force", action="store_true",
                   help="with --scope project: also change a config file that git tracks (the team's file)")
    p = command("uninstall", "take out what 'takeback install' wrote")
    _add_install_args(p)
    return {"hook": hook, "install": install, "uninstall": uninstall}


def hook(ctx: Context) -> int:
    from ..hooks.run import run

    return run(ctx.args.agent, ctx.args.event)


def install(ctx: Context) -> int:
    from .. import install as installing
    from ..install import render

    args = ctx.args
    reports = installing.install(args.agents, scope=args.scope, with_mcp=args.mcp, workspace=args.workspace, force=args.force)
    if ctx.json:
        print_json(render.as_json(reports))
    else:
        render.print_reports(for_terminal(reports), "installed")
    return EXIT_OK


def uninstall(ctx: Context) -> int:
    from .. import install as installing
    from ..install import render

    args = ctx.args
    reports = installing.uninstall(args.agents, scope=args.scope, workspace=args.workspace)
    if ctx.json:
        print_json(render.as_json(reports))
    else:
        render.print_reports(for_terminal(reports), "uninstalled")
    return EXIT_OK
