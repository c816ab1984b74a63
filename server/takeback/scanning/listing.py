"""Listing a small work tree's dirty and untracked files in-process, with libgit2.

A bracket's git scanner (``scan.GitScanner``) needs, at begin and at end, the files that
differ from the user's index and the untracked files git does not ignore: what
``git diff-files`` and ``git ls-files -o --exclude-standard`` print. Either way the answer
costs a ``lstat`` of every tracked file and a read of every folder that is not ignored; git
adds two process starts (about 2 ms each, run side by side), which matter on small trees
only. For those ``list_dirty`` asks libgit2 the same question in-process: one
index-to-work-tree diff with untracked files (``git_diff_index_to_workdir``), split over two
threads by path (libgit2 runs without Python's lock, so the halves walk in parallel).

Read-only: no index update is asked for (no ``GIT_DIFF_UPDATE_INDEX``), so libgit2 writes
nothing; the user's index, config and refs stay byte-identical (tests check it).

It answers only where its answer is git's. Anything it cannot vouch for raises
``Unsupported`` and the scanner starts git as before:

* an index that is not version 2 (extended flags: skip-worktree, intent-to-add, sparse
  checkouts) or that libgit2 refuses (split index, sparse index: a ``GitError``), or, for a
  listing of the whole tree, one with more than ``MAX_ENTRIES`` entries (there git's own
  parallel listing is as fast). A listing of a few named files (those a tree watch saw
  touched, ``scan.GitScanner._relist``) is answered at any size: libgit2 diffs those paths
  alone against an index of their entries only, which ``indexfile`` reads out of the index
  file (a table of where each entry starts is kept, not libgit2's parsed index: 17 MB at
  100,000 entries), in about 1 ms at 100,000 entries, where each git process re-reads the
  whole index file: 50-60 ms; there the ignore files that
  count are the ``.gitignore`` of every folder above a named file, and a ``.gitattributes``
  in one of those folders, or a named path that is a folder, declines;
* a negated pattern (``!...``) in any ignore file git reads (every ``.gitignore`` in the
  walked folders, tracked, untracked or itself ignored; ``info/exclude``; the global
  excludes file): libgit2 1.9 and git disagree on some of them (a nested ``!keep.log``
  under a parent's ``*.log``; libgit2 issues #7283 and #7284). Without negations an entry
  is ignored when any pattern matches it or a folder above it, the same in both;
* content filters anywhere (a ``.gitattributes`` file tracked, untracked or ignored,
  ``info/attributes``, ``core.attributesFile`` or the global attributes file,
  ``core.autocrlf``): libgit2 settles a file whose timestamp moved but whose size did not by
  hashing it, git lists it; the two agree on what changed only when the bytes on disk are
  the bytes in the index;
* settings under which the file mode or name on disk is not the index's
  (``core.fileMode``/``core.symlinks`` false, ``core.ignoreCase``/``core.precomposeUnicode``
  true), ``core.sparseCheckout``, ``core.splitIndex``, ``index.sparse``,
  ``extensions.worktreeConfig``;
* a configuration libgit2 would read differently from git: git honours
  ``GIT_CONFIG_GLOBAL``/``GIT_CONFIG_SYSTEM``/``GIT_CONFIG_NOSYSTEM``, ``git -c`` (passed down
  in ``GIT_CONFIG_PARAMETERS``/``GIT_CONFIG_COUNT``) and the HOME of the moment; libgit2 reads
  the files under the HOME it saw at start. When the two sets of files differ, the files only
  one side reads must hold no ``core.*`` or ``include*`` setting (those are what can change
  the listing), and the default global ignore file must be the same file for both.

Assumed, not checked: git's system configuration is ``/etc/gitconfig`` (git built with the
usual prefix, as libgit2 assumes too).
"""

from __future__ import annotations

import bisect
import os
import stat
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import pygit2
from pygit2.enums import ConfigLevel, DiffOption
from pygit2.ffi import C, ffi

from .. import gitenv
from ..workspace.files import file_stamp
from . import indexfile

