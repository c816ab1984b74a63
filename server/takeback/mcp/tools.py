"""The tools ``takeback mcp`` offers, each a thin call into ``Engine``.

Read-only: ``list_turns``, ``show_turn``, ``diff_turn``. Destructive: ``undo``, ``redo``,
``revert_turn``, ``restore``, in two steps: a call without ``confirm_token`` runs the engine's
dry run and answers the plan with a token (``confirm.py``); only a call with that token, made
after the person agreed, carries the operation out, and only if nothing changed meanwhile.
``revert_turn`` takes back a whole entry, one step of it (``turn`` ``12.3``), the files some
patterns name (``paths``) or one hunk (``hunk``); its token is bound to that narrow target too.

Every tool answers a ``CallToolResult``: structured content (the engine's own models, as the
CLI's ``--json`` prints them) and a short text (``text.py``). An engine error, a refused
confirmation or a bad argument is a tool error (``isError``) whose text is one line saying what
went wrong; the server goes on serving.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Annotated, Any, NamedTuple

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, BeforeValidator, Field

from ..core.hunks import parse_hunk
from ..core.models import Entry, NextStep, OperationResult
from ..core.models import OnConflict as OnConflictChoice
from ..core.timeline import resolve_step
from ..engine.engine import Engine
from ..errors import TakebackError
from . import text
from .confirm import TOKEN_LIFETIME, ConfirmationBook, Plan, Refused, make_plan

log = logging.getLogger("takeback.mcp")

MAX_DIFF_CHARS = 100_000  # a diff longer than this is cut (a file at a time reads the rest)


def _as_text(value: Any) -> Any:
    """A whole number where text is expected is taken as its text: a model may send turn 17
    for "17", and the SDK reads an optional argument that looks like JSON ("123") as JSON."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


Text = BeforeValidator(_as_text)
TurnSpec = Annotated[
    str, Text, Field(description="a turn: its number (17 or '#17'), its id (or a unique prefix of it), 'last', or "
    "'mark:NAME' (the person's newest mark of that name)")
]
RevertSpec = Annotated[
    str, Text, Field(description="a turn: its number (17 or '#17'), its id (or a unique prefix of it), 'last', or "
    "'mark:NAME'; or one step of a turn, '12.3' or '#12.3' (step 3 of turn 12, as show_turn lists them): only "
    "that step is taken back, the turn's other steps stay")
]


def _as_list(value: Any) -> Any:
    """One path given as a string is a list of one."""
    return [value] if isinstance(value, str) else value


Paths = Annotated[
    list[str] | None,
    BeforeValidator(_as_list),
    Field(description="only the files these name, each a workspace-relative path or a pattern from the workspace's "
          "top (git's pathspec wildcards: 'src/app.py', 'src' for everything under it, 'tests/**', '**/*.py'); "
          "leave out for every file"),
]


class HunkAt(BaseModel):
    """One hunk of a turn's change to a file: a block of lines it replaced, added or removed."""

    path: str = Field(description="the file, workspace-relative (as show_turn names it)")
    line: int = Field(ge=1, description="any line inside the hunk, counted from 1, in the file as it stands on "
                      "disk now (later edits above it move it down)")


Hunk = Annotated[
    HunkAt | None,
    Field(description="only the hunk of this file's change that covers this line, e.g. "
          "{\"path\": \"src/app.py\", \"line\": 40}; the rest of the file stays; leave out for whole files"),
]
OnConflict = Annotated[
    OnConflictChoice,
    Field(
        description="when files changed since in ways that overlap: abort (write nothing, the default), "
        "skip (change only the clean files), markers (write conflict markers to resolve by hand), "
        "force (put back the old content where the later edits overlap it, keeping the rest of them)"
    ),
]
ConfirmToken = Annotated[
    str | None,
    Field(
        description="leave out to get the plan and a token; give the plan's token, once the person has "
        "agreed to that plan, to carry it out"
    ),
]


def tool_error(code: str, message: str) -> CallToolResult:
    """A tool error: ``isError``, the message on one line, and ``{error, message}`` as data."""
    message = " ".join(message.split())
    return CallToolResult(
        content=[TextContent(type="text", text=message)],
        structured_content={"error": code, "message": message},
        is_error=True,
    )


def _answer(structured: dict[str, Any], summary: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=summary)], structured_content=structured)


