"""One hook call, wherever it runs: in the resident process, or in the hook's own process when
that one is not there. The payload's bytes are decoded, what cannot be encoded made safe
(``decode.py``; the event carries the problems found, and recording it logs them), and read
into an event (``agents.py``; a call through the Claude Code plugin that the person's own
settings also make steps aside, ``plugin.py``), the event's workspace is found from the hook's
folder (``where.py``), and the event is recorded (``record.py``) by ``record_in``; a pre-tool
call is weighed by the guard there first (``guarding.py``), and its decision becomes the
agent's own answer (``answers.py``). Raises nothing: a failure is logged in the store; the
reply carries its text only when no store could take it (the caller shows it on stderr), and
what the hook prints on stdout and exits with (empty and 0 but for a guarded call).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import NamedTuple

from . import decode
from .agents import parse
from .events import Event
from .where import workspace_for

RecordIn = Callable[[str, Event, "str | None"], "str | None"]
GUARD_ENV = ("HOME", "VIRTUAL_ENV", "CONDA_PREFIX")  # what of the hook's environment the guard reads


class Reply(NamedTuple):
    unlogged: str  # a failure no store could take ("" when none)
    stdout: bytes = b""  # what the hook prints for the agent to read (a guarded call's answer)
    status: int = 0  # the hook's exit status


def handle(
    agent: str, event_name: str | None, cwd: str, data: bytes, env: Mapping[str, str], record_in: RecordIn,
) -> Reply:
    try:
        event = read(agent, event_name, data, env)
    except Exception as exc:  # noqa: BLE001 - every failure is logged, none reaches the agent
        from .record import log_failure

        return Reply(log_failure(workspace_for([], cwd), agent, event_name, exc) or "")
    if event is None:
        return Reply("")
    event.cwd = os.path.join(cwd, event.cwd) if event.cwd else cwd  # the hook runs in the agent's folder
    event.event_name = event_name
    event.env = {name: env[name] for name in GUARD_ENV if env.get(name)}
    unlogged = record_in(workspace_for(event.folders, cwd), event, event_name) or ""
    if event.decision is None or event.decision.allowed:
        return Reply(unlogged)
    from .answers import answer

    return Reply(unlogged, *answer(agent, event_name, event.decision))


def read(agent: str, event_name: str | None, data: bytes, env: Mapping[str, str]) -> Event | None:
    """The agent's payload as an event (None: an event Takeback does not use, or one the
    person's own hooks record when this call came through the Claude Code plugin)."""
    payload, problems = decode.payload(data)
    if not isinstance(payload, dict):
        raise ValueError("the payload is not a JSON object")
    event = parse(agent, event_name, payload, env)
    if event is not None:
        event.problems = problems
    if event is not None and env.get("TAKEBACK_VIA"):
        from .plugin import steps_aside

        if steps_aside(agent, payload, env):
            return None  # the person's own Takeback hook in Claude Code's settings records it
    return event
