"""Sharing the timeline through git: ``share push``, ``share fetch``, ``share delete`` and
``share status``.

Opt-in: nothing is sent unless the person runs ``share push``. The work is the engine's
(``engine/sharing.py`` over ``storage/share.py``); this module parses and prints.
"""

from __future__ import annotations

from typing import Any

from ..engine import sharing
from ..errors import InvalidInput
from .context import Context
from .output import EXIT_OK
from .parser import AddCommand, Handler

EXIT_REFUSED_TIMELINE = 15  # ``SharingFailed``'s status: a fetch that refused a teammate's timeline


def register(command: AddCommand) -> dict[str, Handler]:
    p = command("share", "share the timeline through a git remote (push, fetch, delete)")
    p.add_argument("action", choices=("push", "fetch", "delete", "status"),
                   help="push: send this machine's timeline; fetch: bring teammates' in; delete: remove this machine's; "
                   "status: what the last push sent")
    p.add_argument("remote", nargs="?", default="origin", help="a remote of your repository, or a URL (default: origin)")
    p.add_argument("--no-prompts", action="store_true",
                   help="push: send no prompt, label, step label nor command text (as share.no_prompts = true)")
    return {"share": share}


def share(ctx: Context) -> int:
    action, remote = ctx.args.action, ctx.args.remote
    if ctx.args.no_prompts and action != "push":
        raise InvalidInput("--no-prompts goes with 'share push' only")
    engine = ctx.engine
    if action == "push":
        pushed = sharing.push(engine, remote, no_prompts=ctx.args.no_prompts)
        ctx.show({"remote": remote, **_pushed(pushed)}, _print_push)
        return EXIT_OK
    if action == "status":
        last = sharing.status(engine, remote)
        ctx.show({"remote": remote, "pushed": _pushed(last) if last else None}, _print_status)
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


def _pushed(done: sharing.Pushed) -> dict[str, Any]:
    settings = done.settings
    return {"ref": done.ref, "commit": done.commit, "local": done.local, "forced": done.forced, "at": done.at,
            "no_prompts": bool(settings.get("no_prompts")), "redact": list(settings.get("redact", []))}


def _settings_words(value: dict[str, Any]) -> str:
    words = ["no prompts" if value["no_prompts"] else "prompts included"]
    count = len(value["redact"])
    words.append(f"{count} redact pattern{'s' if count != 1 else ''}" if count else "no redaction")
    return ", ".join(words)


def _print_push(value: dict[str, Any]) -> None:
    print(f"pushed the timeline to {value['remote']} as {value['ref']} ({value['commit'][:12]}; {_settings_words(value)})")
    if value["forced"]:
        print(f"  the settings changed since the last push: {value['ref']} was replaced, not moved forward "
              "(what the earlier push sent is no longer reachable from it; teammates who fetched it keep their copy)")


def _print_status(value: dict[str, Any]) -> None:
    last = value["pushed"]
    if last is None:
        print(f"nothing was pushed to {value['remote']} from this workspace (takeback share push {value['remote']})")
        return
    print(f"last pushed to {value['remote']} at {last['at']}: {last['ref']} ({last['commit'][:12]}, "
          f"the timeline up to {last['local'][:12]})")
    print(f"  with {_settings_words(last)}")
    for pattern in last["redact"]:
        print(f"  redact {pattern}")


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
