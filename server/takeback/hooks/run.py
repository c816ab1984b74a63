"""``takeback hook AGENT [EVENT]``: read the agent's payload on stdin and have it recorded.

It always exits 0 and prints nothing on stdout: a hook must never block or break the agent, nor
put text into the model's context. The payload is read here (``agents.py``, standard library
only), so an event Takeback does not use costs one small process and nothing more. An event to
record goes to the resident process (``resident/``), which keeps the engine loaded; when that
process is not there, refuses, or goes away before answering, this process starts one for the
next hooks and records the event itself (``record.record_logged``): a step is never lost.

A failure is appended to the store's hook failure log (``failures.py``), which ``takeback
status`` shows; when not even the store can be found it goes to stderr (which agents keep out of
the model's context). A call through the Claude Code plugin that the person's own settings also
make records nothing (``plugin.py``, loaded only for calls through the plugin).
"""

from __future__ import annotations

import json
import os
import sys

from ..resident import address, client
from .agents import parse
from .events import Event
from .where import workspace_for


def run(agent: str, event_name: str | None) -> int:
    try:
        event = read(agent, event_name, sys.stdin.buffer.read() if sys.stdin else b"")
    except Exception as exc:  # noqa: BLE001 - every failure is logged, none reaches the agent
        _log_unreadable(agent, event_name, exc)
        return 0
    if event is None:
        return 0
    workspace = workspace_for(event.folders)
    request = {"op": "hook", "workspace": workspace, "event": event.to_json(), "event_name": event_name}
    answer = client.call(request) if address.enabled() else None
    if answer is not None:
        unlogged = answer.get("unlogged")
    else:
        if address.enabled():
            client.start()
        from .record import record_logged

        unlogged = record_logged(workspace, event, event_name)
    if unlogged:
        print(f"takeback hook {agent}: {unlogged}", file=sys.stderr)
    return 0


def read(agent: str, event_name: str | None, data: bytes) -> Event | None:
    """The agent's payload as an event (None: an event Takeback does not use, or one the
    person's own hooks record when this call came through the Claude Code plugin)."""
    text = data.decode("utf-8", "surrogateescape").strip()
    payload = json.loads(text) if text else {}
    if not isinstance(payload, dict):
        raise ValueError("the payload is not a JSON object")
    event = parse(agent, event_name, payload)
    if event is not None and os.environ.get("TAKEBACK_VIA"):
        from .plugin import steps_aside

        if steps_aside(agent, payload):
            return None  # the person's own Takeback hook in Claude Code's settings records it
    return event


def _log_unreadable(agent: str, event_name: str | None, exc: Exception) -> None:
    """A payload that could not be read: logged in the store of the folder the hook runs in."""
    from .record import log_failure

    unlogged = log_failure(workspace_for([]), agent, event_name, exc)
    if unlogged:
        print(f"takeback hook {agent}: {unlogged}", file=sys.stderr)
    if os.environ.get("TAKEBACK_DEBUG"):
        import traceback

        traceback.print_exception(exc)
