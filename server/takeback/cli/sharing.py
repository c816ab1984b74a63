"""Sharing the timeline through git: ``share push``, ``share fetch`` and ``share delete``.

Opt-in: nothing is sent unless the person runs ``share push``. The work is the engine's
(``engine/sharing.py`` over ``storage/share.py``); this module parses and prints.
"""

from __future__ import annotations

from typing import Any

from ..engine import sharing
from .context import Context
from .output import EXIT_OK
from .parser import AddCommand, Handler

EXIT_REFUSED_TIMELINE = 15  # ``SharingFailed``'s status: a fetch that refused a teammate's timeline


def register(command: AddCommand) -> dict[str, Handler]:
    p = command("share", "share the timeline through a git remote (push, fetch, delete)")
    p.add_argument("action", choices=("push", "fetch", "delete"),
                   help="push: send this machine's timeline; fetch: bring teammates' in; delete: remove this machine's")
    p.add_argument("remote", nargs="?", default="origin", help="a remote of your repository, or a URL (default: origin)")
    return {"share": share}


def share(ctx: Context) -> int:
    action, remote = ctx.args.action, ctx.args.remote
    engine = ctx.engine
    if action == "push":
        ref, commit = sharing.push(engine, remote)
        ctx.show({"remote": remote, "ref": ref, "commit": commit}, _print_push)
        return EXIT_OK
    if action == "delete":
        ref, there = sharing.delete(engine, remote)
        ctx.show({"remote": remote, "ref": ref, "deleted": there}, _print_delete)
        return EXIT_OK
    done = sharing.fetch(engine, remote)
    value = {
        "remote": done.remote,
        "accepted": [{"who": who, "commit": tip} for who, tip in done.accepted.items()],
        "refused": [{"who": who, "reason": why} for who, why in done.refused.items()],
        "removed": done.removed,
    }
    ctx.show(value, _print_fetch)
    return EXIT_REFUSED_TIMELINE if done.refused else EXIT_OK


def _print_push(value: dict[str, Any]) -> None:
    print(f"pushed the timeline to {value['remote']} as {value['ref']} ({value['commit'][:12]})")


def _print_delete(value: dict[str, Any]) -> None:
    if value["deleted"]:
        print(f"removed {value['ref']} from {value['remote']}")
    else:
        print(f"{value['remote']} holds no {value['ref']}: nothing to remove")


def _print_fetch(value: dict[str, Any]) -> None:
    remote = value["remote"]
    for item in value["accepted"]:
        print(f"{remote}/{item['who']}  {item['commit'][:12]}")
    for who in value["removed"]:
        print(f"{remote}/{who}  removed (the remote no longer holds it)")
    for item in value["refused"]:
        print(f"refused {remote}/{item['who']}: {item['reason']}")
    if not (value["accepted"] or value["removed"] or value["refused"]):
        print(f"{remote} holds no shared timeline")
