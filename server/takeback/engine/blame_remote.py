"""Blame across teammates: a line this workspace's timeline cannot name (``before`` the
timeline, or the person's with no agent's line under it) that a teammate's fetched turn wrote
is that turn's.

Why: Alice's turns reach Bob as content (her commits, rebased or squashed into main) and as her
timeline (``share fetch``); his own timeline never saw them, so his blame says "before the
timeline" or "person". For each fetched timeline that changed the file at the same path, the
file's history in it (``blame.file_history``, the same reading as the local blame) is attributed
(``core/blame.attribute``) up to its newest version; the lines that version and the file now
hold alike (a line diff, ``textdiff.changed_blocks``) take the teammate's origin, with its
``remote`` and ``who``, where it is an agent's turn. When several teammates' turns wrote the
same line, the newest (by its step's time) is named.

Contents come from ``shared.git`` (``remote.Contents``: fetched when missing, one at a time);
a content that cannot be had reads as not known (no line of it is attributed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ..core.blame import attribute
from ..core.models import Blame, BlameOrigin
from ..core.textdiff import changed_blocks, split_lines
from ..storage.store import Store
from . import remote
from .blame import file_history

if TYPE_CHECKING:
    from ..workspace.capture import Capturer


def with_teammates(answer: Blame, store: Store, capture: Capturer, rel: str, now: bytes) -> Blame:
    """``answer`` (the local blame of ``rel``, content ``now``) with the lines no local turn
    wrote given to the teammate's turn that wrote them, if one did."""
    open_lines = [line for line in answer.lines if _unnamed(line.origin)]
    names = remote.fetched(store) if open_lines else {}
    if not names:
        return answer
    found = teammates_lines(store, capture, rel, now, names)
    if not any(found):
        return answer
    lines = [line.model_copy(update={"origin": found[line.line - 1]}) if _unnamed(line.origin) and found[line.line - 1]
             else line for line in answer.lines]
    return answer.model_copy(update={"lines": lines})


def _unnamed(origin: BlameOrigin) -> bool:
    """Whether the local blame names no agent for a line: before the timeline, or the person's
    own with no agent's line under it."""
    return origin.kind == "before" or (origin.kind == "person" and origin.edited_from is None)


def teammates_lines(store: Store, capture: Capturer, rel: str, now: bytes, names: dict[str, str]) -> list[BlameOrigin | None]:
    """For each line of ``now``, the newest teammate's turn (of the timelines ``names``) whose
    newest version of ``rel`` holds that line in the same place, or None."""
    best: list[BlameOrigin | None] = [None] * len(split_lines(now))
    for name, tip in sorted(names.items()):
        mate = remote.read(store, name, tip)
        contents = remote.Contents(store, mate.remote, capture)
        changes, _count = file_history(mate.timeline, cast("Capturer", contents), rel)
        known = [c for c in changes if c.after_known]
        if not known or known[-1] is not changes[-1] or changes[-1].after is None:
            continue  # their newest version is not known (withheld, binary) or the file is gone
        theirs = changes[-1].after
        origins = attribute(changes, theirs)
        size_theirs, size_now = len(split_lines(theirs)), len(split_lines(now))
        at_theirs = at_now = 0
        for i1, i2, _j1, j2 in [*changed_blocks(theirs, now), (size_theirs, size_theirs, size_now, size_now)]:
            for k in range(i1 - at_theirs):  # the lines both hold, up to this block
                origin = origins[at_theirs + k]
                if origin.kind != "turn":
                    continue
                held = best[at_now + k]
                if held is None or (origin.at is not None and held.at is not None and origin.at > held.at):
                    best[at_now + k] = origin.model_copy(update={"remote": mate.remote, "who": mate.who})
            at_theirs, at_now = i2, j2
    return best
