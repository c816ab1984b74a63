"""Finding what changed on disk between a bracket's begin and end.

Two scanners share one interface:

* ``GitScanner`` for a workspace inside a git work tree. git's index already knows which
  files are clean, so the scan asks which files are dirty or untracked: on a small tree
  in-process with libgit2 (``listing.py``: no process started, nothing written), otherwise,
  or whenever libgit2 might answer differently, the user's git, read-only and with optional
  locks off (``git diff-files`` and ``git ls-files -o --exclude-standard``, run side by
  side). Only those files are read. Clean tracked files are known by their index blob; the
  engine keeps a copy of the index file from begin (``index_file``; ``brackets.py`` holds it)
  so their before-image survives a ``git add`` or commit made during the bracket. Cost: about
  one ``git status``, less on small trees. In a long-lived process a ``TreeWatch``
  (``watch.py``) can tell that nothing changed since the last listing; then it is used again,
  or brought up to date by asking about the few files the watch saw touched (in-process at any
  size, with the index libgit2 keeps parsed; the index at begin comes from there too while
  the index file is unchanged). A process that answers first (the resident) sets the watch up
  after an answer (``GitScanner.warm``), never on a bracket's path.
  The repository and its work tree are found from the workspace as git finds them (a ``.git``
  file or symlink, ``core.worktree``; ``discovery.py``, which keeps the answer between
  brackets); clean files' before-images are converted as checkout writes them
  (``checkout.py``); nested repositories and submodules get scanners of their own (``nested.py``).
* ``WalkScanner`` for any other folder (or one its enclosing repository ignores): walks the
  tree, nested repositories included, honouring ``.gitignore`` at every level and
  ``info/exclude``, and keeps a stat cache in the store so unchanged files are not read again.

Both hand back ``(path, before, after)`` triples of ``FileVersion`` (None = absent), read the
after-image from disk, and keep in ``notices`` what they left out of the turn and why. A file
not visible at begin that looks added while the ignore rules changed is the turn's only if it
was born after begin (``birth.py``).

What a scan cannot record it sets aside, with a reason the person reads in the turn's notices
(``Skipped``; the begin snapshot keeps its own, so the end leaves those paths alone too): a
name that is not valid UTF-8 (no record can hold it), a file or folder that cannot be read
(permission denied, removed while being read, a FIFO, socket or device where a file was).
Nothing is ever read through a symlinked folder: a file behind one is absent, as git sees it
(a folder replaced by a symlink is its files deleted and the link added).
"""

from __future__ import annotations

import errno
import functools
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pathspec
import pygit2

from .. import gitenv
from ..core.models import FileVersion, same_version
from ..errors import cannot_read
from ..storage import atomic
from ..workspace import birth
from ..workspace.files import Workspace, file_stamp, mode_of
from . import checkout, discovery, nested, watch
from .indexcopy import IndexCopy

if TYPE_CHECKING:
    from .listing import Lister

try:
    from . import listing
except ImportError:  # a pygit2 without its cffi layer: git is always asked
    listing = None  # type: ignore[assignment]

log = logging.getLogger("takeback.scan")

Capture = Callable[[str], FileVersion | None]
CaptureContent = Callable[[str, bytes, int], FileVersion]

# A file whose ctime is this close to when we looked at it may change again within the
# same timestamp tick; it is never trusted from the stat cache ("racily clean" in git).
_RACY_NS = 50_000_000

#: How a git scanner lists dirty and untracked files: "auto" (in-process with libgit2 where
#: it answers as git does, else git), "git" (always start git) or "libgit2" (in-process only,
#: an error where it cannot; for tests and measurements).
LISTING = "auto"


@dataclass
class Changed:
    path: str
    before: FileVersion | None
    after: FileVersion | None


class Skipped(dict[str, str]):
    """What a scan could not record: a path (a file, or a folder with all it holds) -> why."""

    def covers(self, rel: str) -> bool:
        """Whether ``rel`` or a folder above it was set aside."""
        if not self:
            return False
        while rel:
            if rel in self:
                return True
            rel = rel.rpartition("/")[0]
        return False

    def notices(self) -> list[str]:
        """One line per path set aside, as the turn shows it."""
        return [f"{shown(path)}: not recorded, {reason}" for path, reason in sorted(self.items())]


def shown(rel: str) -> str:
    """A path as a person reads it on one line: bytes that are not UTF-8 as ``\\xNN`` escapes,
    control characters (a newline in a name) as Python writes them (``\\n``)."""
    text = os.fsencode(rel).decode("utf-8", "backslashreplace")
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def name_problem(rel: str) -> str | None:
    """Why a path cannot be recorded by its name, or None (cheap for the usual ASCII names)."""
    if rel.isascii():
        return None
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # os.fsdecode's escapes for bytes that are not UTF-8
        return "its name is not valid UTF-8 (rename it to have it recorded)"
    return None


_STRERRORS = frozenset(os.strerror(code) for code in errno.errorcode)  # as git prints them under LC_ALL=C

_SPECIAL = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


def special_kind(st: os.stat_result) -> str | None:
    """``"a FIFO"``, ``"a socket"``, ``"a device"`` for what is neither file, link nor folder."""
    return next((name for test, name in _SPECIAL if test(st.st_mode)), None)


