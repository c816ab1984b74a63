"""What ``Engine``'s mixins (``Turns``, ``Batches``, ``Reading``, ``Operations``, ``Steps``) use of the engine.

``Engine`` and the mixins define all of it; this class only declares it for the type checker, so
each mixin is checked against the real attributes and signatures. At run time it is empty.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import pygit2

    from ..config import Config
    from ..core.merge import Version
    from ..core.models import (
        BatchChange,
        Check,
        CheckpointRecorded,
        Entry,
        EntryBegun,
        FileVersion,
        GitMove,
        PathChange,
        UnsavedFile,
    )
    from ..core.timeline import FoldedEntry, Timeline
    from ..scanning.scan import GitScanner, ScanCache, WalkScanner
    from ..storage.store import Store
    from ..workspace.capture import Capturer
    from ..workspace.files import Workspace
    from ..workspace.journal import Journal, RecoveryReport
    from . import brackets
    from .operations import Targets
    from .transaction import Transaction


class EngineParts:
    """The engine's state and helpers that its mixins use (declarations only)."""

    if TYPE_CHECKING:
        workspace: Workspace
        config: Config
        store: Store
        capture: Capturer
        journal: Journal
        @property
        def timeline(self) -> Timeline: ...
        _brackets: Path
        _scan_cache: ScanCache
        _user_repo: pygit2.Repository | None | Literal[False]
        _git_dir: str | None | Literal[False]
        last_recovery: RecoveryReport | None

        def timeline_version(self) -> str | None: ...
        def targets(self, files: bool = True) -> Targets: ...
        def unsaved(self, overlay: dict[str, Version | None] | None = None) -> list[UnsavedFile]: ...
        def refresh(self) -> None: ...
        def transaction(self) -> AbstractContextManager[Transaction]: ...
        def _user_head(self) -> str | None: ...
        def _auto_gc(self) -> None: ...
        def _recorded_since(self, step: EntryBegun) -> FoldedEntry: ...
        def _new_begin(
            self, entry_id: str, label: str | None, session: str | None, agent: str | None = None,
            source: str = "bracket", kind: str = "turn", at: datetime | None = None,
        ) -> EntryBegun: ...
        def _scanner(self, kind: str | None = None) -> GitScanner | WalkScanner: ...
        def record_batch(
            self, changes: list[BatchChange], label: str | None = None, session: str | None = None,
            agent: str | None = None, turn: str | None = None, applied: bool = True, source: str = "edit",
        ) -> tuple[Entry, str]: ...
        def _session_turn(self, state: FoldedEntry) -> bool: ...
        def _turn_for(self, session: str | None) -> FoldedEntry | None: ...
        def _end(self, state: FoldedEntry, commands: list[str], checks: list[Check], ended_by: str | None = None) -> None: ...
        def _turn_capture(self, opened: brackets.OpenTurn) -> Capturer: ...
        def _git_state(self, also: tuple[str, ...] = (), every_ref: bool = False) -> dict | None: ...
        def _git_moved(self, opened: brackets.OpenTurn) -> list[GitMove]: ...
        def _bracket_checkpoint(self, state: FoldedEntry, opened: brackets.OpenTurn) -> CheckpointRecorded | None: ...
        def _path_change(
            self,
            path: str,
            before: FileVersion | None,
            after: FileVersion | None,
            renamed_from: str | None = None,
            old: bytes | None = None,
            new: bytes | None = None,
            new_folders: Iterable[str] = (),
            stats: tuple[int, int] | None = None,
        ) -> PathChange: ...