def _tool(method: Callable[..., CallToolResult]) -> Callable[..., CallToolResult]:
    """One tool call at a time (the engine is not shared across threads), and every failure
    answered as a tool error: the engine's own message, or what refused the confirmation."""

    @functools.wraps(method)
    def call(self: Tools, *args: Any, **kwargs: Any) -> CallToolResult:
        with self._lock:
            try:
                return method(self, *args, **kwargs)
            except TakebackError as exc:
                return tool_error(exc.code, exc.message)
            except Refused as exc:
                return tool_error("confirmation-refused", str(exc))
            except Exception as exc:  # a bug or an environment failure (disk full …): still one line
                log.exception("%s failed", method.__name__)
                return tool_error("internal", f"internal error: {type(exc).__name__}: {exc}")

    return call


def _turn_summary(entry: Entry) -> dict[str, Any]:
    """One line of the timeline as data (``show_turn`` gives the whole entry)."""
    return {
        "number": entry.number,
        "id": entry.id,
        "kind": entry.kind,
        "label": entry.label,
        "agent": entry.agent,
        "session": entry.session,
        "state": entry.state,
        "created_at": entry.created_at.isoformat(),
        "finished_at": entry.finished_at.isoformat() if entry.finished_at else None,
        "files": [
            {"path": f.path, "kind": f.kind, "old_path": f.old_path, "additions": f.additions, "deletions": f.deletions}
            for f in entry.files
        ],
        "steps": len(entry.checkpoints),
        "checks_passed": entry.checks_passed,
        "target_number": entry.target_number,
        "verdict": entry.verdict,
    }


def tool_call(step: NextStep) -> dict[str, Any]:
    """The tool call that does what ``step`` (a command the engine's next action names) does:
    ``revert`` is ``revert_turn`` with its step or entry as ``turn``, and its ``paths`` and
    ``hunk``; an ``on_conflict`` the step adds is an argument too."""
    arguments: dict[str, Any] = {}
    if step.command == "revert":
        arguments["turn"] = step.step if step.step is not None else str(step.number)
        if step.paths:
            arguments["paths"] = list(step.paths)
        if step.hunk is not None:
            at = parse_hunk(step.hunk)
            arguments["hunk"] = {"path": at.path, "line": at.line}
    elif step.command == "restore":
        arguments["checkpoint"] = step.checkpoint
    if step.on_conflict is not None:
        arguments["on_conflict"] = step.on_conflict
    return {"tool": "revert_turn" if step.command == "revert" else step.command, "arguments": arguments}


def _take_back(engine: Engine, entry: Entry) -> dict[str, Any]:
    """The tool call that takes a carried-out operation back (it too plans first): the engine's
    ``take_back``, the command its ``next:`` names (redo after an undo, undo after a redo only
    when they would act on exactly it; otherwise a revert of the entry the operation became)."""
    return tool_call(engine.take_back(entry.id).step)


class Narrow(NamedTuple):
    """What of an entry ``revert_turn`` takes back: one step of it (``12.3``), the files some
    patterns name, one hunk (a file, a line of it now); all None: the whole entry."""

    step: str | None
    paths: list[str] | None
    hunk: tuple[str, int] | None

    def bound(self) -> tuple[str, ...]:
        """As the confirmation token binds it (``Plan.scope``): a call naming another step,
        other paths or another hunk is another plan."""
        return tuple(
            ([f"step #{self.step}"] if self.step else [])
            + ([f"paths {' '.join(self.paths)}"] if self.paths is not None else [])
            + ([f"hunk {self.hunk[0]}:{self.hunk[1]}"] if self.hunk else [])
        )

    def as_data(self, planned: OperationResult) -> dict[str, Any]:
        """``taking_back`` in a plan: the entry, the step, the patterns, the hunk with the lines
        of the file now that the plan changes (read from its patch; None when it writes none)."""
        hunk = None
        if self.hunk is not None:
            lines = text.lines_now(planned.patch or "", self.hunk[0])
            hunk = {"path": self.hunk[0], "line": self.hunk[1], "lines": lines}
        return {"turn": planned.target_number, "step": self.step, "paths": self.paths, "hunk": hunk}


