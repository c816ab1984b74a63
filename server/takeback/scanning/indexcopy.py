"""A copy of the user's git index kept inside another file (the open turn's file): where it is,
whether a live index still holds the same bytes, and the copy as libgit2 parses it. The bracket
compares the index at end against this copy to know whether git's own view moved during the
turn (``scan.GitScanner``); reading it is the scanner's business, keeping it the engine's
(``engine/brackets.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pygit2

from ..errors import StoreError

SCRATCH_NAME = "open-turn.index.tmp"  # beside the copy; a name no open turn's file can have


@dataclass
class IndexCopy:
    """The user's git index as it was at begin: ``size`` bytes of ``path`` from ``offset``."""

    path: Path
    offset: int
    size: int

    def same_as(self, index_file: Path) -> bool:
        """Whether ``index_file`` holds the same bytes as this copy.

        An index file ends with a checksum of everything before it, so equal sizes and equal
        trailers mean equal content without reading 2 x 10 MB for a 100k-file index. An
        all-zero trailer (``index.skipHash``) proves nothing: then the bytes are compared in full.
        """
        try:
            with open(self.path, "rb") as mine, open(index_file, "rb") as theirs:
                if os.fstat(theirs.fileno()).st_size != self.size:
                    return False
                tail = min(self.size, 32)
                mine.seek(self.offset + self.size - tail)
                theirs.seek(self.size - tail)
                trailer = mine.read(tail)
                if trailer != theirs.read(tail):
                    return False
                if self.size >= 32 and trailer[-20:].strip(b"\x00"):
                    return True
                mine.seek(self.offset)
                theirs.seek(0)
                left = self.size
                while left:
                    step = min(left, 1 << 20)
                    if mine.read(step) != theirs.read(step):
                        return False
                    left -= step
                return True
        except FileNotFoundError:
            return False

    def parsed(self) -> pygit2.Index:
        """The copy as libgit2 reads an index (written out to a scratch file to be parsed)."""
        if self.offset == 0:
            return pygit2.Index(str(self.path))
        scratch = self.path.parent / SCRATCH_NAME
        with open(self.path, "rb") as source, open(scratch, "wb") as out:
            copy_range(source.fileno(), out.fileno(), self.offset, self.size)
        try:
            return pygit2.Index(str(scratch))  # libgit2 reads the whole file as it opens it
        finally:
            scratch.unlink(missing_ok=True)


def copy_range(source: int, target: int, offset: int, size: int) -> None:
    """Copy ``size`` bytes of ``source`` from ``offset`` to the end of ``target``."""
    left = size
    while left:
        try:
            sent = os.sendfile(target, source, offset, left)
        except OSError:  # no sendfile between these files: copy through memory
            os.lseek(source, offset, os.SEEK_SET)
            chunk = os.read(source, min(left, 1 << 20))
            sent = os.write(target, chunk) if chunk else 0
        if sent == 0:
            raise StoreError("the git index shrank while it was copied")
        offset += sent
        left -= sent
