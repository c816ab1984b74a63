"""Line statistics and unified diffs between two versions of a file (libgit2's differ, in-process)."""

from __future__ import annotations

import functools

import pygit2

_BINARY_SNIFF = 8000


def is_binary(content: bytes | None) -> bool:
    """git's rule: a NUL byte in the first 8000 bytes means binary."""
    return content is not None and b"\x00" in content[:_BINARY_SNIFF]


def line_stats(before: bytes | None, after: bytes | None) -> tuple[int, int]:
    """(+lines, -lines) from ``before`` to ``after``; (0, 0) for binary content."""
    if before == after:
        return 0, 0
    if is_binary(before) or is_binary(after):
        return 0, 0
    if len(before or b"") <= _REMEMBER_BYTES and len(after or b"") <= _REMEMBER_BYTES:
        return _remembered_line_stats(before, after)
    return _line_stats(before, after)


_REMEMBER_BYTES = 256 * 1024


def _line_stats(before: bytes | None, after: bytes | None) -> tuple[int, int]:
    patch = pygit2.Patch.create_from(before, after)
    _context, additions, deletions = patch.line_stats
    return additions, deletions


# An operation asks twice for the same pair (the outcome it reports, and the change it
# records); a diff costs two SHA-1s of the contents in libgit2 plus the diff itself.
_remembered_line_stats = functools.lru_cache(maxsize=16)(_line_stats)


def unified_diff(
    path: str,
    before: bytes | None,
    after: bytes | None,
    old_path: str | None = None,
    before_mode: int | None = None,
    after_mode: int | None = None,
    context: int = 3,
) -> str:
    """A git-style unified diff of one file ('' when nothing changed; a rename alone is a header)."""
    renamed = old_path is not None and old_path != path
    rename_header = f"rename from {old_path}\nrename to {path}\n" if renamed else ""
    if before == after and before_mode == after_mode:
        return f"diff --git a/{old_path} b/{path}\nsimilarity index 100%\n{rename_header}" if renamed else ""
    patch = pygit2.Patch.create_from(
        before,
        after,
        old_as_path=old_path or path,
        new_as_path=path,
        context_lines=context,
    )
    text = patch.text or ""
    if renamed and text:
        first, _, rest = text.partition("\n")
        text = f"{first}\n{rename_header}{rest}"
    if before_mode and after_mode and before_mode != after_mode and before is not None and after is not None:
        header = f"old mode {before_mode:o}\nnew mode {after_mode:o}\n"
        first, _, rest = text.partition("\n")
        text = f"{first}\n{header}{rest}" if text else f"diff --git a/{path} b/{path}\n{header}"
    return text
