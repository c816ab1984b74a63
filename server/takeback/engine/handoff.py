"""Asking an editor to apply a write's open documents without holding the store's lock.

A write that changes documents open in an editor (an agent's edit batch, an undo) hands their
new content to the editor (``EditorApply``: ``workspace/applyEdit`` in the language server),
which may ask the person first and answer minutes later. The store's lock is a cross-process
lock that agent hooks and the CLI wait for only ``lock_timeout`` seconds, so it is let go while
the editor works: the write is planned under the lock, the editor is asked with the lock
released (``Transaction.released``, which publishes what the transaction added so far), and
back under the lock the write goes on only if the timeline is where it was (neither a new log
commit nor a newly begun turn) and the files it will write on disk hold what the plan read.
Otherwise ``StateError`` / ``StaleContent`` stops the write before anything more is recorded or
written on disk; the editor's side, already applied, is the caller's to take back (the caller
owns the editor). The x bit of an open document's file is the engine's to set on disk once
the editor applied (``set_exec_bits``), since an editor changes only text.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..core.merge import Version
from ..errors import StaleContent

if TYPE_CHECKING:
    from ..workspace.files import Workspace
    from .transaction import Transaction

EditorApply = Callable[[list[tuple[str, Version | None]]], bool]
"""Applies new content to documents open in an editor; answers whether the editor took it."""


def ask_editor(
    tx: Transaction, workspace: Workspace, editor: EditorApply, writes: list[tuple[str, Version | None]],
    on_disk: dict[str, Version | None],
) -> bool:
    """Call ``editor(writes)`` with the store's lock let go; answer whether it applied them.

    Must be called in a transaction, after planning. ``on_disk`` maps each path the write will
    then write on disk to what the plan read there (None: no file). When the editor applied
    its part, the timeline (``Transaction.released``) and those files are checked again.
    """
    with tx.released():
        applied = editor(writes)
    if not applied:
        return False
    tx.check_unmoved()
    for rel, planned in on_disk.items():
        if workspace.read(rel) != planned:
            raise StaleContent(f"{rel} changed on disk while the editor was asked; nothing was recorded, run it again")
    return True


def set_exec_bits(workspace: Workspace, writes: list[tuple[str, Version | None]]) -> dict[str, int]:
    """After the editor applied ``writes`` to its open documents: give each file on disk the x
    bit its planned version has (``Workspace.follow_mode``; the editor changes only text, so an
    undo of ``chmod +x`` would otherwise say it was done and leave the bit). Answers the bits it
    replaced, by path, for ``put_back_bits``."""
    replaced: dict[str, int] = {}
    for rel, version in writes:
        old = None if version is None else workspace.follow_mode(rel, version.mode)
        if old is not None:
            replaced[rel] = old
    return replaced


def put_back_bits(workspace: Workspace, replaced: dict[str, int]) -> None:
    """Undo ``set_exec_bits`` when the operation fails after it (best effort: its failure is
    the one reported)."""
    for rel, perm in replaced.items():
        with contextlib.suppress(OSError):
            workspace.set_permissions(rel, perm)
