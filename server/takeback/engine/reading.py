"""Reading the timeline: entries, one entry, diffs, a file's content at a turn, the hunks of past
entries that lines of a file still hold (``hunks_here.py``), the store's status.

``Reading`` is the part of ``Engine`` (a mixin, declared in ``parts.py``) that answers questions;
each answer is read in a transaction, so it never sees an operation half-way.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..core.models import (
    MODE_LINK,
    Blame,
    Entry,
    FileVersion,
    StoreRepair,
    StoreStatus,
)
from ..core.terminal import quote_path
from ..core.textdiff import is_binary, unified_diff
from ..errors import (
    InvalidInput,
    NotFound,
    StateError,
)
from ..storage import repair
from . import blame, blame_remote, failures, hunks_here
from .history import collector_paused
from .parts import EngineParts

log = logging.getLogger("takeback.engine")


class Reading(EngineParts):
    """Answers about the timeline (a part of ``Engine``)."""

    def entries(
        self, session: str | None = None, limit: int | None = None, before: int | None = None, files: bool = True,
        empty: bool = True,
    ) -> list[Entry]:
        """Timeline entries, newest first; ``before`` pages by entry number. ``files=False``: each
        as a header where its file lists are not in memory (``Timeline.header``: counts, no list;
        an older page's entries as the page keeps them, ``Timeline.headers_newest_first``).
        ``empty=False`` leaves out empty turns (``Timeline.empty``)."""
        with self.transaction(), collector_paused():
            out = []

            def listed(entry_session: str | None, number: int) -> bool:
                return (session is None or entry_session == session) and (before is None or number < before)

            timeline = self.timeline  # (the older pages read only if the walk gets there; for headers, their headers)
            found = (
                map(timeline.view, (s for s in timeline.newest_first() if listed(s.begun.session, s.begun.number)
                                    and (empty or not timeline.empty(s))))
                if files else
                (h for h in timeline.headers_newest_first() if listed(h.session, h.number) and (empty or not h.empty_turn))
            )
            for entry in found:
                out.append(entry)
                if limit is not None and len(out) >= limit:
                    break
            return out

    def page(self, session: str | None = None, limit: int = 50, before: int | None = None, empty: bool = True) -> Page:
        """One page of the timeline for a panel, newest first: up to ``limit`` entries numbered
        below ``before``, whether older ones follow, and (``empty=False``) how many empty turns it
        left out in the span it covers, down to the next page's start (``Timeline.empty``); and
        each listed session's first turn and first prompt (``Timeline.session_starts``)."""
        with self.transaction(), collector_paused():
            shown: list[Entry] = []
            hidden = tail = 0
            more = False
            for state in self.timeline.newest_first():
                if session is not None and state.begun.session != session:
                    continue
                if before is not None and state.begun.number >= before:
                    continue
                skip = not empty and self.timeline.empty(state)
                if len(shown) >= limit:
                    if not skip:
                        more = True  # the empty turns seen meanwhile are the next page's
                        break
                    tail += 1
                    continue
                if skip:
                    hidden += 1
                else:
                    shown.append(self.timeline.view(state))
            wanted = {e.session for e in shown if e.session}
            starts = {
                sid: SessionStart(session=sid, label=label, number=state.begun.number, created_at=state.begun.at)
                for sid, (state, label) in self.timeline.session_starts(wanted).items()
            }
            return Page(entries=shown, more=more, hidden_empty=hidden + (0 if more else tail),
                        sessions=[starts[s] for s in _in_order(shown) if s in starts])

    def entry(self, turn: str) -> Entry:
        with self.transaction():
            return self.timeline.view(self.timeline.resolve(turn))

    def diff(self, turn: str, path: str | None = None) -> str:
        """The unified diff of what an entry changed (one file, or all)."""
        entry = self.entry(turn)
        rel = self.workspace.rel(path) if path else None
        parts = []
        for change in entry.files:
            if rel is not None and rel not in (change.path, change.old_path):
                continue
            if change.withheld:
                names = f"{quote_path('a/' + change.path)} {quote_path('b/' + change.path)}"  # quoted as git quotes its headers
                parts.append(f"diff --takeback {names}\n# content withheld ({change.withheld}): not stored\n")
                continue
            before = self.store.read_blob(change.before.oid) if change.before else None
            after = self.store.read_blob(change.after.oid) if change.after else None
            parts.append(
                unified_diff(
                    change.path, before, after, old_path=change.old_path,
                    before_mode=change.before.mode if change.before else None,
                    after_mode=change.after.mode if change.after else None,
                )
            )
        if rel is not None and not parts:
            raise NotFound(f"turn #{entry.number} did not change {rel}")
        return "".join(parts)

    def file_at(self, turn: str, path: str, side: str = "after", step: int | None = None) -> bytes | None:
        """A path's content before or after an entry, or (``step``: k, from 1, as in ``#N.k``)
        before or after that step of it (None: it did not exist then)."""
        if side not in ("before", "after"):
            raise InvalidInput(f"side must be 'before' or 'after', not {side!r}")
        if step is not None:
            return self._file_at_step(turn, path, side, step)
        entry = self.entry(turn)
        rel = self.workspace.rel(path)
        for change in entry.files:
            if rel == change.path or (side == "before" and rel == change.old_path):
                version = change.before if side == "before" else change.after
                if rel == change.old_path and change.kind == "renamed":
                    version = change.before
                return self._content(rel, version)
        kept = next((lost.kept for lost in entry.lost if lost.path == rel and lost.kept is not None), None)
        if side == "before" and kept is not None:  # an ignored file its guarded call destroyed, kept before it ran
            return self._content(rel, kept)
        raise NotFound(f"turn #{entry.number} did not change {rel}")

    def _file_at_step(self, turn: str, path: str, side: str, step: int) -> bytes | None:
        with self.transaction():
            state = self.timeline.resolve(turn)
            number = state.begun.number
            if not 1 <= step <= len(state.checkpoints):
                raise NotFound(f"#{number} has no step {step} (it has {len(state.checkpoints)})")
            rel = self.workspace.rel(path)
            for change in state.checkpoints[step - 1].changes:
                if rel == change.path or (side == "before" and rel == change.renamed_from):
                    return self._content(rel, change.before if side == "before" else change.after)
            raise NotFound(f"step #{number}.{step} did not change {rel}")

    def hunks_in(self, path: str, now: bytes | None = None) -> list[hunks_here.HunkHere]:
        """Every hunk of a past turn or mark that ``path`` still holds as it stands now (``now``:
        an editor's buffer; None: the file on disk), newest entry first (``hunks_here.hunks_in``,
        which owns the rule and its bounds)."""
        with self.transaction():
            rel = self.workspace.rel(path)
            if now is None:
                version = self.workspace.read(rel)
                if version is None or version.mode == MODE_LINK:
                    return []
                now = version.content
            return hunks_here.hunks_in(self.timeline, self.capture, rel, now)

    def hunks_at(
        self, path: str, first: int, last: int, now: bytes | None = None, entries: int = hunks_here.ENTRIES,
    ) -> list[hunks_here.HunkHere]:
        """The hunks ``hunks_in`` finds whose lines now overlap 1-based ``first``..``last``, of
        at most ``entries`` entries, newest first: what "take back these lines" offers."""
        return hunks_here.covering(self.hunks_in(path, now), first, last, entries)

    def blame(self, path: str, first: int | None = None, last: int | None = None, now: bytes | None = None) -> Blame:
        """Who wrote each line of ``path`` as it stands on disk (``now``: as an editor's buffer
        holds it), lines ``first``..``last`` (1-based; None: from the top, to the end): an
        agent's turn and step, the person, or before the timeline (``core/blame.py`` owns the
        rule, ``engine/blame.py`` reads it)."""
        with self.transaction():
            rel = self.workspace.rel(path)
            version = self.workspace.read(rel) if now is None else None
            if now is None and version is None:
                raise NotFound(f"{quote_path(rel)} is not a file in the workspace now: blame reads the file as it stands")
            if version is not None and (version.mode == MODE_LINK or is_binary(version.content)):
                kind = "a symlink" if version.mode == MODE_LINK else "binary"
                raise InvalidInput(f"{quote_path(rel)} is {kind}: blame names who wrote lines of text")
            if now is not None and is_binary(now):
                raise InvalidInput(f"{quote_path(rel)} is binary: blame names who wrote lines of text")
            content = now if now is not None else version.content if version is not None else b""
            if first is not None and last is not None and first > last:
                raise InvalidInput(f"-L {first},{last}: the first line comes after the last")
            self._user_head()  # (finds the person's repository, once)
            repo = self._user_repo or None
            answer = blame.blame_file(self.timeline, self.capture, rel, content, repo, self.workspace.root, first, last)
            return blame_remote.with_teammates(answer, self.store, self.capture, rel, content)

    def _content(self, rel: str, version: FileVersion | None) -> bytes | None:
        """The bytes of ``rel`` at ``version`` (None: no file then); withheld content was never stored."""
        if version is None:
            return None
        if version.withheld:
            raise StateError(f"{rel}: content withheld by policy ({version.withheld}); it was never stored")
        return self.store.read_blob(version.oid)

    def status(self, files: bool = True) -> StoreStatus:
        """The store's status; ``files=False``: its entries as headers (``entries``), which is
        all its printed lines show."""
        with self.transaction():
            view = self.timeline.view if files else self.timeline.header
            last = self.timeline.last_entry()
            open_states = self.timeline.open_turns()
            undo, redo, _settled = self.targets(files)  # the operations' own rule (``Operations.targets``)
            undo_target = undo.number if undo is not None else None
            redo_target = redo.number if redo is not None else None
            user_head = self._user_head()
            return StoreStatus(
                workspace=str(self.workspace.root),
                store=str(self.store.path),
                store_bytes=self.store.size_bytes(),
                entries=self.timeline.entry_count,
                turns=self.timeline.turn_count,
                open_turn=view(open_states[-1]) if open_states else None,
                open_turns=[view(s) for s in open_states],
                last_entry=view(last) if last is not None else None,
                undo_target=undo_target,
                redo_target=redo_target,
                git_repository=bool(self._user_repo),
                head=user_head,
                retention=self.config.retention,
                fsync=self.config.fsync,
                last_recovery=self.last_recovery or self.journal.last_report(),
                repairs=_repairs(self.store.path),
                config_problems=list(self.config.problems),
                **failures.summary(self.store.path),
                unsaved=self.unsaved(),
            )


@dataclass(frozen=True)
class SessionStart:
    """How a session begins: its first agent turn's number and time, and its first prompt."""

    session: str
    label: str | None
    number: int
    created_at: datetime


@dataclass(frozen=True)
class Page:
    """A page of the timeline (``Reading.page``)."""

    entries: list[Entry]
    more: bool
    hidden_empty: int
    sessions: list[SessionStart]


def _in_order(entries: list[Entry]) -> list[str]:
    """The sessions of ``entries``, each once, in the order they first appear."""
    return list(dict.fromkeys(e.session for e in entries if e.session))


def _repairs(store: Path) -> list[StoreRepair]:
    """The repairs kept in the store's ``quarantine/`` (``repair.py``), oldest first."""
    found = []
    for doc in repair.reports(store):
        log_moved = doc.get("log") or {}
        try:
            found.append(StoreRepair(
                at=doc["at"], folder=doc["folder"], files=doc.get("files", []), lost=doc.get("lost", []),
                log_was=log_moved.get("was"), log_now=log_moved.get("now"), log_now_subject=log_moved.get("now_subject"),
            ))
        except (KeyError, ValueError):
            continue
    return found
