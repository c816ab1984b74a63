"""The write-ahead journal that makes a multi-file revert all or nothing.

Before an operation touches the workspace it writes ``journal.json`` in the store: every
path with its content before and after (as stored blobs; withheld content is backed up in
``journal-backup/`` beside it, readable only by the owner), the exact permission bits each
file had, the folders each write creates and the folders the operation removes. The
workspace is then written (``forward``: deletions, then the emptied folders, then the writes,
so a file can take a folder's place and the reverse), the operation's records are appended to
the log in one ref update, and the journal is removed. A failure rolls back what was written,
newest first, with the exact permission bits. If the process dies in between, ``recover``
(run when the engine opens) looks whether the operation reached the log: if so it rolls every
path forward, otherwise back; but only a path that holds exactly one side or the other: one
changed since (the person typed on after the crash) is left as it is and named in the report
kept for ``takeback status``.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from pydantic import BaseModel

from ..core.models import FileVersion, RecoveryReport
from ..errors import CannotWrite
from ..storage import atomic
from ..storage.store import Store
from .files import Version, Workspace

log = logging.getLogger("takeback.journal")


Matches = Callable[[str, FileVersion | None, Version | None], bool]
"""Whether a file on disk is exactly a recorded version (content and mode)."""


class JournalFile(BaseModel):
    path: str
    before: FileVersion | None
    after: FileVersion | None
    backup: str | None = None  # file name in journal-backup/ for withheld before-content
    perm: int | None = None  # the file's exact permission bits before (set by start)
    new_folders: list[str] = []  # folders writing the after-side creates (removed on roll-back)


class JournalDoc(BaseModel):
    entry: str
    operation: str
    started: datetime
    files: list[JournalFile]  # in the order they are written: deletions first
    folders: list[str] = []  # removed (when empty) between the deletions and the writes


def _ordered(files: list[JournalFile]) -> list[JournalFile]:
    """Deletions before writes: a folder the deletions empty can then give way to a file."""
    return [f for f in files if f.after is None] + [f for f in files if f.after is not None]


class Journal:
    def __init__(self, store: Store, workspace: Workspace, fsync: bool) -> None:
        self.store = store
        self.workspace = workspace
        self.fsync = fsync
        self.file = store.path / "journal.json"
        self.backup_dir = store.path / "journal-backup"
        self.report_file = store.path / "last-recovery.json"

    def start(
        self, entry: str, operation: str, files: list[JournalFile], backups: dict[str, bytes], folders: Iterable[str] = ()
    ) -> None:
        """Write the journal for ``files`` (and the ``folders`` to remove) before any of them."""
        for item in files:
            item.perm = self.workspace.permissions(item.path)
        if backups:
            self.backup_dir.mkdir(mode=0o700, exist_ok=True)
            for name, content in backups.items():
                fd = os.open(self.backup_dir / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(content)
                    if self.fsync:
                        handle.flush()
                        os.fsync(handle.fileno())
        doc = JournalDoc(
            entry=entry, operation=operation, started=datetime.now(UTC), files=_ordered(files), folders=list(folders)
        )
        atomic.write(self.file, doc.model_dump_json().encode("utf-8"), self.fsync)

    def finish(self) -> None:
        self.file.unlink(missing_ok=True)
        shutil.rmtree(self.backup_dir, ignore_errors=True)

    def pending(self) -> JournalDoc | None:
        try:
            return JournalDoc.model_validate_json(self.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None

    def forward(
        self,
        files: list[JournalFile],
        folders: list[str],
        written: list[JournalFile],
        write_after: Callable[[JournalFile], None] | None = None,
    ) -> None:
        """Carry the journalled operation out (``write_after`` writes one path, by default from
        the store); each path is added to ``written`` once done, for ``roll_back``."""

        def step(item: JournalFile) -> None:
            try:
                if write_after is not None and item.after is not None:
                    write_after(item)
                else:
                    self.write_side(item, "after")
            except OSError as exc:  # rolled back by the caller; the person reads the workspace path
                raise CannotWrite.at(item.path, exc) from exc
            written.append(item)

        self._in_order(files, folders, step)

    def _in_order(self, files: list[JournalFile], folders: list[str], step: Callable[[JournalFile], None]) -> None:
        """``step`` over the deletions, then remove the ``folders`` they left empty, then
        ``step`` over the writes: so a file can take the place of a folder and the reverse."""
        ordered = _ordered(files)
        deletions = sum(1 for f in ordered if f.after is None)
        for item in ordered[:deletions]:
            step(item)
        self.workspace.remove_folders(folders)
        for item in ordered[deletions:]:
            step(item)

    def _content(self, item: JournalFile, side: str) -> bytes | None:
        """The bytes of one side (None when they cannot be had: withheld, no backup)."""
        version = item.before if side == "before" else item.after
        assert version is not None
        if not version.withheld:
            return self.store.read_blob(version.oid)
        if side == "before" and item.backup is not None:
            return (self.backup_dir / item.backup).read_bytes()
        return None

    def write_side(self, item: JournalFile, side: str) -> None:
        """Put ``item``'s path to one side: the before-side with its exact permission bits
        (and without the folders the after-side made); a side whose content cannot be had
        (withheld, no backup) is left alone: the path was never changed for this reason."""
        version = item.before if side == "before" else item.after
        if version is None:
            self.workspace.delete(item.path)
            if side == "before":
                self.workspace.remove_folders(item.new_folders)
            return
        content = self._content(item, side)
        if content is None:
            return
        perm = item.perm if side == "before" else None
        self.workspace.write(item.path, content, version.mode, fsync=self.fsync, perm=perm)

    def roll_back(self, written: list[JournalFile]) -> None:
        """Put back the before-side of the paths already written, newest first (in-process
        failure); if even that fails, the journal stays for recovery on the next start."""
        for item in reversed(written):
            try:
                self.write_side(item, "before")
            except OSError:
                log.exception("could not roll back %s; the journal keeps it for recovery", item.path)
                raise

    def recover(self, committed: Callable[[str], bool], matches: Matches) -> RecoveryReport | None:
        """Finish or undo an operation a dead process left half-done, path by path: a path
        that holds exactly the side it started from or the side it was to get is rolled; one
        that holds anything else was changed since, and is left (``RecoveryReport.left``)."""
        doc = self.pending()
        if doc is None:
            return None
        forward = committed(doc.entry)
        # A writer killed between creating its temporary file and renaming it left that file.
        for folder in sorted({os.path.dirname(f.path) for f in doc.files}):
            self.workspace.remove_temporaries(folder)
        left: list[str] = []

        def roll(item: JournalFile) -> None:
            if not self._roll(item, "after" if forward else "before", matches):
                left.append(item.path)

        if forward:
            self._in_order(doc.files, doc.folders, roll)
        else:  # newest first: what the writes made goes before what the deletions took comes back
            for item in reversed(_ordered(doc.files)):
                roll(item)
        report = RecoveryReport(
            at=datetime.now(UTC),
            operation=doc.operation,
            action="rolled-forward" if forward else "rolled-back",
            paths=[f.path for f in doc.files],
            left=sorted(left),
        )
        self.report_file.write_text(report.model_dump_json(indent=2))
        self.finish()
        return report

    def _roll(self, item: JournalFile, side: str, matches: Matches) -> bool:
        """Put ``item``'s path to ``side`` if it holds exactly one side or the other; False
        when it is left as it is (changed since, withheld content, or not writable)."""
        target = item.after if side == "after" else item.before
        other = item.before if side == "after" else item.after
        disk = self.workspace.read(item.path)
        if matches(item.path, target, disk):
            if target is None and side == "before":
                self.workspace.remove_folders(item.new_folders)  # killed after making them
            return True
        if not matches(item.path, other, disk):
            return False
        if target is not None and self._content(item, side) is None:
            return False
        try:
            self.write_side(item, side)
        except OSError as exc:
            log.warning("recovery left %s as it is: %s", item.path, exc)
            return False
        return True

    def last_report(self) -> RecoveryReport | None:
        try:
            return RecoveryReport.model_validate_json(self.report_file.read_text())
        except (FileNotFoundError, ValueError):
            return None