#: Largest index (entries) listed in-process; bigger trees start git. Measured on the
#: benchmark's trees (docs/performance.md): in-process is ahead below about 2,000 entries,
#: even at 2,000 and slightly behind from 3,000 (git's two processes also use both CPUs).
MAX_ENTRIES = 2000
#: Smallest share of the index under the workspace worth a second thread.
SPLIT_MIN_ENTRIES = 256

_FLAGS = (
    DiffOption.INCLUDE_UNTRACKED
    | DiffOption.RECURSE_UNTRACKED_DIRS  # every untracked file by name, as ls-files -o
    | DiffOption.INCLUDE_IGNORED  # only to see ignored .gitignore/.gitattributes files (not listed)
    | DiffOption.IGNORE_SUBMODULES  # as --ignore-submodules=all
    | DiffOption.SKIP_BINARY_CHECK  # never read a file to tell binary from text
)
_IGNORED = 6  # GIT_DELTA_IGNORED
_UNTRACKED = 7  # GIT_DELTA_UNTRACKED
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class Unsupported(Exception):
    """The in-process listing cannot promise git's answer here; ask git."""


# ---------------------------------------------------------------- the index file


def read_small_index(index_file: Path) -> bytes | None:
    """The index file's bytes if it is one libgit2 lists like git (version 2, at most
    ``MAX_ENTRIES`` entries, no ``.gitattributes`` path); None when there is no index.
    Raises ``Unsupported`` otherwise."""
    found = read_index(index_file, MAX_ENTRIES)
    if isinstance(found, int):
        raise Unsupported(f"{found} index entries")
    return found


def read_index(index_file: Path, max_entries: int) -> bytes | int | None:
    """``read_small_index``'s answer for an index of at most ``max_entries`` entries; for a
    bigger one (same checks) only its number of entries: its bytes are read once, in pieces,
    to look for a ``.gitattributes`` path, and not kept."""
    try:
        with open(index_file, "rb") as handle:
            header = handle.read(12)
            if len(header) < 12 or header[:4] != b"DIRC":
                raise Unsupported("not an index file")
            version = int.from_bytes(header[4:8], "big")
            entries = int.from_bytes(header[8:12], "big")
            if version != 2:
                raise Unsupported(f"index version {version}")
            if entries > max_entries:
                _no_attributes_path(handle)
                return entries
            data = header + handle.read()
    except FileNotFoundError:
        return None
    if _ATTRIBUTES_PATH in data:  # paths end with NUL; a false match only costs the fast path
        raise Unsupported("a .gitattributes file is tracked")
    return data


_ATTRIBUTES_PATH = b".gitattributes\x00"


def _no_attributes_path(handle: BinaryIO) -> None:
    tail = b""
    while chunk := handle.read(1 << 20):
        if _ATTRIBUTES_PATH in tail + chunk:
            raise Unsupported("a .gitattributes file is tracked")
        tail = chunk[-len(_ATTRIBUTES_PATH):]


def index_paths(data: bytes) -> list[bytes]:
    """The entry paths of a version-2 index, in index order (sorted by bytes)."""
    count = int.from_bytes(data[8:12], "big")
    paths: list[bytes] = []
    pos = 12
    for _ in range(count):
        if pos + 62 > len(data):
            raise Unsupported("truncated index")
        flags = (data[pos + 60] << 8) | data[pos + 61]
        start = pos + 62
        length = flags & 0xFFF
        end = data.index(b"\x00", start) if length == 0xFFF else start + length
        paths.append(data[start:end])
        pos += (62 + (end - start) + 8) & ~7
    return paths


# ---------------------------------------------------------------- configuration


def _as_bool(value: str | None) -> bool:
    if value is None:
        return False
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise Unsupported(f"not a boolean git reads the same way: {value!r}")


def xdg_git_dir(env: Mapping[str, str]) -> str | None:
    if env.get("XDG_CONFIG_HOME"):
        return os.path.join(env["XDG_CONFIG_HOME"], "git")
    if env.get("HOME"):
        return os.path.join(env["HOME"], ".config", "git")
    return None


