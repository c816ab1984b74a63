"""What the command line prints besides the human renderings (``render.py``): JSON, arguments
kept as text, file content for JSON, one-line errors, and the exit statuses (docs/cli.md).

Everything the CLI writes as text goes through ``TerminalStream`` (installed on stdout and
stderr by ``cli.main``): what a terminal would act on (control characters but newline and tab,
C1, bidirectional overrides, bytes that are not UTF-8) is written escaped, whatever command,
warning or error produced it. The records' own texts are quoted before that
(``core/render.for_terminal``). Exact bytes stay exact: JSON (control characters are JSON
escapes there, C1 and overrides too: the same strings once parsed), ``cat`` (bytes, not text),
and a patch written to a pipe or a file (``write_body``), which must still apply.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from typing import Any, TextIO, overload

from .. import pager
from ..core.terminal import escape

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 10
EXIT_REFUSED = 11  # nothing was written (verdict refused; broken in older answers)
EXIT_CHECK_FAILED = 12
EXIT_LOST = 13  # the resident process accepted a command and ended before answering (resident/forward.py)


def dump(value: Any) -> Any:
    from pydantic import BaseModel  # imported here: printing is the only reason the CLI needs it

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [dump(v) for v in value]
    return value


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def print_json(value: Any) -> None:
    encoded = _encoded(value)
    if not encoded.isascii() or "\x7f" in encoded:
        encoded = _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)  # only inside strings: still exact
        print(encoded)
        return
    # ASCII JSON holds no control character but its newlines (JSON escapes the rest): nothing a
    # terminal acts on, so neither this nor the stream's guard searches it (a 5,000-file undo's
    # answer is 4 MB: ~20 ms a search)
    safe = getattr(sys.stdout, "write_safe", None)
    if safe is None:
        print(encoded)
        return
    safe(encoded)
    safe("\n")


def _encoded(value: Any) -> str:
    """``value`` as indented JSON. A model is encoded by pydantic's own serializer, the same text
    as ``json.dumps`` of its ``model_dump`` (keys in order, indent 2, non-ASCII as it is), made
    without building the dicts first: a 5,000-file undo's answer (4 MB) in 0.06-0.1 s instead of
    0.45-0.6 s. What that serializer refuses (a string no UTF-8 holds) goes the slow way."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        try:
            return value.model_dump_json(indent=2)
        except ValueError:  # pydantic's serialization errors are ValueErrors
            pass
    return json.dumps(dump(value), indent=2, ensure_ascii=False)


class TerminalStream:
    """A text stream that writes ``escape(text)``: nothing a terminal would act on gets through."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(escape(text))
        return len(text)

    def write_safe(self, text: str) -> int:
        """Write ``text`` as it is: the caller made sure it holds nothing a terminal acts on."""
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:  # flush, buffer, fileno, isatty … of the stream
        return getattr(self.stream, name)


def guard_terminal() -> tuple[TextIO, TextIO]:
    """Put ``TerminalStream`` on stdout and stderr; returns the streams to put back."""
    before = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalStream(sys.stdout), TerminalStream(sys.stderr)
    return before


def write_body(text: str) -> None:
    """A patch: exact into a pipe or a file (it must apply), escaped on a terminal (a pager's
    pipe too: ``pager.py``)."""
    out = sys.stdout
    raw = out.stream if isinstance(out, TerminalStream) and not out.isatty() and not pager.active() else out
    raw.write(text)


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
