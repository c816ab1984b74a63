"""The one line the person reads about a not-undoable call: what exactly Takeback could not take
back. It completes "this …": "deletes 3 ignored files Takeback does not hold: .env, data/app.db,
build/ (412 files)", "moves the branch main to HEAD~3 (its commits stay only in the reflog)".

The files at risk are grouped by what the call does to them (folders with how many files they
hold, counted by a bounded callable), long lists are cut ("and 5 more"), and each other finding
adds its own reason, up to a few. Nothing is quoted here (the agents' adapters quote the line for
their terminal); control characters and line breaks are taken out.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .walk import COUNT_LIMIT

if TYPE_CHECKING:
    from .classify import Finding

MAX_NAMES = 4  # paths named in a list before "and N more"
MAX_PARTS = 3  # statements in the line before "and N more"
MAX_CHARS = 300  # a statement or a quoted command is cut to this
_VERBS = {"delete": "deletes", "move": "moves away", "write": "overwrites"}
_PATH_EFFECT_WORDS = ("deletes", "moves away", "overwrites", "appends to", "may ")


def one_line(findings: Sequence[Finding], whole: str | None, root: str, count_files: Callable[[str, int], int]) -> str:
    """``whole``: the call's command line; a finding about a part of it names that part."""
    order: list[str] = []  # each statement: a finding's own reason, or "\0ACTION" for the paths grouped by action
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        if f.path is None:
            order.append(_statement(f, whole))
            continue
        if f.action not in groups:
            groups[f.action] = []
            order.append("\0" + f.action)
        groups[f.action].append(f)
    said = [_group(s[1:], groups[s[1:]], root, count_files) if s.startswith("\0") else s for s in order]
    said = [_cut(s) for s in dict.fromkeys(said)]
    more = len(said) - MAX_PARTS
    return clean("; ".join(said[:MAX_PARTS]) + (f"; and {more} more" if more > 0 else ""))


def _statement(f: Finding, whole: str | None) -> str:
    """A finding's reason, with the command it is about when the line has more than that command
    and the reason does not name a path."""
    if f.reason.startswith(_PATH_EFFECT_WORDS) or f.text in f.reason or whole is None or f.text.strip() == whole.strip():
        return f.reason
    return f"{f.reason} ({_cut(f.text, 80)})"


def _group(action: str, found: list[Finding], root: str, count_files: Callable[[str, int], int]) -> str:
    paths = list(dict.fromkeys(f.path for f in found if f.path is not None))
    notes = {f.path: f.note for f in found}
    ignored = all(not notes[p] for p in paths)
    noun = ("ignored " if ignored else "") + ("folder" if all(p.endswith("/") for p in paths) else "file")
    noun += "s" if len(paths) > 1 else ""
    named = [_named(p, notes[p], root, count_files) for p in paths[:MAX_NAMES]]
    rest = len(paths) - MAX_NAMES
    listed = ", ".join(named) + (f" and {rest} more" if rest > 0 else "")
    return f"{_VERBS.get(action, action)} {len(paths)} {noun} Takeback does not hold: {listed}"


def _named(path: str, note: str, root: str, count_files: Callable[[str, int], int]) -> str:
    if note:
        return f"{path} ({note})"
    if not path.endswith("/"):
        return path
    n = count_files(posixpath.join(root, path), COUNT_LIMIT)
    if n > COUNT_LIMIT:
        return f"{path} (over {COUNT_LIMIT:,} files)"
    return f"{path} ({n:,} file{'' if n == 1 else 's'})" if n else path


def listed(names: Sequence[str]) -> str:
    """``a, b, c and 2 more``."""
    rest = len(names) - MAX_NAMES
    return ", ".join(names[:MAX_NAMES]) + (f" and {rest} more" if rest > 0 else "")


def clean(text: str) -> str:
    """One line: breaks and tabs become spaces, other control and format characters "?"."""
    text = re.sub(r"[\r\n\t\v\f]+", " ", text)
    return "".join("?" if unicodedata.category(c) in ("Cc", "Cf") else c for c in text)


def _cut(text: str, limit: int = MAX_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