class _Look:
    """Reads the files of one scan for the scanner: sets aside what cannot be recorded
    (``skipped``), and never reads through a symlinked folder (each folder asked once)."""

    def __init__(self, workspace: Workspace, capture: Capture, skipped: Skipped, known: KnownVersions | None = None) -> None:
        self.root = workspace.root
        self.workspace = workspace
        self.known = known
        self.capture = capture
        self.skipped = skipped
        self._behind_link: dict[str, bool] = {}  # folder -> whether a symlink is on the way

    def behind_link(self, rel: str) -> bool:
        """Whether a folder on the way to ``rel`` is a symlink."""
        folder = rel.rpartition("/")[0]
        if not folder:
            return False
        known = self._behind_link.get(folder)
        if known is None:
            known = self._behind_link[folder] = self.workspace.link_above(rel) is not None
        return known

    def version(self, rel: str) -> FileVersion | None:
        """The file at ``rel`` now (None: absent); when it cannot be recorded, None and ``rel``
        in ``skipped``."""
        problem = name_problem(rel)
        if problem is not None:
            self.skipped[rel] = problem
            return None
        if self.behind_link(rel):
            return None
        try:
            version = (
                self.capture(rel) if self.known is None else self.known.version(self.workspace.at(rel), rel, self.capture)
            )
        except OSError as exc:
            self.skipped[rel] = cannot_read(exc)
            return None
        if version is None:
            self.special(rel)
        return version

    def special(self, rel: str) -> bool:
        """Whether a FIFO, socket or device stands at ``rel`` (then it is set aside)."""
        try:
            kind = special_kind(os.lstat(self.root / rel))
        except OSError:
            return False
        if kind is not None:
            self.skipped[rel] = f"it is {kind}, not a file"
        return kind is not None


_found_git: tuple[str | None, str | None] = (None, None)  # (PATH, what was found on it)


def _git_executable() -> str | None:
    """Where git is on PATH (looked up again when PATH changes, or when it is gone)."""
    global _found_git
    path = os.environ.get("PATH")
    known_path, known = _found_git
    if known is None or path != known_path or not os.path.exists(known):
        _found_git = (path, shutil.which("git"))
    return _found_git[1]


