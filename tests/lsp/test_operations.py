"""Undo, redo, per-file revert and conflicts through the real server, driven the way editors do:
code actions, workspace/executeCommand and the takeback/* requests, with the person's unsaved
edits in open buffers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from .editor import Editor

APP = "def main():\n    return 1\n\n\ndef other():\n    return 2\n"
UTIL = "def helper(x):\n    return x * 2\n"


def _range(l1: int, c1: int, l2: int, c2: int) -> dict:
    return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}


async def agent_edit(editor: Editor, app: str, label: str = "return ten") -> dict:
    return await editor.request(
        "takeback/applyEdit",
        {
            "label": label,
            "edit": {
                "changes": {
                    app: [{"range": _range(1, 11, 1, 12), "newText": "10"}],
                    editor.uri("src/util.py"): [{"range": _range(1, 15, 1, 16), "newText": "3"}],
                }
            },
        },
    )


async def code_actions(editor: Editor, uri: str) -> list[types.CodeAction]:
    result = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=1, character=0), end=types.Position(line=1, character=0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return list(result or [])


async def run_action(editor: Editor, action: types.CodeAction) -> dict:
    assert action.command is not None
    return await editor.command(action.command.command, *(action.command.arguments or []))


async def test_code_actions_undo_redo_and_revert_one_file(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    assert (await agent_edit(editor, app))["applied"] is True
    editor.type(app, "def other():", "def other():  # person")  # unsaved, in the same buffer

    titles = [a.title for a in await code_actions(editor, app)]
    assert titles == ["Undo agent turn #1: return ten (2 files)", "Revert turn #1's changes to this file",
                      "Take back these lines from turn #1: return ten"]  # on line 2, which #1 wrote
    assert all(a.kind == types.CodeActionKind.QuickFix for a in await code_actions(editor, app))
    undo = await run_action(editor, (await code_actions(editor, app))[0])
    assert undo["operation"] == "undo" and undo["verdict"] == "safe" and undo["applied"] is True
    assert editor.text(app) == APP.replace("def other():", "def other():  # person")
    assert (repo / "src/util.py").read_text() == UTIL

    actions = await code_actions(editor, app)
    assert [a.title for a in actions] == ["Redo agent turn #1"]
    redo = await run_action(editor, actions[0])
    assert redo["operation"] == "redo" and redo["applied"] is True
    assert editor.text(app) == APP.replace("return 1", "return 10").replace("def other():", "def other():  # person")
    assert (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")

    # after the redo, turn #1 is the last applied turn again: revert just this file
    actions = await code_actions(editor, app)
    revert = next(a for a in actions if a.title == "Revert turn #1's changes to this file")
    result = await run_action(editor, revert)
    assert result["operation"] == "revert" and [r["path"] for r in result["restored"]] == ["src/app.py"]
    assert editor.text(app) == APP.replace("def other():", "def other():  # person")
    assert (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")  # the other file is kept
    timeline = await editor.request("takeback/timeline", {})
    assert [(e["number"], e["kind"], e["state"]) for e in timeline["entries"]] == [
        (4, "revert", "applied"), (3, "redo", "applied"), (2, "undo", "reverted"), (1, "turn", "applied"),
    ]
    # every change was announced
    assert any(n["reason"] == "request" for n in editor.notifications)
    # a code action offered for a timeline that moved since is refused, not acted on
    try:
        await editor.command("takeback.undoTurn", {"expectTurnId": "01AAAAAAAAAAAAAAAAAAAAAAAA"})
        raise AssertionError("an undo for another turn was carried out")
    except Exception as exc:  # noqa: BLE001
        assert getattr(exc, "code", None) == -32005, exc
        assert "the timeline moved" in str(exc)
    assert editor.text(app) == APP.replace("def other():", "def other():  # person")


async def test_overlapping_unsaved_edit_is_a_conflict_and_nothing_is_written(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    await agent_edit(editor, app)
    editor.type(app, "return 10", "return 11")  # the person edits the agent's line, unsaved
    before = editor.text(app)
    result = await editor.request("takeback/undo", {})
    assert result["verdict"] == "refused" and result["applied"] is False
    assert [c["path"] for c in result["conflicts"]] == ["src/app.py"]
    assert "--on-conflict" in result["nextAction"]
    assert editor.text(app) == before
    assert (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")
    # the dry run shows what 'skip' would do; then do it
    dry = await editor.request("takeback/undo", {"onConflict": "skip", "dryRun": True})
    assert dry["dryRun"] is True and [r["path"] for r in dry["restored"]] == ["src/util.py"] and dry["patch"]
    done = await editor.request("takeback/undo", {"onConflict": "skip"})
    assert done["verdict"] == "partial" and done["applied"] is True
    assert editor.text(app) == before and (repo / "src/util.py").read_text() == UTIL


async def test_progress_is_reported_and_a_cancelled_operation_writes_nothing(editor: Editor, repo: Path) -> None:
    import fcntl
    import os

    app = editor.open("src/app.py")
    await agent_edit(editor, app)
    # progress on a token the client gives
    editor.client.progress_reports["tok-1"] = []
    dry = await editor.request("takeback/undo", {"dryRun": True, "workDoneToken": "tok-1"})
    assert dry["dryRun"] is True
    kinds = [p.kind for p in editor.client.progress_reports["tok-1"]]
    assert kinds[0] == "begin" and kinds[-1] == "end"

    # cancel while the operation waits for the store (another process holds its lock)
    status = await editor.request("takeback/status", {})
    fd = os.open(Path(status["store"]) / "lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        pending = asyncio.ensure_future(
            editor.client.protocol.send_request_async("takeback/undo", {}, msg_id="undo-to-cancel")
        )
        await asyncio.sleep(0.5)
        editor.client.protocol.notify("$/cancelRequest", types.CancelParams(id="undo-to-cancel"))
        await asyncio.sleep(0.3)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    try:
        await pending
        raise AssertionError("the cancelled undo answered a result")
    except Exception as exc:  # noqa: BLE001
        assert getattr(exc, "code", None) == -32800, exc
    assert editor.text(app) == APP.replace("return 1", "return 10")
    assert (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")
    timeline = await editor.request("takeback/timeline", {})
    assert [e["kind"] for e in timeline["entries"]] == ["turn"]
    # and the server goes on working
    assert (await editor.request("takeback/undo", {}))["applied"] is True


async def test_an_open_whole_disk_turn_is_what_the_code_action_names_and_the_click_undoes(editor: Editor, repo: Path) -> None:
    """While a bracketed turn is open with changes on disk (no end yet), the status, the code
    action and the undo it runs all mean that turn, not the one before (one rule, the engine's)."""
    app = editor.open("src/app.py")
    await agent_edit(editor, app)  # turn #1
    await editor.request("takeback/beginTurn", {"label": "shell work"})  # turn #2, whole-disk
    util = editor.uri("src/util.py")
    assert [a.title for a in await code_actions(editor, util)] == ["Undo agent turn #1: return ten (2 files)",
                                                                   "Revert turn #1's changes to this file",
                                                                   "Take back these lines from turn #1: return ten"]
    (repo / "src/util.py").write_text("# rewritten by a formatter\n")  # on disk, by the agent's shell
    assert (await editor.request("takeback/status", {}))["undoTarget"] == 2
    actions = await code_actions(editor, util)
    assert actions[0].title == "Undo agent turn #2: shell work (1 file)"
    # #2 did not touch app.py: only #1's lines are offered there
    assert [a.title for a in await code_actions(editor, app)] == ["Take back these lines from turn #1: return ten"]
    undo = await run_action(editor, actions[0])
    assert (undo["targetNumber"], undo["applied"]) == (2, True)
    assert (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")  # #1's change stays


async def test_commands_take_one_object_or_none_and_restore_goes_back_to_a_checkpoint(editor: Editor, repo: Path) -> None:
    util = editor.uri("src/util.py")
    first = await agent_edit(editor, editor.uri("src/app.py"))
    assert first["applied"] is True
    with pytest.raises(Exception) as info:
        await editor.command("takeback.undoTurn", {}, {})
    assert getattr(info.value, "code", None) == -32602 and "takes one argument (an object), not 2" in str(info.value)
    assert (repo / "src/util.py").read_text() == "def helper(x):\n    return x * 3\n"  # nothing was done
    later = await editor.request("takeback/applyEdit", {"label": "four", "edit": {"changes": {
        util: [{"range": _range(1, 15, 1, 16), "newText": "4"}]}}})
    assert later["applied"] is True and (repo / "src/util.py").read_text() == "def helper(x):\n    return x * 4\n"
    restored = await editor.command("takeback.restore", {"checkpointId": "1"})
    assert restored["operation"] == "restore" and restored["applied"] is True
    assert (repo / "src/util.py").read_text() == "def helper(x):\n    return x * 3\n"
    undone = await editor.command("takeback.undoTurn", None)  # a null argument means no options
    assert undone["operation"] == "undo" and undone["applied"] is True
