"""Reading an ``strace`` log of a ``takeback`` call, for the power-cut tests.

Both power-cut tests (the store's, ``test_power_cut.py``, and the workspace's,
``test_power_cut_workspace.py``) run a real call under ``strace -y`` and derive from its system
calls what a power cut can leave. This module reads the log: each finished call with its name,
its arguments split, its result; the paths of its arguments (``5</a/b>`` descriptors and
quoted names, escaped by strace or, with ``-xx``, all in hex) and the bytes a write carried.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass

_CALL = re.compile(r"^(\d+) +(\w+)\((.*)\) += (-?\d+)")
_FD = re.compile(r"^(\d+|AT_FDCWD)<(.*)>$")


@dataclass(frozen=True)
class Call:
    """One finished system call of the log: its line, name, arguments and result."""

    number: int  # the line, counted from 0
    name: str
    args: list[str]
    result: int
    line: str


def split_args(text: str) -> list[str]:
    return [a.strip() for a in re.findall(r'"(?:[^"\\]|\\.)*"(?:\.\.\.)?|\[[^\]]*\]|\{[^}]*\}|[^,]+', text)]


def _unescape(text: str) -> str:
    """strace's escapes (``\\n``, ``\\x2f``, octal) undone; the bytes read as UTF-8."""
    raw = codecs.decode(text, "unicode_escape").encode("latin-1")
    return raw.decode("utf-8", "surrogateescape")


def path(arg: str) -> str:
    """The path an argument names: a descriptor's (``5</a/b>``) or a quoted name."""
    arg = arg.strip()
    match = _FD.match(arg)
    if match:
        return _unescape(match.group(2))
    return _unescape(arg.strip('"'))


def at_path(dirfd: str, name: str) -> str:
    """The path of an ``*at`` call's (``dirfd``, ``name``): ``name`` when absolute, else under the folder."""
    named = path(name)
    return named if named.startswith("/") else f"{path(dirfd).rstrip('/')}/{named}"


def data(arg: str) -> bytes:
    """The bytes a write's buffer argument carried (its whole string: ``-s`` large enough)."""
    assert not arg.endswith("..."), f"strace cut a write's data short (raise -s): {arg[:80]}…"
    return codecs.decode(arg.strip('"'), "unicode_escape").encode("latin-1")


def calls(text: str) -> Iterator[Call]:
    """Every finished call of an ``strace -f`` log, in order (failed ones too: ``result`` < 0)."""
    for number, line in enumerate(text.splitlines()):
        match = _CALL.match(line)
        if match is not None:
            yield Call(number, match.group(2), split_args(match.group(3)), int(match.group(4)), line)
