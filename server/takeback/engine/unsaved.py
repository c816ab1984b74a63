"""What an operation applied in an editor and the disk still lacks, and writing it there.

An operation hands documents open in an editor their new content through the editor
(``handoff.py``); the disk gets it when the person saves. If they discard the buffers instead
(``:e!``, "Revert File", closing without saving), the timeline says the operation is done while
the disk holds what it held before. ``Unsaved`` is the part of ``Engine`` that owns that one
rule: for the newest operation only (cheap: its editor paths, ``OperationDone.editor``), a path
no later entry touched whose disk is exactly the operation's before-side and not its
after-side. The language server adds what open buffers hold (``overlay``). ``save`` writes the
operation's content for those paths through the journal, all or nothing (its journal names the
operation's own entry, which is in the log: recovery finishes it).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from ..core import wording
from ..core.merge import Version
from ..core.models import PathChange, SaveReport, SkippedFile, UnsavedFile
from ..core.timeline import FoldedEntry
from ..errors import NothingToDo
from ..workspace.journal import JournalFile
from .parts import EngineParts

log = logging.getLogger("takeback.engine")


class Unsaved(EngineParts):
    """The newest operation's editor writes the disk lacks (a part of ``Engine``)."""

    def unsaved(self, overlay: dict[str, Version | None] | None = None) -> list[UnsavedFile]:
        """The files the newest operation applied in an editor whose disk holds what it held
        before it. ``overlay``: open documents by path (the language server's), which tell an
        unsaved buffer from a discarded one; None: not known."""
        with self.transaction():
            found = self._lacking()
            if not found:
                return []
            op, changes = found
            by_rel = {self.workspace.rel(p): v for p, v in (overlay or {}).items()}
            target = self.timeline.find(op.operation.target) if op.operation and op.operation.target else None
            out = []
            for change in changes:
                held = by_rel.get(change.path)
                editor = None if overlay is None else (
                    "unsaved" if change.path in by_rel and self.capture.matches(change.path, change.after, held) else "discarded"
                )
                out.append(UnsavedFile(
                    path=change.path, operation=op.begun.number, kind=op.begun.kind,
                    held_by=target.begun.number if target is not None else None, editor=editor,  # type: ignore[arg-type]
                ))
            return out

    def save(self, paths: Iterable[str] | None = None) -> SaveReport:
        """Write the newest operation's content for the files ``unsaved`` names (or only
        ``paths`` of them), through the journal: all of them or none."""
        with self.transaction():
            found = self._lacking()
            if not found:
                raise NothingToDo("nothing to save: the disk holds what the newest operation wrote")
            op, changes = found
            if paths is not None:
                wanted = {self.workspace.rel(p) for p in paths}
                changes = [c for c in changes if c.path in wanted]
                if not changes:
                    raise NothingToDo("nothing to save: none of those files lacks what the newest operation wrote")
            skipped = [SkippedFile(path=c.path, reason=f"its content is not stored ({c.after.withheld})")
                       for c in changes if c.after is not None and c.after.withheld]
            files = [JournalFile(path=c.path, before=c.before, after=c.after) for c in changes
                     if c.after is not None and not c.after.withheld]
            if files:
                self.journal.start(op.begun.entry, "save", files, {}, [])
                written: list[JournalFile] = []
                try:
                    self.journal.forward(files, [], written)
                except BaseException as exc:
                    failure = self.journal.roll_back(written, exc)
                    if failure is exc:
                        raise
                    raise failure from exc
                self.journal.finish()
            names = [f.path for f in files]
            message = (f"wrote what {op.begun.kind} #{op.begun.number} applied in the editor to "
                       f"{wording.listed(names)}" if names else "nothing written")
            if skipped:
                message += f"; {wording.files(len(skipped))} skipped"
            return SaveReport(operation=op.begun.number, written=names, skipped=skipped, message=message)

    def _lacking(self) -> tuple[FoldedEntry, list[PathChange]] | None:
        """The newest operation and its editor paths' changes whose disk is the before-side.
        A path a later entry recorded a change to is not the operation's any more."""
        # no walk of the entries: the timeline keeps its newest operation; an older page is read
        # only if it holds an operation that applied files in an editor (its ``editor`` mark)
        op, newer = self.timeline.newest_operation("editor")
        if op is None or op.operation is None or not op.operation.editor:
            return None
        later = {c.path for state in newer for cp in state.checkpoints for c in cp.changes}
        editor = set(op.operation.editor) - later
        lacking = []
        for cp in op.checkpoints:
            for change in cp.changes:
                if change.path not in editor or change.before is None or change.after is None:
                    continue
                try:
                    disk = self.workspace.read(change.path)
                except OSError:
                    continue
                if not self.capture.matches(change.path, change.after, disk) and self.capture.matches(change.path, change.before, disk):
                    lacking.append(change)
        return (op, lacking) if lacking else None
