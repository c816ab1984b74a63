"""The bytes a clean tracked file has on disk, worked out from its index entry.

A bracket's git scanner (``scan.GitScanner``) reads files git lists as dirty; a file that was
clean at begin and changed during the turn is gone from the disk by the end, so its
before-image comes from the index. git calls a file clean when its *cleaned* bytes match the
blob, so the blob is the bytes on disk only where no conversion applies. ``worktree_form``
answers with the bytes checkout writes:

* no conversion can apply to the path (``core.autocrlf`` is not ``true`` and no ``text``,
  ``eol``, ``filter``, ``ident`` or ``working-tree-encoding`` attribute is set for it): the
  blob, read in-process, as fast as before (and where no attribute file exists on the way to
  the path, ``Attributes``, libgit2 is not even asked);
* otherwise git itself converts the blob (``git cat-file --filters --path=PATH BLOB``: the
  line endings, the smudge filter the person configured, as checkout does). One process per
  such path: git 2.39's ``--batch --filters`` announces the unconverted size, so its answers
  cannot be split apart;
* an entry marked skip-worktree (outside a sparse checkout's set) is not on disk: absent.

Whatever the way, the result is checked against the file size git recorded in the entry when
it last saw the file (unless git recorded 0, which it does for an entry it will compare by
content); where they differ (a filter that cannot be reversed, settings changed
since checkout, a filter that failed) the bytes on disk cannot be known and ``NotKnown`` says
why: the scanner then leaves the path out of the turn with a notice, so that undo never
writes a file that was not there.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from typing import cast

import pygit2
from pygit2.enums import ConfigLevel

from .. import gitenv

try:
    from pygit2.ffi import C, ffi
except ImportError:  # a pygit2 without its cffi layer: entries without stat data
    C = ffi = None

_SKIP_WORKTREE = 1 << 14  # GIT_INDEX_ENTRY_SKIP_WORKTREE, in the extended flags
_GITLINK = 0o160000
_SYMLINK = 0o120000
_ATTRIBUTES = ("filter", "text", "eol", "ident", "working-tree-encoding")


class NotKnown(Exception):
    """The bytes the file had on disk cannot be worked out from its index entry."""


def _entry(index: pygit2.Index, path: str) -> tuple[pygit2.Oid, int, int | None, bool] | None:
    """(blob id, mode, size on disk as git last saw it, skip-worktree) of ``path``, or None."""
    if C is None:
        try:
            found = index[path]
        except KeyError:
            return None
        return found.id, found.mode, None, False
    entry = C.git_index_get_bypath(index._index, path.encode("utf-8", "surrogateescape"), 0)
    if entry == ffi.NULL:
        return None
    oid = pygit2.Oid(raw=bytes(ffi.buffer(entry.id.id, 20)))
    return oid, entry.mode, entry.file_size, bool(entry.flags_extended & _SKIP_WORKTREE)


class Attributes:
    """Which paths no attribute file reaches, for the paths of one scan (``worktree_form``'s
    ``reach``): libgit2's lookup (``get_attr``, five names a path) reads the attribute files of
    every folder above the path each time; most repositories have none, so where neither the
    repository's nor the person's attribute files exist and no folder on the way holds a
    ``.gitattributes`` (on disk, or in the index: libgit2 reads the file, else the index
    entry), no attribute is set and libgit2 is not asked. Looked up once per folder; made
    afresh for each scan (files may come and go between scans)."""

    def __init__(self, repo: pygit2.Repository, indexed: Callable[[str], bool] | None = None) -> None:
        self.repo = repo
        self.indexed = indexed  # whether the index has a path (else libgit2's parsed index says)
        self._anywhere: bool | None = None  # a repository-wide or personal attribute file exists
        self._folders: dict[str, bool] = {}  # folder -> a .gitattributes is there or above it
        self._autocrlf: bool | None = None  # core.autocrlf converts on checkout (read once a scan)

    def autocrlf(self) -> bool:
        """Whether ``core.autocrlf`` makes checkout convert line endings (``_autocrlf``), read
        once for the scan: a big turn's end asks it of each of thousands of files."""
        if self._autocrlf is None:
            self._autocrlf = _autocrlf(self.repo)
        return self._autocrlf

    def may_set(self, path: str) -> bool:
        """Whether an attribute may be set for the repository path ``path`` (False: surely none)."""
        if self._anywhere is None:
            self._anywhere = self._global_files()
        return self._anywhere or self._in_folder(path.rpartition("/")[0])

    def _in_folder(self, folder: str) -> bool:
        known = self._folders.get(folder)
        if known is None:
            above = self._in_folder(folder.rpartition("/")[0]) if folder else False
            name = f"{folder}/.gitattributes" if folder else ".gitattributes"
            known = above or os.path.lexists(os.path.join(self.repo.workdir or "", name)) or self._indexed(name)
            self._folders[folder] = known
        return known

    def _indexed(self, name: str) -> bool:
        try:
            return self.indexed(name) if self.indexed is not None else name in self.repo.index
        except (pygit2.GitError, OSError):
            return True  # cannot tell: ask libgit2

    def _global_files(self) -> bool:
        """Whether an attribute file outside the work tree may apply: ``core.attributesFile``,
        ``info/attributes`` (of the repository and its common folder), the system's and the
        person's (libgit2's search paths)."""
        try:
            if self.repo.config["core.attributesFile"] is not None:
                return True
        except KeyError:
            pass
        files = [os.path.join(self.repo.path, "info", "attributes"),
                 os.path.join(gitenv.common_dir(self.repo.path), "info", "attributes")]
        for level, name in ((ConfigLevel.SYSTEM, "gitattributes"), (ConfigLevel.XDG, "attributes"),
                            (ConfigLevel.GLOBAL, "attributes")):
            files += [os.path.join(d, name) for d in (pygit2.settings.search_path[level] or "").split(os.pathsep) if d]
        return any(os.path.lexists(f) for f in files)


