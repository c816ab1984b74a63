"""The person's git index file, read by hand: a few paths' entries without libgit2 holding
the whole index parsed.

The resident process answers a hook by looking at the few files a watch saw touched
(``listing.Lister``). libgit2 answers that question only against an index it has parsed
whole, and a repository keeps its parsed index for its lifetime: at 100,000 entries about
17 MB of the resident's memory, held between hooks. pygit2 exposes no way to read part of an
index (only ``Index`` of a whole file), so this module reads the file itself:

* ``IndexTable.build`` reads the file once (over ``mmap``, closed afterwards so its pages do
  not stay in the process's RSS) and keeps only the offset of each entry, in index order
  (4 bytes an entry), with the file's stamp and checksum; it is built again whenever the file
  changed (git replaces the file on every write).
* ``IndexTable.small_index`` finds the entries of some paths by bisection over the offsets
  (the file mapped again for the look-up, then closed) and hands libgit2 an index file holding
  exactly those entries' bytes, checksummed, with the person's index file's modification time,
  written to an anonymous in-memory file (``memfd_create``) that libgit2 parses and is then
  gone. libgit2 thus reads the very bytes of those entries, and sees the same file time (its
  "racily clean" check compares a file's time with the index file's): a diff against the
  small index answers for those paths what a diff against the whole index answers. Past
  ``SMALL_MAX`` paths finding them costs more than libgit2's parse of the whole file:
  ``index_for`` then has libgit2 parse it, for that question only.
* ``lent``: a diff given an index still makes libgit2 load the repository's own (its work
  tree iterator asks the repository's index whether names ignore case, and hashing a file
  looks up ``.gitattributes`` entries in it), parsed whole and kept. For the diff the
  repository is lent the small index as its own (``git_repository_set_index``, which pygit2
  does not expose: called through ``ctypes`` in the libgit2 pygit2 loaded), and holds no index
  afterwards. Where that function cannot be found ``build`` answers None as well.

Only what libgit2 and this reader read the same way: index versions 2 and 3 (entries of fixed
layout; version 3's extended flags), with SHA-1 ids. Version 4 (prefix-compressed paths),
anything unexpected, or a system without ``memfd_create`` makes ``build`` answer None and the
caller keeps using libgit2's own parsed index. Extensions (the cached tree, resolve-undo, a
split index's link) are not copied: a split index (its ``link`` extension) answers None too.
"""

from __future__ import annotations

import bisect
import ctypes
import hashlib
import mmap
import os
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

import pygit2
from pygit2 import _libgit2
from pygit2.ffi import ffi

_HEADER = 12
_FIXED = 62  # stat data (40), id (20), flags (2)
_EXTENDED = 0x4000
_NAME_MASK = 0xFFF
#: Most paths ``index_for`` finds in the file itself.
SMALL_MAX = 256


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass
class IndexTable:
    """Where each entry of one version of an index file starts (see the module's docstring)."""

    path: str
    stamp: tuple[int, int, int, int]
    checksum: bytes
    version: int
    offsets: array  # of int: entry starts, then where the last entry ends
    mtime_ns: int

    @classmethod
    def build(cls, path: str) -> IndexTable | None:
        """The table of the index at ``path``; None when there is no index or it is not one
        this reader vouches for."""
        if not hasattr(os, "memfd_create") or _SET_INDEX is None:
            return None
        try:
            with open(path, "rb") as handle:
                st = os.fstat(handle.fileno())
                if st.st_size < _HEADER + 20:
                    return None
                with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                    found = _scan(data)
                    checksum = data[-20:]
        except (OSError, ValueError):
            return None
        if found is None:
            return None
        version, offsets = found
        return cls(path, _stamp(st), checksum, version, offsets, st.st_mtime_ns)

    def current(self) -> bool:
        """Whether the file is still the one this table was built from (its stamp and its
        checksum, the file's last 20 bytes)."""
        try:
            with open(self.path, "rb") as handle:
                if _stamp(os.fstat(handle.fileno())) != self.stamp:
                    return False
                handle.seek(-20, os.SEEK_END)
                return handle.read(20) == self.checksum
        except OSError:
            return False

    def index_for(self, paths: list[bytes]) -> pygit2.Index | None:
        """An index holding at least the entries ``small_index`` holds for ``paths``: that
        one, or, past ``SMALL_MAX`` paths (where finding each costs more than parsing the
        whole file: 5,000 of 100,000 entries about 0.5 s against 0.1-0.2 s), the whole file
        parsed by libgit2 (not kept: the caller lets go of it)."""
        if len(paths) <= SMALL_MAX:
            return self.small_index(paths)
        try:
            return pygit2.Index(self.path)
        except (pygit2.GitError, OSError):
            return None

    def small_index(self, paths: list[bytes]) -> pygit2.Index | None:
        """An index of the entries (every stage) at ``paths``, under them (``path/``) and at
        each folder above them; None when the file changed since the table was built."""
        try:
            with self._mapped() as data:
                if data is None:
                    return None
                chosen = self._chosen(data, paths)
                body = b"".join(data[start:end] for start, end in chosen)
        except (OSError, ValueError):
            return None
        return _parsed(self.version, len(chosen), body, self.mtime_ns)

    @contextmanager
    def _mapped(self) -> Iterator[mmap.mmap | None]:
        """The index file mapped for the block (unmapped and closed afterwards, so its pages do
        not stay in the process's RSS), or None when it is no longer the file this table was
        built from (its stamp or checksum changed). Raises ``OSError`` as opening it does."""
        with open(self.path, "rb") as handle:
            if _stamp(os.fstat(handle.fileno())) != self.stamp:
                yield None
                return
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                yield data if data[-20:] == self.checksum else None

    def _chosen(self, data: mmap.mmap, paths: list[bytes]) -> list[tuple[int, int]]:
        """(start, end) of the entries kept for ``paths``, in index order, each once."""
        keys = _Keys(data, self.offsets)
        exact = set(paths)
        for path in paths:
            exact.update(path[:i] for i in range(len(path)) if path[i : i + 1] == b"/")
        spans: set[int] = set()
        lo = 0
        for key in sorted(exact):  # ascending: each search starts where the last one ended
            lo = bisect.bisect_left(keys, key, lo)
            at = lo
            while at < len(keys) and keys[at] == key:
                spans.add(at)
                at += 1
        lo = 0
        for path in sorted(set(paths)):  # what the index holds under a path (it was a folder)
            lo = bisect.bisect_left(keys, path + b"/", lo)
            hi = bisect.bisect_left(keys, path + b"0", lo)  # "0" follows "/"
            spans.update(range(lo, hi))
        return [(self.offsets[i], self.offsets[i + 1]) for i in sorted(spans)]

    def contains(self, path: bytes) -> bool | None:
        """Whether the index has an entry (of any stage) at ``path``; None when the file
        changed since the table was built."""
        try:
            with self._mapped() as data:
                if data is None:
                    return None
                keys = _Keys(data, self.offsets)
                at = bisect.bisect_left(keys, path)
                return at < len(keys) and keys[at] == path
        except (OSError, ValueError):
            return None


