"""The private checkpoint store: a bare git repository that only Turnback writes.

All git plumbing of the store sits here (pygit2, in-process: no git process is spawned).
The operation log is a chain of commits on ``refs/turnback/oplog``; each commit's tree holds
``meta.json`` (one ``RecordEnvelope``: the records of one engine call) and the content blobs
its records name, each entry named by its own blob id, so the tree is flat and costs what the
call touched.
The ref moves only by compare-and-swap (libgit2 checks the ref still points at the first
parent), and mutating work is serialised by an advisory file lock shared with every process.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from .errors import Busy, StoreError

OPLOG_REF = "refs/turnback/oplog"
_GIT_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
)


def clean_git_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of ``env`` without the ``GIT_*`` variables that redirect where git reads or writes.

    An inherited ``GIT_DIR`` (a git hook calling ``turnback``) would otherwise send writes into
    the user's repository.
    """
    source = dict(os.environ if env is None else env)
    return {k: v for k, v in source.items() if k not in _GIT_ENV}


for _name in _GIT_ENV:  # libgit2 ignores most of these, but nothing we start may inherit them
    os.environ.pop(_name, None)

import pygit2  # noqa: E402  (imported after the environment is cleaned)


def _blob_id(content: bytes) -> str:
    """The git (SHA-1) id of a blob holding ``content``, as ``pygit2.hash`` gives it.

    hashlib's SHA-1 is several times faster than libgit2's collision-detecting one, and a
    record hashes every before- and after-image.
    """
    digest = hashlib.sha1(b"blob %d\x00" % len(content), usedforsecurity=False)
    digest.update(content)
    return digest.hexdigest()


_SIGNATURE_NAME = "turnback"
_SIGNATURE_MAIL = "turnback@localhost"
_fsync_setting: bool | None = None


def _set_fsync(enabled: bool) -> None:
    global _fsync_setting
    if _fsync_setting != enabled:
        pygit2.settings.enable_fsync_gitdir(enabled)
        _fsync_setting = enabled


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


