"""Codex's ``config.toml``: Takeback adds one table, ``[mcp_servers.takeback]``, as a block of
text at the end of the file between two marker comments, and removes exactly that block. The
rest of the file (comments, order, spacing) is never rewritten; the result is checked to parse.
"""

from __future__ import annotations

import json
import tomllib

from .jsonconfig import BadConfig

BEGIN = "# >>> takeback (written by 'takeback install'; removed by 'takeback uninstall')"
END = "# <<< takeback"


def _check(path: object, text: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadConfig(f"{path} is not valid TOML ({exc}): fix it and run again; nothing was written") from exc


def block(argv: list[str]) -> str:
    """The marked ``[mcp_servers.takeback]`` table starting ``argv``."""
    args = ", ".join(json.dumps(a) for a in argv[1:])
    return f"{BEGIN}\n[mcp_servers.takeback]\ncommand = {json.dumps(argv[0])}\nargs = [{args}]\n{END}\n"


def without_block(text: str) -> str:
    """``text`` with Takeback's marked block (and the blank line put before it) taken out."""
    start = text.find(BEGIN)
    if start < 0:
        return text
    end = text.find(END, start)
    end = len(text) if end < 0 else text.find("\n", end) + 1 or len(text)
    head = text[:start]
    if head.endswith("\n\n"):
        head = head[:-1]
    return head + text[end:]


def with_block(path: object, text: str, argv: list[str]) -> str:
    """``text`` with the block for ``argv`` at its end (replacing an earlier one)."""
    base = without_block(text)
    tables = _check(path, base)
    if "takeback" in tables.get("mcp_servers", {}):
        raise BadConfig(f"{path} already has its own [mcp_servers.takeback]: remove it, then run again; nothing was written")
    if base and not base.endswith("\n"):
        base += "\n"
    result = base + ("\n" if base.strip() else "") + block(argv)
    _check(path, result)
    return result
