"""The normalized hook event every agent's payload is read into (``agents.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ..guard.decide import Decision

# session_start: a session begins (nothing is recorded: its workspace is made ready, hooks/run.py
# and resident/server.py); prompt: opens a turn; pre_tool / post_tool: a tool call's start and end (a step); edited: an
# edit already made, with what it replaced (Cursor's afterFileEdit); stop: the agent's turn is
# over; session_end: the conversation is over.
Kind = Literal["session_start", "prompt", "pre_tool", "post_tool", "edited", "stop", "session_end"]


@dataclass
class Event:
    kind: Kind
    agent: str
    session: str | None = None
    prompt: str | None = None
    tool: str | None = None  # the tool's name as the agent gives it
    call_id: str | None = None  # the agent's id of this tool call, when it has one
    paths: list[str] | None = None  # an edit tool's files (None: not an edit tool)
    command: str | None = None  # a shell tool's command (None: not a shell tool)
    edits: list[tuple[str, str]] = field(default_factory=list)  # edited: (old, new) replacements made
    folders: list[str] = field(default_factory=list)  # where the agent works (first found wins)
    whole_turn: bool = False  # the agent announces no tool calls: the turn is a whole-turn bracket
    cwd: str | None = None  # the folder the agent's tool call runs in (relative paths start there)
    problems: list[str] = field(default_factory=list)  # what of the payload could not be decoded as sent
    event_name: str | None = None  # the agent's own name of the event (``PreToolUse``, ``BeforeTool`` …)
    env: dict[str, str] = field(default_factory=dict)  # of the hook's environment, what the guard reads (HOME, VIRTUAL_ENV)
    decision: Decision | None = None  # a pre-tool call: the guard's answer (``guarding.py``), set when recorded

    @property
    def is_step(self) -> bool:
        return self.paths is not None or self.command is not None