class Store:
    """One workspace's store folder: the bare repository plus a few small files."""

    def __init__(self, path: Path, workspace: Path, fsync: bool = False, lock_timeout: float = 30.0) -> None:
        self.path = path
        self.fsync = fsync
        self.lock_timeout = lock_timeout
        self._thread_lock = threading.RLock()
        self._lock_depth = 0
        self._lock_fd: int | None = None
        _set_fsync(fsync)
        try:
            path.mkdir(parents=True, exist_ok=True)
            os.chmod(path, 0o700)
            git_dir = path / "objects.git"
            # Two processes opening a new store at once (the server and a hook) must not both
            # create it: libgit2 fails on the other's config.lock.
            with self.locked():
                if (git_dir / "HEAD").exists():
                    self.repo = pygit2.Repository(str(git_dir), pygit2.enums.RepositoryOpenFlag.BARE | pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
                else:
                    self.repo = pygit2.init_repository(str(git_dir), bare=True)
                self._write_identity(workspace)
        except (OSError, pygit2.GitError) as exc:
            raise StoreError(f"cannot open the store at {path}: {exc}") from exc
        self._key: bytes | None = None

    def _write_identity(self, workspace: Path) -> None:
        ident = self.path / "workspace.json"
        if not ident.exists():
            data = {"workspace": str(workspace), "created": datetime.now(timezone.utc).isoformat(), "format": 1}
            ident.write_text(json.dumps(data, indent=2) + "\n")

    # ------------------------------------------------------------------ locking

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's lock (re-entrant in this process, exclusive across processes)."""
        with self._thread_lock:
            if self._lock_depth == 0:
                self._acquire_file_lock()
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
                if self._lock_depth == 0:
                    self._release_file_lock()

    def _acquire_file_lock(self) -> None:
        if self._lock_fd is None:
            self._lock_fd = os.open(self.path / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fd = self._lock_fd
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise Busy(
                        f"the store {self.path} is locked by another Turnback process "
                        f"for more than {self.lock_timeout:.0f} s"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)

    def _release_file_lock(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)  # the descriptor stays open for the next use

    # ------------------------------------------------------------------ blobs

    def write_blob(self, content: bytes) -> str:
        """Store ``content`` as a blob; answers its id.

        Content the store already holds (a before-image that an earlier checkpoint stored as its
        after-image, both sides of an undo) is not compressed and written again: libgit2's
        ``create_blob`` streams into a temporary file and only then finds the object exists.
        The existing object's time is refreshed instead, as libgit2 does ("freshen").
        """
        hexid = _blob_id(content)
        if pygit2.Oid(hex=hexid) in self.repo.odb:
            try:
                os.utime(Path(self.repo.path) / "objects" / hexid[:2] / hexid[2:])
            except OSError:
                pass  # packed, or a read-only store: nothing to refresh
            return hexid
        return str(self.repo.create_blob(content))

    def read_blob(self, oid: str) -> bytes:
        try:
            return self.repo[oid].data
        except (KeyError, ValueError) as exc:
            raise StoreError(f"object {oid} is missing from the store {self.path}") from exc

    def has(self, oid: str) -> bool:
        try:
            return pygit2.Oid(hex=oid) in self.repo.odb
        except ValueError:
            return False

    @staticmethod
    def hash_blob(content: bytes) -> str:
        return _blob_id(content)

    def secret_digest(self, content: bytes) -> str:
        """A keyed digest for withheld content: tells sameness without revealing the bytes."""
        if self._key is None:
            key_file = self.path / "key"
            if not key_file.exists():
                fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(os.urandom(32))
            self._key = key_file.read_bytes()
        return "hmac:" + hmac.new(self._key, content, hashlib.sha256).hexdigest()

    # ------------------------------------------------------------------ operation log

    def head(self) -> str | None:
        try:
            ref = self.repo.references.get(OPLOG_REF)
        except pygit2.GitError as exc:
            raise StoreError(f"cannot read {OPLOG_REF} in {self.path}: {exc}") from exc
        return str(ref.target) if ref is not None else None

    def append(self, meta: bytes, blobs: set[str], message: str, parent: str | None) -> str:
        """Publish one log commit on top of ``parent``: ``meta.json`` plus the content blobs
        it names (tree entries are named by blob id, so the tree is flat and costs what the
        records touched). The ref moves by compare-and-swap: if another writer moved it since
        ``parent`` was read, nothing is published and ``StoreError`` says so.
        """
        sig = pygit2.Signature(_SIGNATURE_NAME, _SIGNATURE_MAIL)
        builder = self.repo.TreeBuilder()
        builder.insert("meta.json", self.repo.create_blob(meta), pygit2.enums.FileMode.BLOB)
        for oid in blobs:
            builder.insert(oid, pygit2.Oid(hex=oid), pygit2.enums.FileMode.BLOB)
        tree = builder.write()
        parents = [pygit2.Oid(hex=parent)] if parent else []
        tip = str(self.repo.create_commit(None, sig, sig, message, tree, parents))
        try:
            ref = self.repo.references.get(OPLOG_REF)
            if ref is None:
                if parent is not None:
                    raise pygit2.GitError("the operation log ref disappeared")
                self.repo.references.create(OPLOG_REF, pygit2.Oid(hex=tip), force=False)
            else:
                if str(ref.target) != parent:
                    raise pygit2.GitError("another writer moved the operation log")
                ref.set_target(pygit2.Oid(hex=tip))
        except (pygit2.GitError, ValueError) as exc:
            raise StoreError(f"the operation log moved while appending ({exc}); nothing was published") from exc
        return tip

    def commit_chain(self, newest: str, stop: str | None = None) -> list[str]:
        """Commit ids from ``newest`` back to (not including) ``stop``, oldest first."""
        chain: list[str] = []
        oid: str | None = newest
        while oid is not None and oid != stop:
            chain.append(oid)
            commit = self.repo[oid]
            oid = str(commit.parent_ids[0]) if commit.parent_ids else None
        if stop is not None and oid != stop:
            raise StoreError("the cached log position is not an ancestor of the head")
        chain.reverse()
        return chain

    def read_meta(self, commit_oid: str) -> bytes:
        commit = self.repo[commit_oid]
        return self.repo[commit.tree["meta.json"].id].data

    def set_head(self, new: str, expected: str | None) -> None:
        """Move the log ref to a rewritten chain (retention), compare-and-swap on ``expected``."""
        current = self.head()
        if current != expected:
            raise StoreError("the operation log moved during garbage collection")
        self.repo.references.create(OPLOG_REF, pygit2.Oid(hex=new), force=True)

    def recommit(self, commit_oid: str, parent: str | None) -> str:
        """A copy of ``commit_oid`` (same tree and message) on top of ``parent``; no ref moves."""
        old = self.repo[commit_oid]
        parents = [pygit2.Oid(hex=parent)] if parent else []
        return str(self.repo.create_commit(None, old.author, old.committer, old.message, old.tree_id, parents))

    def rewrite(self, commit_oid: str, meta: bytes, parent: str | None) -> str:
        """A copy of ``commit_oid`` with new ``meta.json`` (content blobs kept) on ``parent``."""
        old = self.repo[commit_oid]
        builder = self.repo.TreeBuilder(old.tree)
        builder.insert("meta.json", self.repo.create_blob(meta), pygit2.enums.FileMode.BLOB)
        parents = [pygit2.Oid(hex=parent)] if parent else []
        return str(self.repo.create_commit(None, old.author, old.committer, old.message, builder.write(), parents))

    # ------------------------------------------------------------------ size and pruning

    def size_bytes(self) -> int:
        return folder_bytes(self.path)

    def reachable(self, extra: set[str] | None = None) -> set[str]:
        """Every object id reachable from the log head, plus ``extra`` blob ids."""
        seen: set[str] = set(extra or ())
        head = self.head()
        oid = head
        while oid is not None:
            commit = self.repo[oid]
            seen.add(oid)
            seen.add(str(commit.tree_id))
            for item in commit.tree:
                seen.add(str(item.id))
            oid = str(commit.parent_ids[0]) if commit.parent_ids else None
        return seen

    def prune(self, keep: set[str], grace_seconds: float) -> int:
        """Delete loose objects not in ``keep`` and older than the grace period."""
        objects = Path(self.repo.path) / "objects"
        now = time.time()
        removed = 0
        for sub in objects.iterdir():
            if len(sub.name) != 2 or not sub.is_dir():
                continue
            for obj in sub.iterdir():
                oid = sub.name + obj.name
                if oid in keep:
                    continue
                try:
                    if now - obj.stat().st_mtime < grace_seconds:
                        continue
                    obj.unlink()
                    removed += 1
                except FileNotFoundError:
                    pass
            with contextlib.suppress(OSError):
                sub.rmdir()
        return removed
