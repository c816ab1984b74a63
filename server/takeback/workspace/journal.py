"""The write-ahead journal that makes a multi-file revert all or nothing, through a crash or a power cut.

Before an operation touches the workspace it writes ``journal.json`` in the store: every
path with its content before and after (as stored blobs; withheld content is backed up in
``journal-backup/`` beside it, readable only by the owner), the exact permission bits each
file had, the folders each write creates and the folders the operation removes. Everything
the journal names is on disk before the journal is: ``start`` first writes the objects the
store holds in memory (as a pack), then the backups, then the journal, each flushed with its
folder. The workspace is then written (``forward``: deletions, then the emptied folders, then
the writes, so a file can take a folder's place and the reverse; each file flushed before its
rename, then every folder it changed; from ``SYNCFS_FROM`` files on, those that may be
rewritten in place (``JournalFile.in_place``, decided by ``start`` and written in the journal),
the others written under temporary names, all flushed with one ``syncfs``, then the temporary
ones renamed, by several threads from ``PUT_IN_PARALLEL_FROM`` on), an operation reads back
what it wrote (``verify``: another program may have written to a path in between), the
operation's records are appended to the log in one ref update, and the journal is removed.
Operations are rare and a person waits for them, so they pay for this durability whatever the
``fsync`` setting (``Store.durable``; the cost is in docs/performance.md): once the answer is
shown, a power cut leaves the workspace all-after.

A failure rolls back what was written, newest first, with the exact permission bits (a path
holding neither side, another program's bytes, is kept as it is and named in the error); a path
that cannot be put back either (the disk is full) keeps the journal, and the error says which
(``RollBackFailed``). If the process dies in between, ``recover`` (run when the engine opens)
looks whether the operation reached the log: if so it rolls every path forward, otherwise
back; but only a path that holds exactly one side or the other, or a file rewritten in place
that holds blocks of each (``torn``: cut in the middle); one changed since (the person
typed on after the crash), or whose content cannot be read (the store lost it, the disk
fails), is left as it is and named in the report kept for ``takeback status``, with why.
Recovery never raises: a journal it cannot read (torn by a power cut in an older version, empty)
is moved aside (``journal.json.torn-*``) and reported.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from ..core.models import MODE_LINK, FileVersion, RecoveryReport
from ..errors import CannotWrite, StoreError, TakebackError
from ..storage import atomic
from ..storage.store import Store
from .files import (
    Staged,
    Version,
    Workspace,
    discard,
    flush_staged,
    may_write_in_place,
    read_back,
    regular_file,
    rewrite_in_place,
    syncfs_from,
    torn_between,
)
from .settling import Settling

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
    in_place: bool = False  # rewritten in place (``rewrite_in_place``): recovery rolls it if torn (``Journal.torn``)


class JournalDoc(BaseModel):
    entry: str
    operation: str
    started: datetime
    files: list[JournalFile]  # in the order they are written: deletions first
    folders: list[str] = []  # removed (when empty) between the deletions and the writes


def _ordered(files: list[JournalFile]) -> list[JournalFile]:
    """Deletions before writes: a folder the deletions empty can then give way to a file."""
    return [f for f in files if f.after is None] + [f for f in files if f.after is not None]


IN_PLACE = True
"""Whether a big batch (``SYNCFS_FROM`` files on) rewrites in place the files that may be
(``JournalFile.in_place``); the others go through a temporary file and a rename."""

PUT_THREADS = 4
PUT_IN_PARALLEL_FROM = 256  # files renamed into place by PUT_THREADS threads from this many on

CHANGED = "changed since (not overwritten)"  # why a path is left that holds neither side
ROLLED = "rolled"  # (``Journal._needs_roll``: the path was put to the side asked)


def wording_of(exc: BaseException) -> str:
    """An error's reason in a few words (an OS error's text, lower case, without the path)."""
    if isinstance(exc, TakebackError):
        return exc.message
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return f"{type(exc).__name__}: {exc}"


@contextlib.contextmanager
def _at(item: JournalFile) -> Iterator[None]:
    """An OS error writing ``item``'s path is ``CannotWrite`` naming it (the caller rolls back)."""
    try:
        yield
    except OSError as exc:
        raise CannotWrite.at(item.path, exc) from exc


def _may_rewrite(item: JournalFile) -> bool:
    """Whether both sides of ``item`` are files whose bytes the store holds: what a file written
    in place needs, so recovery can make it either side whatever a crash left in it."""
    sides = (item.before, item.after)
    return all(v is not None and v.mode != MODE_LINK and not v.withheld for v in sides)


