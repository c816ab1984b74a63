"""Ids and timestamps for records: ULIDs (sortable by time) and UTC datetimes."""

from __future__ import annotations

from datetime import UTC, datetime

from ulid import ULID


def now() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(ULID())
