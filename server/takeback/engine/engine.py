"""The turn engine: opens a workspace's store, records agent turns, answers questions.

``Engine`` is the one API the adapters (CLI, language server, hooks, MCP, the resident
process) call; it knows nothing of them. It owns one workspace's store, journal, scanner cache
and in-memory history (``history.py``), and is put together from parts that each own one job,
mixed in with their use of the engine declared in ``parts.py``:

* ``turns.Turns``: opening and ending turns, a bracket's changes on disk, checks;
* ``batches.Batches``: recording edit batches and writing them where no editor does;
* ``steps.Steps``: an agent's tool calls, each a step of its turn;
* ``operations.Operations``: undo, redo, revert and restore;
* ``reading.Reading``: entries, diffs, file contents, status;
* ``unsaved.Unsaved``: what the newest operation applied in an editor and the disk lacks;
* ``marks.Marks``: the person's own checkpoint (``takeback mark``).

Every call runs in a transaction (``transaction()``, ``transaction.py``): the store's lock, the
timeline brought up to the log's head and the open turns' files, the records it adds published
as one log commit at its end. Opening the engine also recovers an interrupted write from the
journal, so a write completes or leaves every file as it was. Nothing read back from the store
is trusted blindly: records and the journal must name clean workspace paths, or the store is
refused with an error that says so.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import pygit2

from ..config import Config, default_store_dir, load_config
from ..core.models import (
    GcReport,
    RecoveryReport,
    StoreStatus,
)
from ..core.timeline import Timeline
from ..errors import (
    InvalidInput,
    NoStore,
    StateError,
    StoreError,
    TakebackError,
)
from ..scanning import ignored
from ..scanning.scan import GitScanner, ScanCache, WalkScanner, make_scanner
from ..storage import store as store_module
from ..storage.store import Store
from ..workspace.capture import Capturer
from ..workspace.files import Workspace, is_recorded_path
from ..workspace.journal import Journal, JournalDoc
from . import brackets
from .batches import Batches
from .history import History, collector_paused
from .marks import Marks
from .operations import Operations
from .reading import Reading
from .steps import Steps
from .transaction import Transaction
from .turns import Turns
from .unsaved import Unsaved

log = logging.getLogger("takeback.engine")


class Engine(Turns, Batches, Reading, Operations, Steps, Unsaved, Marks):
    """One workspace's timeline and the operations on it."""

    def __init__(
        self, workspace: str | os.PathLike[str], config: Config | None = None, long_lived: bool = False,
        create: bool = True,
    ) -> None:
        """``long_lived``: the process keeps this engine for many calls (the language server);
        it then watches the work tree (``watch.py``, unless the ``watch_tree`` setting is off)
        so a bracket's begin can reuse the previous listing when nothing changed. ``create``
        False (a command that only reads): ``NoStore`` where nothing was recorded yet, rather
        than making a store (``unrecorded_status`` says what ``status`` would)."""
        self.workspace = _workspace(workspace)
        self.config = config or load_config(self.workspace.root)
        store_dir = _store_dir(self.workspace, self.config)
        if not create and not store_module.exists(store_dir):
            raise NoStore(
                f"nothing is recorded for {self.workspace.root} yet: it has no store ({store_dir}); "
                "the first recorded turn makes one"
            )
        self.store = Store(Path(store_dir), self.workspace.root, self.config.fsync, self.config.lock_timeout)
        self.capture = Capturer(self.store, self.workspace, self.config)
        self.journal = Journal(self.store, self.workspace, self.config.fsync, self.capture.matches)
        self.journal.recover_other = self._recover
        self._user_repo: pygit2.Repository | None | Literal[False] = False
        self._git_dir: str | None | Literal[False] = False  # the person's git folder, found on first use
        self._scan_cache = ScanCache(watch_tree=long_lived and self.config.watch_tree, has=self.store.has)
        self._brackets = self.store.path / "brackets"
        self.history = History(self.store, self._brackets)
        self._local = threading.local()  # this thread's transaction
        store_real = os.path.realpath(self.store.path)
        root_real = str(self.workspace.root)
        self._store_rel = os.path.relpath(store_real, root_real) if store_real.startswith(root_real + os.sep) else None
        with self.transaction():
            if self.history.wants_cache():
                self.history.save_cache()
            self.last_recovery = self._recover()

    def _recover(self) -> RecoveryReport | None:
        """Recover the journal there is (opening; an operation's start that finds one another
        process left): refused if crafted, then rolled (``Journal.recover``), and said in the
        log; its report is kept in the store (``status`` shows it)."""
        self._check_journal()
        report = self.journal.recover(self._committed, self.capture.matches)
        if report and report.action == "set-aside":
            log.warning("%s", " ".join(report.problems))  # which journal, where it went, what to check
        elif report:
            log.warning(
                "recovered an interrupted %s: %s %d files; %d left as they were (changed since): %s",
                report.operation, report.action, len(report.paths), len(report.left), ", ".join(report.left) or "-",
            )
        return report

    @property
    def timeline(self) -> Timeline:
        """The timeline as of the last refresh (``history.History``); fresh inside a transaction."""
        return self.history.timeline

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Hold the store, with the timeline fresh, for a series of reads and writes; what they
        add is published as one log commit when the outermost one ends (``transaction.py``).
        A call made inside another transaction of the same thread joins it. Adapters use this
        for a read that must not see an operation half-way, or a plan that a confirmation then
        carries out; nothing outside the store touches its lock. Python's cyclic collector
        waits for the outermost one to end (``history.collector_paused``): a full pass walks
        every record a long-lived engine holds (5,000-file turns: 65-320 ms a pass, one or two
        in each big operation), and a call leaves no cycle behind for it to find."""
        current: Transaction | None = getattr(self._local, "transaction", None)
        if current is not None:
            if current.suspended:
                raise StateError("the store is let go while an editor is asked; nothing can run in between")
            yield current
            return
        with self.store.locked(), collector_paused():
            self.history.refresh()
            tx = Transaction(self.history)
            self._local.transaction = tx
            try:
                yield tx
                tx.publish()
            except BaseException:
                tx.abandon()
                raise
            finally:
                self._local.transaction = None

    def _check_journal(self) -> None:
        """Refuse, before recovery writes anything, a journal whose paths are not the
        workspace's (or whose backups are not in its backup folder): a crafted one, which
        blocks until removed. A journal that cannot be read is recovery's to set aside."""
        try:
            doc: JournalDoc | None = self.journal.pending()
        except (OSError, ValueError):
            return  # torn or unreadable: recovery sets it aside and reports it (journal.py)
        if doc is None:
            return
        for item in doc.files:
            try:
                for path in [item.path, *item.new_folders]:
                    self.workspace.check(path)
                backup = item.backup
                inside = backup is None or (os.path.basename(backup) == backup and backup not in ("", ".", ".."))
            except TakebackError:
                inside = False
            if not inside:
                raise StoreError(
                    f"the journal {self.journal.file} names {item.path!r} (backup {item.backup!r}, new folders "
                    f"{item.new_folders!r}), which is not a file inside the workspace: Takeback did not write it, "
                    "so nothing was recovered or written; remove the journal to go on"
                )
        for folder in doc.folders:
            if not is_recorded_path(folder):
                raise StoreError(
                    f"the journal {self.journal.file} names the folder {folder!r}, which is not inside the "
                    "workspace: Takeback did not write it, so nothing was recovered or written; remove the journal to go on"
                )

    def as_if_opened(self) -> bool:
        """Make this engine, opened earlier, answer from here on as one opened now would, when
        that needs no new engine; the caller holds the store's lock (``store.locked()``) from
        before this call for as long as the answers must stay so. Done as opening does it: the
        store checked and repaired (``store.check_again``), the timeline cache saved when due,
        the user's repository looked up again on first use. False, with nothing changed, where
        only a new engine gives the same answers: a journal is there (opening recovers it), this
        engine's opening recovered one (``last_recovery``: a new one reports the kept report),
        the timeline cache is not the one this engine read or wrote, or it read the whole log
        again since (a rewritten log: a new one counts from another point what the cache lacks,
        ``History.cache_unchanged``), or the repair changed the store."""
        self.journal.settle()  # (its own last operation's journal: not one to recover)
        try:
            if self.journal.pending() is not None:
                return False
        except (OSError, ValueError):
            return False  # unreadable: opening sets it aside and reports it
        if self.last_recovery is not None or not self.history.cache_unchanged():
            return False
        if store_module.check_again(self.store, self.workspace.root):
            return False
        with self.transaction():
            if self.history.wants_cache():
                self.history.save_cache()
        self._user_repo = False
        self._git_dir = False
        return True

    def defer_upkeep(self) -> None:
        """Leave work that no answer needs (merging the store's small packs, writing the
        timeline cache after a big operation, flushing the files a big operation rewrote in
        place, setting up the work tree's watch) for ``upkeep``, which the caller runs once its
        answer is out."""
        self.store.merge_later = True
        self.history.save_later = True
        self.journal.flush_later = True
        self._scan_cache.defer_watch = True

    def upkeep(self, merge: bool = True) -> None:
        """The work ``defer_upkeep`` left: flush the files the last operation rewrote in place
        and let its journal go (``Journal.settle``); fold what other processes published since (the
        transaction's refresh: the next request does not pay for it); write the timeline cache if
        a big operation, or that fold, left it due; merge the store's small packs if a merge is
        due (unless ``merge`` is False: the caller runs ``merge_packs`` where it holds nothing
        a request waits for); set up the work tree's watch with a first listing if it is not
        yet, or bring that listing up to date with the files touched since (``GitScanner.warm``)."""
        self.journal.settle()
        # a transaction only when there is something to fold or to save: the resident runs this
        # after every hook's answer, and its own records are folded already (the ref is a hint;
        # the transaction's refresh reads the log under the lock)
        if self.history.save_due or self.store.head() != self.history.head:
            with self.transaction():
                if self.history.replayed:
                    log.info("%s: folded %d log commit(s) another process published", self.workspace.root, self.history.replayed)
                if self.history.save_due:
                    self.history.save_cache()
        if merge:
            self.merge_packs()
        # the watch set up, or the listing it keeps brought up to date, but never while a step is
        # open: its end tells by the watch alone whether the tool touched other files than it named
        # (``Steps._as_seen_on_disk``), which a listing made meanwhile would stop it from telling.
        # The watch is read under the lock (a language server's upkeep runs beside its requests).
        if not (self._scan_cache.cold or self._scan_cache.watching):
            return
        with self.store.locked():
            cache = self._scan_cache
            if cache.cold or (cache.behind() and not brackets.step_names(self._brackets)):
                scanner = self._scanner()
                if isinstance(scanner, GitScanner):
                    scanner.warm()
                else:
                    cache.stop_watching()  # a walked folder: its scanner keeps a stat cache instead

    def adopt_tree(self, older: Engine) -> None:
        """Keep on with the work tree's watch, listing and known versions that ``older`` (an
        engine of this workspace and settings, opened before this one, closed after) kept: a
        process that opens a new engine where a fresh one must answer (``as_if_opened``) loses
        none of what it knew of the tree; the watch vouches for it, as it did for ``older``.
        The caller uses both engines alone meanwhile (their stores' locks are not taken: two
        handles on one store's lock file would wait for each other). Nothing is taken over
        when the two read other settings (a watch the settings now turn off is not used) or
        another folder: the new engine lists afresh. The ids its store read from the packs are
        kept too (``Store.adopt_packed``: only packs added since are read)."""
        self.store.adopt_packed(older.store)
        if older.config != self.config or older.workspace.root != self.workspace.root:
            return
        cache, older._scan_cache = older._scan_cache, ScanCache()
        if cache.known is not None:
            cache.known.has = self.store.has
        self._scan_cache.close()
        self._scan_cache = cache

    def merge_packs(self) -> bool:
        """Merge the store's small packs if a merge is due, copying without the store's lock
        (``store.merge_due``); answers whether it merged."""
        return store_module.merge_due(self.store)

    @property
    def ready(self) -> bool:
        """Whether ``upkeep`` has nothing left to set up: the work tree's watch is in place
        with its first listing, or no watch is wanted."""
        return not self._scan_cache.cold

    def close(self) -> None:
        """Let go of what a long-lived engine holds besides its store (the work tree's watch), once
        the files its last operation rewrote are flushed (``Journal.settle``). Needs the lock (a
        scan may use the watch) but not the timeline: no transaction."""
        self.journal.settle()
        with self.store.locked():
            self._scan_cache.close()

    def timeline_version(self) -> str | None:
        """A token that changes whenever the timeline does: the log head, followed by
        ``+<entry>`` for each open turn's file (opening a turn does not move the head), read
        from the store, under its lock but with no transaction (the language server asks every
        second: nothing is folded). Cheap: the ref and two lines of each open turn's file."""
        with self.store.locked():
            return self.history.version()

    def _committed(self, journal_id: str) -> bool:
        """Whether the operation a journal belongs to reached the log (then it rolls forward).

        An operation's journal is named by its entry (committed with its ``OperationDone``);
        an applied batch's by its checkpoint (recorded before the files are written).
        """
        if journal_id in self.timeline.checkpoint_owner:
            return True
        state = self.timeline.entries.get(journal_id)
        return state is not None and state.operation is not None

    def _user_head(self) -> str | None:
        return _head_of(self.user_repository())

    def user_repository(self) -> pygit2.Repository | None:
        """The person's git repository this workspace is in, opened once (read only, never changed)."""
        if self._user_repo is False:
            self._user_repo = _user_repository(self.workspace.root)
        return self._user_repo

    def ignore_check(self) -> Callable[[str], bool]:
        """Whether git ignores a workspace-relative path (a folder ends with "/") whose file
        Takeback does not hold: the guard's question before a command deletes or overwrites it
        (``scanning/ignored.py``: one path at a time, no tree scan). Use it where this engine's
        calls take turns, as a scan."""
        return ignored.check_for(self._scanner())

    def _skip(self, rel: str) -> bool:
        return self._store_rel is not None and (rel == self._store_rel or rel.startswith(self._store_rel + "/"))

    def _scanner(self, kind: str | None = None) -> GitScanner | WalkScanner:
        """The scanner for a new bracket, or (``kind``) for ending one begun with that kind: a
        walk's snapshot is compared by a walk even if the folder became a repository since."""
        scanner = make_scanner(
            self.workspace,
            self.store.path / "statcache.json",
            self.config.git_scanner and kind != WalkScanner.kind,
            self._skip,
            self._scan_cache,
        )
        scanner.before_save = self.store.flush  # content a cache names is stored before the cache
        return scanner

    # ------------------------------------------------------------------ reading

    def replay(self) -> None:
        """Fold the whole log again (after the log was rewritten: retention)."""
        self.history.replay()

    # ------------------------------------------------------------------ retention

    def _auto_gc(self) -> None:
        policy = self.config.retention
        if self.timeline.entry_count > policy.max_entries * 1.1 + 10:
            self.gc()

    def gc(self) -> GcReport:
        """Apply the retention policy: drop old entries, then unreachable objects."""
        from .retention import collect

        with self.transaction() as tx:
            tx.publish(tentatives=True)  # what waits, and the open turns' begins, go into the log gc rewrites
            report = collect(self)
            self.history.replay()
            return report


