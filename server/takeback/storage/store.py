"""The private checkpoint store: a bare git repository that only Takeback writes.

All git plumbing of the store sits here (pygit2, in-process: no git process is spawned).
The operation log is a chain of commits on ``refs/takeback/oplog``; each commit's tree holds
``meta.json`` (one ``RecordEnvelope``: the records of one engine call) and the content blobs
its records name, each entry named by its own blob id, so the tree is flat and costs what the
call touched.

Writing: new objects wait in memory until the engine call publishes them; then the new blobs,
``meta.json``, the tree and the commit go to disk as one small pack (``packs.py``), and the ref
moves by compare-and-swap. Small packs are merged as they accumulate (each merge at least
doubles what it copies, so a byte is copied a logarithmic number of times): by the write that
makes one pack too many, or, in the resident process (``merge_later``), after its answer went
out (``merge_due``: a merge never holds an agent's hook), and garbage
collection rewrites the packs with only what is still referenced. Mutating work is serialised by
an advisory file lock shared with every process; objects still in memory when the outermost lock
is released are written then (or dropped, if the call failed).

Durability: nothing is flushed by default but what a power cut must never take: a merge's or
gc's new pack (before the packs it replaces are removed), a new store's base files, the secrets
key, and what is published inside ``durable()`` (an operation). Opening the store checks what a
power cut may have torn and sets it aside (``repair.py``, ``Store.repair``), so the store always
opens and loses at most its newest entries; the check of a big head is done once, then stamped
(``checked.py``: the head and the exact packs, flushed, it was checked against).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pygit2

from ..errors import StoreError
from . import atomic, checked, commits, packs, refs, repair
from .lock import StoreLock, merging, merging_elsewhere
from .recent import RecentBlobs

OPLOG_REF = "refs/takeback/oplog"

_MANY_OBJECTS = 256  # from this many, checking objects against the pack indexes read whole beats libgit2 one by one
_fsync_setting: bool | None = None


# libgit2 hashes every object it reads again to check it against its id ("strict hash
# verification", on by default): about half of each read, and a big undo or redo reads every
# file's blob (5,000 objects: 100-150 ms here, issue 18). git itself does not (``cat-file``,
# ``checkout`` trust the id), and this store's ids are computed by ``packs.object_id`` from the
# bytes they name as they are written; zlib's checksum over each object's bytes still refuses
# a damaged one. It is libgit2's setting for the whole process: the person's repository's
# objects (``scanning/checkout.py``) are read as git reads them.
pygit2.settings.enable_strict_hash_verification(False)


def _set_fsync(enabled: bool) -> None:
    global _fsync_setting
    if _fsync_setting != enabled:
        pygit2.settings.enable_fsync_gitdir(enabled)
        _fsync_setting = enabled


def exists(path: Path) -> bool:
    """Whether anything stands at a store's path ``path``: a command that only reads opens no
    store where this is False, so that it makes none (what stands there is opened, and refused
    with a clear error if it is not a store)."""
    return os.path.lexists(path)


def folder_bytes(path: Path) -> int:
    """Apparent size (sum of st_size) of every file under ``path``: what ``status`` shows."""
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except FileNotFoundError:
                pass
    return total


class PackedIds:
    """The ids of the objects a store's packs hold, read from their indexes, and which packs they
    were read from. Packs never change once in place (named by their checksum): when packs were
    added since (other processes' writes), only the new ones' indexes are read (a store of
    200,000 objects: 45 ms each time it was read whole, at every engine a process opened anew,
    and after every write of another process); when one went (a merge or a gc elsewhere: a gc
    drops objects), all are read again. A process that opens a new engine on the same store
    keeps them (``Store.adopt_packed``)."""

    def __init__(self) -> None:
        self._ids: set[bytes] = set()
        self._from: set[str] = set()  # the packs ``_ids`` were read from
        self._fresh = False  # whether ``_from`` is every pack there is; else the folder is looked at on next need

    def look_again(self) -> None:
        """Packs may have come or gone since (another process's writes, merges or gc; a store
        opened anew): compare with the pack folder on next need."""
        self._fresh = False

    def ids(self, pack_dir: Path, names: Callable[[], list[str]]) -> set[bytes]:
        """The ids the packs hold (``names``: the packs there are now, asked only when they may
        have changed)."""
        if not self._fresh:
            now = names()
            if not self._from <= set(now):
                self._ids, self._from = set(), set()
            for name in now:
                if name not in self._from:
                    self._ids.update(packs.index_ids(pack_dir / f"{name}.idx"))
                    self._from.add(name)
            self._fresh = True
        return self._ids

    def written(self, name: str, oids: Iterable[str]) -> None:
        """This process wrote pack ``name`` holding ``oids`` (while the ids are not up to date
        anyway, the next need reads its index with the others')."""
        if self._fresh:
            self._ids.update(bytes.fromhex(oid) for oid in oids)
            self._from.add(name)

    def merged(self, merged: list[str], name: str) -> None:
        """This process merged the packs ``merged`` into ``name``: the same objects."""
        if set(merged) <= self._from:
            self._from = (self._from - set(merged)) | {name}
        else:
            self.look_again()  # (those not read yet are gone: only ``name``'s index is read)


class Store:
    """One workspace's store folder: the bare repository plus a few small files."""

    def __init__(self, path: Path, workspace: Path, fsync: bool = False, lock_timeout: float = 30.0) -> None:
        self.path = path
        self.fsync = fsync
        self.lock_timeout = lock_timeout
        self._lock = StoreLock(path / "lock", lock_timeout, self._follow_other_writers)
        self._pending: dict[str, tuple[str, bytes]] = {}  # hex id: (kind, data), not yet on disk
        self._ahead = packs.EntriesAhead()  # their pack entries, made beside the caller's work
        self._recent = RecentBlobs()
        # The ids the packs hold, read from their indexes on first need: libgit2 answers "absent" (every new blob) only
        # after searching every pack and the pack folder, 30-100 µs. Brought up to date when another process changed
        # the packs (``PackedIds``: only new packs' indexes read).
        self._known_packs = PackedIds()
        self._durable = 0  # depth of ``durable()`` blocks: publish with fsync whatever the setting
        self.merge_later = False  # a due merge waits for ``merge_due`` (up to MAX_PACKS_WAITING packs)
        # A log head known whole as ``repair`` checks it while no other process changed the packs: checked, or published
        # here (``append``). No power cut tore it while this process lives: ``check_again`` reads only what others wrote.
        self._vouched: str | None = None
        _set_fsync(fsync)
        aside = repair.Quarantine(path)
        try:
            path.mkdir(parents=True, exist_ok=True)
            os.chmod(path, 0o700)
            # Two processes opening a new store at once (the server and a hook) must not both
            # create it: libgit2 fails on the other's config.lock.
            with self.locked():
                self.repo = _open_or_create(path / "objects.git", aside)
                _write_identity(path, workspace)
            self._git_dir = Path(self.repo.path)
            self._pack_dir = self._git_dir / "objects" / "pack"
            self._ref_file = self._git_dir / OPLOG_REF
            self._packs_seen = self._packs_stamp()
            self.repair(found=aside)
        except (OSError, pygit2.GitError) as exc:
            raise StoreError(f"cannot open the store at {path}: {exc}") from exc
        self._key: bytes | None = None

    # ------------------------------------------------------------------ locking

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's lock (re-entrant in this process, exclusive across processes; ``lock.py``).

        When the outermost hold ends, objects still waiting in memory are written, or dropped
        if the block failed (nothing published can name them). While it lasts, the blobs read
        and stored stay in memory up to a larger budget (``RecentBlobs.hold``).
        """
        with self._lock.locked() as outermost, (self._recent.hold() if outermost else contextlib.nullcontext()):
            try:
                yield
                if outermost and self._pending:
                    self.flush()  # still holding the lock: the objects are written under it
            finally:
                if outermost:
                    self._pending.clear()  # written above, or dropped because the block failed
                    self._ahead.clear()

    @contextlib.contextmanager
    def released(self) -> Iterator[None]:
        """Let go of a held lock for a while (other processes and threads may take it), then
        take it again, at the depth it had: an editor's answer can take minutes, and nothing
        else may wait that long for the store.

        Objects waiting in memory stay aside, unwritten, until the lock is held again: nothing
        another thread publishes meanwhile carries them. The caller must not trust anything it
        read under the lock before without checking it again (``handoff.py``).
        """
        pending, self._pending = self._pending, {}
        try:
            with self._lock.released():
                yield
        finally:
            self._pending = {**self._pending, **pending}

    @contextlib.contextmanager
    def durable(self) -> Iterator[None]:
        """Publish with fsync inside the block whatever the ``fsync`` setting (the pack, its
        index and folder, then the log ref): an operation's answer must outlive a power cut."""
        self._durable += 1
        try:
            yield
        finally:
            self._durable -= 1

    def repair(self, deep: bool = False, found: repair.Quarantine | None = None) -> bool:
        """Set aside what a crash or power cut left torn and move the log back to the newest commit whose whole chain
        can be read, if its head cannot (``repair.py``; a head a stamp vouches for is not read again, ``checked.py``);
        answers whether anything was repaired. ``deep`` (a read failed) reads every pack and the whole chain."""
        aside = found or repair.Quarantine(self.path)
        with self.locked():
            if repair.set_aside_torn(aside, self._pack_dir, self._ref_file, deep, partial(merging_elsewhere, self.path / MERGE_LOCK)):
                self._reopen()
            head = self.head()
            if not (deep or aside) and head is not None and head == self._vouched:
                return False  # checked or written by this very process, which no power cut stopped since
            if not (deep or aside) and head is not None and checked.vouches(self.path, head, partial(_pack_sizes, self)):
                self._vouched = head
                return False  # checked before against these very packs, flushed since
            walk = repair.LogWalk(lambda oid: self._read(oid)[1], partial(all_stored, self), partial(_commits, self))
            if head is not None and not deep and not walk.readable(head, whole=False):
                return self.repair(deep=True, found=aside)  # torn past what the ends show: read every byte
            if (head is None and aside.files) or (head is not None and not walk.readable(head, deep or bool(aside.files))):
                if repair.go_back(aside, walk, head, self._ref_file):
                    self._reopen()
            _stamp_checked(self, head, walk.objects(head) if head is not None and not (deep or aside) else [])
            aside.save()
            self._vouched = None if aside else head
        return bool(aside)

    def _reopen(self) -> None:  # the packs changed: open afresh, forget what was known of them
        self.repo = _open_bare(self._git_dir)
        self._known_packs.look_again()
        self._vouched = None
        self._packs_seen = self._packs_stamp()

    def _write_pending(self) -> None:
        objects = [(kind, oid, data) for oid, (kind, data) in self._pending.items()]
        name = packs.write_pack(self._pack_dir, objects, self.fsync or self._durable > 0, self._ahead.take())
        self._known_packs.written(name, self._pending)
        self._pending.clear()
        if not self.merge_later or len(self._packs()) > MAX_PACKS_WAITING:
            self._merge_small_packs()

    def _packs_stamp(self) -> tuple[str, ...]:
        """The packs there are now, by name (by checksum: unlike a time stamp, no change within a tick is missed)."""
        return tuple(self._packs())

    def _follow_other_writers(self) -> None:
        """Open the repository afresh when another process changed the packs (libgit2 keeps trying merged ones)."""
        if getattr(self, "_git_dir", None) is None:
            return  # still opening
        if self._packs_stamp() != self._packs_seen:
            self._reopen()

    # ------------------------------------------------------------------ objects

    def _packed_ids(self) -> set[bytes]:
        return self._known_packs.ids(self._pack_dir, self._packs)  # (under the lock: the packs there are now)

    def _probably_stored(self, hexid: str) -> bool:
        """Whether the store holds ``hexid`` in memory or in a pack. A loose object (an older
        store) counts as absent: writing it again into a pack is harmless."""
        if hexid in self._pending:
            return True
        try:
            return bytes.fromhex(hexid) in self._packed_ids()
        except (OSError, ValueError):  # a pack went away unlocked: ask libgit2
            self._known_packs.look_again()
            return pygit2.Oid(hex=hexid) in self.repo.odb

    def _exists(self, hexid: str) -> bool:
        return self._probably_stored(hexid) or pygit2.Oid(hex=hexid) in self.repo.odb

    def _add(self, kind: str, data: bytes, new: bool = False) -> str:
        """Queue an object for the next pack unless the store holds it. ``new`` skips that check
        for an object that cannot exist yet (a commit names its parent and time); a copy in a
        second pack would be harmless anyway."""
        hexid = packs.object_id(kind, data)
        if new or not self._probably_stored(hexid):
            self._pending[hexid] = (kind, data)
            self._ahead.add(kind, hexid, data)
        return hexid

    def _read(self, hexid: str) -> tuple[str, bytes]:
        """An object's kind and data, from memory or disk."""
        pending = self._pending.get(hexid)
        if pending is not None:
            return pending
        try:
            return _raw(self.repo.odb.read, hexid)
        except (KeyError, ValueError, pygit2.GitError):
            # Another process may have merged the packs this handle knew: look again afresh.
            self.repo = _open_bare(self._git_dir)
            self._known_packs.look_again()
            try:
                return _raw(self.repo.odb.read, hexid)
            except (KeyError, ValueError, pygit2.GitError) as exc:
                raise StoreError(f"object {hexid} is missing from the store {self.path}") from exc

    def flush(self) -> None:
        """Write the objects waiting in memory as one pack; inside ``durable()`` flush every pack
        too (``packs.sync_all``: what the log or a journal names may be in an unflushed older one)."""
        if not self._pending and not self._durable:
            return
        with self.locked():
            try:
                if self._pending:
                    self._write_pending()
                if self._durable and self._pack_dir.is_dir():
                    packs.sync_all(self._pack_dir)
            except OSError as exc:
                raise StoreError(f"cannot write to the store {self.path}: {exc}") from exc
            self._packs_seen = self._packs_stamp()

    # ------------------------------------------------------------------ blobs

    def write_blob(self, content: bytes) -> str:
        """Store ``content`` as a blob; answers its id.

        The blob waits in memory until the engine call publishes (``append``) or the store's
        lock is released; content the store already holds is not written again.
        """
        if not self._lock.held_here():  # (a capture of many files holds it already: no hold of its own each)
            with self.locked():
                return self.write_blob(content)
        oid = self._add("blob", content)
        self._recent.remember(oid, content)
        return oid

    def read_blob(self, oid: str) -> bytes:
        data = self._recent.get(oid)
        if data is not None:
            return data
        kind, data = self._read(oid)  # StoreError when it is missing
        if kind != "blob":
            raise StoreError(f"object {oid} in the store {self.path} is a {kind}, not file content")
        self._recent.remember(oid, data)
        return data

    def verified_blob(self, oid: str, content: bytes) -> None:
        """Note that ``content`` was just hashed to ``oid`` (a file found to be a recorded
        version): the next read of ``oid`` needs no pack (a redo puts back what the undo before
        it took away)."""
        self._recent.remember(oid, content)

    def has(self, oid: str) -> bool:
        try:
            return self._exists(oid)
        except ValueError:
            return False

    @staticmethod
    def hash_blob(content: bytes) -> str:
        """The git id of a blob holding ``content``, as ``pygit2.hash`` gives it (hashlib's
        SHA-1, several times faster than libgit2's collision-detecting one)."""
        return packs.object_id("blob", content)

    def secret_digest(self, content: bytes) -> str:
        """A keyed digest for withheld content: tells sameness without revealing the bytes."""
        if self._key is None:
            self._key = _secret_key(self.path / "key", repair.Quarantine(self.path))
        return "hmac:" + hmac.new(self._key, content, hashlib.sha256).hexdigest()

    # ------------------------------------------------------------------ operation log

    def head(self) -> str | None:
        try:
            ref = self.repo.references.get(OPLOG_REF)
        except pygit2.GitError as exc:
            raise StoreError(f"cannot read {OPLOG_REF} in {self.path}: {exc}") from exc
        return str(ref.target) if ref is not None else None

    def _tree(self, meta_oid: str, blobs: Iterable[str]) -> str:
        """A flat tree: ``meta.json`` plus each content blob named by its own id."""
        entries = [("meta.json", meta_oid)]
        for oid in blobs:
            if not self._exists(oid):
                raise StoreError(f"a record names content {oid} that the store does not hold")
            entries.append((oid, oid))
        return self._add("tree", commits.flat_tree(entries), new=True)

    def _commit(self, tree: str, parent: str | None, message: str, author: bytes | None = None) -> str:
        return self._add("commit", commits.commit_bytes(tree, parent, message, author), new=True)

    def _set_ref(self, new: str) -> None:
        """Point the log ref at ``new`` (``refs.move``; callers compared it with what they built
        on first, holding the store lock)."""
        try:
            refs.move(self._ref_file, new, self.fsync or self._durable > 0)
        except OSError as exc:
            raise StoreError(f"cannot move {OPLOG_REF} in {self.path}: {exc}") from exc

    def append(self, meta: bytes, blobs: set[str], message: str, parent: str | None) -> str:
        """Publish one log commit on top of ``parent``: ``meta.json`` plus the content blobs
        it names (tree entries are named by blob id, so the tree is flat and costs what the
        records touched). Every object waiting in memory goes to disk in one pack, then the ref
        moves by compare-and-swap: if another writer moved it since ``parent`` was read,
        nothing is published and ``StoreError`` says so.
        """
        with self.locked():
            if self.head() != parent:
                raise StoreError("the operation log moved while appending (another writer); nothing was published")
            tip = self.stack(meta, parent, message, blobs)
            self.flush()
            self._set_ref(tip)
            self._vouched = tip  # built here on blobs found stored, its objects written by this process
            if self._durable:  # every pack and the ref flushed: what another process's open would check
                _stamp_checked(self, tip, [tip, *blobs], flushed=True)
            repair.note_published(self.path, tip, message)
            return tip

    def commit_chain(self, newest: str, stop: str | None = None) -> list[str]:
        """Commit ids from ``newest`` back to (not including) ``stop``, oldest first."""
        chain: list[str] = []
        oid: str | None = newest
        while oid is not None and oid != stop:
            chain.append(oid)
            oid = commits.parent_of(self._read(oid)[1])
        if stop is not None and oid != stop:
            raise StoreError("the cached log position is not an ancestor of the head")
        chain.reverse()
        return chain

    def _tree_entries(self, tree_oid: str) -> dict[str, str]:
        return commits.parse_tree(self._read(tree_oid)[1])

    def read_meta(self, commit_oid: str) -> bytes:
        tree = commits.header(self._read(commit_oid)[1], b"tree")
        return self._read(commits.meta_of(self._read(tree)[1]))[1]

    def set_head(self, new: str, expected: str | None) -> None:
        """Move the log ref to a rewritten chain (retention), compare-and-swap on ``expected``."""
        with self.locked():
            if self.head() != expected:
                raise StoreError("the operation log moved during garbage collection")
            self.flush()
            self._set_ref(new)
            self._vouched = None  # a chain of copies: the next check reads it
            repair.note_published(self.path, new, "the log as retention rewrote it")

    def stack(self, meta: bytes, parent: str | None, message: str, blobs: Iterable[str] = ()) -> str:
        """A new log commit on top of ``parent``; the ref does not move (``append`` and
        ``set_head`` publish)."""
        return self._commit(self._tree(self._add("blob", meta, new=True), blobs), parent, message)

    def recommit(self, commit_oid: str, parent: str | None) -> str:
        """A copy of ``commit_oid`` (same tree, author and message) on top of ``parent``; the
        ref does not move."""
        data = self._read(commit_oid)[1]
        return self._commit(commits.header(data, b"tree"), parent, commits.message_of(data), commits.header(data, b"author").encode())

    def rewrite(self, commit_oid: str, meta: bytes, parent: str | None) -> str:
        """A copy of ``commit_oid`` with new ``meta.json`` (content blobs kept) on ``parent``."""
        data = self._read(commit_oid)[1]
        blobs = [oid for name, oid in self._tree_entries(commits.header(data, b"tree")).items() if name != "meta.json"]
        tree = self._tree(self._add("blob", meta), blobs)
        return self._commit(tree, parent, commits.message_of(data), commits.header(data, b"author").encode())

    # ------------------------------------------------------------------ size, packs and pruning

    def size_bytes(self) -> int:
        return folder_bytes(self.path)

    def _packs(self) -> list[str]:
        return _pack_names(self._pack_dir)

    def _merge_small_packs(self) -> None:
        """Merge packs once there are more than ``MAX_PACKS`` (``_packs_to_merge``), holding the lock."""
        if merge := _packs_to_merge(self._pack_dir, self._packs()):
            _put_merged(self, merge, packs.stage_entries(self._pack_dir, packs.collect_entries(
                self._pack_dir, merge, None, self._read), packs.TEMPORARY))

    def reachable(self, extra: set[str] | None = None) -> set[str]:
        """Every object id reachable from the log head, plus ``extra`` blob ids."""
        seen: set[str] = set(extra or ())
        oid = self.head()
        while oid is not None:
            data = self._read(oid)[1]
            tree = commits.header(data, b"tree")
            seen.add(oid)
            seen.add(tree)
            seen.update(self._tree_entries(tree).values())
            oid = commits.parent_of(data)
        return seen

    def prune(self, keep: set[str]) -> int:
        return _prune(self, keep)

    def adopt_packed(self, older: Store) -> None:
        """Keep the pack ids ``older`` (a store of this folder, opened before this one) read."""
        if older.path == self.path:
            self._known_packs, older._known_packs = older._known_packs, PackedIds()
            self._known_packs.look_again()


MAX_PACKS = 8  # a lookup of an absent object costs ~20 µs plus ~2 µs per pack (libgit2 1.9)
MAX_PACKS_WAITING = 4 * MAX_PACKS  # packs a ``merge_later`` store lets wait for its upkeep
MERGE_LOCK = "merge.lock"  # held by a merge copying without the store's lock (``merge_due``)


def _prune(store: Store, keep: set[str]) -> int:
    """Rewrite the store's objects as one pack holding only ``keep``; answers how many
    objects were dropped. Runs with the store locked: every writer holds that lock and
    publishes before releasing it, so nothing outside ``keep`` can still be in the making."""
    with store.locked():
        store.flush()
        names = store._packs()
        objects = store._git_dir / "objects"
        loose = _loose_objects(objects)
        before = set(loose)  # every object the store holds, counted as the packs are read

        def keeping(oid: str) -> bool:
            before.add(oid)
            return oid in keep

        entries = packs.collect_entries(store._pack_dir, names, keeping, store._read)
        for oid in loose:  # loose objects (an older store, or libgit2's own writes)
            if oid in keep and bytes.fromhex(oid) not in entries:
                entries[bytes.fromhex(oid)] = packs.pack_entry(*store._read(oid))
        try:
            # Synced, and the ref that names the kept log with it, before the old packs go.
            merged = packs.write_entries(store._pack_dir, entries, fsync=True) if entries else None
            refs.sync(store._ref_file)
        except OSError as exc:
            raise StoreError(f"cannot write to the store {store.path}: {exc}") from exc
        _remove_packs(store._pack_dir, (n for n in names if n != merged))
        _clear_leftovers(objects, [*loose.values(), *store._pack_dir.glob("tmp_*"), refs.lock_file(store._ref_file)])
        store._reopen()  # forget the packs just removed
        return len(before) - len(entries)


def _open_bare(git_dir: Path) -> pygit2.Repository:
    flags = pygit2.enums.RepositoryOpenFlag.BARE | pygit2.enums.RepositoryOpenFlag.NO_SEARCH
    return pygit2.Repository(str(git_dir), flags)


def _secret_key(key_file: Path, aside: repair.Quarantine) -> bytes:
    """The store's own random key for digests of withheld content (made once, mode 0600, synced:
    digests made with it are kept in the log). A key a power cut left cut short is set aside and
    a new one made; digests kept with the old one then no longer match (undo skips those files)."""
    try:
        data = key_file.read_bytes()
        if len(data) == 32:
            return data
        aside.set_aside(key_file, f"the secrets key is cut short ({len(data)} bytes, not 32)")
        aside.save()
    except FileNotFoundError:
        pass
    tmp = key_file.with_name(f".key.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(os.urandom(32))
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first: theirs is kept
            os.link(tmp, key_file)
        atomic.sync_dir(key_file.parent)
    finally:
        tmp.unlink(missing_ok=True)
    return key_file.read_bytes()


_BASE_FILES = {  # what a bare repository needs to open, as libgit2 makes it
    "HEAD": b"ref: refs/heads/master\n",
    "config": b"[core]\n\tbare = true\n\trepositoryformatversion = 0\n\tfilemode = true\n",
}


def _open_or_create(git_dir: Path, aside: repair.Quarantine) -> pygit2.Repository:
    """Open the bare repository, or make it (synced: a store made just before a power cut must
    still open). A ``HEAD`` or ``config`` a power cut left empty or torn is set aside and written
    anew: they hold nothing but libgit2's defaults."""
    if not (git_dir / "HEAD").exists():
        repo = pygit2.init_repository(str(git_dir), bare=True)
        for name in _BASE_FILES:
            with open(git_dir / name, "rb+") as handle:
                os.fsync(handle.fileno())
        for folder in (git_dir / "refs", git_dir / "objects", git_dir, git_dir.parent):
            atomic.sync_dir(folder)
        return repo
    try:
        return _open_bare(git_dir)
    except pygit2.GitError:
        for name, content in _BASE_FILES.items():
            path = git_dir / name
            if path.exists() and path.read_bytes() == content:
                continue
            if path.exists():
                aside.set_aside(path, f"{name} is empty or torn: written anew with libgit2's default")
            atomic.write(path, content, fsync=True, mode=0o644)
        return _open_bare(git_dir)


def _write_identity(store: Path, workspace: Path) -> None:
    """``workspace.json``: which folder the store was made for, and when. A store keeps one
    workspace's turns, so opening it for another folder that exists (two workspaces given the
    same ``store_dir`` or ``TAKEBACK_STORE_DIR``) is refused: an undo in one would write the
    other's changes. A workspace that moved (its recorded folder is gone) takes its store along."""
    ident = store / "workspace.json"
    try:
        data = json.loads(ident.read_text())
        recorded = data.get("workspace") if isinstance(data, dict) else None
    except (OSError, ValueError):  # none yet, or unreadable: written below
        data, recorded = None, None
    if isinstance(recorded, str) and recorded:
        if os.path.realpath(recorded) == os.path.realpath(workspace):
            return
        if os.path.isdir(recorded):
            raise StoreError(
                f"the store {store} belongs to the workspace {recorded}, not {workspace}: a store keeps one "
                "workspace's turns (both were given this store_dir or TAKEBACK_STORE_DIR); give this workspace "
                "a store of its own"
            )
        data = {**data, "workspace": str(workspace), "moved_from": recorded}
    else:
        data = {"workspace": str(workspace), "created": datetime.now(UTC).isoformat(), "format": 1}
    atomic.write(ident, (json.dumps(data, indent=2) + "\n").encode())


def all_stored(store: Store, oids: list[str]) -> bool:
    """Whether ``store`` holds every one of ``oids`` (opening checks the newest log commit's
    blobs): through libgit2 one by one for a few; for many (a big turn's), against the pack
    indexes' name tables read now, libgit2 asked only for what they lack (a loose object of an
    older store). cProfile of an open after a 5,000-file turn: 10,000 lookups, 40 ms."""
    odb = store.repo.odb
    listed: set[bytes] = set()
    if len(oids) >= _MANY_OBJECTS:
        try:
            for name in store._packs():
                listed.update(packs.index_ids(store._pack_dir / f"{name}.idx"))
        except (OSError, ValueError):
            listed = set()  # a pack went away, or is torn: libgit2 answers for each
    return all(bytes.fromhex(oid) in listed or pygit2.Oid(hex=oid) in odb for oid in oids)


def _commits(store: Store) -> list[str]:
    """Every commit id the packs hold (``repair.LogWalk``: where the log goes back to)."""
    return [oid for name in store._packs() for oid in packs.commit_ids(store._pack_dir, name)]


def _pack_sizes(store: Store) -> dict[str, list[int]] | None:
    return checked.packs_now(store._pack_dir, store._packs())


def _stamp_checked(store: Store, head: str | None, objects: list[str], flushed: bool = False) -> None:
    """After ``head`` was checked whole (``Store.repair``), or published inside ``durable()``
    by this process (``Store.append``: its objects written or found in the packs, every pack
    and the ref flushed): when it is big (``checked.BIG`` objects, all in the packs), flush every
    pack (unless ``flushed``: ``durable()`` did) and stamp it (``checked.py``), so the next open,
    in any process, need not check it again. Best effort: a stamp that cannot be written costs
    the next open the check."""
    if head is None or len(objects) < checked.BIG:
        return
    try:
        packed = store._packed_ids()
        sizes = _pack_sizes(store)
        if sizes is None or not all(bytes.fromhex(oid) in packed for oid in objects):
            return  # a loose object (an older store) is not in a pack the stamp can name
        if not flushed:
            packs.sync_all(store._pack_dir)
        checked.stamp(store.path, head, sizes)
    except (OSError, ValueError):
        pass


def check_again(store: Store, workspace: Path) -> bool:
    """What opening ``store`` anew does, done on this open one (a process that keeps it): the
    folder's mode, its identity checked (``StoreError`` when it is another workspace's), what a
    crash left torn set aside (``Store.repair``); answers whether anything was repaired."""
    try:
        os.chmod(store.path, 0o700)
        with store.locked():
            _write_identity(store.path, workspace)
            return store.repair()
    except (OSError, pygit2.GitError) as exc:
        raise StoreError(f"cannot open the store at {store.path}: {exc}") from exc


def merge_due(store: Store) -> bool:
    """Merge ``store``'s small packs if a merge is due (``Store.merge_later``: the upkeep a
    process that answers first does after its answer). Cheap when none is due: one listing of
    the pack folder. Answers whether it merged.

    The copy is made without the store's lock: packs never change once in place, so the ones
    chosen (under the lock) are read, and the merged pack written and flushed under temporary
    names (``packs.MERGING``), while hooks and commands of every process go on; the lock is
    taken again only to put it in their place (``_put_merged``). Geometric merging copies
    the largest pack now and then (a store of 600 MB: 5 s), which held every hook that long.
    One merge at a time (``lock.merging``: a merge already at work elsewhere is left to it);
    a pack that went away meanwhile (another process's gc) drops the copy."""
    if len(store._packs()) <= MAX_PACKS:
        return False
    with merging(store.path / MERGE_LOCK) as alone:
        if not alone:
            return False
        with store.locked():
            merge = _packs_to_merge(store._pack_dir, store._packs())
        if not merge:
            return False
        read = _open_bare(store._git_dir).odb.read  # a handle of its own: the store's may be reopened meanwhile
        try:
            entries = packs.collect_entries(store._pack_dir, merge, None, lambda oid: _raw(read, oid))
            staged = packs.stage_entries(store._pack_dir, entries, packs.MERGING)
        except (OSError, ValueError, KeyError, pygit2.GitError):
            return False  # a pack went away meanwhile (merged or collected by another process)
        try:
            with store.locked():
                _put_merged(store, merge, staged)
        finally:
            packs.discard(staged)  # (nothing left once placed)
    return True


def _put_merged(store: Store, merged: list[str], staged: packs.StagedPack) -> None:
    """Put the pack a merge staged (flushed whatever the setting: a power cut must not take it
    with the packs it replaces) in the place of the packs it ``merged``, under the store's lock;
    if one went (merged or collected by another process meanwhile), the copy goes instead."""
    if not set(merged) <= set(store._packs()):
        return packs.discard(staged)
    name = packs.place(store._pack_dir, staged, fsync=True)
    _remove_packs(store._pack_dir, (n for n in merged if n != name))
    store._known_packs.merged(merged, name)
    store.repo = _open_bare(store._git_dir)  # forget the packs just removed
    store._packs_seen = store._packs_stamp()  # its own change (same objects): no index is read again


def _raw(read: Callable[[str], tuple], oid: str) -> tuple[str, bytes]:
    """An object's kind name and data from a libgit2 object database's ``read``."""
    kind, data = read(oid)[:2]
    return packs.TYPE_NAMES[int(kind)], data


def _pack_names(pack_dir: Path) -> list[str]:
    try:
        return sorted(name[:-4] for name in os.listdir(pack_dir) if name.endswith(".idx"))
    except FileNotFoundError:
        return []


def _remove_packs(pack_dir: Path, names: Iterable[str]) -> None:
    for name in names:
        for suffix in (".idx", ".pack", ".rev", ".keep", ".bitmap"):  # index first: invisible at once
            with contextlib.suppress(FileNotFoundError):
                (pack_dir / f"{name}{suffix}").unlink()


def _packs_to_merge(pack_dir: Path, names: list[str]) -> list[str]:
    """Nothing while there are at most ``MAX_PACKS``; then the small packs, up to the first pack
    that outweighs everything smaller than it twice over (git's geometric repacking)."""
    if len(names) <= MAX_PACKS:
        return []
    sizes = {n: (pack_dir / f"{n}.pack").stat().st_size for n in names}
    ordered = sorted(names, key=lambda n: sizes[n], reverse=True)
    rest = sum(sizes.values())
    keep = 0
    for name in ordered:
        rest -= sizes[name]
        if sizes[name] < 2 * rest:
            break
        keep += 1
    return ordered[keep:] if len(ordered) - keep >= 2 else ordered


def _loose_objects(objects: Path) -> dict[str, Path]:
    """The loose objects under ``objects`` (an older store, or libgit2's own writes), by id."""
    return {
        sub.name + obj.name: obj
        for sub in objects.iterdir()
        if len(sub.name) == 2 and sub.is_dir()
        for obj in sub.iterdir()
    }


def _clear_leftovers(objects: Path, files: list[Path]) -> None:
    """Remove loose objects now packed and what a killed writer left, then empty fan-out folders."""
    for path in [*files, *objects.glob("tmp_*")]:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    for sub in objects.iterdir():
        if len(sub.name) == 2 and sub.is_dir():
            with contextlib.suppress(OSError):
                sub.rmdir()