def git_config_files(env: Mapping[str, str]) -> list[str]:
    """The configuration files git reads besides the repository's own, from the environment."""
    files: list[str] = []
    if not _as_bool(env.get("GIT_CONFIG_NOSYSTEM")):
        files.append(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    if "GIT_CONFIG_GLOBAL" in env:
        files.append(env["GIT_CONFIG_GLOBAL"])
    else:
        xdg = xdg_git_dir(env)
        if xdg:
            files.append(os.path.join(xdg, "config"))
        if env.get("HOME"):
            files.append(os.path.join(env["HOME"], ".gitconfig"))
    return files


def _libgit2_dirs(level: ConfigLevel) -> list[str]:
    return [d for d in (pygit2.settings.search_path[level] or "").split(os.pathsep) if d]


def _libgit2_config_files() -> list[str]:
    files: list[str] = []
    for level, name in (
        (ConfigLevel.SYSTEM, "gitconfig"),
        (ConfigLevel.XDG, "config"),
        (ConfigLevel.GLOBAL, ".gitconfig"),
        (ConfigLevel.PROGRAMDATA, "config"),
    ):
        files += [os.path.join(d, name) for d in _libgit2_dirs(level)]
    return files


def _influences_listing(path: str) -> bool:
    """Whether a configuration file sets anything that can change what is listed."""
    try:
        config = pygit2.Config(path)
        names = [entry.name.lower() for entry in config]
    except (pygit2.GitError, OSError, ValueError) as exc:
        raise Unsupported(f"unreadable configuration {path}: {exc}") from exc
    return any(n.startswith(("core.", "include.", "includeif.")) for n in names)


class _ConfigCheck:
    """Whether libgit2 reads the same settings as git, remembered while no file changed."""

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._verdict: str | None = None  # None: agrees; else the reason it does not

    def check(self) -> None:
        env = os.environ
        if any(name in env for name in ("GIT_CONFIG", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS")):
            raise Unsupported("configuration given in the environment")
        env_vars = tuple(
            env.get(name)
            for name in ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL")
        )
        git_files = git_config_files(env)
        lib_files = _libgit2_config_files()
        git_xdg = xdg_git_dir(env)
        lib_xdg = _libgit2_dirs(ConfigLevel.XDG)
        extra = [os.path.join(d, n) for d in [git_xdg, *lib_xdg] if d for n in ("ignore", "attributes")]
        watched = sorted(set(git_files + lib_files + extra))
        key = (env_vars, tuple(git_files), tuple(lib_files), tuple((p, file_stamp(p)) for p in watched))
        if key != self._key:
            self._verdict = self._judge(git_files, lib_files, git_xdg, lib_xdg)
            self._key = key
        if self._verdict is not None:
            raise Unsupported(self._verdict)

    @staticmethod
    def _judge(git_files: list[str], lib_files: list[str], git_xdg: str | None, lib_xdg: list[str]) -> str | None:
        def existing(paths: list[str]) -> set[str]:
            return {os.path.realpath(p) for p in paths if os.path.exists(p)}

        only_one_side = existing(git_files) ^ existing(lib_files)
        for path in sorted(only_one_side):
            if _influences_listing(path):
                return f"{path} is read by only one of git and libgit2 and sets core or include options"
        git_ignore = existing([os.path.join(git_xdg, "ignore")] if git_xdg else [])
        lib_ignore = existing([os.path.join(d, "ignore") for d in lib_xdg][:1])
        if git_ignore != lib_ignore:
            return "git and libgit2 would use different global ignore files"
        attributes = [os.path.join(d, "attributes") for d in [git_xdg, *lib_xdg] if d]
        if existing(attributes):
            return "a global attributes file exists"
        return None


def _config_allows(repo: pygit2.Repository) -> None:
    """Settings (as libgit2 reads them, which ``_ConfigCheck`` made git's) the listing needs."""
    config = repo.config

    def value(name: str) -> str | None:
        try:
            return str(config[name])
        except KeyError:
            return None

    def flag(name: str, default: bool) -> bool:
        raw = value(name)
        return default if raw is None else _as_bool(raw)

    autocrlf = value("core.autocrlf")
    if autocrlf is not None and autocrlf.strip().lower() not in _FALSE:  # true or input
        raise Unsupported("core.autocrlf")
    if value("core.attributesFile") is not None:
        raise Unsupported("core.attributesFile")
    for name, needed in (
        ("core.fileMode", True),
        ("core.symlinks", True),
        ("core.ignoreCase", False),
        ("core.precomposeUnicode", False),
        ("core.sparseCheckout", False),
        ("core.splitIndex", False),
        ("index.sparse", False),
        ("extensions.worktreeConfig", False),
    ):
        if flag(name, needed) != needed:
            raise Unsupported(f"{name} is {not needed}")


def _attributes_files(repo: pygit2.Repository) -> list[str]:
    return sorted({str(Path(repo.path) / "info" / "attributes"), str(Path(gitenv.common_dir(repo.path)) / "info" / "attributes")})


# ---------------------------------------------------------------- ignore files


class _Negations:
    """Whether ignore files hold a negated pattern, remembered per file while it is unchanged."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[tuple | None, bool]] = {}

    def check(self, paths: list[str]) -> None:
        for path in paths:
            stamp = file_stamp(path)
            known = self._seen.get(path)
            if known is None or known[0] != stamp:
                known = (stamp, stamp is not None and _has_negation(path))
                self._seen[path] = known
            if known[1]:
                raise Unsupported(f"a negated pattern in {path}")


def _has_negation(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return any(line.startswith(b"!") for line in handle.read().splitlines())
    except IsADirectoryError:
        return False
    except OSError as exc:
        raise Unsupported(f"unreadable ignore file {path}: {exc}") from exc


def _global_ignore_files(repo: pygit2.Repository) -> list[str]:
    """info/exclude and the excludes file (``core.excludesFile``, else the XDG default)."""
    files = [str(Path(gitenv.common_dir(repo.path)) / "info" / "exclude")]
    try:
        configured = str(repo.config["core.excludesFile"])
    except KeyError:
        configured = None
    if configured:
        files.append(os.path.expanduser(configured))
    else:
        files += [os.path.join(d, "ignore") for d in _libgit2_dirs(ConfigLevel.XDG)][:1]
    return files


# ---------------------------------------------------------------- splitting the walk


def _children_in_index(paths: list[bytes], base: bytes) -> set[bytes]:
    """First path components below ``base`` (b"" or b"dir/") among the sorted ``paths``."""
    lo = bisect.bisect_left(paths, base)
    hi = bisect.bisect_left(paths, base[:-1] + b"0") if base else len(paths)  # "0" follows "/"
    names: set[bytes] = set()
    cut = len(base)
    for path in paths[lo:hi]:
        end = path.find(b"/", cut)
        names.add(path[cut:] if end < 0 else path[cut:end])
    return names


def split_plan(paths: list[bytes], prefix: bytes, min_entries: int) -> list[tuple[bytes, bytes, set[bytes]]] | None:
    """Where to split the walk of the tree under ``prefix`` (b"" or b"dir/") into two halves
    of about as many index entries: the folders on the way to the median index path, each
    with the component the median path takes there and the names the index holds in it.
    None when the tree is too small to be worth a second thread. Depends on the index only."""
    lo = bisect.bisect_left(paths, prefix)
    hi = bisect.bisect_left(paths, prefix[:-1] + b"0") if prefix else len(paths)
    if hi - lo < max(min_entries, 2):
        return None
    parts = paths[(lo + hi) // 2][len(prefix) :].split(b"/")
    plan = []
    base = prefix
    for component in parts:
        plan.append((base, component, _children_in_index(paths, base)))
        base = base + component + b"/"
    return plan


def split_paths(root: bytes, plan: list[tuple[bytes, bytes, set[bytes]]]) -> list[list[bytes]] | None:
    """Two lists of literal paths that between them cover the planned tree once each.

    At each folder of the plan, the names before the median path's component go to the first
    list and those after it to the second; the last folder's own component goes second too.
    A folder's names are what is on disk now plus what the index holds (deleted files), so
    untracked files are covered. Only real folders are split (no symlink, no nested
    repository); anything unusual answers None (then one walk does it all).
    """
    first: list[bytes] = []
    second: list[bytes] = []
    for depth, (base, component, in_index) in enumerate(plan):
        last = depth == len(plan) - 1
        folder = os.path.join(root, base) if base else root
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None
            on_disk = set(os.listdir(folder))
        except OSError:
            return None
        if b".git" in on_disk and base:
            return None  # a nested repository or submodule: not split
        for name in (on_disk - {b".git"}) | in_index:
            if name < component:
                first.append(base + name)
            elif name > component or last:
                second.append(base + name)
    if not first or not second:
        return None
    return [sorted(first), sorted(second)]


# ---------------------------------------------------------------- the diff


_LOOK_UP_MAX = 32  # past this many named paths one walk of the index costs less than a diff each
_PATTERN_BYTES = frozenset(b"*?[]\\!#")  # what libgit2's pathspec would read as a pattern


def _look_up(
    repo: pygit2.Repository, paths: list[bytes], index: pygit2.Index | None = None,
) -> list[tuple[int, bytes]]:
    """``_diff`` of the few literal ``paths`` a watch saw touched, one path at a time.

    With a literal path list (``DISABLE_PATHSPEC_MATCH``) libgit2's index iterator visits every
    entry and checks it against the list (perf at 100,000 entries: ~1 ms a call, whatever the
    count of paths); given one path as a pathspec it starts and ends its walks at that path
    (the pathspec's prefix is the iterators' range): ~0.4 ms. A pathspec is a pattern, so a
    path is passed so only when it is one as it stands: none of ``*?[]\\!#``, no control
    character or space at its ends, no trailing ``/``; otherwise, or past ``_LOOK_UP_MAX`` paths,
    the literal list is used. ``index``: the index to diff against (``indexfile``'s small index
    of those paths' entries), else the repository's own."""
    against: dict[str, Any] = {} if index is None else {"index": index}
    if len(paths) > _LOOK_UP_MAX or not all(_plain(p) for p in paths):
        return _diff(repo, paths, **against)
    found: dict[bytes, int] = {}
    for path in paths:
        for status, raw in _diff(repo, [path], literal=False, **against):
            found.setdefault(raw, status)  # a folder named beside a file in it lists that file once
    return [(status, raw) for raw, status in found.items()]


def _plain(path: bytes) -> bool:
    """Whether libgit2's pathspec of ``path`` matches exactly what the literal path does."""
    return (
        bool(path) and path[0] > 0x20 and path[-1] > 0x20 and not path.endswith(b"/")
        and min(path) >= 0x20 and _PATTERN_BYTES.isdisjoint(path)
    )


def _diff(
    repo: pygit2.Repository, pathlist: list[bytes] | None, literal: bool = True, index: pygit2.Index | None = None,
) -> list[tuple[int, bytes]]:
    """(status, path) of index-to-work-tree deltas (dirty, deleted, conflicted, untracked,
    ignored), optionally limited to ``pathlist`` (literal paths: files, or folders with all
    they hold; or, not ``literal``, libgit2 pathspecs: ``_look_up``), against ``index`` or
    else the repository's own index."""
    opts = ffi.new("git_diff_options *")
    pygit2.errors.check_error(C.git_diff_options_init(opts, 1))
    opts.flags = int(_FLAGS | (DiffOption.DISABLE_PATHSPEC_MATCH if pathlist is not None and literal else 0))
    keep = []
    if pathlist is not None:
        keep = [ffi.new("char[]", p) for p in pathlist]
        strings = ffi.new("char *[]", keep)
        opts.pathspec.strings = strings
        opts.pathspec.count = len(keep)
    out = ffi.new("git_diff **")
    # A NULL index: libgit2 re-reads the repository's index if the file changed (and checks
    # racily clean entries by content, as git does). Nothing is written.
    err = C.git_diff_index_to_workdir(out, repo._repo, ffi.NULL if index is None else index._index, opts)
    pygit2.errors.check_error(err)  # raises for any error code
    diff = pygit2.Diff.from_c(bytes(ffi.buffer(out)[:]), repo)
    del keep
    return [(int(delta.status), delta.new_file.raw_path) for delta in diff.deltas]


class Lister:
    """In-process listing for one repository; kept between calls (``ScanCache``) so libgit2's
    parsed index, ignore files and configuration, and what was worked out from them, are
    reused while their files are unchanged."""

    def __init__(self, git_dir: str, workdir: str) -> None:
        self.git_dir = git_dir
        self.workdir = workdir  # as git finds it (``discovery.work_tree``): not always the git folder's parent
        self.common_dir = gitenv.common_dir(git_dir)  # a linked worktree: its index here, its configuration there
        self._config = _ConfigCheck()
        self._repos: list[pygit2.Repository] = []
        self._repos_key: tuple | None = None
        self._settings: tuple[list[str], list[str]] | None = None  # ignore and attributes files
        self._index_stamp: tuple | None = None
        self._index: bytes | int | Unsupported | None = None  # int: a big index's entry count
        self._paths_key: bytes | None = None
        self._paths: list[bytes] = []
        self._ignore_files: list[bytes] = []
        self._plans: dict[bytes, list | None] = {}
        self._negations = _Negations()
        self._table: indexfile.IndexTable | None = None

    def repository(self) -> pygit2.Repository:
        """The repository the listing's first walk uses (also fine for reading objects)."""
        if not self._repos:
            self._repos = [self._open()]
            self._repos_key = self._current_key()
        return self._repos[0]

    def _open(self) -> pygit2.Repository:
        repo = pygit2.Repository(self.git_dir)
        repo.workdir = self.workdir  # in memory only: libgit2 writes no core.worktree
        return repo

    def _current_key(self) -> tuple:
        return (file_stamp(os.path.join(self.common_dir, "config")), self._config._key)

    def _walkers(self, count: int) -> list[pygit2.Repository]:
        # libgit2 caches what it read of the configuration (the core.* switches, the ignore
        # file's name) for a repository's lifetime: reopen when a configuration file changed.
        key = self._current_key()
        if key != self._repos_key:
            self._repos = []
            self._repos_key = key
            self._settings = None
        while len(self._repos) < count:
            self._repos.append(self._open())
        return self._repos[:count]

    def _read_index(self, index_file: str) -> bytes | int | None:
        stamp = file_stamp(index_file)
        if stamp is None or stamp != self._index_stamp:
            try:
                self._index = read_index(Path(index_file), MAX_ENTRIES)
            except Unsupported as exc:
                self._index = exc
            self._index_stamp = stamp
        if isinstance(self._index, Unsupported):
            raise self._index
        return self._index

    def list_dirty(self, workdir: str, prefix: str, only: list[bytes] | None = None) -> list[bytes]:
        """Repository-relative paths under ``prefix`` that git would list as dirty or
        untracked (folders of nested repositories end with "/"), or of those the files
        ``only`` names (relative to ``prefix``) are. Raises ``Unsupported`` or
        ``pygit2.GitError`` when git must be asked instead.

        Past ``MAX_ENTRIES`` index entries only ``only`` is answered (the few files a watch saw
        touched): libgit2 diffs those paths alone against their entries (``_looked_up``),
        where git would re-read the whole index file once per process."""
        data = self._read_index(os.path.join(self.git_dir, "index"))  # first: decides big trees
        if isinstance(data, int) and only is None:
            raise Unsupported(f"{data} index entries")
        self._config.check()
        repos = self._walkers(1)
        if self._settings is None:
            _config_allows(repos[0])
            self._settings = (_global_ignore_files(repos[0]), _attributes_files(repos[0]))
        global_ignores, attributes = self._settings
        if any(os.path.exists(p) for p in attributes):
            raise Unsupported("info/attributes")
        root = os.fsencode(workdir.rstrip(os.sep))
        prefix_b = os.fsencode(prefix) + b"/" if prefix else b""
        if isinstance(data, int):
            assert only is not None
            wanted = [prefix_b + p for p in only]
            self._negations.check([os.fsdecode(p) for p in _rules_above(root, wanted)] + global_ignores)
            return self._kept(root, self._looked_up(repos[0], wanted) if wanted else [])
        self._index_changed(data)
        self._negations.check([os.fsdecode(os.path.join(root, p)) for p in self._ignore_files] + global_ignores)
        if prefix_b not in self._plans:
            self._plans[prefix_b] = split_plan(self._paths, prefix_b, SPLIT_MIN_ENTRIES) if _cpus() > 1 else None
        plan = self._plans[prefix_b]
        lists = split_paths(root, plan) if plan and only is None else None
        if only is not None:
            found = _diff(repos[0], [prefix_b + p for p in only]) if only else []
        elif lists is None:
            found = _diff(repos[0], [prefix_b[:-1]] if prefix_b else None)
        else:
            found = self._parallel(lists)
        return self._kept(root, found)

    def ready(self) -> None:
        """Do ahead what the first look-up at a few files would do first (a long-lived
        process's upkeep, off any hook's path): the configuration checked, the repository the
        look-ups use opened under it, and the index file's table of entries built
        (``indexfile``: about 60 ms at 100,000 entries, built again only when the file
        changes), or, for an index that reader declines, libgit2's parsed index (about 0.1 s;
        libgit2 then keeps it). Raises ``Unsupported`` or ``pygit2.GitError`` as a listing
        would."""
        self._config.check()
        repo = self._walkers(1)[0]
        if self.table() is None:
            repo.index.read(False)

    def table(self) -> indexfile.IndexTable | None:
        """The table of the index file's entries (``indexfile``), built again if the file
        changed; None when there is no index or that reader declines it."""
        if self._table is None or not self._table.current():
            self._table = indexfile.IndexTable.build(os.path.join(self.git_dir, "index"))
        return self._table

    def entries(self, paths: list[str] | None) -> pygit2.Index | None:
        """The user's index as far as ``paths`` (repository paths; None: all of it) need:
        those paths' entries read out of the file (``indexfile``), or, where that reader
        declines the file, the index the repository keeps parsed (libgit2 reads the file again
        only when its stamp or checksum changed). None: parse the file."""
        table = self.table()
        if table is None:
            held = self.repository().index
            held.read(False)
            return held
        return table.index_for([os.fsencode(p) for p in paths]) if paths is not None else None

    def indexed(self, path: str) -> bool:
        """Whether the user's index has an entry at the repository path ``path``."""
        table = self.table()
        found = table.contains(os.fsencode(path)) if table is not None else None
        return path in self.repository().index if found is None else found

    def ignore_check(self) -> Callable[[str], bool]:
        """Whether git ignores a repository path (a folder ends with "/"), by its ignore rules
        alone (tracked or not: ``git check-ignore --no-index``), asked of libgit2 on the
        repository the look-ups use, which reads an ignore file again only when it changed: no
        process, no tree scan, nothing written. For one moment (a hook's call): the settings
        and the global ignore files are checked here, once; each path's ``.gitignore`` files
        above it once per folder. Raises (here, or for one path) ``Unsupported`` where libgit2
        may answer otherwise than git (settings the two read differently, ``_ConfigCheck``; a
        negated pattern in an ignore file that counts: a ``.gitignore`` above the path,
        ``info/exclude``, the excludes file), or ``pygit2.GitError``."""
        self._config.check()
        repo = self._walkers(1)[0]
        self._negations.check(_global_ignore_files(repo))
        root = os.fsencode(self.workdir.rstrip(os.sep))
        seen: set[bytes] = set()  # folders whose .gitignore holds no negation

        def ignored(path: str) -> bool:
            folder, fresh = os.path.dirname(os.fsencode(path.rstrip("/"))), []
            while folder not in seen:
                fresh.append(folder)
                if not folder:
                    break
                folder = os.path.dirname(folder)
            self._negations.check([os.fsdecode(os.path.join(root, f, b".gitignore") if f else os.path.join(root, b".gitignore"))
                                   for f in fresh])
            seen.update(fresh)
            return bool(repo.path_is_ignored(path))

        return ignored

    def _looked_up(self, repo: pygit2.Repository, wanted: list[bytes]) -> list[tuple[int, bytes]]:
        """``_look_up`` of a big index's ``wanted`` paths against an index of their entries
        alone (libgit2 then never holds the whole index parsed), or, where ``indexfile``
        declines the file, against the repository's own."""
        table = self.table()
        small = table.index_for(wanted) if table is not None else None
        if small is None:
            return _look_up(repo, wanted)
        with indexfile.lent(repo, small):
            return _look_up(repo, wanted, small)

    def _index_changed(self, data: bytes | None) -> None:
        """Work out again what depends on a small index's paths, if it changed."""
        if data is None:
            self._paths, self._ignore_files, self._paths_key, self._plans = [], [], None, {}
        elif data[-20:] != self._paths_key:
            self._paths = index_paths(data)
            self._ignore_files = [p for p in self._paths if p == b".gitignore" or p.endswith(b"/.gitignore")]
            self._paths_key = data[-20:]
            self._plans = {}

    def _kept(self, root: bytes, found: list[tuple[int, bytes]]) -> list[bytes]:
        """The listed paths of a diff's deltas (ignored ones dropped, after their checks)."""
        listed: list[bytes] = []
        more_ignores: list[str] = []
        for status, raw in found:
            name = raw.rsplit(b"/", 1)[-1]
            if name == b".gitattributes" and status in (_UNTRACKED, _IGNORED):
                raise Unsupported("an untracked or ignored .gitattributes file")
            if name == b".gitignore" and status in (_UNTRACKED, _IGNORED):
                more_ignores.append(os.fsdecode(os.path.join(root, raw)))
            if status != _IGNORED:
                listed.append(raw)
        self._negations.check(more_ignores)
        return listed

    def _parallel(self, lists: list[list[bytes]]) -> list[tuple[int, bytes]]:
        repos = self._walkers(2)
        results: list[list[tuple[int, bytes]] | Exception | None] = [None]

        def other() -> None:
            try:
                results[0] = _diff(repos[1], lists[0])
            except Exception as exc:  # noqa: BLE001 - handed to the caller below
                results[0] = exc

        worker = threading.Thread(target=other, name="takeback-listing", daemon=True)
        worker.start()
        try:
            mine = _diff(repos[0], lists[1])
        finally:
            worker.join()
        theirs = results[0]
        if isinstance(theirs, Exception):
            raise theirs
        assert theirs is not None
        return theirs + mine


def _rules_above(root: bytes, paths: list[bytes]) -> list[bytes]:
    """The ignore files that decide whether any of ``paths`` (repository paths of files) is
    ignored: a ``.gitignore`` in each folder above them, whether it exists or not. A path that
    is a folder on disk, or has a ``.gitattributes`` in a folder above it, is declined (a
    folder's listing, or conversions, would need what only the whole tree shows)."""
    found: set[bytes] = set()
    for path in paths:
        full = os.path.join(root, path)
        if os.path.isdir(full) and not os.path.islink(full):
            raise Unsupported("a touched path is a folder")
        folder = os.path.dirname(path)
        while True:
            base = os.path.join(root, folder) if folder else root
            if os.path.lexists(os.path.join(base, b".gitattributes")):
                raise Unsupported("a .gitattributes file above a touched file")
            found.add(os.path.join(base, b".gitignore"))
            if not folder:
                break
            folder = os.path.dirname(folder)
    return sorted(found)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
