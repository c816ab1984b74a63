"""The agent sessions the person switched the guard off for (``takeback guard off``).

Kept in the store as one small file, ``guard-off.json`` (``{"sessions": {SESSION: SINCE}}``),
replaced whole (``storage/atomic.py``): the hot path of every pre-tool hook reads it, so it is one
``open`` that usually fails (no file: the guard is on everywhere). Off is per session, so a new
agent conversation finds the guard on again; ``takeback guard on`` turns it back on at once.
Which session "the current one" is: the newest open agent turn's, else the newest agent entry's
(the timeline's own order), so a person typing ``takeback guard off`` beside a running agent
names its conversation without knowing its id.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from ..core.timeline import Timeline
from ..storage import atomic

FILE = "guard-off.json"
_KEEP = 50  # sessions remembered (older ones are long over)


def sessions_off(store: Path) -> dict[str, str]:
    """Session id → when the guard was switched off for it (ISO time, UTC)."""
    try:
        data = json.loads((store / FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    sessions = data.get("sessions") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in sessions.items()} if isinstance(sessions, dict) else {}


def is_off(store: Path, session: str | None) -> bool:
    return session is not None and session in sessions_off(store)


def switch(store: Path, session: str | None, off: bool, fsync: bool = False) -> list[str]:
    """Switch the guard off (or back on) for ``session`` (None with ``off`` False: every session);
    the sessions it is off for afterwards."""
    sessions = sessions_off(store)
    if off and session is not None:
        sessions[session] = datetime.now(UTC).isoformat(timespec="seconds")
        sessions = dict(sorted(sessions.items(), key=lambda kv: kv[1])[-_KEEP:])
    elif session is None:
        sessions = {}
    else:
        sessions.pop(session, None)
    if sessions:
        atomic.write(store / FILE, json.dumps({"sessions": sessions}, indent=1).encode(), fsync=fsync)
    else:
        (store / FILE).unlink(missing_ok=True)
    return list(sessions)


def current_session(timeline: Timeline) -> str | None:
    """The agent session going on in this workspace: the newest open turn's, else the newest
    agent entry's."""
    for state in reversed(timeline.open_turns()):
        if state.begun.session:
            return state.begun.session
    for state in timeline.newest_first():
        if state.begun.kind == "turn" and state.begun.session:
            return state.begun.session
    return None
