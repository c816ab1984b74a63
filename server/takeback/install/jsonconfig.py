"""Reading and writing an agent's JSON config file without disturbing it: keys keep their
order, the file keeps its indentation (spaces or tabs, detected from the file) and whether it
ends with a newline. A file that is not valid JSON is refused with a clear error, untouched.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInput


class BadConfig(InvalidInput):
    """An agent's config file that cannot be read as what it should be (JSON, TOML)."""

    code = "bad-config"


@dataclass
class JsonLayout:
    """How a JSON file is laid out: its indent string and its final newline."""

    indent: str = "  "
    final_newline: bool = True

    @classmethod
    def of(cls, text: str) -> JsonLayout:
        match = re.search(r"^[{\[][^\n]*\n([ \t]+)\S", text, re.MULTILINE)
        return cls(indent=match.group(1) if match else "  ", final_newline=text.endswith("\n") or not text)

    def dump(self, value: Any) -> str:
        text = json.dumps(value, indent=self.indent, ensure_ascii=False)
        # A lone surrogate (an escape such as "\ud800" in the file, half a character) has no
        # UTF-8: it is written back as the escape it was read from.
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        return text + "\n" if self.final_newline else text


_SURROGATE = re.compile("[\ud800-\udfff]")


def member(doc: dict[str, Any], key: str, kind: type, path: Path, default: Any) -> Any:
    """``doc[key]``, set to ``default`` when missing; refused when it is not a ``kind``."""
    value = doc.setdefault(key, default)
    if not isinstance(value, kind):
        name = "an object" if kind is dict else "a list"
        raise BadConfig(f"{path}: \"{key}\" is not {name} as the agent expects; nothing was written")
    return value


def parse(path: Path, data: bytes | None) -> tuple[dict[str, Any], JsonLayout]:
    """The JSON object in ``data`` (an empty one when the file does not exist or is empty)."""
    if data is None or not data.strip():
        return {}, JsonLayout()
    try:
        text = data.decode("utf-8-sig")
        value = json.loads(text)
    except RecursionError as exc:  # valid JSON, nested deeper than this Python reads
        raise BadConfig(f"{path} nests its JSON too deeply to be read; nothing was written") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise BadConfig(
            f"{path} is not valid JSON{where}: fix it (comments are not supported here) and run again; nothing was written"
        ) from exc
    if not isinstance(value, dict):
        raise BadConfig(f"{path} holds JSON that is not an object; nothing was written")
    return value, JsonLayout.of(text)
