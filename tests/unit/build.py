"""Hand-built inputs for the unit tests: records of an operation log, file versions and disk
files, with no engine, store or repository behind them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from takeback.core.models import (
    MODE_FILE,
    Check,
    CheckpointApplied,
    CheckpointRecorded,
    CheckRecorded,
    EntryBegun,
    FileVersion,
    OperationDone,
    PathChange,
    Record,
    TurnEnded,
)
from takeback.core.timeline import Timeline
from takeback.storage.store import Store

START = datetime(2026, 3, 4, 12, 0, 0, tzinfo=UTC)


def version(text: str | bytes, mode: int = MODE_FILE, withheld: str | None = None) -> FileVersion:
    """A file version as the store would name it (its git blob id), for content ``text``."""
    content = text.encode() if isinstance(text, str) else text
    oid = ("hmac:" + Store.hash_blob(content)) if withheld else Store.hash_blob(content)
    return FileVersion(oid=oid, mode=mode, size=len(content), withheld=withheld)


def change(path: str, before: str | None, after: str | None, **extra) -> PathChange:
    """What one checkpoint did to ``path`` (None = absent on that side)."""
    return PathChange(
        path=path,
        before=None if before is None else version(before),
        after=None if after is None else version(after),
        **extra,
    )


class Log:
    """An operation log written by hand: each call appends records, numbering entries as the
    engine does (1, 2, 3 …) and giving every record a distinct id in log order."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.number = 0
        self._seq = 0

    def _id(self, prefix: str) -> str:
        self._seq += 1
        return f"01{prefix}{self._seq:020d}"[:26].ljust(26, "0")

    def _at(self) -> datetime:
        return START + timedelta(seconds=self._seq)

    def begin(self, kind: str = "turn", label: str | None = None, session: str | None = None,
              source: str = "bracket", agent: str | None = None) -> str:
        self.number += 1
        entry = self._id("EN")
        self.records.append(EntryBegun(id=self._id("BG"), at=self._at(), entry=entry, number=self.number,
                                      kind=kind, label=label, session=session, source=source, agent=agent))
        return entry

    def checkpoint(self, entry: str, *changes: PathChange, applied: bool = True, bracket: bool = False,
                   notices: list[str] | None = None, label: str | None = None) -> str:
        cp = self._id("CP")
        self.records.append(CheckpointRecorded(id=cp, at=self._at(), entry=entry, changes=list(changes),
                                               applied=applied, bracket=bracket, notices=notices or [], label=label))
        return cp

    def applied(self, entry: str, checkpoint: str, applied: bool) -> None:
        self.records.append(CheckpointApplied(id=self._id("AP"), at=self._at(), entry=entry,
                                              checkpoint=checkpoint, applied=applied))

    def end(self, entry: str, ended_by: str | None = "stop", checks: list[Check] | None = None,
            commands: list[str] | None = None) -> None:
        self.records.append(TurnEnded(id=self._id("ND"), at=self._at(), entry=entry, ended_by=ended_by,
                                      checks=checks or [], commands=commands or []))

    def check(self, entry: str, name: str, status: str) -> None:
        self.records.append(CheckRecorded(id=self._id("CK"), at=self._at(), entry=entry,
                                          check=Check(name=name, status=status)))

    def turn(self, *changes: PathChange, label: str | None = None, **begin) -> str:
        """A whole agent turn: begin, one checkpoint with ``changes``, end by the agent's stop."""
        entry = self.begin(label=label, **begin)
        self.checkpoint(entry, *changes)
        self.end(entry)
        return entry

    def operation(self, kind: str, target: str, effects: dict[str, str], *changes: PathChange,
                  verdict: str = "safe", previous: dict[str, str] | None = None,
                  skipped: list[str] | None = None) -> str:
        """An operation entry as ``Operations._execute`` writes it: begin, its checkpoint, done."""
        entry = self.begin(kind=kind, source="operation")
        if changes:
            self.checkpoint(entry, *changes)
        self.records.append(OperationDone(id=self._id("OP"), at=self._at(), entry=entry, target=target,
                                          verdict=verdict, effects=effects, previous=previous or {},
                                          skipped=skipped or []))
        return entry

    def fold(self) -> Timeline:
        timeline = Timeline()
        for record in self.records:
            timeline.apply(record)
        return timeline
