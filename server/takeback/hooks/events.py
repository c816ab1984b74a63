"""The normalized hook event every agent's payload is read into (``agents.py``).

A plain class, not a dataclass: ``takeback hook`` reads it before anything else is imported,
and importing ``dataclasses`` (with ``inspect``) would cost more than the rest of a hook call.
It crosses to the resident process as JSON (``to_json`` / ``from_json``).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing alone costs a tenth of a hook call
if TYPE_CHECKING:
    from typing import Literal

    # prompt: opens a turn; pre_tool / post_tool: a tool call's start and end (a step); edited:
    # an edit already made, with what it replaced (Cursor's afterFileEdit); stop: the agent's
    # turn is over; session_end: the conversation is over.
    Kind = Literal["prompt", "pre_tool", "post_tool", "edited", "stop", "session_end"]

KINDS = ("prompt", "pre_tool", "post_tool", "edited", "stop", "session_end")

_OPTIONAL_TEXT = ("session", "prompt", "tool", "call_id", "command")


class Event:
    __slots__ = ("kind", "agent", "session", "prompt", "tool", "call_id", "paths", "command", "edits", "folders",
                 "whole_turn")

    def __init__(
        self,
        kind: Kind,
        agent: str,
        session: str | None = None,
        prompt: str | None = None,
        tool: str | None = None,  # the tool's name as the agent gives it
        call_id: str | None = None,  # the agent's id of this tool call, when it has one
        paths: list[str] | None = None,  # an edit tool's files (None: not an edit tool)
        command: str | None = None,  # a shell tool's command (None: not a shell tool)
        edits: list[tuple[str, str]] | None = None,  # edited: (old, new) replacements made
        folders: list[str] | None = None,  # where the agent works (first found wins)
        whole_turn: bool = False,  # the agent announces no tool calls: the turn is a whole-turn bracket
    ) -> None:
        self.kind = kind
        self.agent = agent
        self.session = session
        self.prompt = prompt
        self.tool = tool
        self.call_id = call_id
        self.paths = paths
        self.command = command
        self.edits = edits if edits is not None else []
        self.folders = folders if folders is not None else []
        self.whole_turn = whole_turn

    @property
    def is_step(self) -> bool:
        return self.paths is not None or self.command is not None

    def to_json(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_json(cls, data: object) -> Event:
        """The event ``to_json`` wrote; anything else is a ``ValueError`` naming the field."""
        if not isinstance(data, dict) or data.get("kind") not in KINDS or not isinstance(data.get("agent"), str):
            raise ValueError("not a hook event: it needs a known kind and an agent")
        for name in _OPTIONAL_TEXT:
            if data.get(name) is not None and not isinstance(data[name], str):
                raise ValueError(f"hook event field {name} is not text")
        paths, folders, edits = data.get("paths"), data.get("folders") or [], data.get("edits") or []
        if paths is not None and not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)):
            raise ValueError("hook event field paths is not a list of text")
        if not (isinstance(folders, list) and all(isinstance(f, str) for f in folders)):
            raise ValueError("hook event field folders is not a list of text")
        if not (isinstance(edits, list) and all(
            isinstance(e, list | tuple) and len(e) == 2 and all(isinstance(s, str) for s in e) for e in edits
        )):
            raise ValueError("hook event field edits is not a list of (old, new) text pairs")
        return cls(
            data["kind"], data["agent"], **{name: data.get(name) for name in _OPTIONAL_TEXT},
            paths=paths, edits=[(old, new) for old, new in edits], folders=folders,
            whole_turn=bool(data.get("whole_turn")),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Event) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.to_json().items() if v not in (None, [], False))
        return f"Event({fields})"
