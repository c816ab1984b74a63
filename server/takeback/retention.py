"""Retention: keep the store bounded (entries kept, age, bytes) and drop what falls out.

Dropping an entry rewrites the operation log without that entry's records (the records of
every kept entry are copied unchanged, so ids and numbers stay), moves the ref by
compare-and-swap, then deletes the objects nothing references any more. Blobs still named by
an open bracket or the stat cache are kept. The open turn is never dropped.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from . import brackets
from .models import GcReport, RecordEnvelope

if TYPE_CHECKING:
    from .engine import Engine



def _drop_set(engine: "Engine", extra_fraction: float) -> set[str]:
    policy = engine.config.retention
    ordered = engine.timeline.ordered()
    open_state = engine.timeline.open_turn()
    keep_from = max(0, len(ordered) - policy.max_entries)
    if extra_fraction:
        keep_from = max(keep_from, int(len(ordered) * extra_fraction))
    cutoff = datetime.now(timezone.utc) - timedelta(days=policy.max_age_days)
    drop = set()
    for index, state in enumerate(ordered):
        if state is open_state or index == len(ordered) - 1:
            continue
        if index < keep_from or state.begun.at < cutoff:
            drop.add(state.begun.entry)
    return drop


def _referenced_blobs(engine: "Engine") -> set[str]:
    keep: set[str] = set()
    for data in brackets.snapshots(engine.store.path / "brackets"):
        for version in list(data.get("dirty", {}).values()) + list(data.get("files", {}).values()):
            if version and not version.get("withheld"):
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


def _rewrite(engine: "Engine", drop: set[str]) -> None:
    store = engine.store
    head = store.head()
    if head is None or not drop:
        return
    new_tip: str | None = None
    for oid in store.commit_chain(head, None):
        records = RecordEnvelope.model_validate_json(store.read_meta(oid)).records
        entries = {record.entry for record in records}
        if entries <= drop:
            continue
        if entries & drop:
            kept = [r for r in records if r.entry not in drop]
            new_tip = store.rewrite(oid, RecordEnvelope(records=kept).model_dump_json().encode(), new_tip)
            continue
        new_tip = store.recommit(oid, new_tip)
    if new_tip is None:
        return
    store.set_head(new_tip, head)


def collect(engine: "Engine") -> GcReport:
    """Run with the store locked and the timeline fresh."""
    store = engine.store
    bytes_before = store.size_bytes()
    entries_before = len(engine.timeline.order)
    removed_objects = 0
    drop = _drop_set(engine, 0.0)
    _rewrite(engine, drop)
    removed_objects += store.prune(store.reachable(_referenced_blobs(engine)))
    dropped = set(drop)
    fraction = 0.25
    while store.size_bytes() > engine.config.retention.max_bytes and fraction < 1.0:
        engine._head = None
        engine._refresh()
        more = _drop_set(engine, fraction)
        if not more:
            break
        _rewrite(engine, more)
        removed_objects += store.prune(store.reachable(_referenced_blobs(engine)))
        dropped |= more
        fraction += 0.25
    return GcReport(
        removed_entries=len(dropped),
        removed_objects=removed_objects,
        bytes_before=bytes_before,
        bytes_after=store.size_bytes(),
        kept_entries=entries_before - len(dropped),
    )
