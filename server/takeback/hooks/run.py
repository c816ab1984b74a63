"""``takeback hook AGENT [EVENT]``: read the agent's payload on stdin and record it.

It always exits 0 and prints nothing on stdout: a hook must never block or break the agent, nor
put text into the model's context. A failure is appended to the store's hook failure log
(``failures.py``), which ``takeback status`` shows; when not even the store can be found it
goes to stderr (which agents keep out of the model's context). A call through the Claude Code
plugin that the person's own settings also make records nothing (``plugin.py``).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

from .. import failures
from .agents import parse
from .events import Event
from .plugin import steps_aside
from .where import workspace_for


def run(agent: str, event_name: str | None) -> int:
    engine = None
    event: Event | None = None
    try:
        text = sys.stdin.buffer.read().decode("utf-8", "surrogateescape").strip() if sys.stdin else ""
        payload = json.loads(text) if text else {}
        if not isinstance(payload, dict):
            raise ValueError("the payload is not a JSON object")
        event = parse(agent, event_name, payload)
        if event is not None and steps_aside(agent, payload):
            event = None  # the person's own Takeback hook in Claude Code's settings records it
        if event is not None:
            from ..engine import Engine
            from .record import record

            engine = Engine(workspace_for(event.folders))
            record(engine, event)
    except Exception as exc:  # noqa: BLE001 - every failure is logged, none reaches the agent
        if os.environ.get("TAKEBACK_DEBUG"):
            traceback.print_exc()
        message = " ".join(f"{type(exc).__name__}: {exc}".split())
        store = engine.store.path if engine is not None else _store_for(event.folders if event else [])
        if store is not None:
            failures.append(store, agent, event_name or (event.kind if event else None), message)
        else:
            print(f"takeback hook {agent}: {message}", file=sys.stderr)
    finally:
        if engine is not None:
            try:
                engine.close()
            except Exception:  # noqa: BLE001
                pass
    return 0


def _store_for(folders: list[str]) -> Path | None:
    """The store of the workspace a failed hook was about, if it can be opened at all."""
    try:
        from ..engine import Engine

        engine = Engine(workspace_for(folders))
        engine.close()
        return engine.store.path
    except Exception:  # noqa: BLE001
        return None
