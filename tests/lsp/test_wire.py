"""One casing on the wire: every answer and notification of a real server is camelCase
throughout (engine objects included), data keeps its own spelling, and the server says which
protocol version it speaks at ``initialize``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import make_repo
from takeback.lsp import protocol

from .editor import start


def _snake_keys(value: Any, where: str = "") -> list[str]:
    if isinstance(value, dict):
        found = [f"{where}.{key}" for key in value if "_" in key]
        return found + [k for key, v in value.items() for k in _snake_keys(v, f"{where}.{key}")]
    if isinstance(value, list):
        return [k for i, v in enumerate(value) for k in _snake_keys(v, f"{where}[{i}]")]
    return []


async def test_every_answer_is_camel_case_and_data_keeps_its_spelling(tmp_path: Path, isolated_environment: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/my_util.py": "x = 1\n", "old_name.txt": "a\n"})
    editor, initialized = await start("neovim", [repo])
    try:
        assert initialized.capabilities.experimental == {"takeback": {"protocolVersion": protocol.PROTOCOL_VERSION}}
        uri = editor.uri("src/my_util.py")
        begun = await editor.request("takeback/beginTurn", {"label": "rename", "sessionId": "chat_1"})
        edit = {"documentChanges": [
            {"kind": "rename", "oldUri": editor.uri("old_name.txt"), "newUri": editor.uri("new_name.txt")},
            {"textDocument": {"uri": uri, "version": None},
             "edits": [{"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}}, "newText": "2"}]},
        ]}
        applied = await editor.request("takeback/applyEdit", {"edit": edit, "turnId": begun["id"]})
        ended = await editor.request("takeback/endTurn", {"checks": [{"name": "unit_tests", "status": "passed", "exitCode": 0}]})
        (repo / "src/my_util.py").write_text("x = 3\n")  # a later edit in the same place: undo conflicts
        preview = await editor.request("takeback/undo", {"dryRun": True})
        forced = await editor.command("takeback.undoTurn", {"onConflict": "force"})
        answers = {
            "beginTurn": begun,
            "applyEdit": applied,
            "endTurn": ended,
            "undo (dry run)": preview,
            "takeback.undoTurn": forced,
            "timeline": await editor.request("takeback/timeline", {}),
            "turn": await editor.request("takeback/turn", {"turnId": "1"}),
            "status": await editor.request("takeback/status", {}),
            "timelineChanged": editor.notifications,
        }
        for name, answer in answers.items():
            assert _snake_keys(answer) == [], name
        # Engine objects' fields are camelCase; what they hold is data and keeps its spelling.
        assert preview["dryRun"] is True and preview["nextAction"] and preview["conflicts"][0]["markersPossible"] is True
        assert forced["targetNumber"] == 1 and forced["onConflict"] == "force" and forced["entry"]["createdAt"]
        renamed = next(f for f in ended["files"] if f["kind"] == "renamed")
        assert (renamed["path"], renamed["oldPath"]) == ("new_name.txt", "old_name.txt")
        assert ended["session"] == "chat_1" and ended["checks"][0] == {**ended["checks"][0], "name": "unit_tests", "exitCode": 0}
        status = answers["status"]
        assert status["redoTarget"] == 2 and status["undoTarget"] is None and status["retention"]["maxEntries"] > 0
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()
