"""Normalized hook events → engine calls: what the hooks record.

* ``session_start`` records nothing (its workspace is made ready instead: ``run.py``, the
  resident process's ``Resident.warm_soon``); should it reach an engine, it is ignored here.
* ``prompt`` opens a turn (label: the prompt on one line, shortened; session; agent) with no
  bracket: the turn's changes are the union of its steps, so what the person changes between
  two tool calls is not in it. An empty prompt (Qwen Code sends one after each round of tool
  results) opens nothing. The session's own turn still open ends first (``ended_by``
  "next_prompt"); another session's open turn goes on (one open turn per session).
* ``pre_tool`` / ``post_tool`` of an edit tool or a shell tool are one step (``Engine.begin_step``
  / ``end_step``), named after the tool and its target; so is any tool ``agents.py`` does not
  know (an MCP server's), bracketed like a shell command. Tools known only to read are not.
* ``edited`` (an edit already made, with the replacements it made) is a step whose before-image
  is derived and verified (``core/derive.py``), or "before unknown" when none is the only fit.
* A relative path an edit tool names starts at the agent's folder for that call (``Event.cwd``);
  an edit tool that names no file of the workspace is bracketed like a shell command.
* ``stop`` ends the session's open turn, and only it ("stop"); ``session_end`` ends it too
  ("session_end").
  An agent with no tool events (``Event.whole_turn``) gets a whole-turn bracket instead.
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path

from ..engine import failures
from ..engine.engine import Engine
from ..errors import OutsideWorkspace
from .events import Event

LABEL_CHARS = 120
TAKEBACK_COMMANDS = "/takeback:"  # the Claude Code plugin's slash commands: asking Takeback, not the agent


def one_line(text: str, limit: int = LABEL_CHARS) -> str:
    """``text`` on one line (whitespace runs become one space), cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def step_label(event: Event, outside: list[str] | None = None) -> str:
    """"Edit src/app.py", "apply_patch a.py, b.py", "Bash: npm test", "mcp__fs__write_file"
    (paths: workspace-relative; a tool that named only files ``outside`` the workspace: those)."""
    tool = event.tool or "tool"
    if event.paths is not None:
        return one_line(f"{tool} {', '.join(event.paths)}")
    if outside and not event.command:
        return one_line(f"{tool} {', '.join(outside)}")
    return one_line(f"{tool}: {event.command}" if event.command else tool)


def step_key(event: Event) -> str:
    """What ties a tool call's end to its start: the agent's call id, else the tool and its
    target (Gemini CLI and Copilot CLI give no call id; their calls of one kind on one target
    do not overlap)."""
    what = event.call_id or f"{event.tool}\0{event.command or ''}\0{chr(0).join(event.paths or [])}"
    return f"{event.agent}\0{event.session or ''}\0{what}"


def _inside(engine: Engine, paths: list[str], cwd: str | None) -> tuple[list[str], list[str]]:
    """The paths that are in the workspace, and those a tool named elsewhere (as full paths:
    not this workspace's, so a step lists them as not recorded), a relative one taken from
    ``cwd``, the folder the agent's call ran in (Codex started in a subfolder or with ``-C``: its
    patch's paths start there, not at the work tree's top)."""
    kept, outside = [], []
    for path in paths:
        full = os.path.join(cwd, path) if cwd else path
        try:
            kept.append(engine.workspace.rel(full))
        except OutsideWorkspace:
            outside.append(os.path.normpath(os.path.join(cwd or str(engine.workspace.root), os.path.expanduser(path))))
    return kept, outside


