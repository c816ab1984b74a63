"""The operations the keys start, through the engine's ``Operations`` only: first the plan
(``dry_run=True``, what ``takeback undo --dry-run`` prints), then, once the person said yes,
the operation itself — planned again and carried out in one transaction (the store's lock held
between the two), and only if the plan is still the one they read: a hook may record a turn
while the window is open, and a yes given to one plan never carries out another.

A ``Request`` is the operation's intent; the hunks of the surgical-undo work will be one more
field of it (and one more key in ``app.py``), planned and confirmed the same way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..core.models import OperationResult

if TYPE_CHECKING:
    from ..engine.engine import Engine

Operation = Literal["undo", "redo", "revert", "restore"]


@dataclass(frozen=True)
class Request:
    operation: Operation
    spec: str | None = None  # revert: the entry (#N); restore: the checkpoint (#N.k, #N)

    @property
    def title(self) -> str:
        """``Undo``, ``Revert #3``, ``Restore #3.2``: how the answers name it."""
        return self.operation.capitalize() + (f" {self.spec}" if self.spec else "")

    def asked(self, result: OperationResult) -> str:
        """The plan window's question: ``Undo #2?`` (the entry the plan found), ``Restore #3.2?``."""
        if self.spec is None and result.target_number is not None:
            return f"{self.title} #{result.target_number}?"
        return f"{self.title}?"


def _call(engine: Engine, request: Request, dry_run: bool) -> OperationResult:
    if request.operation == "undo":
        return engine.undo(dry_run=dry_run)
    if request.operation == "redo":
        return engine.redo(dry_run=dry_run)
    if request.spec is None:
        raise ValueError(f"{request.operation} needs a target")
    if request.operation == "revert":
        return engine.revert(request.spec, dry_run=dry_run)
    return engine.restore(request.spec, dry_run=dry_run)


def plan(engine: Engine, request: Request) -> OperationResult:
    """What the operation would do now; nothing is written or recorded."""
    return _call(engine, request, dry_run=True)


def may_carry_out(result: OperationResult) -> bool:
    """Whether a plan has anything a yes could do: one that is refused, or broken by a
    conflict (which writes nothing unless asked), is only shown."""
    return result.verdict not in ("refused", "broken") and bool(result.restored)


def carry_out(engine: Engine, request: Request, shown: OperationResult) -> tuple[OperationResult, bool]:
    """The operation carried out, if its plan is still ``shown`` (True); else the new plan,
    with nothing written (False), for the person to read again."""
    with engine.transaction():
        again = _call(engine, request, dry_run=True)
        if _gist(again) != _gist(shown):
            return again, False
        return _call(engine, request, dry_run=False), True


def _gist(result: OperationResult) -> tuple:
    """What a person agrees to in a plan: the target, the verdict, and each file's fate."""
    return (
        result.target,
        result.verdict,
        tuple((o.path, o.action, o.additions, o.deletions, o.merged) for o in result.restored),
        tuple((s.path, s.reason) for s in result.skipped),
        tuple((c.path, c.reason) for c in result.conflicts),
    )
