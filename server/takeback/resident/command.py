"""``takeback resident [status|stop|run]``: see, end or run the resident process by hand.

``status`` says whether a process serves the current settings (its pid, since when, the
workspaces it holds, and which of them are ready: watched and listed); ``stop`` ends it (the
next hook starts another); ``run`` serves in the
foreground (what a hook starts in the background; ``--warm FOLDER``: the workspace the starting
hook recorded into, made ready at once). Exit 0, or 4 when there is nothing to stop,
or 9 when no process can run because the sockets' folder cannot be used (another user's, open
to others, a link): one line on stderr says what is wrong and what to do.
"""

from __future__ import annotations

import json
import os
import sys
import time

from . import address, client

EXIT_NOTHING = 4
EXIT_NO_FOLDER = 9
_LOCK_WAIT_SECONDS = 3.0  # a process that answered 'stale' is leaving: wait for it


def run(action: str, as_json: bool, warm: list[str] | None = None) -> int:
    if action == "run":
        return _serve(warm or [])
    fields = client.call(action.encode())
    running = fields is not None
    problem = None if running else address.problem()
    if problem is not None and address.enabled():
        return _no_folder(problem, as_json)
    answer = json.loads(fields[0]) if fields and action == "status" else {}
    if as_json:
        print(json.dumps({"running": running, **answer, "enabled": address.enabled()}, indent=2))
    elif action == "stop":
        print("stopped the resident process" if running else "no resident process is running")
    elif running:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(answer["since"]))
        print(f"resident   pid {answer['pid']}, since {since}, {answer['requests']} request{'' if answer['requests'] == 1 else 's'}, "
              f"exits after {answer['idle_exit_seconds']:.0f} s idle")
        print(f"socket     {answer['socket']}")
        for workspace in answer["workspaces"]:
            print(f"workspace  {workspace}" + ("  (ready)" if workspace in answer.get("ready", ()) else ""))
    else:
        off = "" if address.enabled() else " (TAKEBACK_RESIDENT is off: hooks work in-process)"
        print(f"no resident process is running{off}; the next hook starts one")
    return EXIT_NOTHING if action == "stop" and not running else 0


def _no_folder(problem: str, as_json: bool) -> int:
    """Say that no resident process can run, why, and what to do (exit 9)."""
    message = f"no resident process can run: {problem}; until then every hook works in-process (slower)"
    if as_json:
        print(json.dumps({"error": "resident-folder", "message": message}))
    print(f"takeback: error: {message}", file=sys.stderr)
    return EXIT_NO_FOLDER


def _serve(warm: list[str]) -> int:
    """Take the lock and listen first (before the engine is imported), so hooks made meanwhile
    wait for this process rather than work in-process; leave at once when another one holds it. ``warm``: the workspaces of
    these folders are made ready as soon as the process listens (``server.Resident.warm_up``)."""
    folder = address.private_folder(create=True)
    if folder is None:
        problem = address.problem() or f"{address.folder_path()} cannot be made"
        print(f"takeback: error: the resident process cannot run: {problem}", file=sys.stderr)
        return EXIT_NO_FOLDER
    print_ = address.fingerprint()
    path = address.socket_path(folder, print_)
    lock = address.take_lock(path, _LOCK_WAIT_SECONDS)
    if lock is None:
        return 0  # another process serves these settings
    try:
        sock = address.listen(path)  # hooks queue from now on, while the engine is imported
    except BaseException:  # (the command line says what the system refused)
        os.close(lock)
        raise
    from .server import serve

    return serve(folder, print_, lock, warm, sock)
