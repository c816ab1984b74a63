"""``takeback hook AGENT [EVENT]``: hand the agent's payload (stdin) over to be recorded.

It prints nothing on stdout and exits 0, but for a pre-tool call the guard does not simply let
through (``guarding.py``): then it prints the agent's own answer (ask, deny, or a warning:
``answers.py``) and exits with the status that agent reads. Nothing else ever blocks or breaks
the agent or puts text into the model's context. This process only forwards: the payload's bytes, the agent,
the event, the hook's folder and environment go to the resident process (``resident/``), which
keeps the engine loaded, reads the payload and records it (``handle.py``), and answers once that
is done (a step's before-images are taken before the agent's tool runs). Nothing here imports
more than the standard library's smallest modules. When that process is not there, refuses, or
goes away before answering, this process starts one for the next hooks and does the same work
itself: a step is never lost. The process it starts is told the workspace this hook records
into (but after a turn's or a session's end), which it makes ready at once
(``resident/server.py``, ``Resident.warm_up``): the session's next hook, often its first shell
step, then finds the work tree watched and listed.

A session's start (Claude Code's and Codex's ``SessionStart``, Gemini CLI's, Copilot CLI's
``sessionStart``, OpenCode's ``session.created``) records nothing: it only has the workspace the
session's prompt would record into (the same rule, ``handle.py``) made ready before the person
has typed it. Through the resident process that is started on a thread there and answered at
once (``Resident.warm_soon``); without one, this process starts one naming the workspace and
exits, opening no engine. With the resident process off it does nothing at all.

A failure is appended to the store's hook failure log (``failures.py``), which ``takeback
status`` shows; when not even the store can be found it goes to stderr (which agents keep out of
the model's context).
"""

import posix
import sys

from .. import oslite  # not ``os`` (a millisecond of every hook: ``oslite.py``)
from ..resident import address, client, wire

TYPE_CHECKING = False  # typing's own costs milliseconds on a hook's path
if TYPE_CHECKING:
    from .events import Event


_LAST_EVENTS = ("stop", "session_end")  # no hook of the session may follow: nothing to make ready


def run(agent: str, event_name: str | None) -> int:
    try:
        data = sys.stdin.buffer.read() if sys.stdin else b""
    except OSError:
        data = b""
    try:
        cwd = posix.getcwd()
    except OSError:  # the folder the agent runs in is gone: the payload may still name one
        cwd = "/"
    from .via import checked_environment

    env = checked_environment(oslite.environ(), posix.getpid())
    answer = None
    if address.enabled():
        answer = client.call(
            b"hook", agent.encode(), (event_name or "").encode(), oslite.fsencode(cwd), wire.environment(env), data,
        )
    stdout, status = b"", 0
    if answer is not None:
        unlogged = answer[0].decode("utf-8", "replace") if answer else ""
        if len(answer) == 3 and answer[2].isdigit():
            stdout, status = answer[1], int(answer[2])
    else:
        if sys.flags.no_site:  # started as the installed hook line (``__main__.py``): the engine needs them
            import site

            site.main()
        from .handle import handle

        started: list[str] = []

        def record_here(workspace: str, event: "Event", event_name: str | None) -> str | None:
            if address.enabled():  # started before the work, naming the workspace the session goes on in
                client.start(None if event.kind in _LAST_EVENTS else workspace)
                started.append(workspace)
            if event.kind == "session_start":
                return None  # nothing to record: the process just started makes the workspace ready
            return _record_here(workspace, event, event_name)

        reply = handle(agent, event_name, cwd, data, env, record_here)
        unlogged, stdout, status = reply.unlogged, reply.stdout, reply.status
        if address.enabled() and not started:
            client.start()
    if unlogged:  # it may name the hook's folder or a file: nothing a terminal acts on gets through
        from ..core.terminal import escape

        print(escape(f"takeback hook {agent}: {unlogged}"), file=sys.stderr)
    if stdout:
        sys.stdout.buffer.write(stdout)
        sys.stdout.buffer.flush()
    return status


def _record_here(workspace: str, event: "Event", event_name: str | None) -> str | None:
    """Record in this process (the engine is imported only for an event to record)."""
    from .record import record_logged

    return record_logged(workspace, event, event_name)
