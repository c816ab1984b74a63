"""Git pack files, as the store writes them: whole objects in, one ``.pack`` and its ``.idx`` out.

The store publishes each engine call's objects (new blobs, ``meta.json``, the tree, the commit)
as one small pack instead of one loose file per object: two files created per call instead of
six or more, which is most of a record's cost on a real disk. Packs are written in git's own
formats (pack version 2 with undeltified entries, index version 2), so git and libgit2 read the
store unchanged. This module knows the formats only; when packs are merged and which objects
are kept is the store's business.

A pack becomes visible when its ``.idx`` appears (git and libgit2 look for indexes), so the
``.pack`` is put in place first and the ``.idx`` last, each as a temporary file renamed into
place: a reader sees the whole pack or none of it.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
import threading
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

from . import atomic

TYPE_NUMBERS = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}
TYPE_NAMES = {number: name for name, number in TYPE_NUMBERS.items()}
_DELTA_TYPES = (6, 7)  # OFS_DELTA, REF_DELTA: never written here, only met in foreign packs
_IDX_MAGIC = b"\xfftOc"

# A record compresses every new blob while the agent waits. ISA-L's deflate writes the same
# zlib streams as zlib (git and libgit2 read them as any other) about four times faster than
# zlib's fastest level on 10 KB of source text here, and a little smaller; zlib stands in where
# the isal package is missing.
_deflate: ModuleType
try:
    from isal import isal_zlib as _deflate

    COMPRESSION_LEVEL = 2  # ISA-L's default: levels 0-3
except ImportError:  # pragma: no cover - isal is a dependency; a platform without its wheel
    _deflate = zlib
    COMPRESSION_LEVEL = 1


def object_id(kind: str, data: bytes) -> str:
    """The git (SHA-1) id of an object of ``kind`` holding ``data``."""
    digest = hashlib.sha1(b"%s %d\x00" % (kind.encode(), len(data)), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


@dataclass(frozen=True)
class PackEntry:
    """One object of a pack: its id, where its entry starts, and the entry's CRC-32."""

    oid: bytes
    offset: int
    crc: int


def _entry_header(type_number: int, size: int) -> bytes:
    first = (type_number << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(first | 0x80)
        first = size & 0x7F
        size >>= 7
    out.append(first)
    return bytes(out)


TEMPORARY = "tmp_"  # a file being written, renamed into place once whole (a leftover after a crash: ``repair.py``)
MERGING = "merging_"  # the same, of a merge that copies without the store's lock (``store.merge_due``)


def _temporary(path: Path, prefix: str = TEMPORARY) -> Path:
    return path.with_name(f"{prefix}{path.name}_{os.getpid()}_{os.urandom(4).hex()}")


def _create(path: Path, buffering: int = -1) -> BinaryIO:
    """A new file, read-only from the start as git keeps pack files (no chmod afterwards)."""
    return open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444), "wb", buffering=buffering)