class GitScanner:
    """Uses the user's git (read-only) to list dirty and untracked files."""

    kind = "git"
    before_save: Callable[[], None] | None = None  # set like the walk scanner's; this one writes no cache to call it for

    def __init__(
        self,
        workspace: Workspace,
        repo: pygit2.Repository,
        git: str,
        skip: Callable[[str], bool] | None,
        lister: listing.Lister | None = None,
        cache: ScanCache | None = None,
    ) -> None:
        self.workspace = workspace
        self.skip = skip
        self.repo = repo
        self.git = git
        self.lister = lister
        self.cache = cache
        self.notices: list[str] = []  # what the last ``end`` left out of the turn, and why
        self.nested_indexes: dict[str, Path] = {}  # set by ``begin``: nested repositories' index files
        self.workdir = os.path.realpath(repo.workdir)
        self.prefix = os.path.relpath(workspace.root, self.workdir).replace(os.sep, "/")
        if self.prefix == ".":
            self.prefix = ""
        self.skipped = Skipped()  # what the last begin or end could not record

    def _repo_path(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def _keep(self, found: list[bytes]) -> set[str]:
        paths: set[str] = set()
        for raw in found:
            if not raw:
                continue
            rel = os.fsdecode(raw)  # a nested repository's folder ends with "/"
            if self.skip is None or not self.skip(rel.rstrip("/")):
                paths.add(rel)
        return paths

    def _unreadable_in(self, stderr: bytes) -> dict[str, str]:
        """Folders and files git said it could not read (its messages under ``LC_ALL=C``):
        ``warning: could not open directory 'x/': Permission denied`` from ``ls-files``,
        ``x/y: Permission denied`` from ``diff-files``. Paths there are the repository's."""
        cut = len(self.prefix) + 1 if self.prefix else 0
        found: dict[str, str] = {}
        for line in stderr.decode("utf-8", "surrogateescape").splitlines():
            if line.startswith("warning: could not open directory '"):
                path, quote, why = line[len("warning: could not open directory '"):].rpartition("': ")
                if not quote:  # git cut the message short: a path longer than it can name
                    path, why = line[len("warning: could not open directory '"):], "path too long"
                path = path.rstrip("/")
            elif line.startswith("warning: "):
                continue  # another warning (an ignore file git would not open): no path unread
            else:
                path, _, why = line.rpartition(": ")  # diff-files: "path: <strerror>"
                if why not in _STRERRORS:
                    continue
            if not path or (self.prefix and not path.startswith(self.prefix + "/")):
                continue
            rel = path[cut:]
            if self.skip is None or not self.skip(rel):
                found[rel] = f"it could not be read ({why.lower()})"
        return found

    def _list_split(self) -> tuple[set[str], set[str]]:
        """(dirty and untracked files, folders of nested repositories and submodules)."""
        listed = self._list()
        folders = {p for p in listed if p.endswith("/")}
        return listed - folders, {p[:-1] for p in folders} | self._submodules()

    def _submodules(self) -> set[str]:
        """Workspace-relative folders of the checked-out submodules: those ``.gitmodules`` names,
        and every other gitlink in the index (a repository added without ``.gitmodules``)."""
        paths = set(nested.gitlinks(str(self.index_file()), self.git, self.workdir, gitenv.clean()))
        gitmodules = os.path.join(self.workdir, ".gitmodules")
        if os.path.isfile(gitmodules):
            try:
                config = pygit2.Config(gitmodules)
                paths.update(str(entry.value) for entry in config if entry.name.endswith(".path"))
            except (pygit2.GitError, OSError, ValueError):
                pass
        inside = f"{self.prefix}/" if self.prefix else ""
        return {
            p[len(inside):] for p in paths
            if p.startswith(inside) and os.path.lexists(os.path.join(self.workdir, p, ".git"))
            and (self.skip is None or not self.skip(p[len(inside):]))
        }

    def _nested_scanner(self, sub: str) -> GitScanner | str:
        """A git scanner for the repository in folder ``sub``, or why there is none."""
        root = self.workspace.abs(sub)
        if os.path.realpath(root) != str(root):
            return "its folder is a symlink"
        skip = self.skip
        scanner = make_scanner(
            Workspace(root), Path(os.devnull), True, None if skip is None else lambda rel: skip(f"{sub}/{rel}")
        )
        if not isinstance(scanner, GitScanner) or scanner.workdir != str(root):
            return "git finds no work tree of its own there"
        return scanner

    def _list(self) -> set[str]:
        """Workspace-relative paths that are dirty (against the index) or untracked: the last
        listing again if the tree's watch saw no change since it was made and the files that
        decide what git lists (the index, ignore and configuration files) are as they were.
        What git said it could not read goes into ``skipped``."""
        if self.cache is None or not self.cache.wants_watch:
            paths, unreadable = self._list_now()
        else:
            key = self._listing_key()
            listed = self.cache.listing(key)
            if listed is None:
                previous = self.cache.before_listing(str(self.workspace.root), self._ignored, self.skip, key)
                listed = self._relist(*previous) if previous is not None else None
                if listed is None:
                    listed = self._list_now()
                self.cache.after_listing(key, *listed)
            paths, unreadable = listed
        self.skipped.update(unreadable)
        return paths

    def _relist(
        self, paths: set[str], unreadable: dict[str, str], touched: set[str],
    ) -> tuple[set[str], dict[str, str]] | None:
        """The last listing brought up to date by asking git about the ``touched`` files only
        (what the watch saw change since that listing began): git's own answer for those paths,
        at the cost of the change. None when git could not answer (then the tree is listed)."""
        asked = sorted(t for t in touched if self.skip is None or not self.skip(t))
        try:
            found, unread = self._list_paths(asked) if asked else (set(), {})
        except (RuntimeError, OSError) as exc:
            log.debug("listing the touched files failed, listing the tree: %s", exc)
            return None
        if self.cache is not None:
            self.cache.relisted += 1
        return (paths - touched) | found, {k: v for k, v in unreadable.items() if k not in touched} | unread

    def warm(self) -> None:
        """Set up the tree's watch and keep a listing made under it (and make the look-ups ready:
        ``Lister.ready``), or bring that listing up to date with the files touched since
        (``ScanCache.behind``: an edit step's end asks git nothing about the file it named). A
        long-lived engine's upkeep after an answer: the next bracket asks git about no file."""
        if self.cache is None or not self.cache.cold:
            if self.cache is not None and self.cache.behind():
                self._list()
            return
        deferred, self.cache.defer_watch = self.cache.defer_watch, False
        try:
            self._list()
        finally:
            self.cache.defer_watch = deferred
        if self.lister is not None and self.cache.watching:
            try:
                self.lister.ready()
            except (listing.Unsupported, pygit2.GitError, OSError) as exc:
                log.debug("the look-ups were not made ready: %s", exc)

    def _ignored(self, rel: str) -> bool:
        try:
            return self.repo.path_is_ignored(self._repo_path(rel))
        except pygit2.GitError:
            return False  # watched: one folder too many costs nothing but its events

    def _listing_key(self) -> tuple:
        """What a listing depends on besides the work tree itself."""
        index = os.path.join(self.repo.path, "index")
        env = tuple(os.environ.get(n) for n in ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"))
        files = [index, *self._rule_files]
        return (self.workdir, self.prefix, LISTING, env, tuple(map(file_stamp, files)), _index_trailer(index))

    @functools.cached_property
    def _rule_files(self) -> list[str]:
        """The files that decide what git ignores, besides the ``.gitignore`` files a listing shows:
        ``info/exclude``, the configuration files, the global excludes file, and the workspace's top
        ``.gitignore`` (unlisted once it ignores itself). Once a scanner (a begin or end stamps them twice)."""
        git_dir = self.repo.path
        files = [os.path.join(git_dir, "info", "exclude"), os.path.join(git_dir, "config"),
                 os.path.join(git_dir, "config.worktree"), str(self.workspace.abs(".gitignore"))]
        common = gitenv.common_dir(git_dir)
        if common != git_dir:  # a linked worktree
            files += [os.path.join(common, "config"), os.path.join(common, "info", "exclude")]
        if listing is not None:
            files += listing.git_config_files(os.environ)
            xdg = listing.xdg_git_dir(os.environ)
            if xdg:
                files.append(os.path.join(xdg, "ignore"))
        files += [os.path.expanduser(f) for f in self.repo.config.get_multivar("core.excludesFile") if f is not None]
        return files

    def _list_now(self) -> tuple[set[str], dict[str, str]]:
        return self._list_paths(None)

    def _list_paths(self, only: list[str] | None) -> tuple[set[str], dict[str, str]]:
        """The listing of the whole tree, or of the files ``only`` names: in-process where that
        answer is git's, else by git."""
        if LISTING != "git" and self.lister is not None:
            try:
                found = self.lister.list_dirty(
                    self.workdir, self.prefix, None if only is None else [os.fsencode(p) for p in only],
                )
            except (listing.Unsupported, pygit2.GitError, OSError) as exc:
                if LISTING == "libgit2":
                    raise
                log.debug("listing with git instead of in-process: %s", exc)
            except (AttributeError, TypeError, ValueError) as exc:  # e.g. a pygit2 whose cffi layer changed
                if LISTING == "libgit2":
                    raise
                log.warning("in-process listing failed, asking git: %r", exc)
            else:
                cut = len(os.fsencode(self.prefix)) + 1 if self.prefix else 0
                return self._keep([raw[cut:] for raw in found]), {}
        elif LISTING == "libgit2":
            raise RuntimeError("no in-process listing for this scanner")
        return self._run(only)

    def _run(self, only: list[str] | None = None) -> tuple[set[str], dict[str, str]]:
        """git's listing of the whole tree, or of the files ``only`` names (literal paths)."""
        env = gitenv.clean()
        env["GIT_OPTIONAL_LOCKS"] = "0"
        env["LC_ALL"] = "C"
        env["GIT_LITERAL_PATHSPECS"] = "1"
        # core.fsmonitor names a program to run: never one a work tree's .git/config chose
        base = [self.git, "--no-optional-locks", "-c", "core.quotePath=false", "-c", "core.fsmonitor=false"]
        tail = ["--", *only] if only is not None else []
        commands = [
            [*base, "diff-files", "-z", "--name-only", "--relative", "--ignore-submodules=all", *tail],
            [*base, "ls-files", "-z", "--others", "--exclude-standard", *tail],
        ]
        procs = [
            subprocess.Popen(
                cmd, cwd=self.workspace.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
            )
            for cmd in commands
        ]
        found: list[bytes] = []
        unreadable: dict[str, str] = {}
        for cmd, proc in zip(commands, procs, strict=True):
            out, err = proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError(f"git {cmd[len(base)]} failed: {err.decode(errors='replace').strip()}")
            found += out.split(b"\x00")
            if err:
                unreadable.update(self._unreadable_in(err))
        return self._keep(found), unreadable

    def _index_entries(self, index_file: Path | None, paths: list[str] | None = None) -> pygit2.Index | None:
        """The index in ``index_file``, or as much of it as ``paths`` (repository paths) need.
        For the user's own index: the in-process lister's (``Lister.entries``), else parsed
        from the file (tens of ms at 100,000 entries), and not kept."""
        if index_file is None or not index_file.exists():
            return None
        if self.lister is not None and index_file == self.index_file():
            found = self.lister.entries(paths)
            if found is not None:
                return found
        return pygit2.Index(str(index_file))

    def _in_index(self, path: str) -> bool:
        """Whether the user's index has an entry at the repository path ``path``."""
        return self.lister.indexed(path) if self.lister is not None else path in self.repo.index

    def index_file(self) -> Path:
        """The user's index, of which the engine keeps a copy from begin to end."""
        return Path(self.repo.path) / "index"

    def begin(self, capture: Capture) -> dict:
        """The snapshot ``end`` compares with: the content of every dirty or untracked file
        (and when, under which ignore rules, it was taken), and what could not be recorded
        (``skipped``)."""
        rules = _RuleStamp.now(self._rule_files)
        self.skipped = Skipped()
        dirty, folders = self._list_split()
        look = _Look(self.workspace, capture, self.skipped, self.cache.known if self.cache is not None else None)
        # A listed path where a folder stands (a tracked file replaced by a folder) is absent.
        versions = {p: look.version(p) for p in sorted(dirty)}
        nested_snapshots, self.nested_indexes = nested.begin(folders, self._nested_scanner, capture)
        snapshot = {
            "kind": self.kind,
            "dirty": {p: (v.model_dump() if v else None) for p, v in versions.items() if p not in self.skipped},
            **rules.saved(),
            "nested": nested_snapshots,
        }
        if self.skipped:
            snapshot["skipped"] = dict(self.skipped)
        return snapshot

    def _index_at_begin(
        self, begin_copy: IndexCopy | None,
    ) -> tuple[Callable[[list[str]], pygit2.Index | None], set[str]]:
        """The index as it was at begin (loaded when first asked, with the repository paths
        that will be looked up in it), and the paths staged since."""
        index_file = self.index_file()
        unchanged = begin_copy.same_as(index_file) if begin_copy is not None else not index_file.exists()
        if unchanged:
            # The index was not rewritten during the bracket: one index serves as both, and it
            # is read only if some path needs it (a large index takes tens of ms to parse).
            loaded: list[pygit2.Index | None] = []

            def lazily(paths: list[str]) -> pygit2.Index | None:
                if not loaded:
                    loaded.append(self._index_entries(index_file, paths))
                return loaded[0]

            return lazily, set()
        begin_loaded = begin_copy.parsed() if begin_copy is not None else None
        return (lambda _paths: begin_loaded), self._staged_during(begin_loaded, self._index_entries(index_file))

    def end(
        self, snapshot: dict, begin_copy: IndexCopy | None, capture: Capture, capture_content: CaptureContent,
        nested_copies: dict[str, IndexCopy] | None = None,
    ) -> list[Changed]:
        """What changed since ``snapshot`` (``begin_copy``: the index as it was then;
        ``nested_copies``: the nested repositories' indexes, by folder)."""
        dirty_before: dict[str, FileVersion | None] = {
            p: (FileVersion.model_validate(v) if v else None) for p, v in snapshot["dirty"].items()
        }
        self.notices = []
        self.skipped = Skipped(snapshot.get("skipped", {}))
        dirty_now, folders_now = self._list_split()
        look = _Look(self.workspace, capture, self.skipped, self.cache.known if self.cache is not None else None)
        begin_index, staged = self._index_at_begin(begin_copy)
        reach = checkout.Attributes(self.repo, self._in_index)  # which folders an attribute file reaches, this scan
        changes: list[Changed] = []
        candidates = sorted(set(dirty_before) | dirty_now | staged)
        from_index = [self._repo_path(rel) for rel in candidates if rel not in dirty_before]
        for rel in candidates:
            problem = name_problem(rel)  # a staged path comes from the index, not the listing
            if problem is not None:
                self.skipped[rel] = problem
                continue
            if self.skipped.covers(rel):
                continue
            # A file replaced by a folder is a deletion (the files in the folder are listed too).
            if rel in dirty_before:
                before = dirty_before[rel]
            else:
                try:
                    before = self._from_index(begin_index(from_index), rel, capture_content, reach)
                except checkout.NotKnown as exc:
                    self.notices.append(f"{rel}: not recorded: {exc}; undo leaves it as it is")
                    continue
            # The disk, also for a file clean now (the index holds its cleaned form) or ignored
            # now (an agent's ignore rule does not hide its edit).
            after = look.version(rel)
            if rel in self.skipped or same_version(before, after):
                continue
            changes.append(Changed(rel, before, after))
        # A path absent from the index at begin, untracked and not listed then, yet listed now:
        # created during the turn, or ignored then and shown now by new ignore rules (or the
        # agent's `git add -f`). Only a file born after begin is the turn's.
        rules_moved = _RuleStamp.load(snapshot).moved(self._rule_files, changes)
        changes = _older_files_left_out(
            self.workspace, changes, snapshot,
            lambda rel: rules_moved or (rel in staged and self._ignored(rel)), self.notices,
        )
        if rules_moved and all(c.path != ".gitignore" for c in changes) and self._hides_itself(".gitignore"):
            self.notices.append(
                ".gitignore: changed during the turn and ignores itself, so neither it nor the files it "
                "hides are recorded; an undo leaves them as they are ('git status --ignored' shows them)"
            )
        if "nested" in snapshot:  # not in a snapshot taken before nested repositories were scanned
            changes += nested.end(
                snapshot["nested"], nested_copies or {}, folders_now, self._nested_scanner, capture, capture_content,
                self.notices,
            )
        return changes

    def _hides_itself(self, rel: str) -> bool:
        """Whether the file at ``rel`` is there and git ignores it (and it is not tracked)."""
        if not os.path.isfile(self.workspace.abs(rel)) or not self._ignored(rel):
            return False
        try:
            return not self._in_index(self._repo_path(rel))
        except (pygit2.GitError, OSError):
            return True

    def _staged_during(self, begin: pygit2.Index | None, now: pygit2.Index | None) -> set[str]:
        """Paths whose index entry moved during the bracket (an agent's ``git add`` or commit):
        clean again at end, so neither git listing names them. Only called when the index file
        was rewritten."""
        old = {} if begin is None else {e.path: (e.id, e.mode) for e in begin}
        new = {} if now is None else {e.path: (e.id, e.mode) for e in now}
        prefix = f"{self.prefix}/" if self.prefix else ""
        out: set[str] = set()
        for path in set(old) | set(new):
            if old.get(path) != new.get(path) and path.startswith(prefix):
                rel = path[len(prefix):]
                if self.skip is None or not self.skip(rel):
                    out.add(rel)
        return out

    def _from_index(
        self, index: pygit2.Index | None, rel: str, capture_content: CaptureContent, reach: checkout.Attributes,
    ) -> FileVersion | None:
        """The file as it was on disk while clean against ``index`` (raises ``checkout.NotKnown``)."""
        found = checkout.worktree_form(self.repo, self.git, index, self._repo_path(rel), reach)
        return capture_content(rel, *found) if found is not None else None


_CLOCK_REALTIME_COARSE = getattr(time, "CLOCK_REALTIME_COARSE", 5)  # Linux's number for it


def _file_clock_ns() -> int | None:
    """Now, on the clock Linux stamps file times with (the coarse real-time clock, up to a tick
    behind ``time.time_ns()``), or None where there is no such clock."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return time.clock_gettime_ns(_CLOCK_REALTIME_COARSE)
    except OSError:
        return None


@dataclass
class _RuleStamp:
    """When a bracket began (also on the file clock), and how the ignore-rule files outside the
    work tree were then."""

    began_ns: int | None
    stamps: list | None
    began_file_ns: int | None = None

    @classmethod
    def now(cls, files: list[str]) -> _RuleStamp:
        return cls(time.time_ns(), cls._stamps(files), _file_clock_ns())

    @classmethod
    def load(cls, snapshot: dict) -> _RuleStamp:
        return cls(snapshot.get("began_ns"), snapshot.get("rules"), snapshot.get("began_file_ns"))

    @staticmethod
    def _stamps(files: list[str]) -> list:
        return [list(stamp) if stamp else None for stamp in map(file_stamp, files)]

    def saved(self) -> dict:
        return {"began_ns": self.began_ns, "rules": self.stamps, "began_file_ns": self.began_file_ns}

    def moved(self, files: list[str], changes: list[Changed]) -> bool:
        """Whether the ignore rules may differ from begin's: a ``.gitignore`` changed, or one of
        ``files`` did. False for a snapshot from before these were kept (nothing to compare)."""
        if self.began_ns is None:
            return False
        return self.stamps != self._stamps(files) or any(c.path.rsplit("/", 1)[-1] == ".gitignore" for c in changes)


def _older_files_left_out(
    workspace: Workspace, changes: list[Changed], snapshot: dict, suspect: Callable[[str], bool], notices: list[str]
) -> list[Changed]:
    """``changes`` without the files that look added but that the turn did not create: a
    ``suspect`` path (not visible at begin, maybe because it was ignored then) counts as added
    only if the file was born after the turn began. A file born earlier, or whose birth the file
    system does not tell, is left out of the turn with a notice: undo never deletes it. Any other
    file that looks added but whose inode nothing touched since before begin (its ctime, which
    creating, writing, renaming or linking a file moves, is older than begin on the file clock)
    was there all along, unseen at begin (in a folder that could not be read then, say): left
    out the same way."""
    began = snapshot.get("began_ns")
    if began is None:
        return changes
    untouched_before = snapshot.get("began_file_ns")
    kept = []
    for change in changes:
        if change.before is None and change.after is not None:
            if suspect(change.path):
                born = birth.born_ns(workspace.abs(change.path))
                if born is None:
                    notices.append(f"{change.path}: ignored when the turn began and visible now; whether it existed "
                                   "before the turn is not known, so it is not recorded (undo leaves it)")
                    continue
                if born <= began:
                    notices.append(f"{change.path}: existed before the turn (ignored then, visible now): "
                                   "not recorded as added (undo leaves it)")
                    continue
            elif untouched_before is not None and _changed_ns(workspace.abs(change.path)) < untouched_before:
                notices.append(f"{change.path}: there before the turn, untouched by it, but not seen when it began "
                               "(in a folder that could not be read, say): not recorded as added (undo leaves it)")
                continue
        kept.append(change)
    return kept


def _changed_ns(path: Path) -> int:
    """The ctime of ``path`` (the link itself for a symlink); gone or unreadable counts as now."""
    try:
        return os.lstat(path).st_ctime_ns
    except OSError:
        return time.time_ns()


def exclude_file(root: Path) -> Path | None:
    """``info/exclude`` of the repository whose work tree is ``root`` (its git folder found as
    git finds it, ``discovery.work_tree``; a linked worktree's is in the common git folder), or None."""
    found = discovery.work_tree(root)
    if found is None or found[1] != str(root):
        return None
    return Path(gitenv.common_dir(found[0])) / "info" / "exclude"


class IgnoreRules:
    """.gitignore files at every level, plus ``info/exclude`` when the folder is a work tree."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}

    def spec_for(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        if rel_dir not in self._specs:
            lines: list[str] = []
            folder = self.root / rel_dir if rel_dir else self.root
            try:
                lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:  # none, or one that cannot be read (a path too long, permission denied)
                pass
            exclude = exclude_file(self.root) if not rel_dir else None
            if exclude is not None:
                try:
                    lines += exclude.read_text(errors="replace").splitlines()
                except (FileNotFoundError, NotADirectoryError):
                    pass
            self._specs[rel_dir] = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        return self._specs[rel_dir]

    def ignored(self, rel: str, is_dir: bool, parents: list[str]) -> bool:
        """Deepest .gitignore with a matching rule decides (as git does)."""
        for base in reversed(parents):
            spec = self.spec_for(base)
            if spec is None:
                continue
            sub = rel[len(base) + 1 :] if base else rel
            result = spec.check_file(sub + "/" if is_dir else sub)
            if result.include is not None:
                return bool(result.include)
        return False


def walk_files(
    root: Path, skip: Callable[[str], bool] | None = None, skipped: Skipped | None = None
) -> Iterator[tuple[str, os.stat_result]]:
    """Every regular file and symlink under ``root`` that .gitignore does not exclude, nested
    repositories' files included (their ``.git`` excepted); symlinks are never followed; FIFOs,
    sockets and devices are passed over, as git does. A folder that is not ignored but cannot
    be read, or whose name is not UTF-8, goes into ``skipped``."""
    rules = IgnoreRules(root)
    stack: list[tuple[str, list[str]]] = [("", [""])]
    while stack:
        rel_dir, parents = stack.pop()
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as entries:
                items = list(entries)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            if skipped is not None and rel_dir:
                skipped[rel_dir] = cannot_read(exc)
            continue
        for item in items:
            if item.name == ".git":
                continue
            rel = f"{rel_dir}/{item.name}" if rel_dir else item.name
            if skip is not None and skip(rel):
                continue
            try:
                st = item.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            except OSError as exc:
                if skipped is not None and not rules.ignored(rel, False, parents):
                    skipped[rel] = cannot_read(exc)
                continue
            if stat.S_ISDIR(st.st_mode):
                if rules.ignored(rel, True, parents):
                    continue
                if skipped is not None and name_problem(item.name):
                    skipped[rel] = name_problem(item.name)  # type: ignore[assignment]
                    continue
                stack.append((rel, [*parents, rel]))
            elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                if not rules.ignored(rel, False, parents):
                    yield rel, st


def _sig(st: os.stat_result) -> list[int]:
    return [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, mode_of(st)]


class WalkScanner:
    """Walks the folder; a stat cache in the store avoids re-reading unchanged files."""

    kind = "walk"
    before_save: Callable[[], None] | None = None  # called before the cache is written

    def __init__(self, workspace: Workspace, cache_file: Path, skip: Callable[[str], bool] | None) -> None:
        self.workspace = workspace
        self.cache_file = cache_file
        self.skip = skip
        self.skipped = Skipped()  # what the last begin or end could not record
        self.notices: list[str] = []  # what the last ``end`` left out of the turn, and why
        self.nested_indexes: dict[str, Path] = {}  # none: nested repositories are walked

    def _rule_files(self) -> list[str]:
        """The ignore-rule file besides the ``.gitignore`` files the walk reads."""
        exclude = exclude_file(self.workspace.root)
        return [str(exclude)] if exclude is not None else []

    def _load_cache(self) -> dict[str, list]:
        try:
            data = json.loads(self.cache_file.read_text())
            return data if isinstance(data, dict) else {}
        except (FileNotFoundError, ValueError):
            return {}

    def _save_cache(self, cache: dict[str, list]) -> None:
        if self.before_save is not None:
            self.before_save()
        atomic.write(self.cache_file, json.dumps(cache, separators=(",", ":")).encode())

    def _state(self, look: _Look) -> dict[str, FileVersion | None]:
        cache = self._load_cache()
        fresh: dict[str, list] = {}
        state: dict[str, FileVersion | None] = {}
        now = time.time_ns()
        for rel, st in walk_files(self.workspace.root, self.skip, self.skipped):
            sig = _sig(st)
            version = _cached_version(cache.get(rel), sig)
            if version is not None:
                fresh[rel] = cache[rel]
            else:
                version = look.version(rel)
                if version is None:
                    continue
                fresh[rel] = [sig, version.model_dump(), now]
            state[rel] = version
        self._save_cache(fresh)
        return state

    def index_file(self) -> Path | None:
        return None  # no git index here

    def first_copy(self, limit: int, max_file_bytes: int) -> tuple[int, int] | None:
        """What the next ``begin`` copies into the store when it is the folder's first (no stat
        cache yet: every file is read and stored), counted from a walk that only stats, up to
        ``limit`` bytes: (files, bytes) once more than ``limit`` bytes would be copied (the
        count stops there), else None (not the first begin, or small enough)."""
        if self.cache_file.exists():
            return None
        files = total = 0
        for _rel, st in walk_files(self.workspace.root, self.skip, Skipped()):
            if stat.S_ISREG(st.st_mode) and st.st_size <= max_file_bytes:
                files += 1
                total += st.st_size
                if total > limit:
                    return files, total
        return None

    def begin(self, capture: Capture) -> dict:
        rules = _RuleStamp.now(self._rule_files())
        self.skipped = Skipped()
        state = self._state(_Look(self.workspace, capture, self.skipped))
        snapshot = {"kind": self.kind, "files": {p: v.model_dump() for p, v in state.items() if v}, **rules.saved()}
        if self.skipped:
            snapshot["skipped"] = dict(self.skipped)
        return snapshot

    def end(
        self, snapshot: dict, begin_copy: IndexCopy | None, capture: Capture, capture_content: CaptureContent,
        nested_copies: dict[str, IndexCopy] | None = None,
    ) -> list[Changed]:
        self.notices = []
        before = {p: FileVersion.model_validate(v) for p, v in snapshot["files"].items()}
        self.skipped = Skipped(snapshot.get("skipped", {}))
        look = _Look(self.workspace, capture, self.skipped)
        after = self._state(look)
        changes = []
        for rel in sorted(set(before) | set(after)):
            b, a = before.get(rel), after.get(rel)
            if same_version(b, a) or self.skipped.covers(rel) or name_problem(rel):
                continue
            if a is None and b is not None:
                a = look.version(rel)  # gone, or ignored now: an agent's ignore rule does not hide its edit
                if rel in self.skipped:
                    continue  # a FIFO, socket or device where the file was: not a deletion
            if not same_version(b, a):
                changes.append(Changed(rel, b, a))
        rules_moved = _RuleStamp.load(snapshot).moved(self._rule_files(), changes)
        return _older_files_left_out(self.workspace, changes, snapshot, lambda rel: rules_moved, self.notices)


def snapshot_kind(snapshot: dict) -> str | None:
    """Which scanner took a begin snapshot (``GitScanner.kind`` or ``WalkScanner.kind``): the one
    that must compare it at the end. A snapshot is plain JSON data kept in the open turn's file;
    only this module knows its keys, the others ask these functions."""
    kind = snapshot.get("kind")
    return kind if isinstance(kind, str) else None


def snapshot_paths(snapshot: dict) -> list[str]:
    """The paths a begin snapshot names: what git listed as dirty, or every file of a walk."""
    return list(snapshot.get("dirty") or snapshot.get("files") or {})


def snapshot_sees(snapshot: dict, rel: str, now: FileVersion | None) -> bool:
    """Whether a scan's end compared with this begin snapshot would find ``rel`` changed, now
    that it holds ``now``: it differs from what the snapshot keeps for it, or (not kept) it is
    there now (a walk), or it was clean at begin (git, which is asked only of changed paths)."""
    kept = snapshot.get("dirty") if "dirty" in snapshot else snapshot.get("files") or {}
    if isinstance(kept, dict) and rel in kept:
        data = kept[rel]
        return not same_version(FileVersion.model_validate(data) if data else None, now)
    return snapshot.get("kind") == GitScanner.kind or now is not None


def snapshot_versions(snapshot: dict) -> Iterator[dict]:
    """Every file version a scanner's begin snapshot names (nested repositories' too): the
    content gc must keep while the turn is open."""
    yield from (v for v in [*snapshot.get("dirty", {}).values(), *snapshot.get("files", {}).values()] if v)
    for inner in snapshot.get("nested", {}).values():
        if "scan" in inner:
            yield from snapshot_versions(inner["scan"])


def _cached_version(cached: object, sig: list) -> FileVersion | None:
    """The version a stat-cache entry ``[sig, version, when]`` vouches for, if its file has that
    stat now and was not racily clean; None for anything else (a cache that is not valid is
    data to ignore, never a reason to fail). Its key is only ever matched to a walked path."""
    try:
        if _vouched(cached[0], sig, cached[2]):  # type: ignore[index]
            return FileVersion.model_validate(cached[1])  # type: ignore[index]
    except (TypeError, IndexError, KeyError, ValueError):
        pass
    return None


def _vouched(then: object, sig: list, when: int) -> bool:
    """Whether a version captured at ``when`` (ns) of a file whose stat was ``then`` still holds
    for a file whose stat is ``sig`` now: the same stat, and its last change (ctime) well
    before the capture, so no write in the same timestamp tick can hide ("racily clean")."""
    return then == sig and sig[1] < when - _RACY_NS


class KnownVersions:
    """The versions a long-lived engine's git scans captured, by path, with the file's stat just
    before and when (``ScanCache.known``).

    A shell step's begin captures every dirty or untracked file (the before-images its end
    compares with) and its end reads them again: each read, hashed and stored at every Bash
    call though most did not change since the last step (about 3 ms of a step at 100,000 files
    with 20 such files, issue 18). A version is used again under the walk scanner's stat-cache
    rule (``_vouched``), and only while the store still holds its content (``has``: another
    process's gc keeps only what the log, open turns and the walk's cache name)."""

    MAX = 10_000  # paths kept (past it, forgotten at once: a tree of that many dirty files lists anyway)

    def __init__(self, has: Callable[[str], bool]) -> None:
        self.has = has
        self._kept: dict[str, tuple[list[int], FileVersion, int]] = {}

    def version(self, path: str, rel: str, capture: Capture) -> FileVersion | None:
        """``capture(rel)``, or the version kept for ``rel`` (at ``path``) when it still holds
        (see above)."""
        try:
            sig = _sig(os.lstat(path))
        except OSError:
            self._kept.pop(rel, None)
            return capture(rel)
        kept = self._kept.get(rel)
        if kept is not None and _vouched(kept[0], sig, kept[2]) and (kept[1].withheld or self.has(kept[1].oid)):
            return kept[1]
        when = time.time_ns()
        version = capture(rel)
        if version is None:
            self._kept.pop(rel, None)
            return None
        if len(self._kept) >= self.MAX:
            self._kept.clear()
        self._kept[rel] = (sig, version, when)
        return version


def _index_trailer(index_file: str) -> bytes | None:
    try:
        with open(index_file, "rb") as handle:
            handle.seek(-20, os.SEEK_END)
            return handle.read(20)
    except OSError:
        return None


# Files whose change alters what git lists for other paths: the tree is listed again.
_RULE_NAMES = frozenset({".gitignore", ".gitattributes", ".gitmodules", ".git"})


class ScanCache:
    """What the scanners of one engine keep between brackets in one process (used under the
    store's lock, so by one thread at a time): the in-process lister of the user's repository,
    with the repository opened once (libgit2 then re-reads its index and ignore files only
    when they change); and, with ``watch_tree`` (a long-lived process), a watch on the work tree and
    the last listing, used again while the watch sees no change."""

    @property
    def wants_watch(self) -> bool:
        """Whether listings go through the watch (a long-lived engine where watching works)."""
        return self._watching

    @property
    def watching(self) -> bool:
        return self._watch is not None

    def __init__(self, watch_tree: bool = False, has: Callable[[str], bool] | None = None) -> None:
        self._key: tuple | None = None
        # the versions its git scans captured (``KnownVersions``; ``has``: whether the store holds a blob)
        self.known = KnownVersions(has) if watch_tree and has is not None else None
        self._lister: listing.Lister | None = None
        self._watching = watch_tree
        self._watch: watch.TreeWatch | None = None
        # Set by a process that answers first (the resident process): a watch is never set up
        # on a bracket's path (a tree of 100,000 files takes most of a second), only by
        # ``GitScanner.warm`` after the answer; until then each listing is made afresh.
        self.defer_watch = False
        self._listed: tuple[tuple, frozenset[str], dict[str, str]] | None = None
        self.work_tree = discovery.KeptWorkTree()  # the repository and work tree, kept while their stamps hold
        self.reused = 0  # listings answered from the last one (for the benchmark's report)
        self.relisted = 0  # listings made from the last one and the files touched since

    def listing(self, key: tuple) -> tuple[set[str], dict[str, str]] | None:
        """The last listing (paths, and what git could not read), if it was made under ``key``
        and nothing changed under the tree since it began."""
        if self._listed is None or self._watch is None or self._listed[0] != key:
            return None
        if not self._watch.quiet():
            return None  # kept: ``before_listing`` may still update it
        self.reused += 1
        return set(self._listed[1]), dict(self._listed[2])

    def before_listing(
        self, root: str, ignored: Callable[[str], bool], skip: Callable[[str], bool] | None, key: tuple | None = None,
    ) -> tuple[set[str], dict[str, str], set[str]] | None:
        """Mark the watch (set up on first use) just before the tree is listed. When the last
        listing was made under ``key`` and the watch knows the few files touched since it
        began (none of them a file that changes what git ignores or how it reads files),
        answers that listing and those files: asking git about them alone is enough."""
        previous, self._listed = self._listed, None
        if not self._watching:
            return None
        if self.defer_watch and (self._watch is None or self._watch.root != root):
            return None
        try:
            if self._watch is None or self._watch.root != root:
                self.close()
                self._watch = watch.TreeWatch(root, ignored, skip)
            touched = self._watch.mark()
        except (watch.Unavailable, OSError) as exc:
            log.info("not watching %s (each bracket lists the tree): %s", root, exc)
            self._watching = False
            self.close()
            return None
        if previous is None or key is None or previous[0] != key or touched is None:
            return None
        if any(path.rpartition("/")[2] in _RULE_NAMES for path in touched):
            return None
        return set(previous[1]), dict(previous[2]), touched

    def touched_since(self, root: str, ns: int) -> set[str] | None:
        """Every file under ``root`` that may have changed since ``ns`` (time.time_ns), as this
        process's watch saw it: known only when the watch's current period began by then (a
        superset: files touched since that began). None when not known."""
        found = self._watch
        if found is None or found.root != root or found.marked_ns is None or found.marked_ns > ns:
            return None
        return found.touched()

    def after_listing(self, key: tuple, paths: set[str], unreadable: dict[str, str]) -> None:
        if self._watch is not None:
            self._listed = (key, frozenset(paths), dict(unreadable))

    def behind(self) -> bool:
        """Whether the watch saw files touched since the kept listing was made, or cannot tell
        which (``GitScanner.warm`` then lists them)."""
        if self._watch is None or self._listed is None:
            return False
        touched = self._watch.touched()
        return touched is None or bool(touched)

    @property
    def cold(self) -> bool:
        """Whether a watch is wanted but not set up yet (``GitScanner.warm`` sets it up)."""
        return self._watching and self._watch is None

    def stop_watching(self) -> None:
        """List every time from now on (no watch is wanted)."""
        self._watching = False
        self.close()

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self._listed = None

    def lister(self, git_dir: str, workdir: str) -> Lister:  # (``listing`` here is the method below)
        st = os.stat(git_dir)
        key = (git_dir, workdir, st.st_dev, st.st_ino)  # a repository made anew at the same place is another
        if self._lister is None or key != self._key:
            self._key, self._lister = key, listing.Lister(git_dir, workdir)
            self.close()  # another repository: its tree is watched afresh
        return self._lister


#: A file name no rule names, only a rule that ignores every file (``*``) matches.
_PROBE = "takeback-probe-3f9c1e"


def _ignored_folder(repo: pygit2.Repository, root: Path, workdir: str) -> bool:
    """Whether the enclosing repository ignores the workspace folder itself, or every file in it
    (a dotfiles repository at $HOME whose ``.gitignore`` is ``*``, or ``*`` with ``!*/``): git
    lists nothing new in it, so it is walked."""
    rel = os.path.relpath(root, workdir)
    if rel == ".":
        return False
    rel = rel.replace(os.sep, "/")
    try:
        return repo.path_is_ignored(rel + "/") or repo.path_is_ignored(f"{rel}/{_PROBE}")
    except pygit2.GitError:
        return False


def make_scanner(
    workspace: Workspace,
    cache_file: Path,
    use_git: bool,
    skip: Callable[[str], bool] | None,
    cache: ScanCache | None = None,
) -> GitScanner | WalkScanner:
    """The git scanner when the workspace is in a git work tree that does not ignore it and git
    is installed; else the walk scanner."""
    git = _git_executable() if use_git else None
    found = None
    if git:
        found = cache.work_tree.get(workspace.root) if cache is not None else discovery.work_tree(workspace.root)
    if git and found:
        git_dir, workdir = found
        lister = None
        try:
            if listing is not None:
                lister = cache.lister(git_dir, workdir) if cache is not None else listing.Lister(git_dir, workdir)
                repo = lister.repository()
            else:
                repo = pygit2.Repository(git_dir)
                repo.workdir = workdir
        except (pygit2.GitError, OSError):
            repo = None
        if repo is not None and not _ignored_folder(repo, workspace.root, workdir):
            return GitScanner(workspace, repo, git, skip, lister, cache)
    return WalkScanner(workspace, cache_file, skip)
