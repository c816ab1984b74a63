"""The ``takeback`` MCP server entry in an agent's JSON config: under ``mcpServers`` (Claude
Code, Gemini CLI, Qwen Code, Copilot CLI, Cursor) or ``mcp`` (OpenCode), each in the shape
that agent reads. An entry is Takeback's when it is named ``takeback`` and runs ``takeback mcp``
(with or without arguments).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .command import takeback_words
from .jsonconfig import BadConfig, member


@dataclass(frozen=True)
class McpSpec:
    """Where and how an agent's JSON config lists MCP servers."""

    section: str = "mcpServers"
    argv_list: bool = False
    """OpenCode: the whole command as one list; others: ``command`` plus ``args``."""
    extra: dict[str, Any] = field(default_factory=dict)


def entry(spec: McpSpec, argv: list[str]) -> dict[str, Any]:
    """The entry that runs ``argv`` (``command.mcp_argv``) in the shape ``spec`` says."""
    if spec.argv_list:
        return {"type": "local", "command": argv, **spec.extra}
    kind = {k: v for k, v in spec.extra.items() if k == "type"}
    rest = {k: v for k, v in spec.extra.items() if k != "type"}
    return {**kind, "command": argv[0], "args": argv[1:], **rest}


def _is_ours(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    command = value.get("command")
    argv = command if isinstance(command, list) else [command, *(value.get("args") or [])]
    if not all(isinstance(word, str) for word in argv):
        return False
    words = takeback_words(argv)
    return words is not None and words[:1] == ["mcp"]  # as written now (``mcp --agent …``) or by an earlier install


def add(doc: dict[str, Any], spec: McpSpec, path: Path, argv: list[str]) -> bool:
    """Register the server running ``argv``; False when it already is, as written."""
    servers = member(doc, spec.section, dict, path, {})
    wanted = entry(spec, argv)
    current = servers.get("takeback")
    if current == wanted:
        return False
    if current is not None and not _is_ours(current):
        raise BadConfig(
            f"{path} already has an MCP server named 'takeback' that is not Takeback's: "
            "rename or remove it, then run again; nothing was written"
        )
    servers["takeback"] = wanted
    return True


def remove(doc: dict[str, Any], spec: McpSpec) -> bool:
    """Unregister it (the section goes too when left empty)."""
    servers = doc.get(spec.section)
    if not isinstance(servers, dict) or not _is_ours(servers.get("takeback")):
        return False
    del servers["takeback"]
    if not servers:
        del doc[spec.section]
    return True
