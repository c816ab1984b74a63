"""The public protocol of the Takeback language server: method names, params and results.

Every custom request lives under ``takeback/``; its params are an attrs class here (pygls's
converter reads and writes them in camelCase). Everything on the wire is camelCase: results
that are engine objects (an ``Entry``, an ``OperationResult``, a ``StoreStatus``) are the CLI's
``--json`` shape with every field name camelCase, made in one place, ``to_wire``, which the
converter applies to every pydantic model a handler answers. ``PROTOCOL_VERSION`` is
advertised at ``initialize``. docs/protocol.md documents all of it and vscode-client/src
mirrors it; tests keep the doc and the client's types in step with the names below.

``TakebackProtocol`` maps each method to its request type, so pygls structures the params
(without it pygls turns unknown params into namedtuples and mangles URI keys).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, Literal

import attrs
import cattrs
from lsprotocol import types
from pydantic import BaseModel
from pydantic.alias_generators import to_camel
from pygls.protocol import JsonRPCRequestMessage, LanguageServerProtocol, default_converter, lsp_method

from ..core.models import Entry, OnConflict, UnsavedFile  # OnConflict: the one list of choices

PROTOCOL_VERSION = 2
"""Raised whenever a message changes shape (docs/protocol.md lists the versions); the server
advertises it at ``initialize`` (``capabilities.experimental.takeback.protocolVersion``) and
clients refuse a server that speaks another."""

# --------------------------------------------------------------------------- method names

BEGIN_TURN = "takeback/beginTurn"
END_TURN = "takeback/endTurn"
APPLY_EDIT = "takeback/applyEdit"
UNDO = "takeback/undo"
REDO = "takeback/redo"
REVERT_TURN = "takeback/revertTurn"
RESTORE = "takeback/restore"
TIMELINE = "takeback/timeline"
TURN = "takeback/turn"
DIFF = "takeback/diff"
FILE_AT = "takeback/fileAt"
RECORD_CHECK = "takeback/recordCheck"
STATUS = "takeback/status"
SAVE = "takeback/save"
HUNKS = "takeback/hunks"
BLAME = "takeback/blame"
TIMELINE_CHANGED = "takeback/timelineChanged"  # notification, server -> client

# workspace/executeCommand commands
CMD_UNDO = "takeback.undoTurn"
CMD_REDO = "takeback.redoTurn"
CMD_REVERT = "takeback.revertTurn"
CMD_RESTORE = "takeback.restore"
CMD_SAVE = "takeback.save"
COMMANDS = (CMD_UNDO, CMD_REDO, CMD_REVERT, CMD_RESTORE, CMD_SAVE)

# JSON-RPC error codes (the engine's errors carry them; see takeback.errors)
ERROR_CODES = {
    -32001: "error: an unexpected Takeback error",
    -32002: "not-found: unknown turn, checkpoint, or a path the turn did not change",
    -32003: "nothing-to-do: nothing to undo / redo, no green turn",
    -32602: "invalid-input: malformed params or edit, bad turn spec or option",
    -32004: "outside-workspace: a URI outside every workspace folder (or into .git)",
    -32005: "state: the request does not fit the timeline (no open turn, editor refused, timeline changed meanwhile)",
    -32006: "stale: a document version or content that no longer matches "
            "(changed-meanwhile: another program wrote to a file an operation wrote)",
    -32007: "store: the private store cannot be read or written",
    -32008: "busy: another process held the store's lock too long",
    -32009: "cannot-write: a workspace file could not be written (permission, read-only file system, full disk)",
    -32800: "cancelled: the request was cancelled before anything was written",
}


# --------------------------------------------------------------------------- params


@attrs.define
class FolderParams:
    """Common to every request: which workspace folder (default: the first one)."""

    folder: str | None = None
    """A workspace folder URI; needed only in a multi-root workspace."""


@attrs.define
class BeginTurnParams:
    session_id: str | None = None
    label: str | None = None
    agent: str | None = None
    folder: str | None = None
    bracket: bool = True
    """Also record whatever changes on disk until endTurn (shell commands, formatters)."""


@attrs.define
class CheckParams:
    name: str
    status: Literal["passed", "failed", "error", "skipped"]
    command: str | None = None
    exit_code: int | None = None


@attrs.define
class EndTurnParams:
    turn_id: str | None = None
    commands_run: list[str] = attrs.field(factory=list)
    checks: list[CheckParams] = attrs.field(factory=list)
    folder: str | None = None


@attrs.define
class ApplyEditParams:
    edit: types.WorkspaceEdit
    label: str | None = None
    session_id: str | None = None
    turn_id: str | None = None
    agent: str | None = None


@attrs.define
class OperationParams:
    """undo and redo."""

    dry_run: bool = False
    on_conflict: OnConflict = "abort"
    folder: str | None = None
    expect_turn_id: str | None = None
    """Only act if the operation would target this entry (code actions pass it)."""
    work_done_token: int | str | None = None


@attrs.define
class HunkParams:
    """One hunk of a file's change: the file, and a 0-based line that the hunk covers, of the
    document as it stands now (``of="now"``: a code action on the lines) or of the change's
    result (``of="change"``: the right side of a turn's or step's diff view)."""

    uri: str
    line: int
    of: Literal["now", "change"] = "now"


@attrs.define
class RevertTurnParams:
    turn_id: str
    """A turn (``#12``, an id, ``last``) or one step of it (``#12.3``)."""
    dry_run: bool = False
    on_conflict: OnConflict = "abort"
    uri: str | None = None
    """Revert only the turn's changes to this file."""
    pathspec: list[str] | None = None
    """Revert only the changes to the files these patterns name (git's pathspec, from the
    workspace top: ``src/app.py``, ``tests/**``)."""
    hunk: HunkParams | None = None
    """Revert only this hunk of one file's change."""
    folder: str | None = None
    expect_turn_id: str | None = None
    """Only act if the revert would target this entry (code actions pass it)."""
    work_done_token: int | str | None = None


@attrs.define
class RestoreParams:
    checkpoint_id: str
    """A checkpoint id, ``#N`` (turn N's last checkpoint), ``#N.k`` (``#N.0``: where turn N
    started), or ``last-green``."""
    dry_run: bool = False
    on_conflict: OnConflict = "abort"
    folder: str | None = None
    work_done_token: int | str | None = None


@attrs.define
class TimelineParams:
    session_id: str | None = None
    limit: int | None = None
    before: int | None = None
    folder: str | None = None
    include_empty: bool = False
    """Also list empty turns (ended, no file changed); by default they are left out and counted
    (``TimelineResult.hidden_empty``), as ``takeback log`` does."""


@attrs.define
class TurnParams:
    turn_id: str
    folder: str | None = None


@attrs.define
class DiffParams:
    turn_id: str
    uri: str | None = None
    folder: str | None = None


@attrs.define
class FileAtParams:
    turn_id: str
    uri: str
    side: Literal["before", "after"] = "after"
    folder: str | None = None
    step: int | None = None
    """The file before or after this step of the turn (k, from 1, as in ``#N.k``), not the whole turn."""


@attrs.define
class HunksParams:
    turn_id: str
    uri: str
    folder: str | None = None
    step: int | None = None
    """The hunks of this step of the turn (k, from 1, as in ``#N.k``), not of the whole turn."""


@attrs.define
class BlameParams:
    uri: str
    first: int | None = None
    """The first line to answer (from 1, as ``takeback blame -L``); default: the top."""
    last: int | None = None
    """The last line to answer (from 1, included); default: the end."""
    folder: str | None = None


@attrs.define
class RecordCheckParams:
    name: str
    status: Literal["passed", "failed", "error", "skipped"]
    turn_id: str | None = None
    command: str | None = None
    exit_code: int | None = None
    folder: str | None = None


@attrs.frozen
class HoverOptions:
    """What ``initializationOptions`` says of the line blame hover (``blame.py``)."""

    enabled: bool = True
    """``hover``: false switches the hover off."""
    links: bool = False
    """``hoverCommandLinks``: write ``command:`` links (VS Code runs them), not command names."""


# --------------------------------------------------------------------------- results


def wire_name(field: str) -> str:
    """A field's name on the wire: ``next_action`` -> ``nextAction`` (as pygls names params)."""
    return to_camel(field)


def fields_sent(model: type[BaseModel]) -> list[str]:
    """The names of what a model sends: its fields, then its computed fields (``checks_passed``)."""
    return [*model.model_fields, *model.model_computed_fields]


def to_wire(model: BaseModel) -> dict[str, Any]:
    """An engine object as the server sends it: what the CLI's ``--json`` prints
    (``model_dump(mode="json")``), with the models' field names camelCase. Only field names are
    renamed, found from the models themselves: keys that are data (a path or an id in a dict
    field) stay as they are."""
    return _renamed(model, model.model_dump(mode="json"))


def _renamed(value: Any, dumped: Any) -> Any:
    if isinstance(value, BaseModel):
        return {wire_name(name): _renamed(getattr(value, name), dumped[name]) for name in fields_sent(type(value)) if name in dumped}
    if isinstance(value, (list, tuple)):
        return [_renamed(v, d) for v, d in zip(value, dumped, strict=True)]
    return dumped  # a value, or a dict of values (no model sent has a dict of models)


@attrs.define
class ApplyEditResult:
    applied: bool
    checkpoint_id: str
    entry: Entry
    """The turn the batch joined."""
    failure_reason: str | None
    folder: str


@attrs.define
class SessionStart:
    """How a session listed in a page begins (its first turn may be on an older page)."""

    session: str
    label: str | None
    """The session's first prompt: its oldest turn's label that is not blank."""
    number: int
    """Its first turn's number."""
    created_at: str
    """When its first turn began (ISO 8601, as an Entry's ``createdAt``)."""


@attrs.define
class TimelineResult:
    entries: list[Entry]
    """Newest first."""
    next_before: int | None
    """Pass as ``before`` for the next page; null on the last page."""
    folder: str
    hidden_empty: int
    """Empty turns this page left out (``includeEmpty`` false), from ``before`` down to where the
    next page starts."""
    sessions: list[SessionStart]
    """Each session of ``entries``, in the order they first appear: its first turn and prompt."""
    unsaved: list[UnsavedFile] = attrs.field(factory=list)
    """What the newest operation applied in the editor and the disk lacks (as ``takeback/status``)."""


@attrs.define
class HunkRange:
    """One hunk of a change, in the lines of the change's result (the right side of its diff
    view): ``start``..``end`` (0-based, end excluded; equal for a hunk that only removed lines,
    which sits between lines ``start - 1`` and ``start``), how many lines it ``removed``, and the
    0-based ``line`` that names it to ``takeback/revertTurn`` (``hunk.of = "change"``)."""

    start: int
    end: int
    removed: int
    line: int


@attrs.define
class HunksResult:
    hunks: list[HunkRange]
    """In the order of the file; empty for a file the change deleted, a binary file, a symlink."""
    folder: str


@attrs.define
class DiffResult:
    diff: str
    folder: str


@attrs.define
class FileAtResult:
    exists: bool
    content: str | None
    encoding: Literal["utf-8", "base64"]
    folder: str


@attrs.define
class TimelineChangedParams:
    folder: str
    head: str | None
    """The timeline's version: the log head, with ``+<entry>`` while an open turn's begin is not
    in the log yet. Opaque to clients: it only tells one state from another."""
    reason: str
    """What changed it: ``request`` (this server), ``external`` (another process, e.g. the CLI),
    or ``hook-failure`` (an agent's hook logged a failure: the folder's status changed)."""


# --------------------------------------------------------------------------- request types


@attrs.define
class InvalidParams:
    """Stands for params that did not match their type; handlers answer -32602 with ``message``."""

    message: str

    @classmethod
    def of(cls, exc: Exception) -> InvalidParams:
        details = "; ".join(m.replace("$.params.", "").replace("$.params", "params") for m in cattrs.transform_error(exc))
        return cls(f"invalid params: {details}")


def _request(method: str, params_type: type) -> type:
    cls = attrs.make_class(
        f"{params_type.__name__.removesuffix('Params')}Request",
        {
            "id": attrs.field(type=int | str),  # type: ignore[arg-type]  # attrs keeps any annotation; stubs say type
            "params": attrs.field(type=params_type),
            "method": attrs.field(type=str, default=method),
            "jsonrpc": attrs.field(type=str, default="2.0"),
        },
    )
    return cls


PARAMS: dict[str, type] = {
    BEGIN_TURN: BeginTurnParams,
    END_TURN: EndTurnParams,
    APPLY_EDIT: ApplyEditParams,
    UNDO: OperationParams,
    REDO: OperationParams,
    REVERT_TURN: RevertTurnParams,
    RESTORE: RestoreParams,
    TIMELINE: TimelineParams,
    TURN: TurnParams,
    DIFF: DiffParams,
    FILE_AT: FileAtParams,
    HUNKS: HunksParams,
    BLAME: BlameParams,
    RECORD_CHECK: RecordCheckParams,
    STATUS: FolderParams,
    SAVE: FolderParams,
}
"""Every custom request and its params type."""

COMMAND_ARGUMENTS: dict[str, type] = {
    CMD_UNDO: OperationParams,
    CMD_REDO: OperationParams,
    CMD_REVERT: RevertTurnParams,
    CMD_RESTORE: RestoreParams,
    CMD_SAVE: FolderParams,
}
"""Every command takes at most one argument, an object shaped like the matching request's params."""

_REQUESTS = {method: _request(method, params) for method, params in PARAMS.items()}


def _strict(kind: type, what: str) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _type: Any) -> Any:
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise TypeError(f"expected {what}, not {json_type(value)}")
        return value

    return structure


