"""Reading the store's raw git commits and trees: their header lines, parent, message, entries.

The store writes its commits and flat trees itself (``store.py``) and reads them back here,
without libgit2's object classes: a raw object's bytes are all these need.
"""

from __future__ import annotations

from ..errors import StoreError


def parse_tree(data: bytes) -> dict[str, str]:
    """A raw git tree's entries: name -> object id."""
    entries: dict[str, str] = {}
    at = 0
    while at < len(data):
        nul = data.index(b"\x00", at)
        name = data[data.index(b" ", at) + 1 : nul].decode()
        entries[name] = data[nul + 1 : nul + 21].hex()
        at = nul + 21
    return entries


def header(commit: bytes, field: bytes) -> str:
    """The value of a header line (``tree``, ``author`` …) of a raw commit."""
    for line in commit.split(b"\n"):
        if not line:
            break
        if line.startswith(field + b" "):
            return line[len(field) + 1 :].decode()
    raise StoreError(f"a log commit has no {field.decode()} line")


def parent_of(commit: bytes) -> str | None:
    try:
        return header(commit, b"parent")
    except StoreError:
        return None


def message_of(commit: bytes) -> str:
    return commit.split(b"\n\n", 1)[1].decode() if b"\n\n" in commit else ""


def time_of(commit: bytes) -> int:
    """The committer's time stamp (seconds), or 0 when the line cannot be read."""
    try:
        return int(header(commit, b"committer").rsplit(" ", 2)[1])
    except (StoreError, ValueError, IndexError):
        return 0
