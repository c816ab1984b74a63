"""Whether Takeback's own code changed on disk since the resident process loaded it.

An upgrade, or an edit of a development checkout, must never be served by the old code: the
resident process then answers "stale" and leaves, and a fresh one takes over (``server.py``).
``Code`` stamps every module of the package the process loaded (inode, size, modification time)
and compares the stamps again before each request. Stat-ing every module (about 160) costs about
0.65 ms per request, the largest single part of a hook's own work in the process at 100,000
files (issue 18, docs/performance.md); so an inotify watch of the package's folders
(``scanning/watch.py``, ``__pycache__`` left out: Python writes there when it imports) answers
"nothing changed" with one read. Any event, or no watch (not Linux, a file system without
events, a watch that failed), falls back to the stamps, which decide: an event is only a reason
to look. The watch starts a new quiet period just before the stamps are compared, so a change
made while they are compared is the next call's event.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path

from ..scanning.watch import TreeWatch, Unavailable

log = logging.getLogger("takeback.resident")

PACKAGE = Path(__file__).resolve().parent.parent


def stamp(paths: list[Path]) -> tuple:
    """What changes when any of ``paths`` is written, made, removed or replaced."""
    out: list[tuple[int, int, int] | None] = []
    for path in paths:
        try:
            info = os.stat(path)
            out.append((info.st_ino, info.st_size, info.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


def loaded_modules(package: Path = PACKAGE) -> list[Path]:
    """The files of the modules of ``package`` this process has imported."""
    files = []
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if name and Path(name).resolve().is_relative_to(package):
            files.append(Path(name))
    return sorted(files)


class Code:
    """The package's loaded modules and their stamps, watched (thread-safe)."""

    def __init__(self, package: Path = PACKAGE, files: list[Path] | None = None) -> None:
        self.package = package
        self._lock = threading.Lock()
        self._watch = _watch(package)  # before the stamps: a change after them raises an event
        self.files = loaded_modules(package) if files is None else list(files)
        self._stamp = stamp(self.files)
        self._changed = False  # once found, for good: the process is leaving

    def add_loaded(self) -> None:
        """Stamp the modules imported since (the guard's, loaded after the process started)."""
        known = set(self.files)
        more = [p for p in loaded_modules(self.package) if p not in known]
        with self._lock:
            self.files, self._stamp = self.files + more, self._stamp + stamp(more)

    def changed(self) -> bool:
        """Whether a loaded module's file changed since it was stamped."""
        with self._lock:
            if self._changed:
                return True
            if self._watch is not None:
                try:
                    if self._watch.quiet():
                        return False
                    self._watch.mark()
                except Unavailable as exc:
                    log.info("the code's watch stopped (%s): its files are stamped at each request", exc)
                    self._watch.close()
                    self._watch = None
            self._changed = stamp(self.files) != self._stamp
            return self._changed

    def close(self) -> None:
        with self._lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None


def _watch(package: Path) -> TreeWatch | None:
    try:
        return TreeWatch(str(package), lambda _folder: False, lambda folder: folder.rpartition("/")[2] == "__pycache__")
    except (Unavailable, OSError, AttributeError) as exc:  # (AttributeError: a libc without inotify)
        log.info("the code is not watched (%s): its files are stamped at each request", exc)
        return None