def record(engine: Engine, event: Event) -> None:
    if event.kind == "session_start":
        return  # nothing to record: the session's first hooks find the workspace ready
    if event.kind == "pre_tool" and _guarded(engine, event) == "deny":
        return  # the call will not run: no step (the guard reads the paths as the agent named them)
    outside: list[str] = []
    if event.paths is not None:
        event.paths, outside = _inside(engine, event.paths, event.cwd)
        if not event.paths and event.kind != "edited":
            event.paths, event.command = None, ""  # names no file of the workspace: bracketed like a command
    if event.kind == "prompt":
        prompt = (event.prompt or "").strip()
        if not prompt or prompt.startswith(TAKEBACK_COMMANDS):
            return  # Qwen Code's synthetic prompt between tool rounds; Takeback's own slash commands
        engine.discard_steps(event.session)
        engine.begin_turn(
            label=one_line(prompt), session=event.session, agent=event.agent, source="hook", bracket=event.whole_turn,
        )
    elif event.kind in ("stop", "session_end"):
        engine.discard_steps(event.session)
        turn = engine.open_turn_of(event.session)
        if turn is not None:
            engine.end_turn(turn=turn.id, ended_by="stop" if event.kind == "stop" else "session_end")
    elif not event.is_step or (event.paths is not None and not event.paths):
        return  # not a step, or an edit already made outside the workspace
    elif event.kind == "pre_tool":
        engine.begin_step(step_key(event), event.paths, session=event.session, agent=event.agent)
    elif event.kind == "post_tool":
        engine.end_step(step_key(event), step_label(event, outside), outside)
    else:  # "edited", the one kind left
        _record_edited(engine, event)


def _guarded(engine: Engine, event: Event) -> str:
    """The guard's action for a pre-tool call, kept on the event for the hook's answer. The
    guard failing lets the call through (logged like any hook failure): a bug of Takeback's must
    not stop the agent's work."""
    from .guarding import guard

    try:
        event.decision, _verdict = guard(engine, event, event.env)
    except Exception as exc:  # noqa: BLE001
        log_failure(str(engine.workspace.root), event.agent, event.event_name or event.kind, exc, engine)
        return "allow"
    return event.decision.action


def record_logged(workspace: str, event: Event, event_name: str | None, engine: Engine | None = None) -> str | None:
    """Record ``event`` in ``workspace`` (with ``engine`` when the caller keeps one open for
    it); raises nothing. A failure is appended to the store's hook failure log; the return is
    the failure's text when not even the store could take it (the caller shows it on stderr).
    What of the payload could not be decoded (``Event.problems``) is logged apart: it was
    recorded anyway."""
    try:
        if engine is None:
            engine = Engine(workspace)
            try:
                record(engine, event)
            finally:
                engine.close()
        else:
            record(engine, event)
    except Exception as exc:  # noqa: BLE001 - every failure is logged, none reaches the agent
        return log_failure(workspace, event.agent, event_name or event.kind, exc, engine)
    for problem in event.problems:
        failures.append(engine.store.path, event.agent, event_name or event.kind, problem, failures.PROBLEMS_FILE)
    return None


def log_failure(
    workspace: str, agent: str, event_name: str | None, exc: Exception, engine: Engine | None = None,
) -> str | None:
    """Append ``exc`` to the hook failure log of ``workspace``'s store; the failure's text when
    there is no store to take it."""
    if os.environ.get("TAKEBACK_DEBUG"):
        traceback.print_exception(exc)
    message = " ".join(f"{type(exc).__name__}: {exc}".split())
    store = engine.store.path if engine is not None else _store_of(workspace)
    if store is None:
        return message
    failures.append(store, agent, event_name, message)
    return None


def _store_of(workspace: str) -> Path | None:
    """The store of the workspace a failed hook was about, if it can be opened at all."""
    try:
        engine = Engine(workspace)
        engine.close()
        return engine.store.path
    except Exception:  # noqa: BLE001
        return None


def _record_edited(engine: Engine, event: Event) -> None:
    """An edit reported after it was made (Cursor's ``afterFileEdit``): ``Engine.record_made_edit``
    derives its before-image and verifies it, or records the file as "before unknown"."""
    assert event.paths
    engine.record_made_edit(event.paths[0], event.edits, step_label(event), session=event.session, agent=event.agent)
