"""The workspace folder: safe path resolution, and reading and writing its files byte-exactly.

Every path the engine touches goes through ``Workspace.rel`` (which rejects ``..``, absolute
paths, ``.git`` internals and symlinked folders that lead out) before anything is read or
written; ``write``, ``delete`` and ``remove_folders`` check again (``check``), so a path read
back from the store (a record, the journal) can never reach outside the workspace or into
``.git``, and ``is_recorded_path`` is the same rule without the disk, for validating what the
store holds. Files are written atomically (a temporary file beside the target, then a rename).
A file written over an existing one keeps its permission bits and owner (only the executable
bit follows the record, as git sets it); a new file gets the default under the umask; a
roll-back passes the exact bits it saw. Symlinks are recorded and restored as links, never
followed. Deleting a file never removes a folder: folders go only through ``remove_folders``,
for the folders an operation knows its changes created, and only when they hold no file. What
folders are where (``obstacle``, ``left_in``, ``missing_folders``, ``folders_made_since``)
is answered here too, and which folder a turn made in a deleted file's place
(``folder_made_in_place``). ``write`` flushes a file (its bytes, owner and permission bits)
before its rename, and ``sync_folders`` the folders an operation changed: what the journal
needs before it goes. Many files go in two steps: ``stage`` each under a temporary name,
``flush_staged`` all at once (one ``syncfs`` per file system), then ``put`` each in place; and
``sync_folders`` of many folders is one ``syncfs`` too (from ``SYNCFS_FROM`` on). A file of a
big batch that may be (``may_write_in_place``) is rewritten in place instead (``rewrite_in_place``:
no temporary file, no rename, which on ext4 frees the old inode at 0.7-1.3 ms a file), flushed
by the same ``syncfs``; the journal names it so, and recovery rolls it whatever it holds.

The checks of an operation's many paths look at each folder once (``FolderLook``, while
``Workspace.folders.steady()`` holds): what it is (a folder, a symlink, missing), whether it may be
written into; Takeback's own changes to folders keep that true. Within it, reading a file also
notes its inode flags and mount (from the descriptor the read opened), so the check that it may
be written (``unwritable``) does not open it again. A file is read with ``os.read`` alone.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from ..core.merge import Version
from ..core.models import MODE_EXEC, MODE_FILE, MODE_LINK
from ..errors import OutsideWorkspace
from ..storage.atomic import sync_dir
from .birth import born_ns

TEMP_PREFIX = ".takeback-tmp-"  # files being written; a killed writer's are removed by recovery
_DIR, _LINK, _MISSING, _OTHER = range(4)  # what stands where a folder is looked for (``Workspace._kind``)


def file_stamp(path: str | os.PathLike[str]) -> tuple | None:
    """What tells a file's versions apart without reading it (None when it is missing): its
    inode, size, modification and change times."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def is_recorded_path(path: str) -> bool:
    """Whether ``path`` is a path as Takeback records it: relative, normalised (no ``.``,
    ``..`` or empty part), outside every ``.git`` folder. No disk access: cheap enough to
    check every path read back from the store."""
    return bool(path) and "\x00" not in path and all(part not in ("", ".", "..", ".git") for part in path.split("/"))


def mode_of(st: os.stat_result) -> int:
    if stat.S_ISLNK(st.st_mode):
        return MODE_LINK
    return MODE_EXEC if st.st_mode & 0o111 else MODE_FILE


SYNCFS_FROM = 64
"""From this many files (or folders) flushed at once, one ``syncfs`` per file system replaces one
``fsync`` each (``TAKEBACK_SYNCFS_FROM`` changes it: the power-cut tests run small operations through it)."""


def syncfs_from() -> int:
    try:
        return max(1, int(os.environ.get("TAKEBACK_SYNCFS_FROM", SYNCFS_FROM)))
    except ValueError:
        return SYNCFS_FROM


def syncfs(folder: str) -> bool:
    """Flush the whole file system ``folder`` is on (Linux's ``syncfs``: every file and folder
    change made there, one journal commit); False when the system has none. ``OSError`` when
    the flush fails."""
    try:
        import ctypes

        call = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return False
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if call(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), folder)
    finally:
        os.close(fd)
    return True


def _syncfs_all(devices: dict[int, str]) -> bool:
    """``syncfs`` the file system of each device (a folder on it given); False when the system
    has none (the caller then flushes file by file or folder by folder)."""
    return all(syncfs(folder) for folder in devices.values())


def _devices(folders: Iterable[str]) -> dict[int, str]:
    """One of ``folders`` on each file system they are on (a folder gone is left out)."""
    devices: dict[int, str] = {}
    for folder in folders:
        with contextlib.suppress(OSError):
            devices.setdefault(os.stat(folder).st_dev, folder)
    return devices


