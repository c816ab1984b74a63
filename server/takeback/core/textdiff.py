"""Line statistics and unified diffs between two versions of a file (libgit2's differ, in-process).

A change that only inserts lines in one place, or only removes them (a formatter's header or
footer, an appended function, a deleted block), is counted without a diff (``_one_sided``):
libgit2's differ trims the lines both sides share at the start and the end before it diffs,
and then one side is empty, so the count is the other side's lines, whatever the differ. One
that replaces a single line by another (the most common edit; a formatter's new stamp) leaves
one line on each side: one added, one removed (``_one_line_each``). Property tests hold both
to the differ's counts. A 5,000-file turn's end made 5,000 diffs.
"""

from __future__ import annotations

import functools

import pygit2

_BINARY_SNIFF = 8000


def is_binary(content: bytes | None) -> bool:
    """git's rule: a NUL byte in the first 8000 bytes means binary."""
    return content is not None and content.find(b"\x00", 0, _BINARY_SNIFF) != -1  # (no copy of the first 8000 bytes)


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
    if before is not None and after is not None:
        if (found := _one_sided(before, after)) is not None:
            return found
        if _one_line_each(before, after):
            return 1, 1
    # No context lines: the counts come from the differ's edit script, which the context does not
    # change, and libgit2 makes no lines of context to count past (a formatter's 80-line file with
    # a header added and trailing spaces stripped: ~4x faster; 5,000 such files a big turn's end).
    patch = pygit2.Patch.create_from(before, after, context_lines=0)
    _context, additions, deletions = patch.line_stats
    return additions, deletions


def _one_sided(before: bytes, after: bytes) -> tuple[int, int] | None:
    """(+lines, -lines) when one side is the other with whole lines inserted in one place; None
    otherwise (the differ answers)."""
    if len(before) < len(after):
        added = _inserted(before, after)
        return None if added is None else (added, 0)
    removed = _inserted(after, before) if len(after) < len(before) else None
    return None if removed is None else (0, removed)


def _inserted(short: bytes, long: bytes) -> int | None:
    """How many lines ``long`` holds beyond ``short`` when it is ``short`` with whole lines
    inserted in one place, else None. If ``long`` is ``short[:i] + X + short[i:]``, it is so at
    the last line start ``p`` of their common prefix too (``p`` >= ``i``): ``long`` ends with
    ``short[p:]``, and what lies between is ``X`` turned about, with as many lines."""
    p = _common_prefix(short, long)
    if p and short[p - 1] != 0x0A:
        p = short.rfind(b"\n", 0, p) + 1  # back to the start of the line they part in
    rest = short[p:]
    if not long.endswith(rest):
        return None
    chunk = long[p : len(long) - len(rest)]
    if rest and not chunk.endswith(b"\n"):
        return None  # a line of ``short`` changed, not only lines added before it
    return chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)


def _one_line_each(before: bytes, after: bytes) -> bool:
    """Whether ``after`` is ``before`` with one line replaced by another (the most common edit, and
    a formatter's new stamp on the first line): from the line where they part, each side's line
    to its newline (or the end), and all that follows those two lines the same. Both then start
    at a line start with the same lines before them, so the differ trims all but those two lines."""
    p = _common_prefix(before, after)
    if p == len(before) or p == len(after):
        return False  # one is the other's start: lines added or cut at the end (the differ)
    end_b, end_a = before.find(b"\n", p), after.find(b"\n", p)
    end_b = len(before) if end_b < 0 else end_b + 1
    end_a = len(after) if end_a < 0 else end_a + 1
    return before[end_b:] == after[end_a:]


def _common_prefix(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix (a binary search of slice compares: each byte is
    copied about twice, the compares run in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


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
