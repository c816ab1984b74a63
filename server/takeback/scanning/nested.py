"""Repositories inside a git work tree: submodules and nested repositories, scanned on their own.

The git scanner lists neither what changed inside a submodule (git is asked with
``--ignore-submodules=all``) nor inside an untracked nested repository (git shows it as one
folder, ``sub/``). Each such repository that has a work tree on disk when a turn begins gets a
git scanner of its own (``scan.make_scanner`` on its folder, which may have nested ones in
turn); its changes join the turn under the folder's path, so undo restores them like any
other file and never touches the nested ``.git``. What cannot be recorded gets a notice naming
the repository, never silence:

* a repository that appears during the turn (a ``git clone``, a submodule checked out), or that
  is gone or no longer a repository at its end: its files are not recorded;
* a folder where git finds no work tree of its own (a broken ``.git``) or that is a symlink.

As for the outer repository, each nested repository's index is copied at begin (into the open
turn's file, ``brackets.py``), so what is committed inside one during the turn is recorded too.

Nested repositories are found three ways: untracked ones from git's listing, submodules from
``.gitmodules``, and any other gitlink (a repository added with ``git add sub``, which git
warns about but allows, with no ``.gitmodules`` entry) from the index (``gitlinks``: a byte
search of the index file, answered again only when the index file changes).
"""

from __future__ import annotations

import os
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .indexcopy import IndexCopy

#: A scanner for the repository at a workspace-relative folder, or why there is none.
OpenScanner = Callable[[str], Any]


_GITLINK_MODE = b"\x00\x00\xe0\x00"  # 0o160000, big-endian, as an index entry holds it
_gitlinks_seen: dict[str, tuple[tuple | None, frozenset[str]]] = {}  # index path -> (its stamp, gitlinks)


def gitlinks(index_file: str, git: str, cwd: str, env: dict[str, str]) -> frozenset[str]:
    """The repository-relative paths of the gitlinks (mode 160000 entries) in the index file.

    Cheap on an index without any (one read and one byte search: about 10 ms at 100,000
    entries), remembered until the index file changes. A hit is checked where it stands: the
    entry's mode, then its name's length from the entry's flags and the NUL that ends it (index
    versions 2 and 3). For version 4 (prefix-compressed names) git lists the entries instead."""
    try:
        st = os.stat(index_file)
    except OSError:
        return frozenset()
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    known = _gitlinks_seen.get(index_file)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        with open(index_file, "rb") as handle:
            data = handle.read()
    except OSError:
        return frozenset()
    found: set[str] = set()
    if _GITLINK_MODE in data:
        version = struct.unpack_from(">I", data, 4)[0] if len(data) >= 12 else 0
        if version in (2, 3):
            found = _gitlinks_in(data)
        else:
            found = _gitlinks_listed(git, cwd, env)
    result = frozenset(found)
    _gitlinks_seen[index_file] = (stamp, result)
    return result


def _gitlinks_in(data: bytes) -> set[str]:
    """Gitlink names in a version 2 or 3 index's bytes (each hit verified as an entry)."""
    found: set[str] = set()
    at = data.find(_GITLINK_MODE, 12)
    while at != -1:
        flags_at = at + 36  # mode, uid, gid, size (4 bytes each), the object id (20)
        if flags_at + 2 <= len(data):
            (flags,) = struct.unpack_from(">H", data, flags_at)
            name_at = flags_at + (4 if flags & 0x4000 else 2)  # version 3's extended flags
            length = flags & 0xFFF
            end = data.find(b"\x00", name_at) if length == 0xFFF else name_at + length
            if 0 < end - name_at and end < len(data) and data[end] == 0 and b"\x00" not in data[name_at:end]:
                found.add(os.fsdecode(data[name_at:end]))
        at = data.find(_GITLINK_MODE, at + 1)
    return found


def _gitlinks_listed(git: str, cwd: str, env: dict[str, str]) -> set[str]:
    """Gitlink names as git lists the index (any index version)."""
    try:
        out = subprocess.run(
            [git, "--no-optional-locks", "-c", "core.fsmonitor=false", "ls-files", "--stage", "-z", "--full-name", ":/"],
            cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL, check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return set()
    found = set()
    for line in out.split(b"\x00"):
        meta, tab, name = line.partition(b"\t")
        if tab and meta.startswith(b"160000 "):
            found.add(os.fsdecode(name))
    return found


def _prefixed(sub: str, function: Callable) -> Callable:
    return lambda rel, *rest: function(f"{sub}/{rel}", *rest)


def begin(folders: set[str], open_scanner: OpenScanner, capture: Callable) -> tuple[dict[str, dict], dict[str, Path]]:
    """Each nested repository's begin snapshot (or why it has none), by folder; and the index
    file of each (theirs too, at any depth), for the open turn's file to copy."""
    snapshots: dict[str, dict] = {}
    indexes: dict[str, Path] = {}
    for sub in sorted(folders):
        scanner = open_scanner(sub)
        if isinstance(scanner, str):
            snapshots[sub] = {"unscanned": scanner}
            continue
        snapshots[sub] = {"scan": scanner.begin(_prefixed(sub, capture))}
        indexes[sub] = scanner.index_file()
        indexes.update({f"{sub}/{inner}": path for inner, path in scanner.nested_indexes.items()})
    return snapshots, indexes


def end(
    snapshots: dict[str, dict], copies: dict[str, IndexCopy], folders_now: set[str], open_scanner: OpenScanner,
    capture: Callable, capture_content: Callable, notices: list[str],
) -> list:
    """The changes inside the nested repositories since ``snapshots`` (paths under their folders;
    ``copies``: their indexes as they were then), with a notice in ``notices`` for each
    repository or file that could not be recorded."""
    changes: list = []
    for sub in sorted(set(snapshots) | folders_now):
        snapshot = snapshots.get(sub)
        if snapshot is None:
            notices.append(f"{sub}: a git repository not scanned when the turn began (new, or ignored then); "
                           "its files are not recorded")
            continue
        if "unscanned" in snapshot:
            notices.append(f"{sub}: a nested git repository whose changes are not recorded ({snapshot['unscanned']})")
            continue
        scanner = open_scanner(sub)
        if isinstance(scanner, str):
            notices.append(f"{sub}: a nested git repository at begin, not at the end of the turn ({scanner}); "
                           "what changed in it is not recorded")
            continue
        inner = {folder[len(sub) + 1:]: copy for folder, copy in copies.items() if folder.startswith(f"{sub}/")}
        found = scanner.end(
            snapshot["scan"], copies.get(sub), _prefixed(sub, capture), _prefixed(sub, capture_content), inner
        )
        for change in found:
            change.path = f"{sub}/{change.path}"
        changes += found
        notices += [f"in {sub}: {notice}" for notice in scanner.notices]
    return changes
