"""Three-way merge of one file, the rule behind every revert.

``merge_file(base, ours, theirs)`` moves a file from ``base`` towards ``theirs`` while keeping
what happened between ``base`` and ``ours`` (the person's later edits, later turns). For a
revert of a turn: base = the turn's result, ours = the workspace now, theirs = the turn's
starting point. ``None`` means the file does not exist. Content and mode merge separately.
"""

from __future__ import annotations

from dataclasses import dataclass

import merge3

from .models import MODE_LINK
from .textdiff import is_binary


@dataclass(frozen=True, slots=True)
class Version:
    """File content with its mode; compared by both."""

    content: bytes
    mode: int


@dataclass(frozen=True, slots=True)
class MergeResult:
    """``result`` is the merged file (None = absent). ``conflict`` says why it could not merge;
    ``markers`` holds the file with conflict markers when a text merge overlapped."""

    result: Version | None
    conflict: str | None = None
    hunks: int = 0
    markers: bytes | None = None
    merged: bool = False  # a real line merge happened (ours and theirs both differed from base)


def _lines(content: bytes) -> list[bytes]:
    return content.splitlines(keepends=True)


def merge_file(
    base: Version | None,
    ours: Version | None,
    theirs: Version | None,
    label_ours: str = "current",
    label_theirs: str = "reverted",
) -> MergeResult:
    if ours == base:
        return MergeResult(theirs)
    if ours == theirs or base == theirs:
        return MergeResult(ours)
    # Here ours and theirs both moved away from base, and differently.
    if base is None:
        return MergeResult(ours, conflict="created on both sides with different content")
    if ours is None:
        return MergeResult(None, conflict="deleted since, but the revert would change it")
    if theirs is None:
        return MergeResult(ours, conflict="changed since, so it is not removed")
    mode = _merge_mode(base.mode, ours.mode, theirs.mode)
    if mode is None:
        return MergeResult(ours, conflict="its file mode changed on both sides")
    if MODE_LINK in (base.mode, ours.mode, theirs.mode):
        if ours.content == base.content:
            return MergeResult(Version(theirs.content, mode))
        if theirs.content == base.content or theirs.content == ours.content:
            return MergeResult(Version(ours.content, mode))
        return MergeResult(ours, conflict="a symlink changed on both sides")
    if ours.content == base.content:
        return MergeResult(Version(theirs.content, mode))
    if theirs.content == base.content or theirs.content == ours.content:
        return MergeResult(Version(ours.content, mode))
    if is_binary(base.content) or is_binary(ours.content) or is_binary(theirs.content):
        return MergeResult(ours, conflict="binary file changed since; it cannot be merged")
    m3 = merge3.Merge3(_lines(base.content), _lines(ours.content), _lines(theirs.content))
    hunks = sum(1 for group in m3.merge_groups() if group[0] == "conflict")
    if hunks:
        markers = b"".join(
            m3.merge_lines(
                name_a=label_ours.encode(),
                name_b=label_theirs.encode(),
                name_base=b"base",
                reprocess=True,
            )
        )
        return MergeResult(
            ours,
            conflict=f"overlapping edits in {hunks} place{'s' if hunks != 1 else ''}",
            hunks=hunks,
            markers=markers,
        )
    merged = b"".join(m3.merge_lines())
    return MergeResult(Version(merged, mode), merged=True)


def _merge_mode(base: int, ours: int, theirs: int) -> int | None:
    if ours == base:
        return theirs
    if theirs == base or theirs == ours:
        return ours
    return None
