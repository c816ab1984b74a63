"""The stamp of the last power-cut check of a big log head: ``checked.json``, so an open after
it costs nothing while nothing changed.

Opening the store checks that the commit the log ref names can be read whole (``repair.py``):
its tree, its ``meta.json`` and every blob it names. That costs the size of the newest entry:
after a turn that rewrote 5,000 files, ~10,000 objects at every open. When such a check passes,
the store flushes every pack (data and folder), then writes this stamp: the head it vouched for
and the exact packs (names, which are their checksums, and the sizes of each ``.pack`` and
``.idx``); a process that publishes a big head with every pack and the ref flushed (an
operation, ``Store.durable``) stamps it so at once (``Store.append``). An open whose ref
names that head, whose pack folder holds exactly those packs at those sizes, and where nothing
was found torn (``repair.set_aside_torn``) skips the walk.

Why that is sound: a pack's file is never changed once in place (read-only, named by its
checksum; merges and gc write new packs and remove old ones), and the stamp is written only
after the packs it names were flushed, so a power cut cannot leave a stamp whose packs are torn
in the middle: whatever the stamp names is on the disk as it was checked. A cut that took a pack
(missing, empty, cut short, a rename lost), rolled the ref back or forward, or added a pack,
leaves a state the stamp does not match: the full check runs as before. The stamp itself is not
flushed: lost, it only costs the next open the full check; torn, or of another ``FORMAT`` (bumped
whenever what the open checks or what a stamp names changes), its digest or its body does not
match, and it is read as no stamp. An old stamp stays true: if a cut ever brings back exactly its head and packs,
what it vouched for is still there. Only heads of at least ``BIG`` objects, all of them in the
packs (not loose), are stamped: a small head is checked in microseconds and is not worth a flush.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from . import atomic

FILE = "checked.json"
FORMAT = 1  # bump whenever what the open checks, or what a stamp names, changes: an older stamp is then no stamp
BIG = 256  # objects in the head's tree from which a stamp is worth the flush of the packs


def packs_now(pack_dir: Path, names: list[str]) -> dict[str, list[int]] | None:
    """Each pack's ``[.pack size, .idx size]``, by name; None when one cannot be stat'ed."""
    found = {}
    try:
        for name in names:
            found[name] = [os.stat(pack_dir / f"{name}.pack").st_size, os.stat(pack_dir / f"{name}.idx").st_size]
    except OSError:
        return None
    return found


def _body(head: str, packs: dict[str, list[int]]) -> bytes:
    doc = {"format": FORMAT, "head": head, "packs": packs}
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def vouches(store: Path, head: str, packs: Callable[[], dict[str, list[int]] | None]) -> bool:
    """Whether the stamp in ``store`` vouches for ``head`` with exactly the packs ``packs()``
    answers (asked only when there is a whole stamp: a store without one, a small head's, pays
    one failed open): a stamp that is missing, torn, of another format, or of another state
    vouches for nothing."""
    try:
        data = (store / FILE).read_bytes()
    except OSError:
        return False
    body, _, digest = data.rstrip(b"\n").rpartition(b"\n")
    if digest != hashlib.sha256(body).hexdigest().encode():
        return False
    now = packs()
    return now is not None and body == _body(head, now)


def stamp(store: Path, head: str, packs: dict[str, list[int]]) -> None:
    """Write the stamp for ``head`` and ``packs`` (which the caller flushed first), all at once:
    the body, then its SHA-256 on a line of its own."""
    body = _body(head, packs)
    atomic.write(store / FILE, body + b"\n" + hashlib.sha256(body).hexdigest().encode() + b"\n")