def _index_bytes(entries: list[PackEntry], pack_checksum: bytes) -> bytes:
    entries = sorted(entries, key=lambda e: e.oid)
    fanout = [0] * 256
    for entry in entries:
        fanout[entry.oid[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    small: list[int] = []
    large: list[int] = []
    for entry in entries:
        if entry.offset < 0x80000000:
            small.append(entry.offset)
        else:
            small.append(0x80000000 | len(large))
            large.append(entry.offset)
    n = len(entries)
    body = b"".join(
        (
            _IDX_MAGIC,
            struct.pack(">I", 2),
            struct.pack(">256I", *fanout),
            b"".join(e.oid for e in entries),
            struct.pack(f">{n}I", *(e.crc for e in entries)),
            struct.pack(f">{n}I", *small),
            struct.pack(f">{len(large)}Q", *large),
            pack_checksum,
        )
    )
    return body + hashlib.sha1(body, usedforsecurity=False).digest()


@dataclass
class StagedPack:
    """A pack and its index written whole under temporary names (``stage``): not seen by any
    reader until ``place`` renames them into place."""

    name: str
    pack: Path
    index: Path


def _write(pack_dir: Path, count: int, chunks: Iterable[tuple[bytes, bytes | memoryview]], fsync: bool) -> str:
    """Write a pack from ready-made entries (``(oid, entry bytes)``); answers the pack's name."""
    return place(pack_dir, stage(pack_dir, count, chunks, fsync), fsync)


def stage(
    pack_dir: Path, count: int, chunks: Iterable[tuple[bytes, bytes | memoryview]], fsync: bool, prefix: str = TEMPORARY,
) -> StagedPack:
    """Write a pack from ready-made entries (``(oid, entry bytes)``), streamed to a temporary
    file (a merge of large packs never holds them in memory), and its index, both under
    temporary names starting with ``prefix`` (flushed with ``fsync``)."""
    pack_dir.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(pack_dir / "pack.pack", prefix)
    index = _temporary(pack_dir / "pack.idx", prefix)
    digest = hashlib.sha1(usedforsecurity=False)
    entries: list[PackEntry] = []
    try:
        with _create(tmp, buffering=1 << 16) as handle:
            header = b"PACK" + struct.pack(">II", 2, count)
            handle.write(header)
            digest.update(header)
            offset = len(header)
            for oid, entry in chunks:
                entries.append(PackEntry(oid, offset, zlib.crc32(entry)))
                handle.write(entry)
                digest.update(entry)
                offset += len(entry)
            checksum = digest.digest()
            handle.write(checksum)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        with _create(index) as handle:
            handle.write(_index_bytes(entries, checksum))
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
    except BaseException:  # (both names are this call's own: random, made with O_EXCL)
        tmp.unlink(missing_ok=True)
        index.unlink(missing_ok=True)
        raise
    return StagedPack(f"pack-{checksum.hex()}", tmp, index)


def place(pack_dir: Path, staged: StagedPack, fsync: bool) -> str:
    """Rename a staged pack, then its index, into place (the index makes it visible); answers
    its name. A failure leaves neither the staged files nor a pack without its index."""
    name = staged.name
    try:
        os.replace(staged.pack, pack_dir / f"{name}.pack")
        try:
            os.replace(staged.index, pack_dir / f"{name}.idx")
        except BaseException:  # a pack without its index is invisible: remove it rather than leave it
            if not (pack_dir / f"{name}.idx").exists():  # (the same pack, already whole, stays)
                (pack_dir / f"{name}.pack").unlink(missing_ok=True)
            raise
    finally:
        discard(staged)
    if fsync:
        atomic.sync_dir(pack_dir)
    return name


def discard(staged: StagedPack) -> None:
    """Remove what is left of a staged pack (nothing once placed)."""
    staged.pack.unlink(missing_ok=True)
    staged.index.unlink(missing_ok=True)


def sync_all(pack_dir: Path) -> None:
    """Flush every pack and index in ``pack_dir``, then the folder. A publish that must outlive a
    power cut (an operation's) names a chain of log commits that earlier calls may have written
    unflushed (a hook's recording a second before), so flushing its own new pack is not enough.
    Cheap: a file already on disk is flushed in microseconds, and merges keep the packs few."""
    for name in sorted(os.listdir(pack_dir)):
        if name.startswith("pack-") and name.endswith((".pack", ".idx")):
            fd = os.open(pack_dir / name, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    atomic.sync_dir(pack_dir)


def write_pack(
    pack_dir: Path, objects: list[tuple[str, str, bytes]], fsync: bool = False, ahead: dict[str, bytes] | None = None,
) -> str:
    """Write ``objects`` (``(kind, hex id, data)``, ids unique) as one pack; answers its name.
    ``ahead``: entries made for some of them already (``EntriesAhead.take``)."""
    made = ahead or {}
    return _write(
        pack_dir, len(objects),
        ((bytes.fromhex(oid), made.get(oid) or pack_entry(kind, data)) for kind, oid, data in objects), fsync,
    )


class EntriesAhead:
    """Pack entries made on a worker thread while the caller goes on, for the objects of a big
    call (``write_pack``'s ``ahead``).

    A big turn's end stores 5,000 new blobs, and compressing them was an eighth of its time
    (issue 18), spent after the scan, with the second core idle. ISA-L's deflate lets go of
    Python's lock while it works, so the objects are handed over in batches as they come
    (``add``, from ``BATCH`` of them on: a hook's few objects never wait on a thread) and
    compressed beside the scan. An entry is a function of the object alone, so whatever was
    made is right for any pack that holds the object; ``clear`` forgets what is no longer
    wanted (a batch still running fills a dictionary nothing reads any more)."""

    BATCH = 64

    def __init__(self) -> None:
        self._batch: list[tuple[str, str, bytes]] = []
        self._made: dict[str, bytes] = {}
        self._jobs: list[Future[None]] = []

    def add(self, kind: str, oid: str, data: bytes) -> None:
        self._batch.append((kind, oid, data))
        if len(self._batch) >= self.BATCH:
            batch, self._batch = self._batch, []
            self._jobs.append(_worker().submit(_make_entries, batch, self._made))

    def take(self) -> dict[str, bytes]:
        """The entries made so far, by object id, once the batches handed over are done (those
        still waiting in ``add`` are the caller's to make); then nothing is held."""
        for job in self._jobs:
            job.result()
        made = self._made
        self.clear()
        return made

    def clear(self) -> None:
        self._batch, self._made, self._jobs = [], {}, []


def _make_entries(batch: list[tuple[str, str, bytes]], into: dict[str, bytes]) -> None:
    for kind, oid, data in batch:
        into[oid] = pack_entry(kind, data)


_pool: ThreadPoolExecutor | None = None
_pool_made = threading.Lock()  # two stores' first big calls at once (the language server's folders) make one


def _worker() -> ThreadPoolExecutor:
    """One thread for the whole process, made when a call first stores a batch of objects."""
    global _pool
    with _pool_made:
        if _pool is None:
            _pool = ThreadPoolExecutor(1, thread_name_prefix="takeback-deflate")
        return _pool


def index_ids(idx_path: Path) -> list[bytes]:
    """The object ids a version-2 pack index lists (its name table only)."""
    with open(idx_path, "rb") as handle:
        head = handle.read(8 + 256 * 4)
        if head[:4] != _IDX_MAGIC or struct.unpack(">I", head[4:8])[0] != 2:
            raise ValueError(f"{idx_path.name} is not a version 2 pack index")
        n = struct.unpack(">I", head[-4:])[0]
        names = handle.read(20 * n)
    if len(names) != 20 * n:
        raise ValueError(f"{idx_path.name} is cut short")
    return [names[i : i + 20] for i in range(0, 20 * n, 20)]


def read_index(idx_path: Path) -> list[PackEntry]:
    """The entries a version-2 pack index lists, in id order."""
    data = idx_path.read_bytes()
    if data[:4] != _IDX_MAGIC or struct.unpack(">I", data[4:8])[0] != 2:
        raise ValueError(f"{idx_path.name} is not a version 2 pack index")
    n = struct.unpack(">I", data[8 + 255 * 4 : 8 + 256 * 4])[0]
    names_at = 8 + 256 * 4
    crcs_at = names_at + 20 * n
    offsets_at = crcs_at + 4 * n
    large_at = offsets_at + 4 * n
    crcs = struct.unpack(f">{n}I", data[crcs_at:offsets_at])
    offsets = struct.unpack(f">{n}I", data[offsets_at:large_at])
    entries = []
    for i in range(n):
        offset = offsets[i]
        if offset & 0x80000000:
            at = large_at + 8 * (offset & 0x7FFFFFFF)
            offset = struct.unpack(">Q", data[at : at + 8])[0]
        entries.append(PackEntry(data[names_at + 20 * i : names_at + 20 * (i + 1)], offset, crcs[i]))
    return entries


def _entry_type(pack: bytes | memoryview, offset: int) -> int:
    return (pack[offset] >> 4) & 0x07


def collect_entries(
    pack_dir: Path,
    names: list[str],
    keep: Callable[[str], bool] | None,
    read_object: Callable[[str], tuple[str, bytes]],
) -> dict[bytes, bytes | memoryview]:
    """The entries (binary id: entry bytes) of the packs ``names`` whose objects ``keep``
    accepts (all when ``keep`` is None), each object once. Whole-object entries are views into
    the packs, mapped rather than read (no recompression, and memory stays small however large
    the packs); deltified entries of foreign packs are rebuilt from ``read_object``. Feed the
    answer to ``write_entries``; the old packs stay until the caller removes them, once the new
    one is visible.
    """
    chosen: dict[bytes, bytes | memoryview] = {}
    for name in names:
        entries = read_index(pack_dir / f"{name}.idx")
        with open(pack_dir / f"{name}.pack", "rb") as handle:
            pack = memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
        bounds = sorted(e.offset for e in entries) + [len(pack) - 20]
        end_of = {bounds[i]: bounds[i + 1] for i in range(len(bounds) - 1)}
        for entry in entries:
            if entry.oid in chosen or (keep is not None and not keep(entry.oid.hex())):
                continue
            if _entry_type(pack, entry.offset) in _DELTA_TYPES:
                chosen[entry.oid] = pack_entry(*read_object(entry.oid.hex()))
            else:
                chosen[entry.oid] = pack[entry.offset : end_of[entry.offset]]
    return chosen


def pack_entry(kind: str, data: bytes) -> bytes:
    """One whole-object pack entry (header and compressed data), as ``write_pack`` makes them."""
    return _entry_header(TYPE_NUMBERS[kind], len(data)) + _deflate.compress(data, COMPRESSION_LEVEL)


def problem(pack_dir: Path, name: str, deep: bool = False) -> str | None:
    """What is wrong with pack ``name`` as a crash or a power cut leaves one, or None.

    Cheap by default: the index's header, size and (when small, as a single call's is) checksum,
    and the pack's first 12 and last 20 bytes, which must name the checksum the index holds: an
    empty or cut-short file, or a pack and index of two different writes, is found without
    reading the objects. ``deep`` also checks the pack's own checksum over all its bytes (a pack
    whose middle never reached the disk), which costs a read of the whole pack.
    """
    idx, pack = pack_dir / f"{name}.idx", pack_dir / f"{name}.pack"
    try:
        size = idx.stat().st_size
        whole = size <= _SMALL_INDEX or deep
        data = idx.read_bytes() if whole else _index_ends(idx)
        wrong = _index_problem(idx.name, data, size, whole)
        if wrong is not None:
            return wrong
        count = struct.unpack(">I", data[8 + 255 * 4 : 8 + 256 * 4])[0]
        with open(pack, "rb") as handle:
            pack_size = os.fstat(handle.fileno()).st_size
            if pack_size == 0:
                return f"{pack.name} is empty"
            head = handle.read(12)
            if pack_size < 32 or head[:4] != b"PACK" or struct.unpack(">I", head[8:12])[0] != count:
                return f"{pack.name} is cut short or not a pack ({pack_size} bytes)"
            handle.seek(pack_size - 20)
            if handle.read(20) != data[-40:-20]:
                return f"{pack.name} does not end with the checksum its index names (cut short)"
            if deep and _pack_digest(handle, pack_size) != data[-40:-20]:
                return f"{pack.name} does not hold the bytes its checksum names (torn)"
    except FileNotFoundError as exc:
        return f"{Path(str(exc.filename)).name} is missing"
    except OSError as exc:
        return f"{name} cannot be read: {exc.strerror or exc}"
    return None


_SMALL_INDEX = 64 << 10  # a single call's pack index is a few KB: its checksum is checked at every open


def _index_ends(idx: Path) -> bytes:
    """The header and the last 40 bytes of a large index (enough for its size checks)."""
    with open(idx, "rb") as handle:
        head = handle.read(8 + 256 * 4)
        handle.seek(max(os.fstat(handle.fileno()).st_size - 40, len(head)))
        return head + handle.read(40)


def _index_problem(name: str, data: bytes, size: int, whole: bool) -> str | None:
    if size == 0:
        return f"{name} is empty"
    if len(data) < 8 + 256 * 4 + 40 or data[:4] != _IDX_MAGIC or struct.unpack(">I", data[4:8])[0] != 2:
        return f"{name} is cut short or not a pack index ({size} bytes)"
    count = struct.unpack(">I", data[8 + 255 * 4 : 8 + 256 * 4])[0]
    extra = size - (8 + 256 * 4 + 28 * count + 40)
    if extra < 0 or extra % 8:
        return f"{name} is cut short ({size} bytes for {count} objects)"
    if whole and hashlib.sha1(data[:-20], usedforsecurity=False).digest() != data[-20:]:
        return f"{name} does not hold the bytes its checksum names (torn)"
    return None


def _pack_digest(handle: BinaryIO, size: int) -> bytes:
    handle.seek(0)
    digest = hashlib.sha1(usedforsecurity=False)
    left = size - 20
    while left > 0:
        chunk = handle.read(min(left, 1 << 20))
        if not chunk:
            break
        digest.update(chunk)
        left -= len(chunk)
    return digest.digest()


def commit_ids(pack_dir: Path, name: str) -> list[str]:
    """The ids of the commits pack ``name`` holds (whole entries only: Takeback writes no deltas)."""
    entries = read_index(pack_dir / f"{name}.idx")
    fd = os.open(pack_dir / f"{name}.pack", os.O_RDONLY | os.O_CLOEXEC)
    try:
        return [e.oid.hex() for e in entries if _entry_type(os.pread(fd, 1, e.offset) or b"\0", 0) == 1]
    finally:
        os.close(fd)


def write_entries(pack_dir: Path, entries: dict[bytes, bytes | memoryview], fsync: bool = False) -> str:
    """Write ready-made entries (binary id: entry bytes) as one pack; answers its name."""
    return _write(pack_dir, len(entries), entries.items(), fsync)


def stage_entries(pack_dir: Path, entries: dict[bytes, bytes | memoryview], prefix: str) -> StagedPack:
    """Ready-made entries written as one pack under temporary names, flushed, not yet in place."""
    return stage(pack_dir, len(entries), entries.items(), True, prefix)
