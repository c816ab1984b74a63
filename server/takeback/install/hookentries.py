"""The hook entries Takeback writes under an agent's ``"hooks"`` object, and finding them
again. Two shapes exist: Claude Code's matcher groups (``{"matcher": "*", "hooks": [{"type":
"command", "command": …}]}``, also Codex, Gemini CLI and Qwen Code) and flat lists of commands
(Copilot CLI's ``{"type": "command", "bash": …}``, Cursor's ``{"command": …}``). Only entries
whose command runs ``takeback hook AGENT`` are Takeback's; everything else is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .command import hook_argv, is_hook_line, shell_line
from .jsonconfig import member


@dataclass(frozen=True)
class HookSpec:
    """What an agent's hooks look like."""

    events: dict[str, str | None]
    """Event name → tool matcher (None: the event takes none)."""
    grouped: bool = True
    """Claude Code's matcher groups; False for a flat list of command entries."""
    key: str = "command"
    """The field holding the command line."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Other fields of each command entry (``type``, a timeout)."""
    event_in_command: bool = False
    """The payload carries no event name, so the command line names it."""


def _command(agent: str, spec: HookSpec, event: str) -> dict[str, Any]:
    line = shell_line(hook_argv(agent, event if spec.event_in_command else None))
    kind = {"type": "command"} if spec.grouped else {k: v for k, v in spec.extra.items() if k == "type"}
    return {**kind, spec.key: line, **{k: v for k, v in spec.extra.items() if k != "type"}}


def _entries(group: Any, spec: HookSpec) -> list[Any]:
    """The command entries of one item of an event's list."""
    if spec.grouped:
        inner = group.get("hooks") if isinstance(group, dict) else None
        return inner if isinstance(inner, list) else []
    return [group]


def _is_ours(entry: Any, spec: HookSpec, agent: str) -> bool:
    return isinstance(entry, dict) and is_hook_line(entry.get(spec.key), agent)


def add(doc: dict[str, Any], agent: str, spec: HookSpec, path: Path) -> list[str]:
    """Add Takeback's hook for every event of ``spec`` that lacks it (an entry of an older
    install is brought up to date in place). Returns the events changed."""
    hooks = member(doc, "hooks", dict, path, {})
    changed = []
    for event, matcher in spec.events.items():
        wanted = _command(agent, spec, event)
        items = member(hooks, event, list, path, [])
        found = [e for item in items for e in _entries(item, spec) if _is_ours(e, spec, agent)]
        if found:
            if found[0] != wanted:
                found[0].clear()
                found[0].update(wanted)
                changed.append(event)
            continue
        if spec.grouped:
            items.append({**({"matcher": matcher} if matcher is not None else {}), "hooks": [wanted]})
        else:
            items.append(wanted)
        changed.append(event)
    return changed


def remove(doc: dict[str, Any], agent: str, spec: HookSpec) -> list[str]:
    """Take out every Takeback hook for ``agent``; a group, an event list or the ``hooks``
    object left empty by that goes too. Returns the events changed."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return []
    changed = []
    for event in list(hooks):
        items = hooks[event]
        if not isinstance(items, list):
            continue
        kept = []
        for item in items:
            if spec.grouped and isinstance(item, dict) and isinstance(item.get("hooks"), list):
                inner = [e for e in item["hooks"] if not _is_ours(e, spec, agent)]
                if len(inner) != len(item["hooks"]):
                    changed.append(event)
                    if not inner:
                        continue
                    item["hooks"] = inner
                kept.append(item)
            elif not spec.grouped and _is_ours(item, spec, agent):
                changed.append(event)
            else:
                kept.append(item)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del doc["hooks"]
    return sorted(set(changed), key=changed.index)
