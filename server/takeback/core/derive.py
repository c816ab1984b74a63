"""Before-images derived from an edit reported only after it was made, and verified.

Cursor's ``afterFileEdit`` names a file and the replacements made in it (old text → new text),
once the file is written: there is no before-hook to capture the file first. A before-image is
kept only when it is the only one that fits (promise 9):

* the reversal is unique: going back through the edits, each new text occurs exactly once in
  the file, so each replacement can only have been made there;
* or a version known from elsewhere (the last one Takeback recorded for the path, git's HEAD or
  index) gives the file now when the edits are made on it.

When the candidates that fit disagree, or none fits, there is no before-image: the caller
records the file as "before unknown" (``models.before_unknown``), and undo leaves it alone.
Pure text in, text out; hand-written (no library derives an edit's preimage).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Edit = tuple[str, str]  # (old text, new text)
_MAX_WAYS = 256  # ways of making the edits tried before giving up (then the candidate does not fit)


def reversed_uniquely(after: str, edits: Sequence[Edit]) -> str | None:
    """The text before ``edits`` when each new text, taken back last edit first, occurs exactly
    once in the text at that point; else None (an empty new text could have been anywhere)."""
    if not edits:
        return None
    text = after
    for old, new in reversed(edits):
        if not new or text.count(new) != 1:
            return None
        at = text.find(new)
        text = text[:at] + old + text[at + len(new):]
    return text


def gives(before: str, edits: Sequence[Edit], after: str) -> bool:
    """Whether making ``edits`` in turn on ``before`` (each old text replaced at one of its
    places) can give ``after``."""
    texts = {before}
    for old, new in edits:
        if not old:
            return False  # an insertion could have been anywhere: nothing to check it against
        made: set[str] = set()
        for text in texts:
            at = text.find(old)
            while at >= 0:
                made.add(text[:at] + new + text[at + len(old):])
                at = text.find(old, at + 1)
        if not made or len(made) > _MAX_WAYS:
            return False
        texts = made
    return after in texts


def only_fit(after: str, edits: Sequence[Edit], known: Iterable[str]) -> str | None:
    """The one before-image that fits ``after`` and ``edits`` (see the module's rules), or None."""
    fits = {k for k in known if gives(k, edits, after)}
    unique = reversed_uniquely(after, edits)
    if unique is not None:
        fits.add(unique)
    return next(iter(fits)) if len(fits) == 1 else None
