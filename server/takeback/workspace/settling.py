"""An operation's files flushed after its answer: what a big undo or redo rewrote in place
reaches the disk while the person already reads the answer, the journal kept until it has.

A big operation rewrites its files in place (``files.rewrite_in_place``) and flushed them with
one ``syncfs`` before it recorded itself: all that file system's dirty data, the other
programs' too (the formatter's writes, the peers' objects), 40-500 ms of a 5,000-file undo.
A process that answers first and keeps going (the resident, the language server: the caller
of ``Engine.defer_upkeep``) may leave that flush for after the answer, because the journal
already makes a power cut in between harmless: the operation is in the log, so the recovery
the next open runs rolls every file forward, whatever the cut left in it (``Journal.torn``:
blocks of either side, or zeros). What this needs, and what this module keeps:

- the journal stays on disk until the files are flushed (``settle``: one ``syncfs``, then the
  journal goes, if it is still the one this process wrote);
- ``journal-answered`` beside it names the operation (written without a flush: lost, the
  recovery reports as it does for an operation a crash cut short), so a recovery that finds
  every file as the operation left it, in this process's next start or in another process's
  open, reports nothing: there was nothing to recover, only a flush to finish;
- a file written through a rename (one that may not be rewritten in place) is flushed before
  its rename as before: only files rewritten in place are ever left unflushed.

The journal calls it (``Journal.finish`` leaves, ``Journal.start`` settles first); the engine
settles in its upkeep and when it closes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

from .files import flush_staged

log = logging.getLogger("takeback.journal")

MARKER = "journal-answered"


def _identity(path: Path) -> tuple[int, int, int] | None:
    """What tells one journal file from the next (each is written anew, under a new inode)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class Settling:
    """The one operation of this process whose files rewritten in place wait for their flush."""

    def __init__(self, journal_file: Path) -> None:
        self.journal_file = journal_file
        self.marker = journal_file.with_name(MARKER)
        self._entry: str | None = None
        self._journal: tuple[int, int, int] | None = None  # the journal file as this process left it
        self._files: list[tuple[int, str]] = []  # (device, absolute path) of each file to flush
        # a second caller (an operation's start while the language server's upkeep settles on
        # its worker thread) waits until the files are flushed, never writing a journal over
        # this one before; the store's lock is not held meanwhile (that caller may hold it)
        self._flushing = threading.Lock()

    def leave(self, entry: str, rewritten: list[tuple[int, str]]) -> None:
        """The operation ``entry`` is in the log and its files ``rewritten`` in place are not
        flushed: keep its journal, name it answered."""
        with self._flushing:
            self._entry, self._files = entry, list(rewritten)
            self._journal = _identity(self.journal_file)
        try:
            self.marker.write_text(entry)
        except OSError as exc:  # only the recovery's words depend on it
            log.debug("could not write %s: %s", self.marker, exc)

    def settle(self, locked: Callable[[], contextlib.AbstractContextManager[object]], finish: Callable[[], None]) -> None:
        """Flush the files left unflushed (one ``syncfs``; no lock: it flushes what is there
        whoever holds the store), then, under the store's lock (``locked``), remove the journal
        (``finish``) and its mark if they are still this operation's: another process may have
        recovered it since, or started its own. A flush that fails leaves both for the next
        open's recovery to finish (it flushes again)."""
        with self._flushing:
            if self._entry is None:
                return
            entry, files, journal = self._entry, self._files, self._journal
            self._entry, self._files, self._journal = None, [], None
            try:
                flush_staged([], files)
            except OSError as exc:
                log.warning("could not flush the files the operation %s wrote (%s); the journal stays, and the next "
                            "open finishes it", entry, exc)
                return
        with locked():
            if journal is not None and _identity(self.journal_file) == journal:
                finish()
            self.forget(entry)

    def answered(self, entry: str) -> bool:
        """Whether the journal of ``entry`` is one whose operation answered, left for its flush."""
        try:
            return self.marker.read_text() == entry
        except OSError:
            return False

    def forget(self, entry: str) -> None:
        """Remove the mark if it names ``entry``: its journal is gone."""
        if self.answered(entry):
            with contextlib.suppress(OSError):
                self.marker.unlink()
