"""Which past entries' hunks the lines of a file still hold as it stands now: what a code action
on those lines ("Take back these lines from turn #12") offers, and the line that names each hunk
to ``revert``'s ``hunk`` (``HunkAt(path, line, "now")``).

The rule, owned here:

- entries: agent turns and the person's marks that are applied (``applied`` or ``partial``);
  not undo, redo, revert or restore entries, not a turn taken back or never applied, not a
  turn still open (its agent is at work; offered once it ends). An entry's change to the file
  is the one ``revert`` takes back: its applied steps' own before (``narrow.own_before``: the
  person's edits between its steps are not its hunks) → last after, as ``narrow._hunk_steps``
  reads it.
- a hunk is offered only while the file now still holds, in its lines, exactly what the change
  wrote there (``held``): a hunk taken back since (by a hunk revert, a step revert, the person)
  holds ``before`` again and is not offered; nor is one a later turn or the person changed since
  in the same lines, whose take-back would be a conflict: the newer change is offered there
  instead, and once it is taken back the older one is offered again.
- bounded, so a code action costs the file's recent history: the ``WALK`` newest entries are
  looked through, and of them at most ``TOUCHING`` that changed the file; a file larger than
  ``MAX_BYTES``, binary, a symlink or withheld content has no hunk to offer (``takeback revert
  N --hunk`` still takes one back, and says why it cannot).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..core.hunks import Hunk, hunks, lines
from ..core.models import MODE_LINK, PathChange
from ..core.textdiff import is_binary
from ..core.timeline import FoldedEntry, Timeline, relevant_steps
from ..errors import TakebackError
from ..workspace.capture import Capturer
from .narrow import own_before

WALK = 1000
"""How many of the newest entries are looked through."""
TOUCHING = 50
"""How many entries that changed the file are read, newest first."""
MAX_BYTES = 1_000_000
"""A larger file (now, or as an entry left it) offers no hunk: the line diffs would not be cheap."""
ENTRIES = 3
"""How many entries a range of lines names (``covering``), newest first."""


@dataclass(frozen=True, slots=True)
class HunkHere:
    """One hunk of an entry's change that lines of the file now still hold."""

    entry: str
    """The entry's id (what ``revert`` and ``expectTurnId`` take)."""
    number: int
    kind: str
    """``turn`` or ``mark``."""
    label: str | None
    first: int
    last: int
    """Its lines in the file now (1-based; a hunk that only removed lines: the line on each side)."""
    line: int
    """A 1-based line of the file now that names this hunk to ``revert`` (``HunkAt(path, line, "now")``)."""

    def overlaps(self, first: int, last: int) -> bool:
        return self.first <= last and first <= self.last


def hunks_in(timeline: Timeline, capture: Capturer, rel: str, now: bytes) -> list[HunkHere]:
    """Every hunk that the file ``rel`` (content ``now``) still holds, of the entries the rule
    above offers: newest entry first, each entry's hunks top to bottom."""
    if len(now) > MAX_BYTES or is_binary(now):
        return []
    found: list[HunkHere] = []
    touching = 0
    for walked, state in enumerate(timeline.newest_first()):
        if walked >= WALK or touching >= TOUCHING:
            break
        if state.begun.kind not in ("turn", "mark") or state.state not in ("applied", "partial"):
            continue
        changes = _change_to(state, rel)
        if changes is None:
            continue
        touching += 1
        sides = _sides(capture, changes, rel, state.begun.number)
        if sides is None:
            continue
        before, after = sides
        placed = hunks(before, after, now)
        for hunk in placed:
            line = _naming_line(placed, hunk)
            if line is not None and held(after, now, hunk):
                b = state.begun
                found.append(HunkHere(b.entry, b.number, b.kind, b.label, hunk.first, hunk.last, line))
    return found


def covering(found: list[HunkHere], first: int, last: int, entries: int = ENTRIES) -> list[HunkHere]:
    """The hunks of ``found`` (``hunks_in``'s order) whose lines now overlap ``first``..``last``,
    of at most ``entries`` entries, newest first."""
    out: list[HunkHere] = []
    named: set[str] = set()
    for hunk in found:
        if not hunk.overlaps(first, last):
            continue
        if hunk.entry not in named:
            if len(named) >= entries:
                break
            named.add(hunk.entry)
        out.append(hunk)
    return out


def held(after: bytes, now: bytes, hunk: Hunk) -> bool:
    """Whether ``now`` still holds, where ``hunk`` is, exactly what the change wrote: none of
    its lines of ``after`` changed or removed, no line put in among them; for a hunk that only
    removed lines, its two neighbours still side by side (nothing put back between them)."""
    start, end = hunk.new_start, hunk.new_end
    matcher = difflib.SequenceMatcher(None, lines(after), lines(now), autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if end > start and (i1 < end and start < i2 or i1 == i2 and start < i1 < end):
            return False
        if end == start and i1 <= start <= i2:
            return False
    return True


def _change_to(state: FoldedEntry, rel: str) -> list[PathChange] | None:
    """The entry's changes to ``rel`` as ``revert`` takes them back, oldest first."""
    applied = [cp for cp in state.checkpoints if state.applied.get(cp.id, True)]
    if not any(change.path == rel for cp in applied for change in cp.changes):
        return None
    return relevant_steps(applied)[rel]


def _sides(capture: Capturer, changes: list[PathChange], rel: str, number: int) -> tuple[bytes, bytes] | None:
    """The change's before (the turn's own: ``narrow.own_before``, as ``revert`` plans a hunk)
    and after as text, or None when it has no lines to offer (the file deleted, a symlink,
    content not stored, binary, too large, the person's edits between its steps overlapping
    them)."""
    before, after = changes[0].before, changes[-1].after
    if after is None or after.mode == MODE_LINK or after.withheld:
        return None
    if before is not None and (before.mode == MODE_LINK or before.withheld):
        return None
    try:
        sides = (b"" if before is None else own_before(capture, changes, rel, number), capture.content(after))
    except TakebackError:
        return None
    if any(len(side) > MAX_BYTES or is_binary(side) for side in sides):
        return None
    return sides


def _naming_line(placed: list[Hunk], hunk: Hunk) -> int | None:
    """A line of the file now that ``revert`` resolves to ``hunk`` (the first hunk covering a
    line is the one it takes: ``core.hunks.take_back_hunk``); None: every line of it names an
    earlier hunk first."""
    for line in range(hunk.first, hunk.last + 1):
        if next(h for h in placed if h.covers(line)) is hunk:
            return line
    return None