def json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def converter() -> cattrs.Converter:
    """pygls's converter, with booleans and strings that must be so: cattrs reads ``"false"``,
    ``1`` or ``""`` as Python's ``bool()`` would (``dryRun: ""`` would be a real run, an editor's
    ``applied: "no"`` applied) and anything as ``str()`` (an object as a turn id)."""
    conv = default_converter()
    conv.register_structure_hook(bool, _strict(bool, "true or false"))
    conv.register_structure_hook(str, _strict(str, "a string"))
    conv.register_unstructure_hook_func(lambda t: isinstance(t, type) and issubclass(t, BaseModel), to_wire)
    return conv


class TakebackProtocol(LanguageServerProtocol):
    """pygls's protocol, taught the custom methods' types.

    Documents are synchronised by takeback.lsp.documents alone (it registers a handler for each
    of didOpen, didChange, didClose): the builtin handlers below only hand over to it (pygls's
    own copies use a position codec that rewrites the incoming ranges in place and splits lines
    where LSP does not).
    """

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Structure our requests here, so bad params get an error response.

        pygls logs a message it cannot structure and answers nothing, which leaves the client
        waiting; a request with bad params is handed over as ``InvalidParams`` instead and the
        handler answers -32602 with what was wrong.
        """
        method = data.get("method") if "jsonrpc" in data else None
        request = _REQUESTS.get(method) if "id" in data and method is not None else None
        if request is None or method is None:
            return super().structure_message(data)
        if data.get("params") is None or data.get("params") == []:
            data = {**data, "params": {}}  # Lua clients (Neovim) encode an empty table as []
        if not isinstance(data["params"], dict):
            # By-position params would be structured field by field into defaults: a preview
            # could run for real. Takeback's requests take named params only.
            kind = type(data["params"]).__name__
            return JsonRPCRequestMessage(
                id=data["id"], method=method, jsonrpc=data["jsonrpc"],
                params=InvalidParams(f"invalid params: {method} takes an object of named params, not a {kind}"),
            )
        try:
            return self._converter.structure(data, request)
        except Exception as exc:  # noqa: BLE001 - any structuring failure is the client's input
            return JsonRPCRequestMessage(
                id=data["id"], method=method, jsonrpc=data["jsonrpc"], params=InvalidParams.of(exc)
            )

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        """pygls's initialize, with the protocol's version in the capabilities."""
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"takeback": {"protocolVersion": PROTOCOL_VERSION}}
        return result

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> None:  # type: ignore[override]  # no user handler to yield to
        """pygls's shutdown, cancelling the requests still running from a copy of their table:
        cancelling one a generator handler runs (``initialize``, ``workspace/executeCommand``)
        takes it out of the table at once, which broke pygls's loop over the table itself: the
        shutdown failed (-32603), the server was not shutting down, and ``exit`` then ended it
        with status 1."""
        for future in list(self._request_futures.values()):
            if not future.done():
                future.cancel()
        self._shutdown = True

    def get_message_type(self, method: str) -> type | None:  # type: ignore[override]  # pygls's is an lru_cache
        request = _REQUESTS.get(method)
        if request is not None:
            return request
        return super().get_message_type(method)

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Generator[Any, Any, None]:
        yield self.fm.features[types.TEXT_DOCUMENT_DID_OPEN], (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        yield self.fm.features[types.TEXT_DOCUMENT_DID_CHANGE], (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Generator[Any, Any, None]:
        yield self.fm.features[types.TEXT_DOCUMENT_DID_CLOSE], (params,), None
