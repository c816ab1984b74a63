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
* a folder where git finds no work tree of its own (a broken ``.git``) or that is a symlink;
* a file clean at begin and changed since, in a repository whose index changed during the turn
  (a commit or ``git add`` in it): no copy of a nested index is kept, so how the file was at
  begin is not known (``IndexStamp``); the file is left out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .checkout import NotKnown

#: A scanner for the repository at a workspace-relative folder, or why there is none.
OpenScanner = Callable[[str], Any]


@dataclass
class IndexStamp:
    """A nested repository's index as it was at begin: its size and checksum, not a copy."""

    size: int
    trailer: bytes

    @classmethod
    def of(cls, index_file: Path) -> IndexStamp | None:
        try:
            with open(index_file, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                handle.seek(max(size - 20, 0))
                return cls(size, handle.read())
        except OSError:
            return None

    def same_as(self, index_file: Path) -> bool:
        now = self.of(index_file)
        return now is not None and now == self and self.trailer.strip(b"\x00") != b""

    def parsed(self) -> Any:
        raise NotKnown("its repository's index changed during the turn (a commit or `git add` in it), "
                       "and no copy of a nested repository's index is kept")


def _prefixed(sub: str, function: Callable) -> Callable:
    return lambda rel, *rest: function(f"{sub}/{rel}", *rest)


def begin(folders: set[str], open_scanner: OpenScanner, capture: Callable) -> dict[str, dict]:
    """Each nested repository's begin snapshot (or why it has none), by folder."""
    out: dict[str, dict] = {}
    for sub in sorted(folders):
        scanner = open_scanner(sub)
        if isinstance(scanner, str):
            out[sub] = {"unscanned": scanner}
            continue
        stamp = IndexStamp.of(scanner.index_file())
        out[sub] = {
            "scan": scanner.begin(_prefixed(sub, capture)),
            "index": [stamp.size, stamp.trailer.hex()] if stamp is not None else None,
        }
    return out


def end(
    snapshots: dict[str, dict], folders_now: set[str], open_scanner: OpenScanner,
    capture: Callable, capture_content: Callable, notices: list[str],
) -> list:
    """The changes inside the nested repositories since ``snapshots`` (paths under their folders),
    with a notice in ``notices`` for each repository or file that could not be recorded."""
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
        index = snapshot.get("index")
        stamp = IndexStamp(index[0], bytes.fromhex(index[1])) if index else None
        found = scanner.end(snapshot["scan"], stamp, _prefixed(sub, capture), _prefixed(sub, capture_content))
        for change in found:
            change.path = f"{sub}/{change.path}"
        changes += found
        notices += [f"in {sub}: {notice}" for notice in scanner.notices]
    return changes
