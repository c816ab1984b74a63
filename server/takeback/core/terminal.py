"""How text that comes from a repository, a prompt or a command is shown on a terminal.

File names, prompts, commands and notices are someone else's text: written raw, an escape
sequence in one of them retitles the terminal, clears the screen or writes the clipboard. Git's
rule for paths (``core.quotePath=false``) is followed: a name holding a control character (C0,
DEL, C1), a byte that is not UTF-8 (a surrogate from ``surrogateescape``), a double quote or a
backslash is shown in double quotes with C escapes (``\\t``, ``\\n``, ``\\"``, ``\\\\``, other
bytes in octal, ``\\033``); printable non-ASCII stays readable. Free text (a prompt, a command)
is quoted the same way only when it holds a character that is not printable, so ordinary quotes
in a prompt stay as they are. Bidirectional overrides (U+202A–U+202E, U+2066–U+2069: "Trojan
Source") are escaped too (``\\u202e``): they reorder what the terminal shows. ``escape`` is the
last line of defence for a whole stream (newline and tab kept). Hand-written: the standard
library's ``repr`` and ``unicode_escape`` quote differently from git and escape printable
non-ASCII.
"""

from __future__ import annotations

import re

_C_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r"}
_BIDI = "\u202a-\u202e\u2066-\u2069"
_UNPRINTABLE = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff{_BIDI}]")
_PATH_SPECIAL = re.compile(f'[\x00-\x1f\x7f-\x9f\ud800-\udfff{_BIDI}"\\\\]')
_STREAM_SPECIAL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{_BIDI}]")


def _escaped(char: str) -> str:
    """One character as git writes it inside a quoted path."""
    if char in _C_ESCAPES:
        return _C_ESCAPES[char]
    if char in '"\\':
        return "\\" + char
    if "\u202a" <= char <= "\u202e" or "\u2066" <= char <= "\u2069":
        return f"\\u{ord(char):04x}"
    if "\udc80" <= char <= "\udcff":  # a byte that was not UTF-8 (surrogateescape)
        data = bytes([ord(char) - 0xDC00])
    else:
        data = char.encode("utf-8", "surrogatepass")
    return "".join(f"\\{b:03o}" for b in data)


def _quoted(text: str) -> str:
    return '"' + _PATH_SPECIAL.sub(lambda m: _escaped(m.group()), text) + '"'


def quote_path(path: str) -> str:
    """A file name as git shows it: unchanged, or in double quotes with C escapes."""
    return _quoted(path) if _PATH_SPECIAL.search(path) else path


def quote_text(text: str) -> str:
    """A prompt, a command, a notice: unchanged when every character prints, else quoted."""
    return _quoted(text) if _UNPRINTABLE.search(text) else text


def escape(text: str) -> str:
    """Everything a terminal would act on, escaped in place (newline and tab kept): for a stream
    whose fields were already quoted, or a patch body."""
    return _STREAM_SPECIAL.sub(lambda m: _escaped(m.group()), text)
