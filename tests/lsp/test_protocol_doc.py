"""docs/protocol.md stays in step with server/takeback/lsp/protocol.py (no server needed)."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from takeback.errors import TakebackError
from takeback.lsp import protocol

from .test_protocol_mirror import models_sent

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()
camel = protocol.wire_name


def test_every_method_command_and_notification_is_documented() -> None:
    for method in [*protocol.PARAMS, protocol.TIMELINE_CHANGED]:
        assert f"### `{method}`" in DOC or f"`{method}`" in DOC.split("## Requests")[1], method
    for command in protocol.COMMANDS:
        assert f"`{command}`" in DOC, command


def test_every_param_and_result_field_is_documented() -> None:
    types = {*protocol.PARAMS.values(), *protocol.COMMAND_ARGUMENTS.values(), protocol.CheckParams,
             protocol.ApplyEditResult, protocol.TimelineResult, protocol.DiffResult, protocol.FileAtResult,
             protocol.TimelineChangedParams, protocol.HunksResult, protocol.HunkRange}
    for cls in types:
        for field in attrs.fields(cls):
            name = camel(field.name)
            assert re.search(rf"`{name}\??`|\b{name}\??[,}} ]", DOC), f"{cls.__name__}.{name} is not in docs/protocol.md"


def test_every_engine_object_field_is_documented_as_sent() -> None:
    section = DOC.split("## Engine objects")[1].split("\n## ")[0]
    for model in models_sent():
        for name in protocol.fields_sent(model):
            assert re.search(rf"`{camel(name)}`|\b{camel(name)}[,}}: ]", section), f"{model.__name__}.{camel(name)} is not in docs/protocol.md"


def test_the_protocol_version_is_documented() -> None:
    assert f'"protocolVersion": {protocol.PROTOCOL_VERSION}' in DOC
    assert f"- **{protocol.PROTOCOL_VERSION}**: " in DOC.split("## Versions")[1]


def test_every_error_code_is_documented() -> None:
    codes = {cls.rpc_code for cls in [TakebackError, *_subclasses(TakebackError)]} | set(protocol.ERROR_CODES)
    table = DOC.split("## Error codes")[1]
    for code in codes:
        assert f"| {code} |" in table, code


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out
