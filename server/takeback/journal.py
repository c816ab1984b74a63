"""The write-ahead journal that makes a multi-file revert all or nothing.

Before an operation touches the workspace it writes ``journal.json`` in the store: every
path with its content before and after (as stored blobs; withheld content is backed up in
``journal-backup/`` beside it, readable only by the owner). The workspace is then written,
the operation's records are appended to the log in one ref update, and the journal is
removed. If the process dies in between, ``recover`` (run when the engine opens) looks
whether the operation reached the log: if so it rolls every path forward, otherwise back.
Either way the workspace ends all-before or all-after, and the report is kept for
``takeback status``.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from .models import FileVersion, RecoveryReport
from .store import Store
from .workspace import Workspace

log = logging.getLogger("takeback.journal")


class JournalFile(BaseModel):
    path: str
    before: FileVersion | None
    after: FileVersion | None
    backup: str | None = None  # file name in journal-backup/ for withheld before-content


class JournalDoc(BaseModel):
    entry: str
    operation: str
    started: datetime
    files: list[JournalFile]


class Journal:
    def __init__(self, store: Store, workspace: Workspace, fsync: bool) -> None:
        self.store = store
        self.workspace = workspace
        self.fsync = fsync
        self.file = store.path / "journal.json"
        self.backup_dir = store.path / "journal-backup"
        self.report_file = store.path / "last-recovery.json"

    def start(self, entry: str, operation: str, files: list[JournalFile], backups: dict[str, bytes]) -> None:
        if backups:
            self.backup_dir.mkdir(mode=0o700, exist_ok=True)
            for name, content in backups.items():
                fd = os.open(self.backup_dir / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(content)
                    if self.fsync:
                        handle.flush()
                        os.fsync(handle.fileno())
        doc = JournalDoc(entry=entry, operation=operation, started=datetime.now(timezone.utc), files=files)
        tmp = self.file.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(doc.model_dump_json())
            if self.fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, self.file)
        if self.fsync:
            _fsync_dir(self.store.path)

    def finish(self) -> None:
        self.file.unlink(missing_ok=True)
        shutil.rmtree(self.backup_dir, ignore_errors=True)

    def pending(self) -> JournalDoc | None:
        try:
            return JournalDoc.model_validate_json(self.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None

    def write_side(self, item: JournalFile, side: str) -> None:
        version = item.before if side == "before" else item.after
        if version is None:
            self.workspace.delete(item.path)
            return
        if version.withheld:
            if item.backup is None:
                return  # nothing we can write; the path was never changed for this reason
            content = (self.backup_dir / item.backup).read_bytes()
        else:
            content = self.store.read_blob(version.oid)
        self.workspace.write(item.path, content, version.mode, fsync=self.fsync)

    def roll_back(self, written: list[JournalFile]) -> None:
        """Put back the before-side of the paths already written, newest first (in-process
        failure); if even that fails, the journal stays for recovery on the next start."""
        for item in reversed(written):
            try:
                self.write_side(item, "before")
            except OSError:
                log.exception("could not roll back %s; the journal keeps it for recovery", item.path)
                raise

    def recover(self, committed: Callable[[str], bool]) -> RecoveryReport | None:
        """Finish or undo an operation a dead process left half-done."""
        doc = self.pending()
        if doc is None:
            return None
        forward = committed(doc.entry)
        # A writer killed between creating its temporary file and renaming it left that file.
        for folder in sorted({os.path.dirname(f.path) for f in doc.files}):
            self.workspace.remove_temporaries(folder)
        for item in doc.files:
            self.write_side(item, "after" if forward else "before")
        report = RecoveryReport(
            at=datetime.now(timezone.utc),
            operation=doc.operation,
            action="rolled-forward" if forward else "rolled-back",
            paths=[f.path for f in doc.files],
        )
        self.report_file.write_text(report.model_dump_json(indent=2))
        self.finish()
        return report

    def last_report(self) -> RecoveryReport | None:
        try:
            return RecoveryReport.model_validate_json(self.report_file.read_text())
        except (FileNotFoundError, ValueError):
            return None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
