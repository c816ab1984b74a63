"""An agent's payload bytes read into JSON that every later step can encode.

A payload is a hint, and it may be broken: bytes that are not UTF-8, or a JSON string holding a
lone surrogate (``"\\ud83d"``: half an emoji, cut by the agent). Python reads both (the first with
``surrogateescape``, the second as the JSON says), but such a string cannot be encoded as UTF-8
anywhere later (the store's log, a label, a path), so the hook would fail and the prompt would
open no turn. Here every such character becomes U+FFFD, once, where the payload is decoded; each
kind of problem found is named so that the hook records it (``Event.problems``) and ``takeback
status`` counts it. Hand-written: the standard library's codecs replace bad bytes, but nothing
replaces lone surrogates inside already decoded JSON strings.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def payload(data: bytes) -> tuple[Any, list[str]]:
    """``data`` as JSON (``{}`` when empty), every string safe to encode, and the problems found."""
    problems = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", "replace")
        problems.append(f"the payload is not valid UTF-8 (byte {exc.start}); its bad bytes were read as U+FFFD")
    text = text.strip()
    value = json.loads(text) if text else {}
    found: list[int] = []
    value = _safe(value, found)
    if found:
        lone = f"{sum(found)} lone surrogate{'' if sum(found) == 1 else 's'}"
        problems.append(f"the payload holds {lone} (half a character); each was read as U+FFFD")
    return value, problems


def safe_text(text: str) -> str:
    """``text`` with every lone surrogate made U+FFFD."""
    return _SURROGATE.sub(REPLACEMENT, text)


def _safe(value: Any, found: list[int]) -> Any:
    if isinstance(value, str):
        fixed, count = _SURROGATE.subn(REPLACEMENT, value)
        if count:
            found.append(count)
        return fixed
    if isinstance(value, list):
        return [_safe(v, found) for v in value]
    if isinstance(value, dict):
        return {_safe(k, found): _safe(v, found) for k, v in value.items()}
    return value