class _Keys:
    """The entries' paths as a sequence bisect can search (read from the mapped file)."""

    def __init__(self, data: mmap.mmap, offsets: array) -> None:
        self.data = data
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1  # the last offset is where the entries end

    def __getitem__(self, i: int) -> bytes:
        return _path_at(self.data, self.offsets[i])


def _path_at(data: mmap.mmap | bytes, pos: int) -> bytes:
    flags = int.from_bytes(data[pos + 60 : pos + 62], "big")
    start = pos + _FIXED + (2 if flags & _EXTENDED else 0)
    length = flags & _NAME_MASK
    end = data.find(b"\x00", start) if length == _NAME_MASK else start + length
    return data[start:end]


def _scan(data: mmap.mmap) -> tuple[int, array] | None:
    """(version, entry offsets plus the end of the last entry) of an index this reader
    vouches for, else None."""
    if data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3):
        return None
    size = len(data) - 20
    offsets = array("I" if len(data) < 1 << 32 else "q")
    pos = _HEADER
    find = data.find
    for _ in range(count):
        if pos + _FIXED > size:
            return None
        flags = (data[pos + 60] << 8) | data[pos + 61]
        extended = flags & _EXTENDED
        if extended and version < 3:
            return None
        start = pos + _FIXED + (2 if extended else 0)
        length = flags & _NAME_MASK
        end = find(b"\x00", start, size) if length == _NAME_MASK else start + length
        if end < 0 or end >= size:
            return None
        offsets.append(pos)
        pos += ((end - pos) + 8) & ~7
    if pos > size or _has_link(data, pos, size):
        return None
    offsets.append(pos)  # the end of the last entry
    return version, offsets


def _has_link(data: mmap.mmap, pos: int, size: int) -> bool:
    """Whether the extensions after the entries include a split index's ``link``."""
    while pos + 8 <= size:
        if data[pos : pos + 4] == b"link":
            return True
        pos += 8 + int.from_bytes(data[pos + 4 : pos + 8], "big")
    return False


def _parsed(version: int, count: int, body: bytes, mtime_ns: int) -> pygit2.Index | None:
    """``body``'s entries as libgit2 reads them from a file with the index file's time."""
    content = b"DIRC" + version.to_bytes(4, "big") + count.to_bytes(4, "big") + body
    content += hashlib.sha1(content, usedforsecurity=False).digest()
    fd = os.memfd_create("takeback-index", os.MFD_CLOEXEC)
    try:
        with open(fd, "wb", closefd=False) as out:
            out.write(content)
        os.utime(fd, ns=(mtime_ns, mtime_ns))
        return pygit2.Index(f"/proc/self/fd/{fd}")
    except (OSError, pygit2.GitError):
        return None
    finally:
        os.close(fd)


def _set_index_function() -> Callable[[int, int | None], int] | None:
    """libgit2's ``git_repository_set_index`` (found through pygit2's own binding library)."""
    try:
        found = ctypes.CDLL(_libgit2.__file__).git_repository_set_index
    except (OSError, AttributeError):
        return None
    found.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    found.restype = ctypes.c_int
    return cast(Callable[[int, int | None], int], found)


_SET_INDEX = _set_index_function()


@contextmanager
def lent(repo: pygit2.Repository, index: pygit2.Index) -> Iterator[None]:
    """``repo`` takes ``index`` as its own index for the block, and afterwards holds none
    (libgit2 loads the file again if anything asks for it)."""
    assert _SET_INDEX is not None  # ``build`` made no table otherwise
    address = int(ffi.cast("uintptr_t", repo._repo))
    _SET_INDEX(address, int(ffi.cast("uintptr_t", index._index)))
    try:
        yield
    finally:
        _SET_INDEX(address, None)
