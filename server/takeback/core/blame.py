"""Line attribution: who wrote each line of a file, carried through the timeline's own versions.

The input is the file's history as Takeback recorded it, oldest first: each change's content
before and after and who made it (``Change``), then the file as it stands now. Each line keeps
its origin (``BlameOrigin``) from version to version along a line diff (``textdiff.changed_blocks``):

- the first version's lines were there before the timeline (``before``);
- a change's ``before`` that differs from the previous change's ``after`` means the file changed
  in between, outside any recorded step: the person (``why="between"``), unless the change is
  its entry's own gap (``own_gap``: a turn's bracket, whose before is the turn's start, after
  its steps' changes) — then only the change's after is compared with the previous version;
- the lines a change writes are its author's; where the person replaces lines an agent wrote (a
  line in a changed block, paired by position), the new line keeps that agent's origin as
  ``edited_from``;
- an operation's change (undo, redo, revert, restore: ``restores``) puts back lines an earlier
  change took away: each line it adds takes the origin of the newest line of the same content
  that a change removed (so a reverted turn's lines are gone, and undoing the revert brings
  them back with their turn); a line no change removed is the operation's (the person's);
- content that is not known (withheld, binary, a symlink: ``None`` with ``known`` False) breaks
  the chain: the next known version's lines are ``unknown``;
- finally the newest version is compared with the file now: what differs is the person's
  (``why="since"``).

Commit ids play no part, so the answer survives amend, rebase and squash. Pure: bytes in,
origins out; the engine (``engine/blame.py``) reads the versions from the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .models import BlameOrigin
from .textdiff import changed_blocks, split_lines

BEFORE = BlameOrigin(kind="before")
UNKNOWN = BlameOrigin(kind="unknown")
SINCE = BlameOrigin(kind="person", why="since")
BETWEEN = BlameOrigin(kind="person", why="between")


@dataclass(frozen=True, slots=True)
class Change:
    """One recorded change of the file: ``before`` → ``after`` (None: no file, or with
    ``*_known`` False: content not known), made by ``by``."""

    before: bytes | None
    after: bytes | None
    by: BlameOrigin
    before_known: bool = True
    after_known: bool = True
    restores: bool = False
    own_gap: bool = False


@dataclass
class Attribution:
    """The origins of the newest version's lines after some changes (``fold``): what a long-lived
    process may keep and carry on from when more changes come (``engine/blame.py``)."""

    content: bytes | None = None  # the newest version (None: not known, or none yet)
    origins: list[BlameOrigin] = field(default_factory=list)
    started: bool = False
    removed: dict[bytes, list[BlameOrigin]] = field(default_factory=dict)  # line: origins of lines changes took away
    lines: list[bytes] | None = None  # ``split_lines(content)``, once

    def copy(self) -> Attribution:
        """A copy to carry on from (``removed``'s lists are taken from by a restore)."""
        return Attribution(self.content, list(self.origins), self.started,
                           {line: list(found) for line, found in self.removed.items()}, self.lines)


def attribute(changes: list[Change], now: bytes) -> list[BlameOrigin]:
    """The origin of each line of ``now`` (``textdiff.split_lines``), after ``changes`` (oldest first)."""
    return finish(fold(changes), now)


def fold(changes: list[Change], state: Attribution | None = None) -> Attribution:
    """``state`` (None: nothing yet) carried through ``changes`` (oldest first); changed in place."""
    state = state if state is not None else Attribution()
    for change in changes:
        _apply(state, change)
    return state


def finish(state: Attribution, now: bytes) -> list[BlameOrigin]:
    """The origin of each line of ``now``, the file after the changes ``state`` folded."""
    state = Attribution(state.content, state.origins, state.started, {}, state.lines)  # (``removed`` not needed)
    if state.content is None:  # no version recorded (the lines are older), or the newest not known
        _start(state, now, UNKNOWN if state.started else BEFORE)
    else:
        _carry(state, now, SINCE)
    return state.origins


def _lines(state: Attribution) -> list[bytes]:
    if state.lines is None:
        state.lines = split_lines(state.content or b"")
    return state.lines


def _start(state: Attribution, content: bytes, origin: BlameOrigin) -> None:
    state.content, state.started, state.lines = content, True, split_lines(content)
    state.origins = [origin] * len(state.lines)


def _apply(state: Attribution, change: Change) -> None:
    if not change.before_known:
        pass  # no before to compare with: the change is taken from the newest version known
    elif not state.started:
        _start(state, change.before or b"", BEFORE)
    elif state.content is None:
        _start(state, change.before or b"", UNKNOWN)
    elif (change.before or b"") != state.content and not change.own_gap:
        _carry(state, change.before or b"", BETWEEN)
    if not change.after_known:
        state.content, state.origins, state.started, state.lines = None, [], True, None
        return
    if state.content is None:  # nothing known to carry from: which lines it wrote is not known
        _start(state, change.after or b"", UNKNOWN)
        return
    _carry(state, change.after or b"", change.by, change.restores)


def _carry(state: Attribution, new: bytes, by: BlameOrigin, restores: bool = False) -> None:
    """Carry ``state``'s origins to ``new``: the lines that changed are ``by``'s."""
    old = state.content or b""
    if new == old:
        return
    old_lines, new_lines = _lines(state), split_lines(new)
    origins: list[BlameOrigin] = []
    at = 0
    for i1, i2, j1, j2 in changed_blocks(old, new):
        origins.extend(state.origins[at:i1])
        for k in range(i1, i2):
            state.removed.setdefault(old_lines[k], []).append(state.origins[k])
        for k in range(j1, j2):
            origins.append(_written(state, by, new_lines[k], state.origins[i1 + k - j1] if i1 + k - j1 < i2 else None, restores))
        at = i2
    origins.extend(state.origins[at:])
    state.content, state.origins, state.lines = new, origins, new_lines


def _written(state: Attribution, by: BlameOrigin, line: bytes, replaced: BlameOrigin | None, restores: bool) -> BlameOrigin:
    """The origin of ``line``, written by ``by`` in place of a line of origin ``replaced``."""
    if restores:
        earlier = state.removed.get(line)
        if earlier:
            return earlier.pop()
    if by.kind == "person" and replaced is not None:
        agent = replaced if replaced.kind == "turn" else replaced.edited_from
        if agent is not None:
            return by.model_copy(update={"edited_from": agent})
    return by


def with_commits(origins: list[BlameOrigin], now: bytes, head: bytes, commits: list[str]) -> list[BlameOrigin]:
    """``origins`` (of the lines of ``now``) with each line from before the timeline that HEAD's
    version of the file (``head``) holds in the same place given its ``git blame`` commit
    (``commits``, one a line of ``head``; "" where none is known)."""
    out = list(origins)
    named: dict[str, BlameOrigin] = {}
    size_head, size_now = len(split_lines(head)), len(split_lines(now))
    at_head = at_now = 0
    for i1, i2, _j1, j2 in [*changed_blocks(head, now), (size_head, size_head, size_now, size_now)]:
        for k in range(i1 - at_head):  # the lines both hold, up to this block
            line, commit = at_now + k, commits[at_head + k]
            if out[line].kind == "before" and commit:
                out[line] = named.setdefault(commit, BEFORE.model_copy(update={"commit": commit}))
        at_head, at_now = i2, j2
    return out
