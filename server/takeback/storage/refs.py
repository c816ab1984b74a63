"""The log ref's file, ``refs/takeback/oplog``: moving it, checking it, making it durable.

Hand-written rather than through libgit2's reference API: the ref is moved on every call that
publishes, and the in-place write below saves a lock file and a rename each time (about half a
millisecond on an ext4 disk). Every Takeback process reads the ref under the store's lock.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from . import atomic

_VALUE = re.compile(rb"[0-9a-f]{40}\n?")


def move(ref_file: Path, new: str, fsync: bool) -> None:
    """Point the ref at ``new`` (callers compare it with what they built on first, holding the
    store's lock, so nothing moves it between that check and this write).

    An existing ref file is overwritten in place: its 41 bytes lie in one disk sector, so the
    write lands whole or not at all, and no Takeback process reads it unlocked. A new ref, or one
    in another form, goes through a lock file renamed into place. With ``fsync`` the file (and
    after a rename its folder) is flushed before this returns. Raises ``OSError``.
    """
    content = new.encode() + b"\n"
    try:
        fd = os.open(ref_file, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        fd = None
    if fd is not None:
        try:
            if os.fstat(fd).st_size == len(content):
                os.pwrite(fd, content, 0)
                if fsync:
                    os.fdatasync(fd)
                return
        finally:
            os.close(fd)
    lock = lock_file(ref_file)
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.unlink(missing_ok=True)  # left by a writer that died: the caller holds the store lock
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, content)
        if fsync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        lock.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(lock, ref_file)
    if fsync:
        atomic.sync_dir(ref_file.parent)


def lock_file(ref_file: Path) -> Path:
    return ref_file.with_name(ref_file.name + ".lock")


def sync(ref_file: Path) -> None:
    """Flush the ref's file and its folder (before what it no longer names is removed)."""
    try:
        fd = os.open(ref_file, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    atomic.sync_dir(ref_file.parent)


def problems(ref_file: Path) -> list[tuple[Path, str]]:
    """The ref's files a crash or power cut left torn: the ref itself when it does not hold a
    commit id (empty, cut short), and a lock file whose rename into place did not happen."""
    found = []
    lock = lock_file(ref_file)
    if lock.exists():
        found.append((lock, "a new value of the log ref whose rename into place did not happen"))
    try:
        data = ref_file.read_bytes()
    except FileNotFoundError:
        return found
    except NotADirectoryError:  # a file where one of the ref's folders must be: it hides the log
        blocker = next(folder for folder in ref_file.parents if folder.is_file())
        return [*found, (blocker, f"a file is where the log ref's folder {blocker.name}/ must be")]
    except OSError as exc:
        return [*found, (ref_file, f"the log ref cannot be read: {exc.strerror or exc}")]
    if not _VALUE.fullmatch(data):
        what = "is empty" if not data else f"does not hold a commit id ({len(data)} bytes: cut short or torn)"
        found.append((ref_file, f"the log ref {what}"))
    return found
