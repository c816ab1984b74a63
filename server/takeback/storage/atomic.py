"""Replacing a file all at once, the one way Takeback does it for its own files.

``write`` puts the new bytes in a temporary file beside the target (a unique name, mode 0600
unless told), optionally flushed to disk, then renames it over the target: a reader sees the
old file or the new one, never half of either, and a crash leaves at worst a stray temporary
file, never a cut one. With ``fsync`` the folder is synced too, so the rename itself survives a
power cut (``sync_dir``). The person's own files are written by ``workspace/files.py``, which keeps
their mode and refuses to write through links; the store's packs by ``packs.py``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write(path: Path, data: bytes, fsync: bool = False, mode: int | None = None) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            if fsync:
                out.flush()
                os.fsync(out.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if fsync:
        sync_dir(path.parent)


def sync_dir(path: Path) -> None:
    """Flush a folder's entries (a rename or a new file in it) to disk."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
