"""The workspace folder: safe path resolution, and reading and writing its files byte-exactly.

Every path the engine touches goes through ``Workspace.rel`` (which rejects ``..``, absolute
paths, ``.git`` internals and symlinked folders that lead out) before anything is read or
written. Files are written atomically (a temporary file beside the target, then a rename),
with their executable bit; symlinks are recorded and restored as links, never followed.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .errors import OutsideWorkspace
from .models import MODE_EXEC, MODE_FILE, MODE_LINK

TEMP_PREFIX = ".takeback-tmp-"  # files being written; a killed writer's are removed by recovery


@dataclass(frozen=True, slots=True)
class DiskFile:
    """What a path holds on disk now: its bytes and git-style mode."""

    content: bytes
    mode: int


def file_stamp(path: str | os.PathLike[str]) -> tuple | None:
    """What tells a file's versions apart without reading it (None when it is missing): its
    inode, size, modification and change times."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def cannot_read(exc: OSError) -> str:
    """Why a path could not be read, as a skip reason or notice says it."""
    what = exc.strerror.lower() if exc.strerror else type(exc).__name__
    return f"it could not be read ({what})"


def mode_of(st: os.stat_result) -> int:
    if stat.S_ISLNK(st.st_mode):
        return MODE_LINK
    return MODE_EXEC if st.st_mode & 0o111 else MODE_FILE


class Workspace:
    """A folder whose files Takeback records and restores."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))

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
        probe = self.root / parent
        # Find the deepest existing ancestor and make sure its real path stays inside.
        while not os.path.lexists(probe) and probe != self.root:
            probe = probe.parent
        real = os.path.realpath(probe)
        root = str(self.root)
        if real != root and not real.startswith(root + os.sep):
            raise OutsideWorkspace(f"path {rel} goes through a symlink that leads outside the workspace")

    def abs(self, rel: str) -> Path:
        return self.root / rel

    def link_above(self, rel: str) -> str | None:
        """The first folder on the way to ``rel`` that is a symlink, or None. Nothing behind
        such a link is part of the workspace (git sees it so too): it is never read through."""
        folder = ""
        for part in rel.split("/")[:-1]:
            folder = f"{folder}/{part}" if folder else part
            try:
                st = os.lstat(self.root / folder)
            except OSError:
                return None  # missing (so is the file) or unreadable (reading it says so)
            if stat.S_ISLNK(st.st_mode):
                return folder
        return None

    # ------------------------------------------------------------------ reading

    def read(self, rel: str) -> DiskFile | None:
        """The file at ``rel`` now, or None when absent (a folder counts as absent). Raises
        ``OSError`` when it cannot be read (permission denied …); a file replaced meanwhile by a
        symlink or a FIFO is not followed or waited on."""
        path = self.root / rel
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(st.st_mode):
            return DiskFile(os.readlink(path).encode("utf-8", "surrogateescape"), MODE_LINK)
        if not stat.S_ISREG(st.st_mode):
            return None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return None  # removed since it was seen
        with open(fd, "rb") as handle:
            return DiskFile(handle.read(), mode_of(st))

    def size(self, rel: str) -> int | None:
        try:
            return os.lstat(self.root / rel).st_size
        except (FileNotFoundError, NotADirectoryError):
            return None

    # ------------------------------------------------------------------ writing

    def obstacle(self, rel: str) -> str | None:
        """Why a file cannot be put at ``rel`` now, or None: a folder stands at its place, or a
        file (or a broken link) where one of its folders must be. Takeback never removes a
        folder or a file it was not asked to change, so such a path is skipped, with this reason."""
        try:
            if stat.S_ISDIR(os.lstat(self.root / rel).st_mode):
                return "a folder is in the way (Takeback does not remove folders); move it away and run this again"
            return None
        except FileNotFoundError:
            pass
        except NotADirectoryError:
            pass
        probe = self.root
        for part in rel.split("/")[:-1]:
            probe = probe / part
            try:
                if not stat.S_ISDIR(os.stat(probe).st_mode):
                    where = probe.relative_to(self.root).as_posix()
                    return f"{where} is a file where a folder must be; move it away and run this again"
            except FileNotFoundError:
                if os.path.lexists(probe):
                    where = probe.relative_to(self.root).as_posix()
                    return f"{where} is a broken link where a folder must be; remove it and run this again"
                return None
        return None

    def write(self, rel: str, content: bytes, mode: int, fsync: bool = False) -> None:
        """Replace ``rel`` atomically with ``content`` (creating parent folders)."""
        path = self.root / rel
        parent = path.parent
        self._make_parents(parent)
        if os.path.isdir(path) and not os.path.islink(path):
            raise OutsideWorkspace(f"cannot write {rel}: a folder is in the way")
        if mode == MODE_LINK:
            tmp = parent / f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
            os.symlink(content.decode("utf-8", "surrogateescape"), tmp)
            os.replace(tmp, path)
            return
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
                if fsync:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.chmod(tmp, 0o755 if mode == MODE_EXEC else 0o644)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise

    def _make_parents(self, parent: Path) -> None:
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
        for folder in reversed(missing):
            os.mkdir(folder)

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
        """Remove ``rel`` and then the folders it leaves empty (never the root)."""
        path = self.root / rel
        try:
            os.unlink(path)
        except FileNotFoundError:
            return
        parent = path.parent
        while parent != self.root:
            try:
                os.rmdir(parent)
            except OSError:
                break
            parent = parent.parent
