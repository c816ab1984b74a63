"""What the command line prints besides the human renderings (``render.py``): JSON, arguments
kept as text, file content for JSON, one-line errors, and the exit statuses (docs/cli.md)."""

from __future__ import annotations

import base64
import json
import sys
from typing import Any, overload

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 10
EXIT_BROKEN = 11
EXIT_CHECK_FAILED = 12


def dump(value: Any) -> Any:
    from pydantic import BaseModel  # imported here: printing is the only reason the CLI needs it

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [dump(v) for v in value]
    return value


def print_json(value: Any) -> None:
    print(json.dumps(dump(value), indent=2, ensure_ascii=False))


@overload
def text(value: str) -> str: ...
@overload
def text(value: None) -> None: ...
def text(value: str | None) -> str | None:
    """An argument kept as text: bytes that are not UTF-8 (a prompt cut mid-character, a
    non-UTF-8 locale) arrive as surrogates, which no JSON record can hold; they become U+FFFD."""
    if value is None:
        return None
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def content_json(content: bytes | None) -> dict[str, Any]:
    """File content for JSON: text when it is UTF-8, else base64 (never a lossy decode)."""
    if content is None:
        return {"exists": False, "content": None, "encoding": None}
    try:
        return {"exists": True, "content": content.decode("utf-8"), "encoding": "utf-8"}
    except UnicodeDecodeError:
        return {"exists": True, "content": base64.b64encode(content).decode("ascii"), "encoding": "base64"}


def fail(as_json: bool, code: str, message: str, status: int) -> int:
    """Report an error: one line on stderr (and a JSON object on stdout with --json)."""
    message = " ".join(message.split())  # messages that quote other errors may span lines
    if as_json:
        print(json.dumps({"error": code, "message": message}), file=sys.stdout)
    print(f"takeback: error: {message}", file=sys.stderr)
    return status