def _naming_kept(error: BaseException, kept: list[str]) -> BaseException:
    """``error`` with the paths a roll-back kept as another program left them named in its
    message (a Takeback error; any other is logged: its own words are what is shown)."""
    if not kept:
        return error
    names = ", ".join(kept)
    if not isinstance(error, TakebackError):
        log.warning("left %s as another program made it (not put back: it holds neither side)", names)
        return error
    one = len(kept) == 1
    error.message = (f"{error.message}; {names} {'was' if one else 'were'} left as another program made "
                     f"{'it' if one else 'them'} (not put back: {'it holds' if one else 'they hold'} neither side)")
    error.args = (error.message,)
    return error


def _rewrote_in_place(item: JournalFile) -> bool:
    """Whether ``forward`` rewrites ``item``'s file in place (``rewrite_in_place``): marked so by
    ``start``, its bits known. Such a write changes no folder's entries."""
    return item.in_place and item.perm is not None and item.after is not None


def _touched(files: Iterable[JournalFile], folders: Iterable[str]) -> list[str]:
    """Every path whose folder an operation changes: its files, the folders they made, the
    folders it removed (``Workspace.sync_folders`` flushes the folders holding them)."""
    return [p for f in files for p in (f.path, *f.new_folders)] + list(folders)


def _put_all(workspace: Workspace, staged: list[tuple[JournalFile, Staged | None]], written: list[JournalFile]) -> None:
    """Rename the staged files into place, from ``PUT_IN_PARALLEL_FROM`` files on by
    ``PUT_THREADS`` threads (a rename over a file waits on the file system's journal to free
    the old one; several overlap those waits), each path added to ``written`` (and marked
    put in ``staged``) once in place. The first failure stops every thread; it is raised."""
    done = [False] * len(staged)
    failed: list[TakebackError] = []
    threads = PUT_THREADS if len(staged) >= PUT_IN_PARALLEL_FROM else 1

    def put_share(first: int) -> None:
        for i in range(first, len(staged), threads):
            if failed:
                return
            item, one = staged[i]
            assert one is not None
            try:
                with _at(item):
                    workspace.put(one)
            except TakebackError as exc:  # stops the other threads; raised once they are done
                failed.append(exc)
                return
            done[i] = True

    try:
        if threads == 1:
            put_share(0)
        else:
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(put_share, range(threads)))
    finally:
        for i, (item, _one) in enumerate(staged):
            if done[i]:
                written.append(item)
                staged[i] = (item, None)  # in place: nothing to discard
    if failed:
        raise failed[0]


