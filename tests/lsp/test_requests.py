"""Turn brackets, timeline queries, JSON-RPC errors for bad input (the server keeps running and
writes nothing), changes made by another process (the CLI), and multi-root workspaces."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from helpers import make_repo, tree_state

from .editor import Editor, start

UTIL = "def helper(x):\n    return x * 2\n"


def _range(l1: int, c1: int, l2: int, c2: int) -> dict:
    return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}


def _edit(uri: str, line: int, c1: int, c2: int, text: str) -> dict:
    return {"changes": {uri: [{"range": _range(line, c1, line, c2), "newText": text}]}}


async def expect_error(editor: Editor, code: int, method: str, params: dict) -> str:
    with pytest.raises(Exception) as info:
        await editor.request(method, params)
    assert getattr(info.value, "code", None) == code, f"{method}: {info.value!r}"
    return str(info.value)


async def test_turn_bracket_checks_and_queries(editor: Editor, repo: Path) -> None:
    begun = await editor.request("takeback/beginTurn", {"label": "add feature", "sessionId": "chat-7", "agent": "test-agent"})
    assert begun["state"] == "open" and begun["number"] == 1
    util = editor.uri("src/util.py")
    applied = await editor.request("takeback/applyEdit", {"edit": _edit(util, 1, 15, 16, "3"), "turnId": begun["id"], "label": "batch 1"})
    assert applied["entry"]["id"] == begun["id"]
    (repo / "generated.txt").write_text("made by a shell command\n")  # around the server
    ended = await editor.request(
        "takeback/endTurn",
        {"turnId": begun["id"], "commandsRun": ["make gen"], "checks": [{"name": "pytest", "status": "passed", "command": "pytest -q"}]},
    )
    assert ended["state"] == "applied" and ended["commands"] == ["make gen"]
    assert sorted(f["path"] for f in ended["files"]) == ["generated.txt", "src/util.py"]
    assert ended["checks"][0]["name"] == "pytest" and ended["checks"][0]["status"] == "passed"

    second = await editor.request("takeback/applyEdit", {"edit": _edit(util, 1, 15, 16, "4"), "sessionId": "chat-8", "label": "four"})
    assert second["entry"]["number"] == 2
    checked = await editor.request("takeback/recordCheck", {"name": "pytest", "status": "failed", "exitCode": 1})
    assert checked["number"] == 2 and checked["checks"][-1]["status"] == "failed"

    page = await editor.request("takeback/timeline", {"limit": 1})
    assert [e["number"] for e in page["entries"]] == [2] and page["nextBefore"] == 2
    page2 = await editor.request("takeback/timeline", {"limit": 1, "before": page["nextBefore"]})
    assert [e["number"] for e in page2["entries"]] == [1] and page2["nextBefore"] is None
    only = await editor.request("takeback/timeline", {"sessionId": "chat-7"})
    assert [e["number"] for e in only["entries"]] == [1]

    turn = await editor.request("takeback/turn", {"turnId": "#1"})
    assert turn["label"] == "add feature" and turn["agent"] == "test-agent"
    diff = await editor.request("takeback/diff", {"turnId": "1", "uri": util})
    assert "-    return x * 2" in diff["diff"] and "+    return x * 3" in diff["diff"] and "generated" not in diff["diff"]
    created = await editor.request("takeback/fileAt", {"turnId": "1", "uri": editor.uri("generated.txt"), "side": "before"})
    assert created["exists"] is False and created["content"] is None
    after = await editor.request("takeback/fileAt", {"turnId": "1", "uri": editor.uri("generated.txt"), "side": "after"})
    assert after == {"exists": True, "content": "made by a shell command\n", "encoding": "utf-8", "folder": page["folder"]}

    # turn #1 passed its checks, #2 failed: restore the last green state
    restored = await editor.request("takeback/restore", {"checkpointId": "last-green"})
    assert restored["operation"] == "restore" and restored["verdict"] == "safe"
    assert (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")
    status = await editor.request("takeback/status", {})
    assert status["entries"] == 3 and status["gitRepository"] is True


async def test_timeline_hides_empty_turns_and_titles_sessions(editor: Editor, repo: Path) -> None:
    """Empty turns (a prompt answered in words) are left out and counted unless asked for; each
    session comes with its first prompt, even when its first turn is on an older page; a step's
    file reads as that step found and left it."""
    util = editor.uri("src/util.py")
    first = await editor.request("takeback/beginTurn", {"label": "  ", "sessionId": "chat-1"})
    await editor.request("takeback/endTurn", {"turnId": first["id"]})  # blank prompt, nothing changed
    explain = await editor.request("takeback/beginTurn", {"label": "explain helper", "sessionId": "chat-1"})
    await editor.request("takeback/endTurn", {"turnId": explain["id"]})
    fix = await editor.request("takeback/beginTurn", {"label": "fix helper", "sessionId": "chat-1", "bracket": False})
    await editor.request("takeback/applyEdit", {"edit": _edit(util, 1, 15, 16, "3"), "turnId": fix["id"], "label": "three"})
    await editor.request("takeback/applyEdit", {"edit": _edit(util, 1, 15, 16, "4"), "turnId": fix["id"], "label": "four"})
    await editor.request("takeback/endTurn", {"turnId": fix["id"]})
    chat = await editor.request("takeback/beginTurn", {"label": "just asking", "sessionId": "chat-2"})
    await editor.request("takeback/endTurn", {"turnId": chat["id"]})

    page = await editor.request("takeback/timeline", {})
    assert [e["number"] for e in page["entries"]] == [3] and page["hiddenEmpty"] == 3
    assert page["sessions"] == [{"session": "chat-1", "label": "explain helper", "number": 1, "createdAt": first["createdAt"]}]
    everything = await editor.request("takeback/timeline", {"includeEmpty": True})
    assert [e["number"] for e in everything["entries"]] == [4, 3, 2, 1] and everything["hiddenEmpty"] == 0
    assert [s["session"] for s in everything["sessions"]] == ["chat-2", "chat-1"]
    # paged: the empty turns below a page's last entry are the next page's to count
    top = await editor.request("takeback/timeline", {"limit": 1, "includeEmpty": True})
    assert top["nextBefore"] == 4 and top["sessions"][0]["label"] == "just asking"
    one = await editor.request("takeback/timeline", {"limit": 1})
    assert [e["number"] for e in one["entries"]] == [3] and one["hiddenEmpty"] == 3 and one["nextBefore"] is None
    older = await editor.request("takeback/timeline", {"limit": 1, "before": 3, "includeEmpty": True})
    assert [e["number"] for e in older["entries"]] == [2] and older["sessions"][0]["number"] == 1

    # each step of #3 on its own: 2 -> 3, then 3 -> 4
    def at(step: int, side: str) -> dict:
        return {"turnId": "3", "uri": util, "side": side, "step": step}

    assert (await editor.request("takeback/fileAt", at(1, "before")))["content"] == UTIL
    assert (await editor.request("takeback/fileAt", at(1, "after")))["content"] == UTIL.replace("2", "3")
    assert (await editor.request("takeback/fileAt", at(2, "before")))["content"] == UTIL.replace("2", "3")
    assert (await editor.request("takeback/fileAt", at(2, "after")))["content"] == UTIL.replace("2", "4")
    assert "no step 3" in await expect_error(editor, -32002, "takeback/fileAt", at(3, "after"))
    other = {"turnId": "3", "uri": editor.uri("src/app.py"), "step": 1}
    assert "did not change src/app.py" in await expect_error(editor, -32002, "takeback/fileAt", other)


async def test_bad_input_gets_clear_errors_and_nothing_is_written(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    util = editor.uri("src/util.py")
    before = tree_state(repo)

    message = await expect_error(editor, -32002, "takeback/turn", {"turnId": "#99"})
    assert "no turn #99" in message
    await expect_error(editor, -32003, "takeback/undo", {})
    await expect_error(editor, -32003, "takeback/redo", {})
    # by-position params are refused, never run with defaults (a preview must not undo for real)
    (await editor.request("takeback/applyEdit", {"edit": _edit(util, 1, 15, 16, "4")}))
    assert "named params" in await expect_error(editor, -32602, "takeback/undo", [{"dryRun": True}, None])
    assert (await editor.request("takeback/timeline", []))["entries"]  # [] is Lua's empty table: no params
    await editor.request("takeback/undo", {})
    before = tree_state(repo)
    # malformed edits
    overlapping = {"changes": {util: [
        {"range": _range(1, 4, 1, 10), "newText": "a"}, {"range": _range(1, 8, 1, 12), "newText": "b"},
    ]}}
    assert "overlap" in await expect_error(editor, -32602, "takeback/applyEdit", {"edit": overlapping})
    await expect_error(editor, -32602, "takeback/applyEdit", {"label": "no edit at all"})
    await expect_error(editor, -32602, "takeback/applyEdit", {"edit": {}})
    await expect_error(editor, -32602, "takeback/applyEdit", {"edit": _edit(editor.uri("missing.py"), 0, 0, 0, "x")})
    await expect_error(editor, -32602, "takeback/applyEdit", {"edit": _edit("untitled:Untitled-1", 0, 0, 0, "x")})
    await expect_error(editor, -32602, "takeback/revertTurn", {"turnId": "1", "onConflict": "sometimes"})
    await expect_error(editor, -32602, "takeback/timeline", {"limit": 0})
    await expect_error(editor, -32602, "takeback/fileAt", {"turnId": "1", "uri": util, "side": "middle"})
    # URIs outside the workspace
    outside = Path(repo).parent / "outside.py"
    outside.write_text("x = 1\n")
    assert "outside" in await expect_error(editor, -32004, "takeback/applyEdit", {"edit": _edit(outside.as_uri(), 0, 0, 1, "y")})
    dotdot = editor.uri("src") + "/../../outside.py"
    await expect_error(editor, -32004, "takeback/applyEdit", {"edit": _edit(dotdot, 0, 0, 1, "y")})
    await expect_error(editor, -32004, "takeback/applyEdit", {"edit": _edit(editor.uri(".git/config"), 0, 0, 0, "#")})
    # a versioned edit for a version the editor no longer has
    stale = {"documentChanges": [{"textDocument": {"uri": app, "version": 99}, "edits": [{"range": _range(0, 0, 0, 0), "newText": "#"}]}]}
    assert "stale document version" in await expect_error(editor, -32006, "takeback/applyEdit", {"edit": stale})
    # a batch may only join the open turn
    await expect_error(editor, -32005, "takeback/endTurn", {})

    assert tree_state(repo) == before
    assert outside.read_text() == "x = 1\n"
    assert [e["kind"] for e in (await editor.request("takeback/timeline", {}))["entries"]] == ["undo", "turn"]
    # the server is still up and answers
    ok = await editor.request("takeback/applyEdit", {"edit": _edit(util, 1, 15, 16, "3")})
    assert ok["applied"] is True


async def test_a_cli_change_is_announced(editor: Editor, repo: Path) -> None:
    """A turn opened from a terminal is announced while it is open (its begin is not in the log
    yet, so the head alone would not show it), and again when it ends."""
    env = dict(os.environ)

    async def announced(count: int) -> list[dict]:
        for _ in range(50):
            external = [n for n in editor.notifications if n["reason"] == "external"]
            if len(external) >= count:
                return external
            await asyncio.sleep(0.1)
        raise AssertionError(f"expected {count} external notification(s): {editor.notifications}")

    def cli(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "takeback", *args], cwd=repo, env=env, check=True, capture_output=True)

    cli("begin", "--label", "from a terminal")
    (opened,) = await announced(1)
    assert opened["folder"] == editor.uri("").rstrip("/")
    timeline = await editor.request("takeback/timeline", {})
    assert (timeline["entries"][0]["label"], timeline["entries"][0]["state"]) == ("from a terminal", "open")
    (repo / "from_shell.txt").write_text("written by a shell command\n")
    cli("end")
    ended = (await announced(2))[1]
    assert ended["head"] != opened["head"]
    timeline = await editor.request("takeback/timeline", {})
    assert (timeline["entries"][0]["label"], timeline["entries"][0]["state"]) == ("from a terminal", "applied")
    assert [f["path"] for f in timeline["entries"][0]["files"]] == ["from_shell.txt"]


async def _answer(editor: Editor, params: dict, want: str) -> Any:
    """The timeline request's answer (or error) once the server has taken in a folder change:
    asked again until ``want`` is in it (the change is a notification; it has no answer)."""
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        try:
            answer: Any = await editor.request("takeback/timeline", params)
        except Exception as exc:  # noqa: BLE001 - an error answer is what some steps wait for
            answer = exc
        if want in str(answer) or asyncio.get_running_loop().time() > deadline:
            return answer
        await asyncio.sleep(0.1)


async def test_folders_added_and_removed_by_the_client_are_served_and_let_go(tmp_path: Path, isolated_environment: Path) -> None:
    a = make_repo(tmp_path / "a", {"a.py": "A = 1\n"})
    b = make_repo(tmp_path / "b", {"b.py": "B = 1\n"})
    missing = tmp_path / "missing"
    editor, _init = await start("neovim", [a])

    def change(added: list[str], removed: list[str]) -> None:
        event = types.WorkspaceFoldersChangeEvent(
            added=[types.WorkspaceFolder(uri=u, name="f") for u in added],
            removed=[types.WorkspaceFolder(uri=u, name="f") for u in removed],
        )
        editor.client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(event))

    try:
        # b is served; a (already there) stays one folder; a non-file URI is ignored
        change([editor.uri("", b), editor.uri("", a), "http://example.com/x", editor.uri("", missing)], [])
        in_b = await _answer(editor, {"folder": editor.uri("", b)}, "'entries'")
        assert in_b == {"entries": [], "nextBefore": None, "folder": editor.uri("", b).rstrip("/"), "hiddenEmpty": 0, "sessions": []}
        gone = await _answer(editor, {"folder": editor.uri("", missing)}, "has no Takeback store")
        assert getattr(gone, "code", None) == -32005 and f"{missing} is not a folder" in str(gone)
        assert (await editor.request("takeback/timeline", {}))["folder"] == editor.uri("", a).rstrip("/")
        change([], [editor.uri("", b), "http://example.com/x", editor.uri("", missing)])
        let_go = await _answer(editor, {"folder": editor.uri("", b)}, "is not one of the workspace folders")
        assert getattr(let_go, "code", None) == -32002
        change([], [editor.uri("", a)])
        none = await _answer(editor, {}, "no workspace folder is open")
        assert getattr(none, "code", None) == -32005
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()


@pytest.mark.parametrize("client", ["neovim", "visual_studio_code"])
async def test_multi_root_has_a_timeline_per_folder(client: str, tmp_path: Path, isolated_environment: Path) -> None:
    a = make_repo(tmp_path / "a", {"a.py": "A = 1\n"})
    b = make_repo(tmp_path / "b", {"b.py": "B = 1\n"})
    editor, init = await start(client, [a, b])
    try:
        assert init.capabilities.workspace.workspace_folders.supported is True
        result = await editor.request("takeback/applyEdit", {"edit": _edit(editor.uri("b.py", b), 0, 4, 5, "2")})
        assert result["applied"] is True and result["folder"] == editor.uri("", b).rstrip("/")
        assert (b / "b.py").read_text() == "B = 2\n"
        assert (await editor.request("takeback/timeline", {}))["entries"] == []  # the first folder's
        in_b = await editor.request("takeback/timeline", {"folder": editor.uri("", b)})
        assert [e["number"] for e in in_b["entries"]] == [1]
        both = {"changes": {
            editor.uri("a.py", a): [{"range": _range(0, 4, 0, 5), "newText": "3"}],
            editor.uri("b.py", b): [{"range": _range(0, 4, 0, 5), "newText": "3"}],
        }}
        await expect_error(editor, -32602, "takeback/applyEdit", {"edit": both})
        undo = await editor.request("takeback/undo", {"folder": editor.uri("", b)})
        assert undo["applied"] is True and (b / "b.py").read_text() == "B = 1\n"
        # the turn id alone finds its folder
        turn = await editor.request("takeback/turn", {"turnId": result["entry"]["id"]})
        assert turn["number"] == 1
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()


async def test_pipelined_turn_requests_apply_in_the_order_sent(editor: Editor, repo: Path) -> None:
    """An agent that sends begin, edits and end without waiting gets them in that order."""
    util = editor.uri("src/util.py")
    begun, *edits, ended = await asyncio.gather(
        editor.request("takeback/beginTurn", {"label": "pipelined"}),
        *[editor.request("takeback/applyEdit", {"edit": _edit(util, 0, 0, 0, f"# {i}\n")}) for i in range(3)],
        editor.request("takeback/endTurn", {}),
    )
    assert all(e["applied"] and e["entry"]["id"] == begun["id"] for e in edits)
    assert ended["id"] == begun["id"] and len(ended["checkpoints"]) == 3
    assert (repo / "src/util.py").read_text().startswith("# 2\n# 1\n# 0\n")


async def test_the_timeline_carries_the_persons_marks(editor: Editor, repo: Path) -> None:
    """A mark made in a terminal (``takeback mark``) reaches the client as an entry of kind
    ``mark``, holding the file the person changed since an agent's edit, and ``mark:NAME``
    names it where an entry is asked for."""
    util = editor.uri("src/util.py")
    await editor.request("takeback/applyEdit", {"edit": _edit(util, 1, 15, 16, "3"), "sessionId": "chat-1", "label": "agent"})
    (repo / "src/util.py").write_text("def helper(x):\n    return x * 4  # the person's\n")
    subprocess.run([sys.executable, "-m", "takeback", "mark", "before the refactor"], cwd=repo, env=dict(os.environ),
                   check=True, capture_output=True)
    timeline = await _answer(editor, {}, "before the refactor")
    newest = timeline["entries"][0]
    assert (newest["kind"], newest["label"], newest["number"]) == ("mark", "before the refactor", 2)
    assert newest.get("agent") is None and [f["path"] for f in newest["files"]] == ["src/util.py"]
    assert [e["kind"] for e in timeline["entries"]] == ["mark", "turn"]
    named = await editor.request("takeback/turn", {"turnId": "mark:before the refactor"})
    assert named["id"] == newest["id"]