def _workspace(workspace: str | os.PathLike[str]) -> Workspace:
    if not os.fspath(workspace).strip():  # Path("") would quietly mean the current folder
        raise InvalidInput("the workspace folder is empty: name a folder")
    root = Path(workspace)
    if not root.is_dir():
        raise InvalidInput(f"workspace {root} is not a folder")
    return Workspace(root)


def _store_dir(workspace: Workspace, config: Config) -> Path:
    return Path(config.store_dir or default_store_dir(workspace.root))


def _user_repository(root: Path) -> pygit2.Repository | None:
    """The person's git repository that ``root`` is in, if any (read only, never changed)."""
    try:
        found = pygit2.discover_repository(str(root))
        return pygit2.Repository(found) if found else None
    except pygit2.GitError:
        return None


def _head_of(repo: pygit2.Repository | None) -> str | None:
    if not repo:
        return None
    try:
        return None if repo.head_is_unborn else str(repo.head.target)
    except pygit2.GitError:
        return None


def unrecorded_status(workspace: str | os.PathLike[str]) -> StoreStatus:
    """``Engine.status`` of a workspace nothing was recorded in (``NoStore``), made without a
    store: none exists, and reading must not make one. ``store`` is where the first recorded
    turn will make it."""
    space = _workspace(workspace)
    config = load_config(space.root)
    repo = _user_repository(space.root)
    return StoreStatus(
        workspace=str(space.root), store=str(_store_dir(space, config)), store_made=False, store_bytes=0, entries=0,
        turns=0, git_repository=bool(repo), head=_head_of(repo), retention=config.retention, fsync=config.fsync,
        config_problems=list(config.problems),
    )
