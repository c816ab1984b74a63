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


def split_lines(content: bytes) -> list[bytes]:
    """The lines of ``content`` as git counts them: split after each ``\\n`` only (a lone
    ``\\r`` is part of its line), each with its ending, the last without one if it has none."""
    parts = content.split(b"\n")
    out = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def changed_blocks(before: bytes, after: bytes) -> list[tuple[int, int, int, int]]:
    """The blocks of lines that differ from ``before`` to ``after`` (libgit2's diff, no context),
    in order: ``(i1, i2, j1, j2)``, 0-based and end excluded, meaning ``split_lines(before)[i1:i2]``
    became ``split_lines(after)[j1:j2]``. Text only: binary content has no lines here."""
    if before == after:
        return []
    patch = pygit2.Patch.create_from(before, after, context_lines=0)
    blocks = []
    for hunk in patch.hunks:
        # git's header names the line before an empty side (0: the top), else its first line
        i1 = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        j1 = hunk.new_start - 1 if hunk.new_lines else hunk.new_start
        blocks.append((i1, i1 + hunk.old_lines, j1, j1 + hunk.new_lines))
    return blocks
