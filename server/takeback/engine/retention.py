"""Retention: keep the store bounded (entries kept, age, bytes) and drop what falls out.

Dropping an entry rewrites the operation log without that entry's records (the records of
every kept entry are copied unchanged, so ids and numbers stay), tops it with a record of what
retention has dropped so far (numbers, when, why: a dropped turn is then named as dropped, not
unknown), moves the ref by compare-and-swap, then deletes the objects nothing references any
more. Blobs still named by an open bracket or the stat cache are kept. The open turn is never
dropped. The index copies no open step links (``brackets.sweep``: the one kept for the next
step) are removed first, so they never count against the bytes the policy allows.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from ..core.clock import new_id as _new_id
from ..core.clock import now as _now
from ..core.models import DroppedSpan, EntriesDropped, GcReport, Record, RecordEnvelope
from ..scanning.scan import snapshot_versions
from . import brackets

if TYPE_CHECKING:
    from .engine import Engine

_SPANS_KEPT = 1000  # what retention dropped is remembered for this many runs of numbers


def _drop_set(engine: Engine, extra_fraction: float) -> dict[str, str]:
    """The entries to drop, each with why (the policy's words for the person)."""
    policy = engine.config.retention
    ordered = engine.timeline.ordered()
    open_states = engine.timeline.open_turns()
    # the count keeps the newest max_entries entries that are not empty turns (``Timeline.empty``):
    # every entry older than the oldest of them goes, empty turns between them stay
    counted = [i for i, state in enumerate(ordered) if not engine.timeline.empty(state)]
    extra = len(counted) - policy.max_entries
    by_count = counted[extra] if extra > 0 else 0
    by_bytes = max(by_count, int(len(ordered) * extra_fraction)) if extra_fraction else by_count
    cutoff = datetime.now(UTC) - timedelta(days=policy.max_age_days)
    drop: dict[str, str] = {}
    for index, state in enumerate(ordered):
        if state in open_states or index == len(ordered) - 1:
            continue
        if index < by_count:
            kept = "entry" if policy.max_entries == 1 else f"{policy.max_entries} entries"
            drop[state.begun.entry] = f"keeping the newest {kept}"
        elif index < by_bytes:
            drop[state.begun.entry] = f"the store was over its size limit of {_size(policy.max_bytes)}"
        elif state.begun.at < cutoff:
            drop[state.begun.entry] = f"older than {policy.max_age_days} days"
    return drop


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n} bytes"


def _spans(engine: Engine, drop: dict[str, str], at: datetime) -> list[DroppedSpan]:
    """The dropped entries as runs of numbers with one reason each."""
    spans: list[DroppedSpan] = []
    for state in engine.timeline.ordered():
        why = drop.get(state.begun.entry)
        if why is None:
            continue
        number = state.begun.number
        last = spans[-1] if spans else None
        if last is not None and last.why == why and last.last == number - 1:
            last.last = number
        else:
            spans.append(DroppedSpan(first=number, last=number, at=at, why=why))
    return spans


def _referenced_blobs(engine: Engine) -> set[str]:
    keep: set[str] = set()
    for data in brackets.snapshots(engine.store.path / "brackets"):
        for version in snapshot_versions(data):
            if not version.get("withheld"):
                keep.add(version["oid"])
    cache = engine.store.path / "statcache.json"
    if cache.exists():
        try:
            for _sig, version, _at in json.loads(cache.read_text()).values():
                if not version.get("withheld"):
                    keep.add(version["oid"])
        except (ValueError, TypeError, AttributeError, KeyError):  # not the cache Takeback writes: drop it
            cache.unlink(missing_ok=True)
    return keep


def _rewrite(engine: Engine, drop: dict[str, str]) -> list[DroppedSpan]:
    """The log without the dropped entries' records, topped by one record of everything dropped
    so far (it replaces the previous one), published by one compare-and-swap. Answers what this
    rewrite dropped."""
    store = engine.store
    head = store.head()
    if head is None or not drop:
        return []
    at = _now()
    new_spans = _spans(engine, drop, at)
    spans = [*engine.timeline.dropped, *new_spans][-_SPANS_KEPT:]
    new_tip: str | None = None
    for oid in store.commit_chain(head, None):
        records = RecordEnvelope.model_validate_json(store.read_meta(oid)).records
        kept: list[Record] = [r for r in records if not isinstance(r, EntriesDropped) and r.entry not in drop]
        if not kept:
            continue
        if len(kept) < len(records):
            new_tip = store.rewrite(oid, RecordEnvelope(records=kept).model_dump_json().encode(), new_tip)
            continue
        new_tip = store.recommit(oid, new_tip)
    record = EntriesDropped(id=_new_id(), at=at, spans=spans)
    meta = RecordEnvelope(records=[record]).model_dump_json().encode()
    new_tip = store.stack(meta, new_tip, f"retention dropped {len(drop)} entries (dropped)")
    store.set_head(new_tip, head)
    return new_spans


def collect(engine: Engine) -> GcReport:
    """Run inside a transaction (``Engine.gc``) that has nothing left to publish."""
    store = engine.store
    brackets.sweep(store.path / "brackets", store.path / brackets.INDEX_COPIES)  # index copies no step holds
    bytes_before = store.size_bytes()
    entries_before = len(engine.timeline.order)
    removed_objects = 0
    drop = _drop_set(engine, 0.0)
    spans = _rewrite(engine, drop)
    removed_objects += store.prune(store.reachable(_referenced_blobs(engine)))
    dropped = set(drop)
    fraction = 0.25
    while store.size_bytes() > engine.config.retention.max_bytes and fraction < 1.0:
        engine.replay()
        more = _drop_set(engine, fraction)
        fraction += 0.25
        if not more:  # a quarter of a short timeline rounds to none: the next step is larger
            continue
        spans += _rewrite(engine, more)
        removed_objects += store.prune(store.reachable(_referenced_blobs(engine)))
        dropped.update(more)
    return GcReport(
        removed_entries=len(dropped),
        removed_objects=removed_objects,
        bytes_before=bytes_before,
        bytes_after=store.size_bytes(),
        kept_entries=entries_before - len(dropped),
        dropped=spans,
    )
