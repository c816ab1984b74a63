"""The store's raw git commits and trees: their bytes made, and read back (header lines, parent,
message, entries).

The store writes its commits and flat trees itself (``store.py``) with the bytes made here, and
reads them back here, without libgit2's object classes: a raw object's bytes are all these need.
"""

from __future__ import annotations

import re
import time

from ..errors import StoreError

_SIGNATURE = "takeback <takeback@localhost>"

_TREE_ENTRY = re.compile(rb"([^ \x00]*) ([^\x00]*)\x00(.{20})", re.DOTALL)  # mode, name, raw id


def flat_tree(entries: list[tuple[str, str]]) -> bytes:
    """A raw git tree of regular files (name, blob id), sorted as git sorts them."""
    entries = sorted(entries, key=lambda e: e[0].encode())
    return b"".join(b"100644 %s\x00%s" % (name.encode(), bytes.fromhex(oid)) for name, oid in entries)


def commit_bytes(tree: str, parent: str | None, message: str, author: bytes | None = None) -> bytes:
    """A raw git commit of ``tree`` on ``parent``; ``author`` (also its committer) is Takeback
    now, in the local time zone, unless given (a copy keeps the original's)."""
    if author is None:
        offset = -time.timezone if not time.localtime().tm_isdst else -time.altzone
        sign = "+" if offset >= 0 else "-"
        stamp = f"{int(time.time())} {sign}{abs(offset) // 3600:02d}{abs(offset) % 3600 // 60:02d}"
        author = f"{_SIGNATURE} {stamp}".encode()
    lines = [b"tree " + tree.encode()]
    if parent:
        lines.append(b"parent " + parent.encode())
    lines += [b"author " + author, b"committer " + author, b"", message.encode()]
    return b"\n".join(lines)


def parse_tree(data: bytes) -> dict[str, str]:
    """A raw git tree's entries: name -> object id (``ValueError`` for a tree cut short). One
    regular-expression pass: a big turn's tree holds thousands of entries."""
    found = _TREE_ENTRY.findall(data)
    if sum(len(mode) + len(name) + 22 for mode, name, _oid in found) != len(data):
        raise ValueError("a tree that does not parse to its end (torn)")
    return {name.decode(): oid.hex() for _mode, name, oid in found}


def tree_entries(data: bytes) -> list[tuple[str, str, str]]:
    """A raw git tree's entries with their modes: (mode, name, object id), in order
    (``ValueError`` for a tree cut short). For trees from elsewhere (``share.py``), whose shape
    must be checked."""
    found = _TREE_ENTRY.findall(data)
    if sum(len(mode) + len(name) + 22 for mode, name, _oid in found) != len(data):
        raise ValueError("a tree that does not parse to its end (torn)")
    return [(mode.decode(errors="replace"), name.decode(errors="replace"), oid.hex()) for mode, name, oid in found]


_META_ENTRY = b"100644 meta.json\x00"


def meta_of(tree: bytes) -> str:
    """The id of ``meta.json`` in a log commit's tree (``KeyError`` when it has none). The store
    names content blobs by their hex ids, which sort before ``meta.json``: it is the last entry,
    read from the tail (a 5,000-file turn's tree is 340 KB, 10 ms to parse whole); a tree that
    does not end so (not written by this version, or damaged) is parsed whole."""
    tail = len(_META_ENTRY) + 20
    if len(tree) >= tail and tree[-tail:-20] == _META_ENTRY:
        return tree[-20:].hex()
    return parse_tree(tree)["meta.json"]


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
