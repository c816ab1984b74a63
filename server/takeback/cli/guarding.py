"""``takeback guard [status|off|on|check]``: the guard from a terminal (docs/guard.md).

``status`` shows whether the guard is on here, the rules in force (the person's, and what the
repository added), and the sessions it is off for; ``off`` switches it off for the agent session
going on in this workspace (or ``--session ID``) until ``on`` or a new session; ``check -- LINE``
says what the guard would answer an agent for a shell line (or ``--path FILE``: an edit tool's
file), without running anything. The rule itself is the hooks' (``hooks/guarding.py``); this
only asks it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict

from ..core.terminal import quote_text
from ..engine import guard_off
from ..guard.classify import Call
from ..hooks.agents import AGENTS
from ..hooks.events import Event
from .context import Context
from .output import EXIT_OK, EXIT_USAGE, fail, print_json
from .parser import AddCommand, Handler


def register(command: AddCommand) -> dict[str, Handler]:
    p = command("guard", "see, switch off or try the guard that asks before an agent runs what cannot be taken back")
    p.add_argument("action", nargs="?", choices=("status", "off", "on", "check"), default="status")
    p.add_argument("--session", help="off/on: this agent session (default: the one going on in this workspace)")
    p.add_argument("--all", action="store_true", help="on: every session the guard was switched off for")
    p.add_argument("--agent", choices=AGENTS, default="claude", help="check: as this agent's hook would answer")
    p.add_argument("--path", action="append", default=None, help="check: an edit tool's file (repeatable)")
    p.add_argument("line", nargs="*", help="check: the shell line, after --")
    return {"guard": guard}


def guard(ctx: Context) -> int:
    args = ctx.args
    if args.action == "check":
        return _check(ctx)
    if args.line:
        return fail(ctx.json, "usage", f"'takeback guard {args.action}' takes no command line", EXIT_USAGE)
    if args.action == "status":
        return _status(ctx)
    engine = ctx.engine
    session = args.session
    if session is None and not (args.action == "on" and args.all):
        session = guard_off.current_session(engine.timeline)
        if session is None:
            return fail(ctx.json, "no-session", "no agent session has recorded here yet: name one with --session ID", 4)
    off = guard_off.switch(engine.store.path, None if args.all else session, args.action == "off", engine.config.fsync)
    if ctx.json:
        print_json({"session": session, "sessions_off": off})
    elif args.action == "off":
        print(f"the guard is off for session {quote_text(session or '')} in this workspace until 'takeback guard on' "
              "or a new session")
    else:
        print("the guard is on" + (f" for session {quote_text(session)}" if session else " for every session"))
    return EXIT_OK


def _status(ctx: Context) -> int:
    engine = ctx.engine
    rules = engine.config.guard
    off = guard_off.sessions_off(engine.store.path)
    if ctx.json:
        print_json({"enabled": rules.enabled, "rules": rules.model_dump(), "sessions_off": off,
                    "problems": [p for p in engine.config.problems if "guard" in p]})
        return EXIT_OK
    print(f"guard      {'on' if rules.enabled else 'off (your config: guard.enabled = false)'}")
    from ..guard.policy import EFFECTS

    print("classes    " + ", ".join(f"{name} {rules.effects.get(name, 'ask')}" for name in EFFECTS))
    print(f"can't ask  {rules.cannot_ask}")
    for kind in ("allow", "ask", "deny"):
        for pattern in getattr(rules, kind):
            print(f"{kind:<10} {quote_text(pattern)}")
    for session, since in off.items():
        print(f"off        session {quote_text(session)} since {since}")
    for problem in engine.config.problems:
        if "guard" in problem:
            print(f"takeback: warning: {quote_text(problem)}", file=sys.stderr)
    return EXIT_OK


def _check(ctx: Context) -> int:
    from ..hooks.guarding import guard as decide_for

    args = ctx.args
    line = " ".join(args.line) or None
    if line is None and not args.path:
        return fail(ctx.json, "usage", "name a shell line after --, or an edit tool's file with --path", EXIT_USAGE)
    event = Event("pre_tool", args.agent, tool="Bash" if line else "Edit", command=line, paths=args.path,
                  cwd=str(ctx.root))  # (no event name: the agent's pre-tool event, hooks/answers.abilities)
    decision, verdict = decide_for(ctx.engine, event, dict(os.environ))
    found = [asdict(f) for f in verdict.findings] if verdict is not None else []
    if ctx.json:
        print_json({"action": decision.action, "wanted": decision.wanted, "effect": decision.effect,
                    "line": decision.line, "findings": found, **asdict(Call(command=line, paths=args.path))})
        return EXIT_OK
    wanted = f" (the rules ask for {decision.wanted}; {args.agent} cannot)" if decision.wanted else ""
    print(f"{decision.action}{wanted}")
    if decision.line:
        print(quote_text(decision.line))
    return EXIT_OK
