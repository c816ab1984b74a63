"""When a file was created: its birth time, where the system and the file system know it.

Python 3.11's ``os.stat`` has no birth time on Linux; glibc's ``statx`` (2.28 and later) gives
it on ext4, xfs, btrfs, tmpfs and others, through ctypes. ``born_ns`` answers None wherever
it is not known (another system, an older glibc or kernel, a file system that does not keep
it): callers must then not assume either way.
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Callable

_AT_FDCWD = -100
_AT_SYMLINK_NOFOLLOW = 0x100
_STATX_BTIME = 0x800
_BUFFER = 256  # sizeof(struct statx)
_BTIME_OFFSET = 80  # stx_btime: struct statx_timestamp {__s64 tv_sec; __u32 tv_nsec; ...}


def _load_statx() -> Callable[..., int] | None:
    try:
        statx = ctypes.CDLL(None, use_errno=True).statx
    except (AttributeError, OSError):
        return None
    statx.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p)
    statx.restype = ctypes.c_int
    return statx


_statx = _load_statx()


def born_ns(path: str | os.PathLike[str]) -> int | None:
    """The birth time of ``path`` (the link itself for a symlink) in ns since the epoch, or None."""
    if _statx is None:
        return None
    buffer = ctypes.create_string_buffer(_BUFFER)
    if _statx(_AT_FDCWD, os.fsencode(path), _AT_SYMLINK_NOFOLLOW, _STATX_BTIME, buffer) != 0:
        return None
    (mask,) = struct.unpack_from("=I", buffer, 0)
    if not mask & _STATX_BTIME:
        return None
    seconds, nanoseconds = struct.unpack_from("=qI", buffer, _BTIME_OFFSET)
    return seconds * 1_000_000_000 + nanoseconds
