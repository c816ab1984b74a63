"""Whether anything under a work tree changed since a mark: Linux inotify, for long-lived engines.

A bracket lists the work tree at begin and at end (``scan.py``): about one ``lstat`` per file,
which is most of a bracket's cost. When an agent's turns follow each other, nothing changes
between one turn's end and the next turn's begin, and the listing made at the end still holds.
A ``TreeWatch`` tells exactly that, the way git's fsmonitor and watchman do: it watches every
folder of the tree that is not ignored (``.git`` and nested repositories excepted) for entries
created, deleted, moved, written or whose attributes changed, and ``quiet()`` answers whether no
such event arrived since the last call. The kernel queues an event before the call that caused
it returns, so a change made before ``quiet()`` is never missed; an overflowing queue is an
event too. Any doubt means "changed", and the caller lists the tree as before.

``mark()`` also tells *which* files the events since the previous mark were about (a few
hundred at most), so a caller can look at just those again; it answers None ("anything may
have changed") after an event on a folder (made, removed, moved, its mode changed), an
overflowing queue, or too many files.

It is used only by a process that outlives one call (the language server), only on Linux and
only on local file systems (on network or FUSE file systems changes made elsewhere raise no
event). What inotify cannot see: writes through a shared memory mapping and writes through a
hard link that lives outside the watched folders; the ``watch_tree`` setting turns watching off.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
import struct
import sys
import time
from collections.abc import Callable

log = logging.getLogger("takeback.watch")

_IN_MODIFY = 0x00000002
_IN_ATTRIB = 0x00000004
_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
_IN_DELETE_SELF = 0x00000400
_IN_MOVE_SELF = 0x00000800
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_ISDIR = 0x40000000
_EVENTS = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO
    | _IN_CREATE | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF
)
# Events after which the set of folders to watch may be different: walk the tree again.
_RESHAPE = _IN_Q_OVERFLOW | _IN_IGNORED | _IN_DELETE_SELF | _IN_MOVE_SELF
_EVENT_HEADER = struct.Struct("iIII")
MAX_TOUCHED = 256  # past this many files, "which files" is not worth telling

# statfs f_type of file systems whose every change goes through this kernel.
_LOCAL_FILE_SYSTEMS = {
    0xEF53,  # ext2, ext3, ext4
    0x58465342,  # xfs
    0x9123683E,  # btrfs
    0x01021994,  # tmpfs
    0xF2F52010,  # f2fs
    0x2FC12FC1,  # zfs
    0x794C7630,  # overlayfs
    0x3153464A,  # jfs
    0x52654973,  # reiserfs
}


class Unavailable(Exception):
    """This tree cannot be watched here (not Linux, a remote file system, no watches left)."""


class _StatFs(ctypes.Structure):
    _fields_ = [("f_type", ctypes.c_long), ("rest", ctypes.c_byte * 120)]


def _libc() -> ctypes.CDLL:
    if not sys.platform.startswith("linux"):
        raise Unavailable("inotify is Linux only")
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError as exc:
        raise Unavailable(f"no C library: {exc}") from exc


def _file_system_type(libc: ctypes.CDLL, path: str) -> int:
    buf = _StatFs()
    if libc.statfs(os.fsencode(path), ctypes.byref(buf)) != 0:
        raise Unavailable(f"statfs {path}: {os.strerror(ctypes.get_errno())}")
    return buf.f_type & 0xFFFFFFFF


class TreeWatch:
    """Watches the folders of one tree. Not thread-safe: used under the store's lock."""

    def __init__(self, root: str, ignored: Callable[[str], bool], skip: Callable[[str], bool] | None = None) -> None:
        """``ignored(rel)`` says whether a folder (path relative to ``root``, ending in "/") is
        ignored; ``skip(rel)`` names folders never to watch (Takeback's own store)."""
        self.root = root
        self._ignored = ignored
        self._skip = skip
        self._libc = _libc()
        kind = _file_system_type(self._libc, root)
        if kind not in _LOCAL_FILE_SYSTEMS:
            raise Unavailable(f"{root} is on a file system (type {kind:#x}) whose changes may not raise events")
        self._fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            raise Unavailable(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        self._reshape = True
        self._changed = True  # until the first mark
        self._folder_of: dict[int, str] = {}  # watch descriptor -> its folder, relative to root
        self._touched: set[str] | None = None  # files events named since the last mark (None: unknown)
        self.marked_ns: int | None = None  # when the last mark ended (time.time_ns): the period began
        self.folders = 0

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:  # pragma: no cover - the engine closes it; this is a safety net
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def _watch_tree(self) -> None:
        """(Re)watch every folder of the tree that is not ignored: a new folder, one moved or
        removed, or an overflowing queue makes the set change. Watching a folder again keeps its
        watch; a removed folder's watch went with it, and a folder that became ignored keeps
        its watch (its events only make the next begin list, which is always safe)."""
        self._reshape = False
        count = 0
        add = self._libc.inotify_add_watch
        mask = _EVENTS | _IN_ONLYDIR | _IN_DONT_FOLLOW
        skip, ignored = self._skip, self._ignored
        stack = [""]
        while stack:
            rel = stack.pop()
            path = f"{self.root}/{rel}" if rel else self.root
            wd = add(self._fd, os.fsencode(path), mask)  # watched before it is listed: a folder
            # made in it meanwhile is in the listing or has its event (listed first, one made
            # between the two would go unwatched, and the files put in it unseen)
            if wd < 0:
                err = ctypes.get_errno()
                if err in (errno.ENOENT, errno.ENOTDIR):
                    continue  # gone since it was listed: an event says so, or nothing is there
                raise Unavailable(f"cannot watch {path}: {os.strerror(err)}")
            try:
                with os.scandir(path) as entries:
                    folders = [e.name for e in entries if e.name != ".git" and e.is_dir(follow_symlinks=False)]
            except (FileNotFoundError, NotADirectoryError):
                continue  # gone since it was watched: its watch went with it
            except OSError as exc:  # past PATH_MAX, not readable
                raise Unavailable(f"cannot watch {path}: {exc.strerror}") from exc
            count += 1
            self._folder_of[wd] = rel
            for name in folders:
                child = f"{rel}/{name}" if rel else name
                if os.path.lexists(f"{path}/{name}/.git"):
                    continue  # a nested repository (a .git folder, file or link): git lists it as one entry
                if (skip is not None and skip(child)) or ignored(child + "/"):
                    continue
                stack.append(child)
        self.folders = count

    def _drain(self) -> bool:
        """Read every queued event; answers whether there was one."""
        seen = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:  # (a read of an inotify descriptor never returns nothing)
                return seen
            seen = self._changed = True
            offset = 0
            while offset + _EVENT_HEADER.size <= len(data):
                wd, mask, _cookie, length = _EVENT_HEADER.unpack_from(data, offset)
                start = offset + _EVENT_HEADER.size
                offset = start + length
                if mask & _RESHAPE or (mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO | _IN_MOVED_FROM | _IN_DELETE)):
                    self._reshape = True
                self._note(wd, mask, data[start:offset].rstrip(b"\0"))

    def _note(self, wd: int, mask: int, name: bytes) -> None:
        """Add the file an event names to the touched files (or give up on knowing them)."""
        if self._touched is None:
            return
        folder = self._folder_of.get(wd)
        if mask & (_RESHAPE | _IN_ISDIR) or not name or folder is None or len(self._touched) >= MAX_TOUCHED:
            self._touched = None
            return
        file = os.fsdecode(name)
        self._touched.add(f"{folder}/{file}" if folder else file)

    def mark(self) -> set[str] | None:
        """Start a quiet period: changes from now on make ``quiet()`` false. Call it just before
        listing the tree, so a change made while the listing runs counts as one after it.
        Answers the files (relative to root) that events named since the previous mark, or
        None when that is not known (see the module docstring)."""
        if self._fd < 0:
            raise Unavailable("the watch was closed")
        self._drain()
        touched = self._touched
        if self._reshape:
            touched = None
            self._folder_of.clear()
            self._watch_tree()
            self._drain()  # events raised while the folders were being watched: before the mark
        self._changed = False
        self._touched = set()
        self.marked_ns = time.time_ns()
        return touched

    def touched(self) -> set[str] | None:
        """The files events named since the last mark, without starting a new period (None:
        not known: the tree's folders changed shape, or events were lost)."""
        if self._fd < 0:
            return None
        self._drain()
        return None if self._reshape or self._touched is None else set(self._touched)

    def quiet(self) -> bool:
        """Whether nothing changed under the tree since the last ``mark()`` (once something
        did, it stays so until the next mark)."""
        if self._fd < 0:
            return False
        self._drain()
        return not self._changed and not self._reshape