class Staged(NamedTuple):
    """A file ``Workspace.stage`` wrote under a temporary name beside ``rel``; ``device``: its
    file system's, when it still has to be flushed (None: flushed, or a link)."""

    rel: str
    tmp: str
    device: int | None


def discard(staged: Staged) -> None:
    """Remove a staged file that will not be put in place."""
    with contextlib.suppress(OSError):
        os.unlink(staged.tmp)


def with_exec_bit(perm: int, executable: bool) -> int:
    """``perm`` with its x bits following the record, as git does: an executable file gets x
    wherever it has r (0600 -> 0700, 0644 -> 0755), a plain file loses every x."""
    return perm | ((perm & 0o444) >> 2) if executable else perm & ~0o111


class FolderLook:
    """What the folders of a workspace are, looked up with ``lstat`` (never following a link),
    remembered while ``steady`` holds."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._kinds: dict[str, int] | None = None  # folder -> what it is, while ``steady`` holds
        self._facts: dict[str, tuple[os.stat_result | None, bool]] = {}  # folder -> (stat, writable), the same
        # file (absolute path) -> (its fstat, inode flags, on a read-only mount), noted by a read
        # while ``steady`` holds: the checks before writing take what stands there and the flags
        # of that very inode from it, without looking at the file a second time
        # (``Workspace.unwritable``, ``Workspace.obstacle``)
        self._files: dict[str, tuple[os.stat_result, int, bool]] = {}
        # folder -> the first symlink on the way to it and itself (None: none), the same
        self._links: dict[str, str | None] = {}

    @contextlib.contextmanager
    def steady(self) -> Iterator[None]:
        """Within, what each folder is (a folder, a symlink, missing, a file) and whether it may
        be written into is looked up once and remembered: the path checks of an operation's
        many files cost one ``lstat`` per folder, not one per folder of every path. Takeback's
        own changes keep it true (a folder made, folders removed, a link written or a path
        deleted where a folder was known); an operation holds it for its planning and again,
        afresh, for its writes, so what the person changes in between is seen. Nested: joins."""
        if self._kinds is not None:
            yield
            return
        self._kinds, self._facts, self._files, self._links = {}, {}, {}, {}
        try:
            yield
        finally:
            self._kinds, self._facts, self._files, self._links = None, {}, {}, {}

    def forget(self) -> None:
        """Takeback changed what stands at a folder it looked at: look again."""
        if self._kinds:
            self._kinds, self._facts, self._files, self._links = {}, {}, {}, {}

    def looked_at(self, rel: str) -> bool:
        """Whether ``rel`` was looked at as a folder since ``steady`` began."""
        return self._kinds is not None and rel in self._kinds

    def kind(self, folder: str) -> int:
        """What stands at ``folder`` (workspace-relative): ``_DIR``, ``_LINK``, ``_MISSING`` or
        ``_OTHER`` (a file), without following a link; remembered while ``steady`` holds."""
        kinds = self._kinds
        if kinds is not None and (known := kinds.get(folder)) is not None:
            return known
        try:
            mode = os.lstat(os.path.join(self.root, folder)).st_mode
        except OSError:
            kind = _MISSING
        else:
            kind = _DIR if stat.S_ISDIR(mode) else (_LINK if stat.S_ISLNK(mode) else _OTHER)
        if kinds is not None:
            kinds[folder] = kind
        return kind

    def to(self, rel: str) -> Iterator[tuple[str, int]]:
        """The folders on the way to ``rel``, shallowest first, with what each is; stops after
        the first that is not a folder (nothing beyond it exists)."""
        folder = ""
        for part in rel.split("/")[:-1]:
            folder = f"{folder}/{part}" if folder else part
            kind = self.kind(folder)
            yield folder, kind
            if kind != _DIR:
                return

    def link_above(self, rel: str) -> str | None:
        """The first folder on the way to ``rel`` that is a symlink (``to``), or None; the
        answer for its folder remembered while ``steady`` holds (the files of one folder share
        it: a big operation asks it of each file two or three times)."""
        parent = rel.rpartition("/")[0]
        if not parent:
            return None
        links = self._links if self._kinds is not None else None
        if links is not None and parent in links:
            return links[parent]
        found = next((folder for folder, kind in self.to(rel) if kind == _LINK), None)
        if links is not None:
            links[parent] = found
        return found

    def note_file(self, path: str, fd: int, st: os.stat_result) -> None:
        """While ``steady`` holds, note the inode flags and the mount of the file open as ``fd``
        (read from ``path``; ``st``: its ``fstat``), for ``file_flags``."""
        if self._kinds is not None:
            self._files[path] = (st, *_fd_facts(fd))

    def file_flags(self, path: str, st: os.stat_result) -> tuple[int, bool]:
        """The inode flags of the regular file at ``path`` (``st``: its ``lstat``) and whether it
        is on a read-only mount: as a read noted them while ``steady`` holds, when it is the same
        inode still, else asked of the file now ((0, False) for what is not a regular file)."""
        if not stat.S_ISREG(st.st_mode):
            return 0, False
        known = self._files.get(path)
        if known is not None and (known[0].st_dev, known[0].st_ino) == (st.st_dev, st.st_ino):
            return known[1], known[2]
        return _file_flags(path)

    def read_file(self, path: str) -> os.stat_result | None:
        """The ``fstat`` of the regular file a read found at ``path`` (absolute) while ``steady``
        holds, None when none was read there: what stands at ``path`` as the same planning
        saw it a moment ago."""
        known = self._files.get(path)
        return known[0] if known is not None else None

    def facts(self, folder: str | os.PathLike[str]) -> tuple[os.stat_result | None, bool]:
        """The folder's stat (None: cannot be had) and whether it may be written into; remembered
        while ``steady`` holds."""
        key = os.fspath(folder)
        if (known := self._facts.get(key)) is not None:
            return known
        try:
            held: os.stat_result | None = os.stat(folder)
        except OSError:
            held = None
        facts = (held, os.access(folder, os.W_OK | os.X_OK))
        if self._kinds is not None:
            self._facts[key] = facts
        return facts


def _read_open(fd: int, path: str, folders: FolderLook | None, st: os.stat_result | None = None) -> bytes:
    """All the bytes of the file open as ``fd`` (opened from ``path``; ``st``: its ``fstat``
    when the caller has it), read with ``os.read`` alone, and ``fd`` closed: no file object
    (whose making asks the descriptor whether it is a terminal and where it stands, three calls
    per file a big operation reads). One read asks for a byte more than ``fstat`` said: getting
    exactly the size is the whole file as it stood then, with no second read to find its end;
    more (it grew) or less (it shrank, or a short read) reads on to the end. A folder found
    there is ``IsADirectoryError``, as ``open`` says it."""
    try:
        if st is None:
            st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if folders is not None:
            folders.note_file(path, fd, st)
        first = os.read(fd, st.st_size + 1)
        if len(first) == st.st_size:
            return first
        parts = [first]
        while parts[-1]:
            parts.append(os.read(fd, max(st.st_size, 1 << 16)))
    finally:
        os.close(fd)
    return parts[0] if len(parts) == 2 else b"".join(parts)


def read_back(path: str) -> Version | None:
    """A workspace file as a check right after a write reads it (``Journal.verify``): as
    ``Workspace.read`` reads, nothing noted for the folder checks."""
    return _read_at(path, None)


def _read_at(path: str, folders: FolderLook | None) -> Version | None:
    """The file at ``path`` (absolute), opened without following a link (a link is read as
    one) and looked at through the open file: no ``lstat`` first (the open answers what an
    ``lstat`` would: a link, nothing, a folder; 15 ms of a 5,000-file operation's planning).
    A folder, a FIFO, a socket or nothing: None. ``folders``: what the folder checks note."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return None  # a socket
        if exc.errno != errno.ELOOP:
            raise
        return Version(os.readlink(path).encode("utf-8", "surrogateescape"), MODE_LINK)
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    return Version(_read_open(fd, path, folders, st), mode_of(st))


def flush_staged(staged: list[Staged], in_place: Iterable[tuple[int, str]] = ()) -> None:
    """Flush the staged files not flushed yet to disk, before any is put in place, and the files
    written ``in_place`` ((device, absolute path) each, ``rewrite_in_place``): one
    ``syncfs`` per file system they are on (all that file system's dirty data: worth it
    for many files only), else (no ``syncfs`` here) one ``fsync`` each."""
    pending = [(s.device, s.tmp) for s in staged if s.device is not None] + list(in_place)
    if _syncfs_all({device: os.path.dirname(path) for device, path in pending}):
        return
    for _device, path in pending:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


BLOCK = 4096  # what a power cut keeps or loses of a file's data at once (the page size)


def torn_between(disk: bytes, before: bytes, after: bytes) -> bool:
    """Whether ``disk`` is what rewriting a file holding ``before`` in place with ``after``
    (``rewrite_in_place``) can leave when cut short, by a kill or a power cut: no longer
    than either, each block (``BLOCK`` bytes) holding that block of one side or the other, or
    zeros (written where a power cut lost it)."""
    if len(disk) > max(len(before), len(after)):
        return False
    for start in range(0, len(disk), BLOCK):
        end = min(start + BLOCK, len(disk))
        held = disk[start:end]
        if held != after[start:end] and held != before[start:end] and held.count(0) != len(held):
            return False
    return True


def may_write_in_place(st: os.stat_result) -> bool:
    """Whether the file whose ``lstat`` is ``st`` may be rewritten in place (``rewrite_in_place``)
    with nothing else about it changing: a regular file of Takeback's user, which it may write,
    with no other hard link (a rename leaves those the old content; an in-place write would
    not) and no set-id bit (a write clears it)."""
    return (
        stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and st.st_uid == os.geteuid()
        and bool(st.st_mode & stat.S_IWUSR) and not st.st_mode & (stat.S_ISUID | stat.S_ISGID)
    )


def regular_file(path: str | os.PathLike[str]) -> os.stat_result | None:
    """``lstat`` of the regular file at ``path`` (None: no regular file there)."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def rewrite_in_place(path: str, rel: str, content: bytes, mode: int, perm: int) -> tuple[int, str]:
    """Rewrite the regular file at ``path`` (``rel`` in the workspace) in place with ``content``
    (no temporary file, no rename: the inode, owner and other bits stay; ``perm``, the bits it
    had, gets its x bits following ``mode``), not flushed: answers (its device, ``path``) for
    ``flush_staged``. Only for a file ``may_write_in_place`` allowed, named in the journal as
    written in place: a kill or a power cut in the middle leaves it holding neither side but
    blocks of each (``torn_between``), which recovery rolls. A link or a non-regular file found
    there now is not followed or written (``OutsideWorkspace``)."""
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OutsideWorkspace(f"cannot write {rel}: it is not a regular file any more")
        view = memoryview(content)
        while view:  # over the old bytes from the first on: emptying it first would wait on their writeback
            view = view[os.write(fd, view):]
        if st.st_size > len(content):
            os.ftruncate(fd, len(content))
        wanted = with_exec_bit(perm, mode == MODE_EXEC)
        if wanted != stat.S_IMODE(st.st_mode):
            os.fchmod(fd, wanted)
    finally:
        os.close(fd)
    return st.st_dev, path


class Workspace:
    """A folder whose files Takeback records and restores."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self._root = str(self.root)
        self._prefix = self._root.rstrip("/") + "/"  # ``at``: a recorded path put after it
        self.folders = FolderLook(self._root)

    # ------------------------------------------------------------------ paths

    def rel(self, path: str | os.PathLike[str]) -> str:
        """Normalise ``path`` to a workspace-relative POSIX path, or raise ``OutsideWorkspace``.

        Accepts a path relative to the root, or an absolute path inside it.
        """
        raw = os.fspath(path)
        if not raw or "\x00" in raw:
            raise OutsideWorkspace(f"invalid path {raw!r}: empty or contains a NUL byte")
        if not raw.isascii():
            try:
                raw.encode("utf-8")
            except UnicodeEncodeError:
                raise OutsideWorkspace(f"invalid path {raw!r}: not valid UTF-8, which no record can hold") from None
        if os.sep == "/" and is_recorded_path(raw):  # already in recorded form (every path an operation plans)
            self._check_parents(raw)
            return raw
        if os.path.isabs(raw):
            absolute = os.path.normpath(raw)
            root = str(self.root)
            if absolute != root and not absolute.startswith(root + os.sep):
                # The caller may have used a non-resolved spelling of the root.
                real_parent = os.path.realpath(os.path.dirname(absolute))
                candidate = os.path.join(real_parent, os.path.basename(absolute))
                if not candidate.startswith(root + os.sep):
                    raise OutsideWorkspace(f"path {raw} is outside the workspace {self.root}")
                absolute = candidate
            raw = os.path.relpath(absolute, root)
        parts = PurePosixPath(raw.replace(os.sep, "/")).parts
        if any(part == ".." for part in parts):
            raise OutsideWorkspace(f"path {raw} leads outside the workspace (contains '..')")
        parts = tuple(p for p in parts if p not in (".", ""))
        if not parts:
            raise OutsideWorkspace(f"path {raw!r} names the workspace root, not a file")
        if ".git" in parts:
            raise OutsideWorkspace(f"path {raw} is inside a .git folder, which Takeback never touches")
        rel = "/".join(parts)
        self._check_parents(rel)
        return rel

    def _check_parents(self, rel: str) -> None:
        """Refuse a path whose existing parent folders resolve outside the root (symlinks)."""
        parent = os.path.dirname(rel)
        if not parent:
            return
        if self.folders.link_above(rel) is None:
            return  # real folders down to the first missing one (or a file): the path stays inside
        probe = self.root / parent
        # Find the deepest existing ancestor and make sure its real path stays inside.
        while not os.path.lexists(probe) and probe != self.root:
            probe = probe.parent
        real = os.path.realpath(probe)
        root = str(self.root)
        if real != root and not real.startswith(root + os.sep):
            raise OutsideWorkspace(f"path {rel} goes through a symlink that leads outside the workspace")

    def check(self, rel: str) -> None:
        """Raise ``OutsideWorkspace`` unless ``rel`` is a recorded-form path (``is_recorded_path``)
        that does not lead outside through a symlinked folder now."""
        if not is_recorded_path(rel) or self.reach(rel)[1] is not None:
            raise OutsideWorkspace(f"path {rel!r} is not a path inside the workspace that Takeback may touch")

    def abs(self, rel: str) -> Path:
        return self.root / rel

    def at(self, rel: str) -> str:
        """``abs`` as a string, with no ``Path`` made: asked of every file a big operation writes."""
        return self._prefix + rel

    def link_above(self, rel: str) -> str | None:
        """The first folder on the way to ``rel`` that is a symlink, or None. Nothing behind
        such a link is part of the workspace (git sees it so too): it is never read through."""
        return self.folders.link_above(rel)  # missing (so is the file) or unreadable (reading it says so): no link

    def reach(self, rel: str) -> tuple[str | None, OutsideWorkspace | None]:
        """Of a recorded path, one look at its folders (``FolderLook`` remembers them): the
        first symlinked folder on the way (``link_above``), and why ``rel`` refuses it (None: it
        stays inside). A path in recorded form with no link on the way is ``rel``'s own first
        answer, given without asking it again: planning asks this of every path it plans."""
        link = self.link_above(rel)
        if link is None and rel.isascii() and os.sep == "/" and is_recorded_path(rel):
            return None, None
        try:
            self.rel(rel)
        except OutsideWorkspace as exc:
            return link, exc
        return link, None

    # ------------------------------------------------------------------ reading

    def read(self, rel: str) -> Version | None:
        """The file at ``rel`` now, or None when absent (a folder counts as absent). Raises ``OSError`` when it cannot
        be read (permission denied …); a file replaced meanwhile by a symlink or a FIFO is not followed or waited on."""
        return _read_at(self._prefix + rel, self.folders)

    def size(self, rel: str) -> int | None:
        try:
            return os.lstat(self.root / rel).st_size
        except (FileNotFoundError, NotADirectoryError):
            return None

    # ------------------------------------------------------------------ writing

    def obstacle(self, rel: str, going: frozenset[str] = frozenset()) -> str | None:
        """Why a file cannot be put at ``rel`` now, or None: a folder stands at its place, or a
        file (or a broken link) where one of its folders must be. ``going``: the files and
        folders the same operation removes first (they are no obstacle). Takeback never removes
        a folder or a file it was not asked to change, so such a path is skipped, with this reason."""
        if self.folders.read_file(self.at(rel)) is not None:
            return None  # a file stands there, read while planning: no folder in the way, none needed
        try:
            if stat.S_ISDIR(os.lstat(self.at(rel)).st_mode) and rel not in going:
                return "a folder is in the way (Takeback does not remove folders); move it away and run this again"
            return None
        except FileNotFoundError:
            pass
        except NotADirectoryError:
            pass
        probe = self.root
        for part in rel.split("/")[:-1]:
            probe = probe / part
            where = probe.relative_to(self.root).as_posix()
            if where in going:
                return None  # removed first; what is below it is made anew
            if self.folders.kind(where) == _DIR:
                continue
            try:
                if not stat.S_ISDIR(os.stat(probe).st_mode):
                    return f"{where} is a file where a folder must be; move it away and run this again"
            except FileNotFoundError:
                if os.path.lexists(probe):
                    return f"{where} is a broken link where a folder must be; remove it and run this again"
                return None
        return None

    def unwritable(self, rel: str) -> str | None:
        """Why ``rel`` cannot be written or removed now, or None, asked before anything is
        written: the file is immutable or append-only (``chattr``), on a read-only mount, or a
        mount point; or the folder it goes in (the nearest that exists, where folders must be
        made) is not writable: its permission bits, a read-only mount, an immutable folder."""
        root = self._root
        path = self._prefix + rel  # strings, not pathlib: asked of every file a big operation writes
        st = self.folders.read_file(path)  # read while planning: what stands there (else look now)
        if st is None:
            try:
                st = os.lstat(path)
            except (FileNotFoundError, NotADirectoryError):
                st = None
        folder = os.path.dirname(path)
        if folder != root and self.folders.kind(os.path.dirname(rel)) != _DIR:
            while not os.path.isdir(folder) and folder != root:
                folder = os.path.dirname(folder)
        held, writable = self.folders.facts(folder)
        if st is not None and not stat.S_ISDIR(st.st_mode):
            why = _file_locked(path, st, folder, held, self.folders.file_flags(path, st))
            if why is not None:
                return f"permission denied: {rel} {why}"
        if writable:
            return None
        where = "the workspace folder" if folder == root else f"folder {Path(folder).relative_to(root).as_posix()}/"
        return f"permission denied: {where} {_folder_locked(Path(folder))}"

    def left_in(self, folder: str, going: frozenset[str]) -> list[str]:
        """The files (and links) that would still be under ``folder`` once those in ``going``
        are removed (sorted, workspace-relative): what keeps the folder from being removed.
        Folders that hold no file do not count: they go with it (``remove_folders``)."""
        return sorted(p for p in self._held_in(folder) if p not in going)

    def _held_in(self, folder: str) -> Iterator[str]:
        """The files and links under ``folder`` (workspace-relative), found as the walk goes:
        what a folder holds for ``left_in`` and ``folder_made_in_place``."""
        for top, dirs, files in os.walk(self.root / folder):
            base = Path(top).relative_to(self.root).as_posix()
            links = [name for name in dirs if os.path.islink(os.path.join(top, name))]
            yield from (f"{base}/{name}" for name in files + links)

    def missing_folders(self, rel: str, going: frozenset[str] = frozenset()) -> list[str]:
        """The folders that writing ``rel`` creates (shallowest first): its parents that are not
        folders now, or that the same operation removes first (``going``)."""
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder in going or not os.path.isdir(self.root / folder):
                return ["/".join(parts[:d]) for d in range(depth, len(parts) + 1)]
        return []

    def folders_made_since(self, rel: str, since_ns: int, known: Iterable[str]) -> list[str]:
        """The parents of ``rel`` (shallowest first) that came into being after ``since_ns``
        (their birth time) and hold none of the ``known`` paths (files that were there before):
        the folders a turn made for a file it added. A folder whose birth the file system cannot
        tell is not counted: an empty folder left behind is safe, a removed one is not."""
        known = set(known)
        parts = rel.split("/")[:-1]
        made: list[str] = []
        for depth in range(len(parts), 0, -1):
            folder = "/".join(parts[:depth])
            born = born_ns(self.root / folder)
            if born is None or born <= since_ns or any(k.startswith(folder + "/") for k in known):
                break
            made.insert(0, folder)
        return made

    def folder_made_in_place(self, rel: str, since_ns: int) -> list[str]:
        """``[rel]`` when a folder stands at ``rel`` now that came into being after ``since_ns``
        (its birth time) and holds no file, only empty folders if any: what a turn that deleted
        the file ``rel`` made in its place and emptied again, which no file's record names.
        ``[]`` otherwise; a folder whose birth the file system cannot tell is not counted (as in
        ``folders_made_since``). Stops at the first file it finds under the folder."""
        path = self.root / rel
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return []
        except OSError:
            return []
        born = born_ns(path)
        if born is None or born <= since_ns:
            return []
        return [] if next(self._held_in(rel), None) is not None else [rel]

    def permissions(self, rel: str) -> int | None:
        """The permission bits of the regular file at ``rel`` (None: no regular file there)."""
        st = regular_file(self.root / rel)
        return stat.S_IMODE(st.st_mode) if st is not None else None

    def follow_mode(self, rel: str, mode: int) -> int | None:
        """Give the regular file at ``rel`` the x bits ``mode`` calls for, its other bits kept, as
        ``write`` does (for a document the editor wrote: an editor changes only text). Answers
        the bits it replaced; None when nothing changed (already so, a link, no file there)."""
        self.check(rel)
        perm = self.permissions(rel)
        if perm is None or mode == MODE_LINK:
            return None
        wanted = with_exec_bit(perm, mode == MODE_EXEC)
        if wanted == perm:
            return None
        os.chmod(self.root / rel, wanted)
        return perm

    def set_permissions(self, rel: str, perm: int) -> None:
        """Put back the permission bits ``follow_mode`` replaced (a regular file only: a link or a
        missing file is left alone)."""
        self.check(rel)
        if self.permissions(rel) is not None:
            os.chmod(self.root / rel, perm)

    def write(self, rel: str, content: bytes, mode: int, perm: int | None = None) -> None:
        """Replace ``rel`` atomically with ``content`` (creating parent folders), the file
        flushed to disk before its rename (``sync_folders`` then flushes its folder).

        A file that is there keeps its permission bits and owner, with the x bits following
        ``mode``; a new one gets the umask's default. ``perm`` (a roll-back) sets exact bits.
        The rename gives the path a new inode: other hard links keep the old content."""
        staged = self.stage(rel, content, mode, perm, flush=True)
        try:
            self.put(staged)
        except BaseException:
            discard(staged)
            raise

    def stage(self, rel: str, content: bytes, mode: int, perm: int | None = None, flush: bool = False) -> Staged:
        """``write``'s first half: the content in a temporary file beside ``rel`` (folders made),
        with its owner and bits, flushed with ``flush`` (else by ``flush_staged``, before any
        is put); ``put`` renames it into place, ``discard`` removes it."""
        self.check(rel)
        path = os.path.join(self._root, rel)
        parent = os.path.dirname(path)
        self._make_parents(os.path.dirname(rel))
        try:
            old = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            old = None
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise OutsideWorkspace(f"cannot write {rel}: a folder is in the way")
        kept = old if old is not None and stat.S_ISREG(old.st_mode) else None
        return _staged(rel, parent, content, mode, perm, kept, flush)

    def put(self, staged: Staged) -> None:
        """Rename a staged file into place (``discard`` it when this raises)."""
        os.replace(staged.tmp, os.path.join(self._root, staged.rel))
        if self.folders.looked_at(staged.rel):
            self.folders.forget()  # it was looked at as a folder: what stands there changed

    def _make_parents(self, folder: str) -> None:
        """Make the folder ``folder`` (workspace-relative, "" the root) and the missing ones above it."""
        if not folder or self.folders.kind(folder) == _DIR:
            return
        parent = self.root / folder
        if parent.is_dir():
            return
        missing = []
        probe = parent
        while not probe.exists():
            if os.path.lexists(probe):  # a dangling symlink where a folder should be
                raise OutsideWorkspace(f"cannot create folder {probe}: a broken link is in the way")
            missing.append(probe)
            probe = probe.parent
        if not probe.is_dir():
            raise OutsideWorkspace(f"cannot create {parent}: {probe} is a file")
        for made in reversed(missing):
            os.mkdir(made)
        self.folders.forget()  # what was missing is a folder now

    def sync_folders(self, rels: Iterable[str]) -> None:
        """Flush to disk the entries of the folders that hold ``rels`` (files written or
        removed, folders made or removed): a rename, an unlink or a mkdir is only sure to
        survive a power cut once its folder is synced. A folder that is gone is skipped (its
        parent, named through the folder itself, holds that change). From ``SYNCFS_FROM``
        folders on, one ``syncfs`` per file system they are on instead."""
        folders = sorted({os.path.dirname(rel) for rel in rels})
        if len(folders) >= syncfs_from() and _syncfs_all(_devices(os.path.join(self._root, f) for f in folders)):
            return
        for folder in folders:
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                sync_dir(self.root / folder)

    def remove_temporaries(self, rel_dir: str) -> None:
        """Delete the temporary files (``.takeback-tmp-*``) a killed writer left in a folder."""
        folder = self.root / rel_dir if rel_dir else self.root
        real = os.path.realpath(folder)
        if real != str(self.root) and not real.startswith(str(self.root) + os.sep):
            return
        try:
            names = os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return
        for name in names:
            if name.startswith(TEMP_PREFIX):
                try:
                    os.unlink(folder / name)
                except (FileNotFoundError, IsADirectoryError):
                    pass

    def delete(self, rel: str) -> None:
        """Remove the file (or link) ``rel``; its folders stay (``remove_folders`` takes those)."""
        self.check(rel)
        (self.root / rel).unlink(missing_ok=True)  # gone already (the person deleted it meanwhile): done
        if self.folders.looked_at(rel):
            self.folders.forget()  # it was looked at as a folder (a link, a file in a folder's place)

    def remove_folders(self, folders: Iterable[str]) -> None:
        """Remove those of ``folders`` that hold no file, deepest first, with the empty folders
        under them (younger than the folder, so none was there before the change that made it);
        never the root, and a folder that still holds a file stays."""
        folders = set(folders)
        if folders:
            self.folders.forget()
        for folder in sorted(folders, key=lambda f: (-f.count("/"), f)):
            try:
                path = self.root / self.rel(folder)
            except OutsideWorkspace:
                continue
            if os.path.islink(path):
                continue
            for top, dirs, _files in os.walk(path, topdown=False):
                for name in dirs:
                    try:
                        os.rmdir(os.path.join(top, name))
                    except OSError:
                        pass  # holds a file (or is a link): it stays, and so does the folder
            try:
                os.rmdir(path)
            except OSError:
                continue


def _staged(
    rel: str, parent: str, content: bytes, mode: int, perm: int | None, kept: os.stat_result | None, flush: bool,
) -> Staged:
    """``content`` in a new temporary file in ``parent`` (the folder of ``rel``), given the owner
    of the file it replaces (``kept``: its ``lstat``) and ``perm`` (None: those of ``kept``
    with ``mode``'s executable bit, or the umask's); flushed with ``flush``."""
    tmp = os.path.join(parent, f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(4).hex()}")
    if mode == MODE_LINK:
        os.symlink(content.decode("utf-8", "surrogateescape"), tmp)
        return Staged(rel, tmp, None)
    if perm is None and kept is not None:
        perm = with_exec_bit(stat.S_IMODE(kept.st_mode), mode == MODE_EXEC)
    # Made private first when its bits are known (no moment where a 0600 file's new
    # content is readable by others); otherwise the kernel applies the umask.
    create = 0o600 if perm is not None else (0o777 if mode == MODE_EXEC else 0o666)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), create)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            if kept is not None and (kept.st_uid, kept.st_gid) != (os.geteuid(), os.getegid()):
                try:
                    os.fchown(handle.fileno(), kept.st_uid, kept.st_gid)
                except OSError:
                    pass  # only root may give a file away; it is then the writer's
            if perm is not None:
                os.fchmod(handle.fileno(), perm)  # after chown, which clears set-id bits
            handle.flush()  # last: the owner and the permission bits are flushed with the bytes
            if flush:
                os.fsync(handle.fileno())
            device = os.fstat(handle.fileno()).st_dev
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return Staged(rel, tmp, None if flush else device)


