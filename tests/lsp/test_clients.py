"""Clients that differ: one that cannot apply edits, one that takes only plain ``changes``, and
two editors (two server processes) working on one repository at the same time."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from .editor import start

APP = "def main():\n    return 1\n\n\ndef other():\n    return 2\n"


def _edit(uri: str, line: int, c1: int, c2: int, text: str) -> dict:
    return {"changes": {uri: [{"range": {"start": {"line": line, "character": c1}, "end": {"line": line, "character": c2}}, "newText": text}]}}


def _no_apply_edit(caps: types.ClientCapabilities) -> None:
    caps.workspace.apply_edit = False


def _plain_changes_only(caps: types.ClientCapabilities) -> None:
    caps.workspace.workspace_edit = types.WorkspaceEditClientCapabilities()


async def test_a_client_that_cannot_apply_edits_gets_them_on_disk(repo: Path, isolated_environment: Path) -> None:
    editor, _ = await start("visual_studio_code", [repo], tweak=_no_apply_edit)
    try:
        app = editor.open("src/app.py")
        result = await editor.request("takeback/applyEdit", {"edit": _edit(app, 1, 11, 12, "10")})
        assert result["applied"] is True and editor.apply_requests == []
        assert (repo / "src/app.py").read_text() == APP.replace("return 1", "return 10")
        undo = await editor.request("takeback/undo", {})
        assert undo["applied"] is True and (repo / "src/app.py").read_text() == APP
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()


async def test_a_client_without_document_changes_gets_plain_changes(repo: Path, isolated_environment: Path) -> None:
    editor, _ = await start("visual_studio_code", [repo], tweak=_plain_changes_only)
    try:
        app = editor.open("src/app.py")
        result = await editor.request("takeback/applyEdit", {"edit": _edit(app, 1, 11, 12, "10")})
        assert result["applied"] is True
        sent = editor.apply_requests[-1].edit
        assert sent.document_changes is None and list(sent.changes) == [app]
        assert editor.text(app) == APP.replace("return 1", "return 10")
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()


async def test_two_editors_on_one_repository_share_one_timeline(repo: Path, isolated_environment: Path) -> None:
    one, _ = await start("neovim", [repo])
    two, _ = await start("visual_studio_code", [repo])
    try:
        results = await asyncio.gather(
            *[
                ed.request("takeback/applyEdit", {"label": f"from {name} {i}", "edit": _edit(ed.uri(path), 0, 0, 0, f"# {name} {i}\n")})
                for i in range(3)
                for ed, name, path in ((one, "one", "src/app.py"), (two, "two", "src/util.py"))
            ]
        )
        assert all(r["applied"] for r in results)
        assert sorted(r["entry"]["number"] for r in results) == [1, 2, 3, 4, 5, 6]
        seen_one = await one.request("takeback/timeline", {})
        seen_two = await two.request("takeback/timeline", {})
        assert [e["id"] for e in seen_one["entries"]] == [e["id"] for e in seen_two["entries"]]
        text = (repo / "src/util.py").read_text()
        assert [line for line in text.splitlines() if line.startswith("# two")] == ["# two 2", "# two 1", "# two 0"]
        # a turn made in one editor is announced in the other
        one.notifications.clear()
        await two.request("takeback/applyEdit", {"label": "later", "edit": _edit(two.uri("README.md"), 0, 0, 0, "x")})
        for _ in range(50):
            if any(n["reason"] == "external" for n in one.notifications):
                break
            await asyncio.sleep(0.1)
        assert any(n["reason"] == "external" for n in one.notifications), one.notifications
        assert (await one.request("takeback/timeline", {"limit": 1}))["entries"][0]["label"] == "later"
    finally:
        for ed in (one, two):
            await ed.client.shutdown_session()
            await ed.client.stop()