class Tools:
    """The tools over one workspace's engine."""

    def __init__(self, engine: Engine, book: ConfirmationBook | None = None) -> None:
        self.engine = engine
        self.book = book or ConfirmationBook()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ read-only

    @_tool
    def list_turns(
        self,
        session: Annotated[str | None, Text, Field(description="only this agent session's entries")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="at most this many entries")] = 20,
    ) -> CallToolResult:
        """The workspace's timeline, newest first: each agent turn (and each undo, redo, revert or
        restore, which are entries too, and each of the person's own checkpoints, kind 'mark')
        with its number, label (the prompt, or the mark's name), agent, session, state (applied,
        reverted, partial, open) and the files it changed."""
        entries = self.engine.entries(session=session, limit=limit)
        workspace, store = str(self.engine.workspace.root), str(self.engine.store.path)
        structured = {"workspace": workspace, "store": store, "turns": [_turn_summary(e) for e in entries]}
        return _answer(structured, text.timeline(entries, workspace, store))

    @_tool
    def show_turn(self, turn: TurnSpec = "last") -> CallToolResult:
        """One turn in full: its files (added, modified, deleted, renamed, with +/- lines), its
        steps (checkpoints: #N.k, the spec restore takes), the commands it ran, its checks and
        notices, and its state."""
        entry = self.engine.entry(turn)
        return _answer(entry.model_dump(mode="json"), text.entry(entry))

    @_tool
    def diff_turn(
        self,
        turn: TurnSpec = "last",
        path: Annotated[str | None, Text, Field(description="only this file (workspace-relative)")] = None,
    ) -> CallToolResult:
        """The unified diff of what a turn changed (all its files, or one)."""
        entry = self.engine.entry(turn)
        diff = self.engine.diff(entry.id, path)
        truncated = len(diff) > MAX_DIFF_CHARS
        shown = diff[:MAX_DIFF_CHARS]
        summary = shown or f"turn #{entry.number} changed no file content"
        if truncated:
            summary += f"\n… cut at {MAX_DIFF_CHARS} characters of {len(diff)}: ask for one file with 'path'"
        structured = {"turn": entry.number, "id": entry.id, "path": path, "diff": shown, "truncated": truncated}
        return _answer(structured, summary)

    # ------------------------------------------------------------------ destructive, confirmed

    @_tool
    def undo(self, on_conflict: OnConflict = "abort", confirm_token: ConfirmToken = None) -> CallToolResult:
        """Take back the last applied agent turn, keeping every later edit (the person's too).
        First call it without confirm_token: it changes nothing and answers the plan (files,
        verdict, conflicts) and a token. Show the plan to the person; only if they agree, call
        it again with the same arguments and that token. The undo is itself undoable (redo)."""
        return self._operate(
            "undo", "undo", on_conflict, lambda dry: self.engine.undo(dry_run=dry, on_conflict=on_conflict), confirm_token
        )

    @_tool
    def redo(self, on_conflict: OnConflict = "abort", confirm_token: ConfirmToken = None) -> CallToolResult:
        """Re-apply what the last undo, revert or restore took away. Two steps, like undo: a call
        without confirm_token answers the plan and a token; call again with the token once the
        person agreed."""
        return self._operate(
            "redo", "redo", on_conflict, lambda dry: self.engine.redo(dry_run=dry, on_conflict=on_conflict), confirm_token
        )

    @_tool
    def revert_turn(
        self,
        turn: RevertSpec,
        paths: Paths = None,
        hunk: Hunk = None,
        on_conflict: OnConflict = "abort",
        confirm_token: ConfirmToken = None,
    ) -> CallToolResult:
        """Take back one turn's changes (any turn, not only the last), keeping everything done
        after it; or less of it: one step ('12.3' as turn), only some files (paths), one hunk
        (hunk: a file and a line of it now). Where later edits overlap, it reports a conflict and
        writes nothing (unless on_conflict says otherwise); the plan names the later turns and
        steps that changed the same files or lines. Two steps, like undo: plan first, then the
        token, with the same turn, paths and hunk."""
        at = None if hunk is None else (hunk.path, hunk.line)
        return self._operate(
            "revert_turn",
            "revert",
            on_conflict,
            lambda dry: self.engine.revert(turn, dry_run=dry, on_conflict=on_conflict, pathspec=paths, hunk=at),
            confirm_token,
            scope=lambda: self._scope(turn, paths, at),
        )

    @_tool
    def restore(
        self,
        checkpoint: Annotated[
            str,
            Text,
            Field(
                description="a checkpoint: its id, '#N' (turn N's last step), '#N.k' (just after step k of turn N; "
                "'#N.0': where turn N started), 'mark:NAME' or a mark's '#N' (the person's own checkpoint), or 'last-green' "
                "(the newest applied entry whose checks passed on its own files)"
            ),
        ],
        on_conflict: OnConflict = "abort",
        confirm_token: ConfirmToken = None,
    ) -> CallToolResult:
        """Bring every file touched since a checkpoint back to its state then (later turns are
        taken back as a whole). Two steps, like undo: plan first, then the token."""
        return self._operate(
            "restore",
            "restore",
            on_conflict,
            lambda dry: self.engine.restore(checkpoint, dry_run=dry, on_conflict=on_conflict),
            confirm_token,
            checkpoint=lambda: self._checkpoint_id(checkpoint),
        )

    def _checkpoint_id(self, spec: str) -> str:
        """The checkpoint ``spec`` names now (the timeline was just brought up to date)."""
        timeline = self.engine.timeline
        found = timeline.last_green().checkpoints[-1] if spec == "last-green" else timeline.resolve_checkpoint(spec)
        return found.id

    def _scope(self, turn: str, paths: list[str] | None, hunk: tuple[str, int] | None) -> Narrow:
        """What of the entry a revert takes back (asked after the dry run accepted the
        arguments): the step as a person types it, the patterns, the hunk's file
        (workspace-relative) and line."""
        found = resolve_step(self.engine.timeline, turn)
        return Narrow(
            None if found is None else self.engine.timeline.checkpoint_spec(found[1].id),
            None if paths is None else sorted({p.strip() for p in paths}),
            None if hunk is None else (self.engine.workspace.rel(hunk[0]), hunk[1]),
        )

    def _operate(
        self,
        tool: str,
        operation: str,
        on_conflict: str,
        run: Callable[[bool], OperationResult],
        confirm_token: str | None,
        checkpoint: Callable[[], str] | None = None,
        scope: Callable[[], Narrow] | None = None,
    ) -> CallToolResult:
        """Plan (a dry run, which writes nothing) and, with a token the plan matches, carry out.
        The store stays locked from the plan to the end, so no other process moves the timeline
        in between."""
        engine = self.engine

        def current() -> tuple[OperationResult, Plan, Narrow | None]:
            planned = run(True)
            narrow = scope() if scope else None
            bound = narrow.bound() if narrow else ()
            return planned, make_plan(engine, planned, checkpoint() if checkpoint else None, bound), narrow

        with engine.transaction():
            if confirm_token is None or not confirm_token.strip():
                return self._planned(tool, *current())
            self.book.redeem(confirm_token, operation, on_conflict, lambda: current()[1], again=tool)
            done = run(False)
            if done.applied and done.entry is not None:  # asked before anything else moves the timeline
                take_back = _take_back(engine, done.entry)
        if not done.applied or done.entry is None:
            structured = {**done.model_dump(mode="json"), "status": "stopped"}
            return _answer(structured, text.result(done, "STOPPED", done.next_action))
        structured = {**done.model_dump(mode="json"), "status": "done", "take_back": take_back}
        summary = text.result(done, "DONE", done.next_action)
        arguments = ", ".join(f"{k}={v!r}" for k, v in take_back["arguments"].items())
        summary += f"\nto take it back here: {take_back['tool']}({arguments}), a plan first, then the person's yes"
        return _answer(structured, summary)

    def _planned(self, tool: str, planned: OperationResult, plan: Plan, narrow: Narrow | None) -> CallToolResult:
        if planned.verdict == "refused":  # nothing would be written: nothing to confirm
            token = None
            next_action = f"this plan cannot be carried out as it is (no confirmation token): {planned.next_action}"
        else:
            token = self.book.issue(plan)
            next_action = (
                f"show this plan to the person and ask whether to carry it out; only if they agree, call {tool} "
                f"again with the same arguments and confirm_token \"{token}\" (good for this plan only, for "
                f"{TOKEN_LIFETIME // 60} minutes; refused if anything changes meanwhile)"
            )
        structured = {
            **planned.model_dump(mode="json"),
            "status": "planned",
            "next_action": next_action,
            "confirm_token": token,
            "confirm_expires_in": TOKEN_LIFETIME if token else None,
        }
        if narrow is not None:
            structured["taking_back"] = narrow.as_data(planned)
        summary = text.result(planned, "PLAN", next_action, None if narrow is None else narrow.as_data(planned))
        if token:
            summary += f"\nconfirm_token: {token}"
        return _answer(structured, summary)