# Inode flags (``chattr``), read with the FS_IOC_GETFLAGS ioctl: no library in the project's
# dependencies reads them, and os.stat does not report them on Linux (``st_flags`` is BSD's).
_FS_IOC_GETFLAGS = 0x80086601
_FS_APPEND_FL = 0x20
_FS_IMMUTABLE_FL = 0x10


def _inode_flags(path: Path, folder: bool = False) -> int:
    """The file's or folder's inode flags (0 when they cannot be read: no permission, a file
    system without them, not Linux). Only regular files and folders are opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_DIRECTORY if folder else 0))
    except OSError:  # cannot be opened: none to tell
        return 0
    try:
        return _fd_flags(fd)
    finally:
        os.close(fd)


def _fd_flags(fd: int) -> int:
    """The inode flags of the open file ``fd`` (0: a file system without them, ENOTTY)."""
    flags = bytearray(8)
    try:
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, flags)
    except OSError:
        return 0
    return int.from_bytes(flags[:4], sys.byteorder)


def _read_only_mount(path: str | os.PathLike[str]) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _file_flags(path: str) -> tuple[int, bool]:
    """The regular file's inode flags (``_inode_flags``) and whether it is on a read-only mount,
    both asked of one open descriptor (the path resolved once, not twice)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:  # no permission to read it: no flags to tell, the mount asked by path
        return 0, _read_only_mount(path)
    try:
        return _fd_facts(fd)
    finally:
        os.close(fd)


