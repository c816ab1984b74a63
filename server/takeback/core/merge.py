"""Three-way merge of one file, the rule behind every revert.

``merge_file(base, ours, theirs)`` moves a file from ``base`` towards ``theirs`` while keeping
what happened between ``base`` and ``ours`` (the person's later edits, later turns). For a
revert of a turn: base = the turn's result, ours = the workspace now, theirs = the turn's
starting point. ``None`` means the file does not exist. Content and mode merge separately, but
where a symlink is one of the three, both sides changing it (its target, or a file turned link
or back) is a conflict: a link's target is not merged as a file's content, nor the other way.
Only a text file that both sides edited gets conflict markers, in the file's own line endings.
A conflict also carries what ``--on-conflict force`` writes (``forced``): for a text file, the
merge with the revert's side taken only where the two overlap, every clean change of the
person's kept (git's ``-X theirs``); for anything else, the revert's side whole.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import cast

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
    forced: Version | None = None  # with a conflict: what ``force`` writes (see the module's docstring)


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
        return MergeResult(ours, conflict="created on both sides with different content", forced=theirs)
    if ours is None:
        return MergeResult(None, conflict="deleted since, but the revert would change it", forced=theirs)
    if theirs is None:
        return MergeResult(ours, conflict="changed since, so it is not removed", forced=None)
    mode = _merge_mode(base.mode, ours.mode, theirs.mode)
    if mode is None:
        return MergeResult(ours, conflict="its file mode changed on both sides", forced=theirs)
    if MODE_LINK in (base.mode, ours.mode, theirs.mode):  # a link's text is no file content to merge
        return MergeResult(ours, conflict="a symlink changed on both sides", forced=theirs)
    if ours.content == base.content:
        return MergeResult(Version(theirs.content, mode))
    if theirs.content == base.content or theirs.content == ours.content:
        return MergeResult(Version(ours.content, mode))
    if is_binary(base.content) or is_binary(ours.content) or is_binary(theirs.content):
        return MergeResult(ours, conflict="binary file changed since; it cannot be merged", forced=theirs)
    merged, hunks, markers, theirs_won = _merge_text(
        _lines(base.content), _lines(ours.content), _lines(theirs.content), label_ours, label_theirs
    )
    if hunks:
        return MergeResult(
            ours,
            conflict=f"overlapping edits in {hunks} place{'s' if hunks != 1 else ''}",
            hunks=hunks,
            markers=markers,
            forced=Version(theirs_won, mode),
        )
    return MergeResult(Version(merged, mode), merged=True)


def _merge_text(
    base: list[bytes], ours: list[bytes], theirs: list[bytes], label_ours: str, label_theirs: str
) -> tuple[bytes, int, bytes, bytes]:
    """Line merge: (merged, conflicting hunks, the file with conflict markers, the file with
    theirs taken in each conflicting hunk).

    merge3 (like git) calls changes on neighbouring lines a conflict. Inside such a region the
    two sides' changes are compared again line by line: when they touch different base lines
    (and do not both insert at one spot) both apply, in order — nothing of either is lost.
    """
    out: list[bytes] = []
    marked: list[bytes] = []
    theirs_won: list[bytes] = []
    hunks = 0
    eol = _line_ending(ours)
    for region in merge3.Merge3(base, ours, theirs).merge_regions():
        kind = region[0]
        if kind == "unchanged":
            chunk = base[region[1] : region[2]]
        elif kind in ("a", "same"):
            chunk = ours[region[1] : region[2]]
        elif kind == "b":
            chunk = theirs[region[1] : region[2]]
        else:
            _, z1, z2, a1, a2, b1, b2 = cast(merge3.ConflictRegion, region)  # the only kind left
            resolved = _merge_adjacent(base[z1:z2], ours[a1:a2], theirs[b1:b2])
            if resolved is None:
                hunks += 1
                out.extend(ours[a1:a2])
                marked.append(f"<<<<<<< {label_ours}".encode() + eol)
                marked.extend(_terminated(ours[a1:a2], eol))
                marked.append(b"=======" + eol)
                marked.extend(_terminated(theirs[b1:b2], eol))
                marked.append(f">>>>>>> {label_theirs}".encode() + eol)
                theirs_won.extend(theirs[b1:b2])
                continue
            chunk = resolved
        out.extend(chunk)
        marked.extend(chunk)
        theirs_won.extend(chunk)
    return b"".join(out), hunks, b"".join(marked), b"".join(theirs_won)


def _line_ending(lines: list[bytes]) -> bytes:
    """The file's own line ending, for the lines a merge adds: CRLF when most of its lines end so."""
    crlf = sum(1 for line in lines if line.endswith(b"\r\n"))
    lf = sum(1 for line in lines if line.endswith(b"\n")) - crlf
    return b"\r\n" if crlf > lf else b"\n"


def _terminated(lines: list[bytes], eol: bytes) -> list[bytes]:
    """Lines for a marker block: a last line without a line ending gets one, so markers stay on their own line."""
    if lines and not lines[-1].endswith(b"\n"):
        return [*lines[:-1], lines[-1] + eol]
    return lines


def _changes(base: list[bytes], other: list[bytes]) -> list[tuple[int, int, list[bytes]]]:
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    return [(i1, i2, other[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _merge_adjacent(base: list[bytes], ours: list[bytes], theirs: list[bytes]) -> list[bytes] | None:
    """Both sides' changes applied to ``base``, or None when they overlap or insert at one spot."""
    mine, other = _changes(base, ours), _changes(base, theirs)
    for a1, a2, _ in mine:
        for b1, b2, _ in other:
            if a1 < b2 and b1 < a2:
                return None
            if a1 == b1 and (a1 == a2 or b1 == b2):
                return None
    result: list[bytes] = []
    position = 0
    for i1, i2, lines in sorted(mine + other, key=lambda change: (change[0], change[1])):
        result.extend(base[position:i1])
        result.extend(lines)
        position = i2
    result.extend(base[position:])
    return result


def _merge_mode(base: int, ours: int, theirs: int) -> int | None:
    if ours == base:
        return theirs
    if theirs == base or theirs == ours:
        return ours
    return None
