"""What an editor's person reads from the server when something is not done as asked: an empty
'folder' refused, an open turn ended by a second beginTurn or by an undo, conflicts that say
whether markers can go into them."""

from __future__ import annotations

from pathlib import Path

from helpers import tree_state

from .editor import Editor
from .test_requests import expect_error


async def test_an_empty_folder_is_refused_not_taken_for_the_first(editor: Editor, repo: Path) -> None:
    before = tree_state(repo)
    for method in ("takeback/beginTurn", "takeback/timeline", "takeback/undo"):
        message = await expect_error(editor, -32602, method, {"folder": ""})
        assert "'folder' is empty: give a workspace folder URI, or leave it out to mean the first folder" in message
    assert tree_state(repo) == before
    assert (await editor.request("takeback/timeline", {}))["entries"] == []


async def test_ending_the_open_turn_is_said(editor: Editor, repo: Path) -> None:
    first = await editor.request("takeback/beginTurn", {"label": "one"})
    assert first["notices"] == []
    (repo / "src/util.py").write_text("changed during one\n")
    second = await editor.request("takeback/beginTurn", {"label": "two"})
    assert second["notices"] == [
        "turn #1 was still open; this begin ended it first (what changed on disk until now is recorded as its changes)"
    ]
    (repo / "README.md").write_text("changed during two\n")
    undone = await editor.request("takeback/undo", {})
    assert undone["applied"] and undone["target_number"] == 2
    assert undone["notices"] == [
        "turn #2 was still open; undo ended it first (what changed on disk during it is recorded as its changes)"
    ]


async def test_a_binary_conflict_is_not_offered_markers(editor: Editor, repo: Path) -> None:
    (repo / "logo.bin").write_bytes(b"\x00\x01")
    await editor.request("takeback/beginTurn", {"label": "binary"})
    (repo / "logo.bin").write_bytes(b"\x00\x02")
    await editor.request("takeback/endTurn", {})
    (repo / "logo.bin").write_bytes(b"\x00\x03")
    result = await editor.request("takeback/undo", {"dryRun": True})
    (conflict,) = result["conflicts"]
    assert (conflict["path"], conflict["binary"], conflict["markers_possible"]) == ("logo.bin", True, False)
    assert conflict["advice"].startswith("conflict markers cannot be written into it (it is binary)")
    assert "markers" not in result["next_action"]
