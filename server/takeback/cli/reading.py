"""Reading the timeline: ``log``, ``show``, ``diff``, ``cat`` and ``status``; ``log --remote`` and
``show REMOTE/WHO#N`` read teammates' fetched timelines (``engine/remote.py``)."""

from __future__ import annotations

import sys

from ..core import render
from ..core.terminal import quote_path, quote_text
from ..engine import remote
from ..errors import InvalidInput, NoStore
from .context import Context
from .output import EXIT_OK, content_json, print_json, text, write_body
from .parser import AddCommand, Handler


def register(command: AddCommand) -> dict[str, Handler]:
    p = command("log", "the timeline, newest first")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--session", default=None)
    p.add_argument("--before", type=int, default=None, help="only entries numbered below this")
    p.add_argument("--all", action="store_true", help="also the turns that changed no file (left out by default)")
    p.add_argument("--remote", default=None, metavar="REMOTE",
                   help="teammates' timelines fetched from REMOTE ('takeback share fetch'), each with its own numbers")

    p = command("show", "one turn: its files, checks and state")
    p.add_argument("turn", help="a turn (12, #12, an id, last), or a teammate's (origin/alice@laptop#12)")
    p.add_argument("--patch", action="store_true", help="also print its diff")

    p = command("diff", "unified diff of what a turn changed")
    p.add_argument("turn")
    p.add_argument("path", nargs="?")

    p = command("cat", "a file as a turn left it (or found it, with --before)")
    p.add_argument("turn")
    p.add_argument("path")
    p.add_argument("--before", action="store_true")

    command("status", "store size, open turn, undo/redo targets, recovery")
    return {"log": log, "show": show, "diff": diff, "cat": cat, "status": status}


def log(ctx: Context) -> int:
    args = ctx.args
    if args.limit is not None and args.limit < 1:
        raise InvalidInput("--limit must be 1 or more")
    if args.remote is not None:
        return _remote_log(ctx)
    # printed as lines, an entry needs no file list (only their count): none is read from the log
    try:
        engine = ctx.engine
    except NoStore:  # nothing recorded yet: an empty log, and no store made for it
        print_json([]) if ctx.json else render.print_log([])
        return EXIT_OK
    if ctx.json:  # for scripts: every entry (an empty turn has file_count 0)
        print_json(engine.entries(session=text(args.session), limit=args.limit, before=args.before))
        return EXIT_OK
    session = text(args.session)
    if args.all or args.limit is not None:  # (a page: the engine walks only as far as it needs)
        shown = engine.entries(session=session, limit=args.limit, before=args.before, files=False, empty=args.all)
        left_out = 0
    else:  # the whole log: the empty turns it leaves out are counted under it
        entries = engine.entries(session=session, before=args.before, files=False)
        shown = [e for e in entries if not e.empty_turn]
        left_out = len(entries) - len(shown)
    render.print_log(render.log_for_terminal(shown), left_out)
    return EXIT_OK


def _remote_log(ctx: Context) -> int:
    """``log --remote REMOTE``: each teammate's timeline fetched from it, by ``person@machine``."""
    args = ctx.args
    found = remote.log(ctx.engine.store, remote.remote_name(ctx.root, text(args.remote)))
    if ctx.json:
        print_json([{"remote": mate.remote, "who": mate.who, "commit": mate.tip,
                     "entries": [e.model_dump(mode="json") for e in entries[: args.limit]]} for mate, entries in found])
        return EXIT_OK
    for index, (mate, entries) in enumerate(found):
        shown = [e for e in entries if args.all or not e.empty_turn][: args.limit]
        print(("\n" if index else "") + f"{quote_text(mate.name)}  ({len(shown)} of {len(entries)} entries, "
              f"tip {mate.tip[:12]})")
        if shown:
            render.print_log(render.log_for_terminal(shown), len(entries) - len(shown) if args.limit is None else 0)
        else:
            print("no turn that changed a file" + ("" if args.all else " ('--all' lists the others)"))
    return EXIT_OK


def show(ctx: Context) -> int:
    args, engine = ctx.args, ctx.engine
    if remote.names_teammate(args.turn):
        mate, state = remote.resolve(engine.store, text(args.turn))
        entry = mate.timeline.view(state)
        patch = remote.diff(engine.store, engine.capture, mate, entry) if args.patch else None
        if ctx.json:
            print_json({**entry.model_dump(mode="json"), "remote": mate.remote, "who": mate.who,
                        **({"patch": patch} if args.patch else {})})
            return EXIT_OK
        print(f"{quote_text(mate.name)}:")
        render.print_entry(render.for_terminal(entry))
        if patch is not None:
            write_body(patch)
        return EXIT_OK
    entry = engine.entry(args.turn)
    if ctx.json:
        data = entry.model_dump(mode="json")
        if args.patch:
            data["patch"] = engine.diff(args.turn)
        print_json(data)
    else:
        render.print_entry(render.for_terminal(entry))
        if args.patch:
            write_body(engine.diff(args.turn))
    return EXIT_OK


def diff(ctx: Context) -> int:
    args = ctx.args
    patch = ctx.engine.diff(args.turn, args.path)
    ctx.show({"turn": args.turn, "path": args.path, "diff": patch}, lambda _: write_body(patch))
    return EXIT_OK


def cat(ctx: Context) -> int:
    args = ctx.args
    side = "before" if args.before else "after"
    content = ctx.engine.file_at(args.turn, args.path, side)
    if ctx.json:
        print_json(content_json(content))
    elif content is None:
        print(f"takeback: {quote_path(args.path)} did not exist {side} that turn", file=sys.stderr)
    else:
        sys.stdout.buffer.write(content)
    return EXIT_OK


def status(ctx: Context) -> int:
    from ..engine.engine import unrecorded_status

    try:
        answer = ctx.engine.status(files=ctx.json)  # printed, it shows no entry's files
    except NoStore:  # nothing recorded yet: said without making a store
        answer = unrecorded_status(ctx.root)
    ctx.show(answer, render.print_status)
    return EXIT_OK