def _fd_facts(fd: int) -> tuple[int, bool]:
    """The open file's inode flags and whether it is on a read-only mount."""
    try:
        read_only = bool(os.fstatvfs(fd).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return _fd_flags(fd), read_only


def _file_locked(
    path: str, st: os.stat_result, folder: str, held: os.stat_result | None, facts: tuple[int, bool],
) -> str | None:
    """Why the file (or link) at ``path`` cannot be replaced or removed whatever the folder
    (``held``: its stat) allows (even by root), or None; ``facts``: a regular file's inode
    flags and whether it is on a read-only mount (``FolderLook.file_flags``)."""
    if stat.S_ISREG(st.st_mode):
        flags, read_only = facts
        if flags & _FS_IMMUTABLE_FL:
            return "is immutable (chattr +i); 'chattr -i' it and run this again"
        if flags & _FS_APPEND_FL:
            return "is append-only (chattr +a); 'chattr -a' it and run this again"
        if read_only and not _read_only_mount(folder):
            return "is on a read-only mount; remount it read-write (or unmount it) and run this again"
    if held is None:
        return None
    if st.st_dev != held.st_dev:
        return "is a mount point (something is mounted over it); unmount it and run this again"
    me = os.geteuid()
    if held.st_mode & stat.S_ISVTX and me != 0 and me not in (st.st_uid, held.st_uid):
        return "belongs to another user, and only a file's owner may replace it in its folder (sticky bit)"
    return None


def _folder_locked(folder: Path) -> str:
    """Why a folder that ``os.access`` says cannot be written into refuses, with the way out."""
    if _read_only_mount(folder):
        return "is on a read-only mount; remount it read-write and run this again"
    if _inode_flags(folder, folder=True) & _FS_IMMUTABLE_FL:
        return "is immutable (chattr +i); 'chattr -i' it and run this again"
    return "is read-only; make it writable and run this again"
