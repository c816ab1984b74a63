"""Taking back one hunk of a recorded change: which hunk a line of the file now points at, and
the content that has only that hunk taken back.

A hunk is one block of lines a change replaced, added or removed (``before`` → ``after``, as a
side-by-side diff shows it, no context lines). The person names it by a line of the file *as it
stands now*: the hunk's lines in ``after`` are mapped onto the current file (lines the person or
later turns added above it move it down; lines added inside it make it grow), and the hunk whose
mapped lines cover that line is the one. A hunk that removed lines covers the line on each side
of where they were.

``take_back_hunk`` answers ``before'``: ``after`` with just that hunk put back as it was in
``before``. The operation then takes back the change ``before' → after`` with the ordinary
three-way machinery (``planning.Planner``): the rest of ``after`` stays, the person's later
edits are kept, and a hunk edited since in the same lines is a conflict like any other.

Pure: bytes in, bytes out. Line endings are kept as they are (CRLF, a last line without one).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ..errors import InvalidInput
from .textdiff import is_binary


@dataclass(frozen=True, slots=True)
class Hunk:
    """One block of a change: lines ``before[old_start:old_end]`` became
    ``after[new_start:new_end]`` (0-based, end excluded), and where it stands in the file now:
    1-based lines ``first``..``last`` (for a hunk that only removed lines, the line on each side
    of the place, as far as the file has them)."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int
    first: int
    last: int

    def covers(self, line: int) -> bool:
        return self.first <= line <= self.last

    def holds(self, line: int) -> bool:
        """Whether 1-based ``line`` of the change's result is one of this hunk's lines (for a
        hunk that only removed lines, the line on each side of the place)."""
        if self.new_end > self.new_start:
            return self.new_start < line <= self.new_end
        return line in (self.new_start, self.new_start + 1)

    @property
    def shown(self) -> str:
        """``12-14`` or ``12``: its lines in the file now, as a person reads them."""
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"


class HunkAt(NamedTuple):
    """Which hunk a revert takes back: a path and a 1-based line, either of the file as it
    stands now (``of="now"``: the CLI's ``--hunk``, an editor's buffer) or of the change's own
    result (``of="change"``: the right side of a turn's or step's diff view)."""

    path: str
    line: int
    of: Literal["now", "change"] = "now"


def parse_hunk(text: str) -> HunkAt:
    """``src/app.py:40`` → (``src/app.py``, 40): a path and a line of it, as ``--hunk`` takes them."""
    path, colon, line = text.rpartition(":")
    if not colon or not path or not line.strip().isdigit():
        raise InvalidInput(f"--hunk {text!r}: give a file and a line in it, such as src/app.py:40")
    return HunkAt(path, int(line))


def lines(content: bytes) -> list[bytes]:
    """The lines of ``content``, each with its own ending (the last may have none)."""
    return content.splitlines(keepends=True)


def _matcher(a: list[bytes], b: list[bytes]) -> difflib.SequenceMatcher[bytes]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False)


class LineMap:
    """Where a boundary between lines of one version falls in another (``a`` → ``b``): exact
    next to lines both share; next to a line that changed, at the start (or, for an end,
    the end) of what it became, so a range grows with what was changed in and around it."""

    def __init__(self, a: list[bytes], b: list[bytes]) -> None:
        self.opcodes = [op for op in _matcher(a, b).get_opcodes() if op[2] > op[1]]  # blocks holding lines of ``a``
        self.len_b = len(b)

    def start(self, pos: int) -> int:
        """Where the range starting before line ``pos`` of ``a`` starts in ``b``."""
        for tag, a1, a2, b1, _b2 in self.opcodes:
            if a1 <= pos < a2:
                return b1 + (pos - a1) if tag == "equal" else b1
        return self.len_b

    def end(self, pos: int) -> int:
        """Where the range ending after line ``pos - 1`` of ``a`` ends in ``b``."""
        for tag, a1, a2, b1, b2 in self.opcodes:
            if a1 <= pos - 1 < a2:
                return b1 + (pos - a1) if tag == "equal" else b2
        return 0


def hunks(before: bytes, after: bytes, now: bytes) -> list[Hunk]:
    """The hunks of ``before`` → ``after``, each placed in ``now`` (1-based lines)."""
    old, new, cur = lines(before), lines(after), lines(now)
    to_now = LineMap(new, cur)
    found = []
    for tag, i1, i2, j1, j2 in _matcher(old, new).get_opcodes():
        if tag == "equal":
            continue
        start = to_now.start(j1)
        end = max(start, to_now.end(j2)) if j2 > j1 else start
        if end > start:
            first, last = start + 1, end
        else:  # nothing of it is left in the file: the lines on each side of its place
            first, last = max(start, 1), min(start + 1, max(len(cur), 1))
        found.append(Hunk(i1, i2, j1, j2, first, max(first, last)))
    return found


def take_back_hunk(
    before: bytes, after: bytes, now: bytes, line: int, path: str = "the file", of: Literal["now", "change"] = "now"
) -> tuple[bytes, Hunk]:
    """``after`` with only the hunk covering ``line`` of ``now`` (``of="change"``: of ``after``)
    put back as ``before`` had it, and that hunk. Raises ``InvalidInput`` for a binary file, or
    a line no hunk covers (naming the hunks nearest to it, in the file's lines now)."""
    for name, content in (("as the change left it", after), ("before the change", before), ("now", now)):
        if is_binary(content):
            raise InvalidInput(f"{path} is binary ({name}): a hunk is lines of text; take the whole file back instead")
    if line < 1:
        raise InvalidInput(f"line {line} of {path}: lines are counted from 1")
    found = hunks(before, after, now)
    if not found:
        raise InvalidInput(f"the change to {path} changed no line (only its mode or nothing): take the whole file back instead")
    chosen = next((h for h in found if (h.holds(line) if of == "change" else h.covers(line))), None)
    if chosen is None and of == "change":
        raise InvalidInput(f"line {line} of {path} as the change left it is in none of its hunks")
    if chosen is None:
        nearest = sorted(found, key=lambda h: min(abs(h.first - line), abs(h.last - line)))[:2]
        places = "lines " + " and ".join(h.shown for h in sorted(nearest, key=lambda h: h.first))
        raise InvalidInput(
            f"line {line} of {path} is in none of the change's hunks; the nearest, as the file stands now: {places}"
        )
    old, new = lines(before), lines(after)
    taken_back = new[: chosen.new_start] + old[chosen.old_start : chosen.old_end] + new[chosen.new_end :]
    return b"".join(taken_back), chosen


def touches(after: bytes, hunk: Hunk, later_before: bytes, later_after: bytes) -> bool:
    """Whether a later change (``later_before`` → ``later_after``) changed lines of ``hunk``
    (whose lines are ``after[hunk.new_start:hunk.new_end]``), mapped onto ``later_before``."""
    if any(is_binary(c) for c in (after, later_before, later_after)):
        return True
    to_later = LineMap(lines(after), lines(later_before))
    start = to_later.start(hunk.new_start)
    end = max(start, to_later.end(hunk.new_end)) if hunk.new_end > hunk.new_start else start
    for tag, i1, i2, _j1, _j2 in _matcher(lines(later_before), lines(later_after)).get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2 and start <= i1 <= end:  # lines added in or at the edge of it
            return True
        if i1 < end and start < i2 or (start == end and i1 <= start <= i2):
            return True
    return False
