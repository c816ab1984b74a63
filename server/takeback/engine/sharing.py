"""Sharing an engine's timeline: the engine-side glue over ``storage/share.py``.

It gives the transport the two things only this layer knows: which workspace the store belongs
to (for the remote's URL and the person's identity) and the records rule a teammate's timeline
must pass (``check_meta``: every ``meta.json`` must be a ``RecordEnvelope`` whose records name
clean workspace paths, ``history.check_record``, the same rule the local log is read under).
Nothing here writes the workspace; a fetched timeline is only kept as refs of ``shared.git``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.models import RecordEnvelope
from ..errors import SharingFailed, TakebackError
from ..storage import share
from .history import check_record

if TYPE_CHECKING:
    from .engine import Engine


def check_meta(data: bytes, where: str) -> None:
    """Refuse (``SharingFailed``, one line) a teammate's ``meta.json`` that is not records
    Takeback writes, or names a path outside the workspace."""
    try:
        records = RecordEnvelope.model_validate_json(data).records
    except ValueError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SharingFailed(f"{where}: meta.json is not Takeback's records ({first}): refused") from exc
    for record in records:
        try:
            check_record(record, where)
        except TakebackError as exc:
            raise SharingFailed(exc.message) from exc


def who(engine: Engine) -> str:
    """This machine's name on a remote: ``<person>@<machine>`` (``share.identity``)."""
    return share.identity(engine.workspace.root)


def push(engine: Engine, remote: str) -> tuple[str, str]:
    """Push the timeline to ``remote``; answers (the ref's name on the remote, the commit sent)."""
    name = who(engine)
    return share.TIMELINES + name, share.push(engine.store, engine.workspace.root, remote, name)


def fetch(engine: Engine, remote: str) -> share.Fetched:
    return share.fetch(engine.store, engine.workspace.root, remote, check_meta)


def delete(engine: Engine, remote: str) -> tuple[str, bool]:
    """Remove this machine's timeline from ``remote``; answers (its ref, whether it was there)."""
    name = who(engine)
    return share.TIMELINES + name, share.delete(engine.store, engine.workspace.root, remote, name)
