"""The VS Code client's mirror of the protocol (vscode-client/src/lspExt.ts, model/choices.ts) stays in step with
the server's (server/takeback/lsp/protocol.py, models.py, errors.py): every request, the
notification, the server's commands, every error code and the on-conflict choices. Read from
the TypeScript source; no client or server needed."""

from __future__ import annotations

import re
from pathlib import Path

from takeback.core.models import ON_CONFLICT
from takeback.errors import TakebackError
from takeback.lsp import protocol

CLIENT = Path(__file__).resolve().parents[2] / "vscode-client" / "src"
SOURCE = (CLIENT / "lspExt.ts").read_text()
CHOICES = (CLIENT / "model" / "choices.ts").read_text()


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
    assert tuple(re.findall(r'"([a-z]+)"', _block("ON_CONFLICT_CHOICES", CHOICES))) == ON_CONFLICT