def _autocrlf(repo: pygit2.Repository) -> bool:
    """Whether ``core.autocrlf`` makes checkout convert line endings."""
    try:
        return str(repo.config["core.autocrlf"]).strip().lower() in ("true", "yes", "on", "1")
    except KeyError:  # ("input" converts only when a file is added, never on checkout)
        return False


def _converts(repo: pygit2.Repository, path: str, reach: Attributes | None = None) -> bool:
    """Whether checkout may write something other than the blob for ``path``."""
    if reach.autocrlf() if reach is not None else _autocrlf(repo):
        return True
    if reach is not None and not reach.may_set(path):
        return False
    return any(repo.get_attr(path, name) not in (None, False) for name in _ATTRIBUTES)


def _filtered(git: str, workdir: str, path: str, oid: pygit2.Oid) -> bytes:
    env = gitenv.clean()
    env["GIT_OPTIONAL_LOCKS"] = "0"
    proc = subprocess.run(
        [git, "--no-optional-locks", "cat-file", "--filters", f"--path={path}", str(oid)],
        cwd=workdir, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False,
    )
    if proc.returncode != 0:
        reason = proc.stderr.decode(errors="replace").strip().splitlines()
        raise NotKnown(f"git could not convert it for the work tree ({reason[-1] if reason else proc.returncode})")
    return proc.stdout


def worktree_form(
    repo: pygit2.Repository, git: str, index: pygit2.Index | None, path: str, reach: Attributes | None = None
) -> tuple[bytes, int] | None:
    """(bytes, mode) the clean file at repository path ``path`` has on disk, or None when the
    index has no file there that is on disk (``reach``: the scan's ``Attributes``, which
    spares the attribute lookups where no attribute file reaches). Raises ``NotKnown``."""
    found = _entry(index, path) if index is not None else None
    if found is None:
        return None
    oid, mode, size, skip_worktree = found
    if mode == _GITLINK or skip_worktree:
        return None
    try:
        content = cast(pygit2.Blob, repo[oid]).data
    except KeyError:
        return None
    if mode != _SYMLINK and _converts(repo, path, reach):  # checkout writes a link's target as it is
        content = _filtered(git, repo.workdir, path, oid)
    # git records size 0 for an entry it could not trust ("racily clean"; it compares content then)
    if size and size != len(content) & 0xFFFFFFFF:
        raise NotKnown(
            f"its content before the turn cannot be known exactly (git recorded {size} bytes on disk, "
            f"its checkout form has {len(content)}: a filter or line-ending setting)"
        )
    return content, mode
