"""The hook failure log: ``hook-failures.log`` in the store, one JSON line per failure.

A hook (``takeback hook``) must never stop or disturb the agent that runs it, so it reports
nothing there: what went wrong is appended here and counted by ``takeback status`` (its
``hook_failures`` and ``last_hook_failure``) and the editor's status; the language server
watches its ``stamp`` and tells the editor when it changes. The file is bounded: past
``_KEEP_BYTES`` its older half is dropped.

Payloads a hook could read only in part (bytes that are not UTF-8, a lone surrogate: half a
character) are still recorded (the turn opens and ends), so they are not failures; each is
appended to ``payload-problems.log`` beside it, in the same form, and counted apart
(``payload_problems`` and ``last_payload_problem``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from ..storage import atomic

FILE_NAME = "hook-failures.log"
PROBLEMS_FILE = "payload-problems.log"
_KEEP_BYTES = 256 * 1024


def append(store: Path, agent: str, event: str | None, message: str, log: str = FILE_NAME) -> None:
    """Add one failure (best effort: a log that cannot be written is not a second failure);
    ``log``: ``PROBLEMS_FILE`` for a payload read only in part."""
    line = json.dumps(
        {"at": datetime.now(UTC).isoformat(), "agent": agent, "event": event, "message": message},
        ensure_ascii=False,
    )
    path = store / log
    try:
        store.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as out:
            out.write(line + "\n")
        if path.stat().st_size > _KEEP_BYTES:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
            atomic.write(path, "".join(lines[len(lines) // 2:]).encode("utf-8"))
    except OSError:
        pass


def stamp(store: Path) -> tuple[int, int] | None:
    """The log's size and modification time, or None without a log: a long-lived reader (the
    language server) compares stamps to notice new failures without reading the file."""
    try:
        st = (store / FILE_NAME).stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def summary(store: Path) -> dict:
    """``{"hook_failures": count, "last_hook_failure": "agent event: message" or None,
    "payload_problems": count, "last_payload_problem": … or None}``."""
    failed, last = _counted(store / FILE_NAME)
    problems, last_problem = _counted(store / PROBLEMS_FILE)
    return {"hook_failures": failed, "last_hook_failure": last,
            "payload_problems": problems, "last_payload_problem": last_problem}


def _counted(path: Path) -> tuple[int, str | None]:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    last = None
    if lines:
        try:
            item = json.loads(lines[-1])
            last = f"{item.get('at', '?')} {item.get('agent')} {item.get('event') or ''}: {item.get('message')}"
        except ValueError:
            last = lines[-1]
    return len(lines), last
