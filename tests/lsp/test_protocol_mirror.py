"""The VS Code client's mirror of the protocol (vscode-client/src/lspExt.ts, model/) stays in
step with the server's (server/takeback/lsp/protocol.py, models.py, errors.py): every request,
the notification, the server's commands, every error code, the on-conflict choices and the other
choices the types name, the protocol version, and every field name of every object the server
sends (as the server names it on the wire: a renamed field fails here). Read from the
TypeScript source; no client or server needed."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import attrs
from pydantic import BaseModel

from takeback.core import models
from takeback.core.timeline import REDO_KINDS
from takeback.engine import failures
from takeback.errors import TakebackError
from takeback.lsp import protocol

CLIENT = Path(__file__).resolve().parents[2] / "vscode-client" / "src"
SOURCE = (CLIENT / "lspExt.ts").read_text()
CHOICES = (CLIENT / "model" / "choices.ts").read_text()
MODEL = CLIENT / "model"

ENGINE_RESULTS = (models.Entry, models.OperationResult, models.StoreStatus, models.Blame)
"""The engine objects the server answers; every model they hold is sent too."""
WRAPPERS = (protocol.ApplyEditResult, protocol.TimelineResult, protocol.DiffResult, protocol.FileAtResult,
            protocol.TimelineChangedParams, protocol.SessionStart, protocol.HunksResult, protocol.HunkRange)


def _block(name: str, source: str = SOURCE) -> str:
    found = re.search(rf"export const {name} = (\{{.*?\}}|\[.*?\]) as const;", source, re.S)
    assert found, f"lspExt.ts has no {name}"
    return found.group(1)


def _all_errors() -> set[int]:
    todo, codes = [TakebackError], set()
    while todo:
        cls = todo.pop()
        codes.add(cls.rpc_code)
        todo += cls.__subclasses__()
    return codes


def test_every_request_and_the_notification_are_mirrored() -> None:
    requests = set(re.findall(r'new RequestType<[^>]*>\("([^"]+)"\)', SOURCE))
    notifications = set(re.findall(r'new NotificationType<[^>]*>\("([^"]+)"\)', SOURCE))
    assert requests == set(protocol.PARAMS)
    assert notifications == {protocol.TIMELINE_CHANGED}


def test_the_server_commands_are_mirrored() -> None:
    assert set(re.findall(r'"(takeback\.[A-Za-z]+)"', _block("SERVER_COMMANDS"))) == set(protocol.COMMANDS)


def test_every_error_code_is_mirrored() -> None:
    mirrored = {int(code) for code in re.findall(r":\s*(-\d+)", _block("ErrorCodes"))}
    assert mirrored == set(protocol.ERROR_CODES) | _all_errors()


def test_the_on_conflict_choices_are_mirrored() -> None:
    assert tuple(re.findall(r'"([a-z]+)"', _block("ON_CONFLICT_CHOICES", CHOICES))) == models.ON_CONFLICT


def _interfaces() -> dict[str, set[str]]:
    """Every interface of lspExt.ts and its field names (those of the interfaces it extends included)."""
    found = {name: (extends, body) for name, extends, body in
             re.findall(r"export interface (\w+)(?: extends ([\w, ]+))? \{\n(.*?)\n\}", SOURCE, re.S)}
    fields = {name: set(re.findall(r"^  (\w+)\??:", body, re.M)) for name, (_, body) in found.items()}
    for name, (extends, _) in found.items():
        for parent in filter(None, (p.strip() for p in extends.split(","))):
            fields[name] |= fields[parent]
    return fields


def models_sent() -> set[type[BaseModel]]:
    """The engine's models the server sends: its results and every model they hold."""
    todo, seen = list(ENGINE_RESULTS), set()
    while todo:
        model = todo.pop()
        if model not in seen:
            seen.add(model)
            for field in model.model_fields.values():
                todo += [t for t in _types_in(field.annotation) if isinstance(t, type) and issubclass(t, BaseModel)]
    return seen


def _types_in(annotation: object) -> list[object]:
    return [annotation, *[t for arg in typing.get_args(annotation) for t in _types_in(arg)]]


def _literal_union(name: str, source: str = SOURCE) -> tuple[str, ...]:
    found = re.search(rf"export type {name} = ((?:\s*\|?\s*\"[^\"]+\")+);", source)
    assert found, f"no literal union type {name}"
    return tuple(re.findall(r'"([^"]+)"', found.group(1)))


def test_the_engine_objects_fields_are_named_as_the_server_sends_them() -> None:
    interfaces = _interfaces()
    for model in models_sent():
        assert model.__name__ in interfaces, f"lspExt.ts has no interface {model.__name__}"
        sent = {protocol.wire_name(name) for name in protocol.fields_sent(model)}
        assert interfaces[model.__name__] == sent, f"{model.__name__}: client {sorted(interfaces[model.__name__] - sent)}, server {sorted(sent - interfaces[model.__name__])}"


def test_the_wrappers_fields_are_named_as_the_server_sends_them() -> None:
    interfaces = _interfaces()
    start = protocol.SessionStart(session="s", label=None, number=1, created_at="2026-01-01T00:00:00Z")
    page = protocol.TimelineResult(entries=[], next_before=None, folder="file:///w", hidden_empty=0, sessions=[start])
    wire = protocol.converter().unstructure(page)
    assert set(wire) == {"entries", "nextBefore", "folder", "hiddenEmpty", "sessions"}  # wire_name is pygls's naming
    assert set(wire["sessions"][0]) == {"session", "label", "number", "createdAt"}
    for cls in WRAPPERS:
        sent = {protocol.wire_name(f.name) for f in attrs.fields(cls)}
        assert interfaces[cls.__name__] == sent, cls.__name__


def test_every_param_the_client_names_is_one_the_server_reads() -> None:
    interfaces = _interfaces()
    for cls in {*protocol.PARAMS.values(), *protocol.COMMAND_ARGUMENTS.values(), protocol.CheckParams}:
        read = {protocol.wire_name(f.name) for f in attrs.fields(cls)}
        assert cls.__name__ in interfaces and interfaces[cls.__name__] <= read, f"{cls.__name__}: {interfaces.get(cls.__name__)} vs {read}"


def test_the_choices_the_types_name_are_the_servers() -> None:
    for name in ("EntryKind", "EntryState", "Verdict", "CheckStatus"):
        assert _literal_union(name) == typing.get_args(getattr(models, name)), name


def test_the_kinds_a_redo_re_applies_are_the_servers() -> None:
    kinds = re.search(r"export const REDO_KINDS: ReadonlySet<string> = new Set\(\[([^\]]*)\]\);", (MODEL / "tree.ts").read_text())
    assert kinds and tuple(re.findall(r'"([a-z]+)"', kinds.group(1))) == REDO_KINDS


def test_the_protocol_version_and_the_constants_the_client_reads_are_the_servers() -> None:
    version = re.search(r"export const PROTOCOL_VERSION = (\d+);", (MODEL / "version.ts").read_text())
    assert version and int(version.group(1)) == protocol.PROTOCOL_VERSION
    log_name = re.search(r'export const FAILURE_LOG = "([^"]+)";', (MODEL / "failures.ts").read_text())
    assert log_name and log_name.group(1) == failures.FILE_NAME