def _write_backups(backup_dir: Path, backups: dict[str, bytes]) -> None:
    """The withheld before-contents in ``backup_dir`` (the store's ``journal-backup/``), each
    flushed, and their folder (and its entry in the store)."""
    made = not backup_dir.is_dir()
    backup_dir.mkdir(mode=0o700, exist_ok=True)
    for name, content in backups.items():
        fd = os.open(backup_dir / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
    atomic.sync_dir(backup_dir)
    if made:
        atomic.sync_dir(backup_dir.parent)


def _flush_in_place(workspace: Workspace, doc: JournalDoc, journal_file: Path) -> None:
    """Flush the files ``doc`` names as rewritten in place (one ``syncfs``), which an
    operation that answered first may have left unflushed; a failure is logged (the disk
    fails: the journal goes all the same, as every recovery's does)."""
    pending = []
    for item in doc.files:
        if item.in_place:
            path = workspace.at(item.path)
            with contextlib.suppress(OSError):
                pending.append((os.stat(path).st_dev, path))
    try:
        flush_staged([], pending)
    except OSError as exc:
        log.warning("could not flush the files the journal %s names: %s", journal_file, wording_of(exc))


def _keep_report(report_file: Path, report: RecoveryReport) -> None:
    """Keep ``report`` where ``takeback status`` reads it (flushed; a failure is logged)."""
    try:
        atomic.write(report_file, report.model_dump_json(indent=2).encode("utf-8"), fsync=True)
    except OSError as exc:
        log.warning("could not keep the recovery report %s: %s", report_file, wording_of(exc))


class Journal:
    def __init__(self, store: Store, workspace: Workspace, fsync: bool, matches: Matches) -> None:
        self.store = store
        self.workspace = workspace
        self.fsync = fsync  # the setting; the journal's own writes are flushed whatever it says
        self.matches = matches  # what tells a side on disk (``roll_back`` and ``recover``)
        self.file = store.path / "journal.json"
        self.backup_dir = store.path / "journal-backup"
        self.report_file = store.path / "last-recovery.json"
        # Leave the flush of files rewritten in place for after the answer (``settling.py``; a
        # process that answers first: ``Engine.defer_upkeep``), and what this one left so.
        self.flush_later = False
        self.settling = Settling(self.file)
        self._entry: str | None = None  # the operation whose journal this process wrote last
        self._unflushed: list[tuple[int, str]] = []
        # recovers a journal another process left (the engine's checks, then ``recover``):
        # ``start`` runs it on one it finds (that operation answered and left its flush, or a
        # crash cut it short), never writing its own over it
        self.recover_other: Callable[[], object] | None = None

    def start(
        self, entry: str, operation: str, files: list[JournalFile], backups: dict[str, bytes], folders: Iterable[str] = ()
    ) -> None:
        """Write the journal for ``files`` (and the ``folders`` to remove) before any of them,
        once every object it names is on disk. A disk error is ``StoreError`` naming the
        journal; nothing was written to the workspace then. This process's last operation's
        files are flushed first (``settle``), and a journal another process left is recovered
        (its operation answered and left its flush, or a crash cut it short)."""
        self.settle()
        if self.recover_other is not None and self._readable():
            self.recover_other()
        self._entry = entry
        in_place = IN_PLACE and sum(1 for f in files if f.after is not None) >= syncfs_from()
        for item in files:
            st = regular_file(self.workspace.at(item.path))
            item.perm = stat.S_IMODE(st.st_mode) if st is not None else None
            item.in_place = in_place and st is not None and _may_rewrite(item) and may_write_in_place(st)
        doc = JournalDoc(
            entry=entry, operation=operation, started=datetime.now(UTC), files=_ordered(files), folders=list(folders)
        )
        try:
            with self.store.durable():
                self.store.flush()  # the contents it names: in packs, flushed, before it
            if backups:
                _write_backups(self.backup_dir, backups)
            atomic.write(self.file, doc.model_dump_json().encode("utf-8"), fsync=True)
        except (OSError, StoreError) as exc:
            self._discard()
            raise StoreError(f"cannot write the journal {self.file}: {wording_of(exc)}; nothing was written") from exc

    def _readable(self) -> bool:
        """Whether there is a journal that can be read (one that cannot, the open set aside or
        said it could not)."""
        try:
            return self.pending() is not None
        except (OSError, ValueError):
            return False

    def _discard(self) -> None:
        """Remove what a failed ``start`` may have left (never raises: the disk may be failing)."""
        with contextlib.suppress(OSError):
            self.file.unlink(missing_ok=True)
        shutil.rmtree(self.backup_dir, ignore_errors=True)

    def finish(self) -> None:
        """Remove the journal once the operation is in the log (or wholly rolled back), and
        flush that; but while files it rewrote in place wait for their flush (``flush_later``)
        it stays, named answered, until ``settle``. A failure here loses nothing: the next open
        finds the journal and rolls every path to the side it already holds."""
        if self._unflushed and self._entry is not None:
            self.settling.leave(self._entry, self._unflushed)
            self._unflushed = []
            return
        self._remove()

    def settle(self) -> None:
        """Flush the files this process's last operation left unflushed, then remove its
        journal (``settling.py``); nothing when there are none. Never raises."""
        self.settling.settle(self.store.locked, self._remove)

    def _remove(self) -> None:
        try:
            self.file.unlink(missing_ok=True)
            shutil.rmtree(self.backup_dir, ignore_errors=True)
            atomic.sync_dir(self.store.path)
        except OSError as exc:
            log.debug("could not remove the journal %s (%s); the next start finishes it", self.file, wording_of(exc))

    def pending(self) -> JournalDoc | None:
        """The journal there is, None when none; ``ValueError`` when it cannot be read (torn,
        empty, not a journal), ``OSError`` when the disk refuses."""
        try:
            text = self.file.read_bytes()
        except FileNotFoundError:
            return None
        return JournalDoc.model_validate_json(text)

    def forward(
        self,
        files: list[JournalFile],
        folders: list[str],
        written: list[JournalFile],
        content_after: Callable[[JournalFile], bytes] | None = None,
    ) -> None:
        """Carry the journalled operation out (``content_after`` gives one path's new bytes, by
        default from the store); each path is added to ``written`` once done, for ``roll_back``.
        The deletions go first, then the emptied folders, then the writes: each file flushed
        and renamed into place in turn, or from ``SYNCFS_FROM`` files on all written under
        temporary names, flushed at once and only then renamed (``_write_all_at_once``); the
        folders it changed are flushed once all are. Path checks look at each folder once
        (``FolderLook.steady``)."""
        with self.workspace.folders.steady():
            self._forward(files, folders, written, content_after)
        try:  # (a file rewritten in place changed no folder: 5,000 of them, a second ``syncfs`` for nothing)
            self.workspace.sync_folders(_touched([f for f in files if not _rewrote_in_place(f)], folders))
        except OSError as exc:
            raise CannotWrite(f"cannot flush the folders of {files[0].path} and the rest to disk: {wording_of(exc)}; "
                              "nothing was written (files already written were put back)") from exc

    def _forward(
        self, files: list[JournalFile], folders: list[str], written: list[JournalFile],
        content_after: Callable[[JournalFile], bytes] | None,
    ) -> None:
        def content(item: JournalFile) -> bytes:
            return content_after(item) if content_after is not None else self.content_of(item, "after")

        def step(item: JournalFile) -> None:  # a deletion, or one of a few files flushed and put in place in turn
            with _at(item):
                if item.after is None:
                    self.workspace.delete(item.path)
                else:
                    self.workspace.write(item.path, content(item), item.after.mode)
            written.append(item)

        def at_once(writes: list[JournalFile]) -> None:
            self._write_all_at_once(writes, written, content)

        many = sum(1 for f in files if f.after is not None) >= syncfs_from()
        self._in_order(files, folders, step, at_once if many else None)

    def _write_all_at_once(
        self, writes: list[JournalFile], written: list[JournalFile], content: Callable[[JournalFile], bytes]
    ) -> None:
        """Many files: those the journal marks ``in_place`` rewritten in place (each added to
        ``written`` before its first byte: a failure in the middle leaves it torn, and
        ``roll_back`` puts it back whole), every other one written under a temporary name; all
        flushed at once (``flush_staged``), then the temporary ones renamed into place. A failure
        before the renames leaves no temporary file, and the files rewritten in place to be put
        back."""
        staged: list[tuple[JournalFile, Staged | None]] = []
        rewritten: list[tuple[int, str]] = []
        try:
            for item in writes:
                assert item.after is not None
                with _at(item):
                    if _rewrote_in_place(item):
                        assert item.perm is not None
                        written.append(item)
                        self.workspace.check(item.path)
                        rewritten.append(rewrite_in_place(
                            self.workspace.at(item.path), item.path, content(item), item.after.mode, item.perm))
                    else:
                        staged.append((item, self.workspace.stage(item.path, content(item), item.after.mode)))
            try:
                if self.flush_later and not staged:
                    self._unflushed = rewritten  # flushed after the answer (``finish``, ``settle``)
                else:
                    flush_staged([s for _, s in staged if s is not None], rewritten)
            except OSError as exc:
                raise CannotWrite(f"cannot flush {writes[0].path} and the rest to disk: {wording_of(exc)}; "
                                  "nothing was written") from exc
            _put_all(self.workspace, staged, written)
        finally:
            for _item, left in staged:
                if left is not None:
                    discard(left)

    def _in_order(
        self, files: list[JournalFile], folders: list[str], step: Callable[[JournalFile], None],
        write_all: Callable[[list[JournalFile]], None] | None = None,
    ) -> None:
        """``step`` over the deletions, then remove the ``folders`` they left empty, then
        ``step`` over the writes (or ``write_all`` of them at once): so a file can take the
        place of a folder and the reverse."""
        ordered = _ordered(files)
        deletions = sum(1 for f in ordered if f.after is None)
        for item in ordered[:deletions]:
            step(item)
        self.workspace.remove_folders(folders)
        if write_all is not None:
            write_all(ordered[deletions:])
            return
        for item in ordered[deletions:]:
            step(item)

    def content_of(self, item: JournalFile, side: str) -> bytes:
        """The bytes of one side; ``StoreError`` when they cannot be had (withheld by policy,
        no backup: an operation only ever holds such a side in memory, for its own writes)."""
        version = item.before if side == "before" else item.after
        assert version is not None
        if not version.withheld:
            return self.store.read_blob(version.oid)
        if side == "before" and item.backup is not None:
            return (self.backup_dir / item.backup).read_bytes()
        raise StoreError("its content was withheld by policy and has no backup")

    def write_side(self, item: JournalFile, side: str) -> None:
        """Put ``item``'s path to one side: the before-side with its exact permission bits
        (and without the folders the after-side made); ``StoreError``, nothing written, for a
        side whose content cannot be had (``content_of``). Files are flushed before their
        rename (``sync_folders`` does their folders)."""
        version = item.before if side == "before" else item.after
        if version is None:
            self.workspace.delete(item.path)
            if side == "before":
                self.workspace.remove_folders(item.new_folders)
            return
        content = self.content_of(item, side)
        perm = item.perm if side == "before" else None
        self.workspace.write(item.path, content, version.mode, perm=perm)

    def verify(self, files: list[JournalFile], content_after: Callable[[JournalFile], bytes] | None = None) -> list[str]:
        """Read back every path ``forward`` wrote and answer those that do not hold what it
        wrote (content and mode; a deleted path is absent): another program wrote to them in
        the meantime. One read per file, compared with the bytes in memory (``content_after``,
        by default from the store); a path that cannot be read back counts as changed."""
        changed: list[str] = []
        for item in files:
            try:
                disk = read_back(self.workspace.at(item.path))
            except OSError:
                changed.append(item.path)
                continue
            if item.after is None:  # gone, or behind a link the operation put in a folder's place (not the workspace's)
                same = disk is None or self.workspace.link_above(item.path) is not None
            else:
                wanted = content_after(item) if content_after is not None else self.content_of(item, "after")
                same = disk is not None and disk.mode == item.after.mode and disk.content == wanted
            if not same:
                changed.append(item.path)
        return changed

    def roll_back(self, written: list[JournalFile], error: BaseException) -> BaseException:
        """Put back the before-side of the paths already written, newest first (an in-process
        failure: ``error``), and answer what to raise. A path is put back only if it holds what
        the operation wrote (or a file rewritten in place left torn); one that holds neither
        side was written by another program meanwhile and is kept as it is, named in the
        answer. All done: the journal goes and ``error`` is the answer. A path that cannot be
        put back (the disk is full too) keeps the journal, for the next start to finish, and
        the answer names it."""
        failed: list[tuple[str, str]] = []
        kept: list[str] = []
        self._unflushed = []  # (each path put back is flushed before its rename)
        for item in reversed(written):
            try:
                if self._needs_roll(item, "before", self.matches) == CHANGED:
                    kept.append(item.path)
            except (OSError, TakebackError) as exc:
                log.debug("could not roll back %s (%s); the journal keeps it for recovery", item.path, wording_of(exc))
                failed.append((item.path, wording_of(exc)))
        try:
            self.workspace.sync_folders(_touched(written, []))
        except OSError as exc:  # put back all the same, only not flushed: nothing for the person to do
            log.debug("could not flush the folders rolled back: %s", wording_of(exc))
        error = _naming_kept(error, sorted(kept))
        if not failed:
            self.finish()
            return error
        first = wording_of(error).split("; nothing was written")[0]
        names = ", ".join(f"{path} ({why})" for path, why in failed)
        return CannotWrite(
            f"{first}; {len(failed)} path{'' if len(failed) == 1 else 's'} already written could not be put back yet: {names}; "
            "the journal keeps them, and the next takeback command puts them back"
        )

    def recover(self, committed: Callable[[str], bool], matches: Matches) -> RecoveryReport | None:
        """Finish or undo an operation a dead process left half-done, path by path: a path
        that holds exactly the side it started from or the side it was to get is rolled; one
        that holds anything else was changed since, and one whose content cannot be read or
        written is left (``RecoveryReport.left``, with why in ``problems``). Files it names as
        rewritten in place are flushed before the journal goes (their writer may not have: an
        operation that answered first, ``settling.py``). Nothing is reported (None) for such an
        answered operation when every path held its after-side or an edit made since. Never raises."""
        try:
            doc = self.pending()
        except (OSError, ValueError) as exc:
            return self.set_aside(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        if doc is None:
            return None
        forward = committed(doc.entry)
        # A writer killed between creating its temporary file and renaming it left that file.
        for folder in sorted({os.path.dirname(f.path) for f in doc.files}):
            with contextlib.suppress(OSError):
                self.workspace.remove_temporaries(folder)
        problems: dict[str, str] = {}
        rolled: list[str] = []

        def roll(item: JournalFile) -> None:
            why = self._roll(item, "after" if forward else "before", matches)
            if why == ROLLED:
                rolled.append(item.path)
            elif why is not None:
                problems[item.path] = why

        if forward:
            self._in_order(doc.files, doc.folders, roll)
        else:  # newest first: what the writes made goes before what the deletions took comes back
            for item in reversed(_ordered(doc.files)):
                roll(item)
        with contextlib.suppress(OSError):
            self.workspace.sync_folders(_touched(doc.files, doc.folders))
        if forward:
            _flush_in_place(self.workspace, doc, self.file)
        # an operation that answered, left for its flush, whose files were all as it left them
        # (or edited since): nothing was recovered, nothing is reported
        settled_only = forward and not rolled and all(why == CHANGED for why in problems.values())
        report = None
        if not (settled_only and self.settling.answered(doc.entry)):
            report = RecoveryReport(
                at=datetime.now(UTC),
                operation=doc.operation,
                action="rolled-forward" if forward else "rolled-back",
                paths=[f.path for f in doc.files],
                left=sorted(problems),
                problems=[f"{path} left as it was: {why}" for path, why in sorted(problems.items()) if why != CHANGED],
            )
            _keep_report(self.report_file, report)
        self._remove()
        self.settling.forget(doc.entry)
        return report

    def set_aside(self, why: str) -> RecoveryReport:
        """Move a journal that cannot be used (``why``) out of the way and report it: nothing is
        rolled, since which paths it named cannot be known. Its operation's files may be half
        written only if the journal was torn after the writes began, which the flushed journal
        of this version never is (an older version's, or a disk's fault)."""
        kept = self.file.with_name(f"{self.file.name}.torn-{datetime.now(UTC):%Y%m%dT%H%M%S%f}")
        try:
            os.replace(self.file, kept)
            kept_name: str | None = kept.name
        except OSError as exc:
            log.warning("could not set the journal %s aside: %s", self.file, wording_of(exc))
            kept_name = None
        if kept_name and self.backup_dir.exists():  # withheld before-contents it named: kept with it
            with contextlib.suppress(OSError):
                os.replace(self.backup_dir, kept.with_name(kept.name + "-backup"))
        where = f"moved aside to {kept}" if kept_name else "left in place"
        report = RecoveryReport(
            at=datetime.now(UTC), operation="operation", action="set-aside", paths=[], journal_kept=kept_name,
            problems=[f"the journal {self.file} could not be used ({why}); it was {where} and nothing was rolled: "
                      "the files of the interrupted operation may be half written, check them with 'git status' "
                      "or 'takeback diff'"],
        )
        _keep_report(self.report_file, report)
        return report

    def _roll(self, item: JournalFile, side: str, matches: Matches) -> str | None:
        """Put ``item``'s path to ``side`` if it holds exactly one side or the other; else (or
        when that fails) why it is left as it is."""
        try:
            done = self._needs_roll(item, side, matches)
            if done is not None:
                return done  # CHANGED or ROLLED
        except (OSError, TakebackError) as exc:
            log.warning("left %s as it is: %s", item.path, wording_of(exc))
            return f"it could not be {'read' if isinstance(exc, StoreError) else 'read or written'} ({wording_of(exc)})"
        return None

    def _needs_roll(self, item: JournalFile, side: str, matches: Matches) -> str | None:
        """Put ``item``'s path to ``side`` when it holds the other side (or is ``torn``):
        ``ROLLED``; one that holds ``side`` already is left (a missing before-side's new folders
        removed): None; one that holds neither is left as it is: ``CHANGED``. Raises what
        reading or writing raises (``OSError``, ``TakebackError``)."""
        target = item.after if side == "after" else item.before
        other = item.before if side == "after" else item.after
        disk = self.workspace.read(item.path)
        if matches(item.path, target, disk):
            if target is None and side == "before":
                self.workspace.remove_folders(item.new_folders)  # killed after making them
            return None
        if not matches(item.path, other, disk) and not self.torn(item, disk):
            return CHANGED
        self.write_side(item, side)
        return ROLLED

    def torn(self, item: JournalFile, disk: Version | None) -> bool:
        """Whether ``disk``, holding neither side of ``item``, is what a crash in the middle of
        rewriting it in place leaves: a regular file whose every block holds one side's or
        zeros (``torn_between``). Anything else is the person's, and stays."""
        if not item.in_place or item.before is None or item.after is None or disk is None or disk.mode == MODE_LINK:
            return False
        return torn_between(disk.content, self.content_of(item, "before"), self.content_of(item, "after"))

    def last_report(self) -> RecoveryReport | None:
        try:
            return RecoveryReport.model_validate_json(self.report_file.read_text())
        except (OSError, ValueError):
            return None
