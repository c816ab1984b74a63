"""Edit batches: recording the files an agent hands over, and writing them where no editor does.

``Batches`` is the part of ``Engine`` (a mixin, declared in ``parts.py``) that records a batch
(before-images now, content after) as a checkpoint of the open turn or of a turn of its own, and
brings it into the workspace: documents open in an editor through the editor (``handoff.py``),
the rest on disk under the journal, published before the first file is written so recovery can
roll it forward. If the editor refuses, the batch is recorded as not applied.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TypedDict, Unpack

from ..core.clock import new_id as _new_id
from ..core.clock import now as _now
from ..core.merge import Version
from ..core.models import (
    MODE_FILE,
    BatchChange,
    CheckpointApplied,
    CheckpointRecorded,
    Entry,
    PathChange,
    Record,
    TurnEnded,
    before_unknown,
)
from ..core.timeline import FoldedEntry
from ..errors import (
    InvalidInput,
    NotFound,
    StateError,
    TakebackError,
)
from ..workspace.journal import JournalFile
from .handoff import EditorApply, ask_editor
from .parts import EngineParts
from .turns import withheld_notice

log = logging.getLogger("takeback.engine")


class BatchRecord(TypedDict, total=False):
    """How a batch is recorded (``record_batch``'s arguments but the changes and ``applied``)."""

    label: str | None
    session: str | None
    agent: str | None
    turn: str | None
    source: str


class Batches(EngineParts):
    """Recording edit batches and writing them (a part of ``Engine``)."""

    def _joined_turn(self, turn: str | None, session: str | None = None) -> FoldedEntry | None:
        """The open turn a batch joins (None: it is a turn of its own): ``turn``, which must be
        open, else the one ``session``'s steps join (``_turn_for``)."""
        if turn is None:
            return self._turn_for(session)
        state = self.timeline.resolve(turn)
        if state not in self.timeline.open_turns():
            raise StateError(f"turn {turn} is not open; batches can only join an open turn")
        return state

    def record_batch(
        self,
        changes: list[BatchChange],
        label: str | None = None,
        session: str | None = None,
        agent: str | None = None,
        turn: str | None = None,
        applied: bool = True,
        source: str = "edit",
    ) -> tuple[Entry, str]:
        """Record one edit batch (before-images now, content after) as a checkpoint.

        The batch joins the open turn; with no open turn it is a turn of its own.
        Answers the entry and the new checkpoint's id. Nothing in the workspace is written.
        """
        if not changes:
            raise InvalidInput("an edit batch needs at least one file change")
        rels = [self.workspace.rel(c.path) for c in changes]
        if len(set(rels)) != len(rels):
            raise InvalidInput("an edit batch names the same path twice")
        renamed = [self.workspace.rel(c.renamed_from) if c.renamed_from else None for c in changes]
        with self.transaction() as tx:
            state = self._joined_turn(turn, session)  # checked before any content is stored
            path_changes = []
            notices: list[str] = []
            for rel, change, source_path in zip(rels, changes, renamed, strict=True):
                path_changes.append(self._batch_change(rel, change, source_path, notices))
            records: list[Record] = []
            standalone = state is None
            entry_id = state.begun.entry if state else _new_id()
            if standalone:
                records.append(
                    self._new_begin(entry_id, label=label, session=session, agent=agent, source=source)
                )
            checkpoint_id = _new_id()
            records.append(
                CheckpointRecorded(
                    id=checkpoint_id, at=_now(), entry=entry_id, label=label, changes=path_changes,
                    applied=applied, notices=notices,
                )
            )
            if standalone:
                records.append(TurnEnded(id=_new_id(), at=_now(), entry=entry_id))
            tx.add(*records)
            if standalone:
                self._auto_gc()
            return self.timeline.view(self.timeline.state(entry_id)), checkpoint_id

    def _batch_change(self, rel: str, change: BatchChange, source_path: str | None, notices: list[str]) -> PathChange:
        """One file of an edit batch, its before-image from the batch or the disk now (a notice
        added when the secrets or size policy withholds a version, or the before-image is unknown)."""
        if change.before == "unknown":
            disk = self.workspace.read(rel)
            mode = change.mode or (disk.mode if disk else MODE_FILE)
            after = None if change.after is None else self.capture.version(rel, change.after, mode)
            notices.append(withheld_notice(rel, before_unknown(mode)))
            return self._path_change(rel, before_unknown(mode), after, source_path, None, change.after)
        if change.before == "disk":
            disk = self.workspace.read(rel)
            old = disk.content if disk else None
            before_mode = disk.mode if disk else None
        else:
            old = change.before
            if change.mode is not None:
                before_mode = change.mode
            else:
                size = self.workspace.size(rel)
                disk = self.workspace.read(rel) if size is not None else None
                before_mode = disk.mode if disk else None
        before = None if old is None else self.capture.version(rel, old, before_mode or MODE_FILE)
        mode = change.mode or before_mode or MODE_FILE
        after = None if change.after is None else self.capture.version(rel, change.after, mode)
        for version in (before, after):
            if version is not None and version.withheld:
                notices.append(withheld_notice(rel, version))
                break
        made = self.workspace.missing_folders(rel) if old is None and after is not None else []
        return self._path_change(rel, before, after, source_path, old, change.after, made)

    def apply_batch(self, changes: list[BatchChange], **kwargs: Unpack[BatchRecord]) -> tuple[Entry, str]:
        """Record a batch and write it to disk (for callers with no editor to apply it)."""
        entry, checkpoint_id, _applied = self.apply_through(changes, **kwargs)
        return entry, checkpoint_id

    def apply_through(
        self,
        changes: list[BatchChange],
        editor: EditorApply | None = None,
        in_editor: Iterable[str] = (),
        **record: Unpack[BatchRecord],
    ) -> tuple[Entry, str, bool]:
        """Record a batch (``record_batch``'s arguments) and bring it into the workspace; answers
        the entry, the checkpoint and whether the workspace got it.

        Paths in ``in_editor`` (documents open in an editor, whose before-images ``changes``
        carry) go through ``editor``, first, with the store's lock let go (``handoff.py``); the
        rest is written on disk under the journal once the editor applied its part. If the
        editor refuses, the batch is recorded as not applied and nothing is written; if the
        timeline or a file moved while the editor was asked, nothing is recorded (the editor's
        applied part is the caller's to take back). All or nothing.
        """
        with self.transaction() as tx:
            editor_rels = {self.workspace.rel(p) for p in in_editor}
            editor_writes: list[tuple[str, Version | None]] = []
            on_disk: dict[str, Version | None] = {}
            for change in changes:
                rel = self.workspace.rel(change.path)
                if rel in editor_rels:
                    mode = change.mode or MODE_FILE
                    editor_writes.append((rel, None if change.after is None else Version(change.after, mode)))
                else:
                    on_disk[rel] = self.workspace.read(rel)
            applied = True
            if editor_writes:
                self._joined_turn(record.get("turn"), record.get("session"))  # refused before the editor is asked
                applied = editor is not None and ask_editor(tx, self.workspace, editor, editor_writes, on_disk)
            entry, checkpoint_id = self.record_batch(changes, applied=applied, **record)
            tx.publish()  # in the log before the disk is written: recovery rolls it forward
            if applied:
                self._write_batch(checkpoint_id, changes, editor_rels)
            return self.timeline.view(self.timeline.state(entry.id)), checkpoint_id, applied

    def _write_batch(self, checkpoint_id: str, changes: list[BatchChange], skip: set[str]) -> None:
        """Write a recorded checkpoint's files on disk (but those in ``skip``), under the journal.
        ``changes`` is the batch it was recorded from (the content, also where the store withheld
        it). If anything fails, the writes are rolled back and the checkpoint marked not applied."""
        owner = self.timeline.checkpoint_owner[checkpoint_id]
        cp = self.timeline.checkpoint(owner, checkpoint_id)
        given = {self.workspace.rel(c.path): c for c in changes}
        items: list[JournalFile] = []
        backups: dict[str, bytes] = {}
        for i, change in enumerate(cp.changes):
            if change.path in skip:
                continue
            backup = None
            before = change.before
            if before is not None and before.withheld:
                source = given.get(change.path)
                old = source.before if source is not None and isinstance(source.before, bytes) else None
                if old is None:
                    disk = self.workspace.read(change.path)
                    old = disk.content if disk else None
                if old is not None:
                    backup = f"{i}.bin"
                    backups[backup] = old
                else:  # not known, and no file there now: a roll-back removes what the batch writes
                    before = None
            items.append(
                JournalFile(
                    path=change.path, before=before, after=change.after, backup=backup, new_folders=change.new_folders,
                )
            )
        self.journal.start(checkpoint_id, "apply", items, backups)
        written: list[JournalFile] = []
        try:
            self.journal.forward(items, [], written, lambda item: self._batch_content(item, given))
        except BaseException as exc:
            failure = self.journal.roll_back(written, exc)  # the journal stays if a path could not be put back
            try:
                with self.transaction() as tx:
                    self.set_applied(checkpoint_id, False, f"not applied: {exc}")
                    tx.publish()  # now: the caller's transaction ends with this exception, publishing nothing more
            except TakebackError:
                log.exception("could not mark checkpoint %s as not applied", checkpoint_id)
            if failure is exc:
                raise
            raise failure from exc
        self.journal.finish()

    def _batch_content(self, item: JournalFile, given: dict[str, BatchChange]) -> bytes:
        """The bytes of one path of an edit batch: from the batch where the store withheld them
        (a secret, or over the size cap), else from the store."""
        if item.after is not None and item.after.withheld:
            content = given[item.path].after if item.path in given else None
            return content or b""
        return self.journal.content_of(item, "after")

    def set_applied(self, checkpoint_id: str, applied: bool, reason: str | None = None) -> Entry:
        """Say whether a recorded checkpoint reached the workspace (the editor may refuse)."""
        with self.transaction() as tx:
            owner = self.timeline.checkpoint_owner.get(checkpoint_id)
            if owner is None:
                raise NotFound(f"no checkpoint {checkpoint_id}")
            record = CheckpointApplied(
                id=_new_id(), at=_now(), entry=owner, checkpoint=checkpoint_id, applied=applied, reason=reason
            )
            tx.add(record)
            return self.timeline.view(self.timeline.state(owner))
