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
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .brackets import IndexCopy

#: A scanner for the repository at a workspace-relative folder, or why there is none.
OpenScanner = Callable[[str], Any]


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
