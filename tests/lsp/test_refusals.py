"""Editors that say no: a JSON-RPC error instead of ``applied: false`` (Emacs's eglot), a
multi-document edit applied in part and then refused, no answer at all, and the store's lock,
which is never held while the editor is asked (an agent hook or the CLI must not wait on a
confirmation dialog)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .editor import Editor, start
from .test_operations import APP, UTIL, _range, agent_edit


def two_files_edit(editor: Editor, app: str, util: str) -> dict:
    return {
        "label": "two documents",
        "edit": {
            "changes": {
                app: [{"range": _range(1, 11, 1, 12), "newText": "10"}],
                util: [{"range": _range(1, 15, 1, 16), "newText": "3"}],
            }
        },
    }


async def wait_for(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.05)


async def refused(editor: Editor, method: str, params: dict) -> Exception:
    try:
        result = await editor.request(method, params)
    except Exception as exc:  # noqa: BLE001 - the error is the point
        return exc
    raise AssertionError(f"{method} was carried out: {result}")


@pytest.mark.parametrize("answer", ["error", "false"])
async def test_an_error_answer_is_a_refusal_of_an_agent_edit(editor: Editor, repo: Path, answer: str) -> None:
    app, util = editor.open("src/app.py"), editor.open("src/util.py")
    editor.answers = [answer]
    result = await editor.request("takeback/applyEdit", two_files_edit(editor, app, util))
    assert result["applied"] is False
    if answer == "error":
        assert "User cancelled server edit" in result["failureReason"] and "32603" in result["failureReason"]
    assert result["entry"]["state"] == "not-applied"
    assert editor.text(app) == APP and editor.text(util) == UTIL
    assert (repo / "src/app.py").read_text() == APP and (repo / "src/util.py").read_text() == UTIL
    # the timeline was announced at once (not by the poller, which says "external")
    await wait_for(lambda: any(n["reason"] == "request" for n in editor.notifications))
    assert len(editor.apply_requests) == 1  # nothing to take back: a single refusal


async def test_an_error_answer_refuses_an_undo_with_the_documented_code(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    assert (await agent_edit(editor, app))["applied"] is True
    editor.notifications.clear()
    editor.answers = ["error"]
    exc = await refused(editor, "takeback/undo", {})
    assert getattr(exc, "code", None) == -32005, exc
    assert "the editor refused its edit" in str(exc) and "User cancelled server edit" in str(exc)
    assert "nothing was written" in str(exc)
    assert editor.text(app) == APP.replace("return 1", "return 10")
    assert (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")
    timeline = await editor.request("takeback/timeline", {})
    assert [(e["kind"], e["state"]) for e in timeline["entries"]] == [("turn", "applied")]
    # the server goes on: the same undo, answered yes this time
    assert (await editor.request("takeback/undo", {}))["applied"] is True
    assert editor.text(app) == APP and (repo / "src/util.py").read_text() == UTIL


async def test_a_partly_applied_edit_is_taken_back(editor: Editor, repo: Path) -> None:
    """eglot applies the first document, then refuses the second (a stale version) with an
    error: the first is taken back, so editor and disk agree with 'not applied'."""
    app, util = editor.open("src/app.py"), editor.open("src/util.py")
    editor.answers = ["first-then-error"]
    result = await editor.request("takeback/applyEdit", two_files_edit(editor, app, util))
    assert result["applied"] is False
    assert "taken back" in result["failureReason"], result["failureReason"]
    assert editor.text(app) == APP and editor.text(util) == UTIL
    assert [r.label for r in editor.apply_requests] == ["Takeback: two documents", "Takeback: two documents (taken back)"]
    assert (repo / "src/app.py").read_text() == APP and (repo / "src/util.py").read_text() == UTIL
    assert result["entry"]["state"] == "not-applied"

    # an undo refused the same way leaves the buffers as they were too
    assert (await agent_edit(editor, app))["applied"] is True
    editor.answers = ["first-then-error"]
    exc = await refused(editor, "takeback/undo", {})
    assert getattr(exc, "code", None) == -32005 and "taken back" in str(exc), exc
    assert editor.text(app) == APP.replace("return 1", "return 10") and editor.text(util) == UTIL.replace("x * 2", "x * 3")
    timeline = await editor.request("takeback/timeline", {})
    assert [e["kind"] for e in timeline["entries"]] == ["turn", "turn"]


async def test_no_write_plans_with_a_document_the_editor_has_not_reported(editor: Editor, repo: Path) -> None:
    """The editor answers applied but sends the document's new text only later (eglot, until it
    is idle): until then the server's text is old, and an undo planned with it would be wrong."""
    app = editor.open("src/app.py")
    editor.answers = ["apply-unreported"]
    assert (await agent_edit(editor, app))["applied"] is True
    exc = await refused(editor, "takeback/undo", {})
    assert getattr(exc, "code", None) == -32006 and "has not sent its new text yet" in str(exc), exc
    assert editor.text(app) == APP.replace("return 1", "return 10")
    editor.report()
    await asyncio.sleep(0.3)
    assert (await editor.request("takeback/undo", {}))["applied"] is True
    assert editor.text(app) == APP and (repo / "src/util.py").read_text() == UTIL


async def test_an_editor_that_answers_too_late(repo: Path, isolated_environment: Path) -> None:
    """No answer within applyEditTimeout is a refusal; an edit the editor applies after that is
    taken back as soon as its answer comes."""
    editor, _ = await start("neovim", [repo], options={"applyEditTimeout": 1})
    try:
        app = editor.open("src/app.py")
        editor.hold = asyncio.Event()
        began = time.monotonic()
        result = await editor.request("takeback/applyEdit", two_files_edit(editor, app, editor.uri("src/util.py")))
        assert result["applied"] is False and "did not answer" in result["failureReason"]
        assert time.monotonic() - began < 10
        assert editor.text(app) == APP and (repo / "src/util.py").read_text() == UTIL
        status = await editor.request("takeback/status", {})  # still answering
        assert status["entries"] == 1
        hold, editor.hold = editor.hold, None
        hold.set()  # the editor applies now, too late
        await wait_for(lambda: len(editor.apply_requests) == 2 and editor.text(app) == APP)
        assert (repo / "src/util.py").read_text() == UTIL
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()


def cli(repo: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    began = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "takeback", *args], cwd=repo, env=dict(os.environ), capture_output=True, timeout=60
    )
    return proc, time.monotonic() - began


@pytest.mark.parametrize("meanwhile", ["log", "begin"])
async def test_the_cli_is_not_blocked_while_the_editor_is_asked(editor: Editor, repo: Path, meanwhile: str) -> None:
    """The editor shows a confirmation dialog (its answer waits); the CLI, as an agent hook
    calls it, runs at once. If it changed the timeline meanwhile, the undo is refused and the
    editor's applied edit taken back."""
    app = editor.open("src/app.py")
    assert (await agent_edit(editor, app))["applied"] is True
    editor.hold = asyncio.Event()
    undo = asyncio.ensure_future(editor.request("takeback/undo", {}))
    await wait_for(lambda: len(editor.apply_requests) == 2)  # the agent's edit, then the undo's
    log, seconds = await asyncio.to_thread(cli, repo, "--json", "log")
    assert log.returncode == 0 and seconds < 10, (log.stderr, seconds)
    if meanwhile == "begin":
        begin, seconds = await asyncio.to_thread(cli, repo, "begin", "--label", "hook")
        assert begin.returncode == 0 and seconds < 10, (begin.stderr, seconds)
    editor.hold.set()
    editor.hold = None
    if meanwhile == "log":
        result = await undo
        assert result["applied"] is True and editor.text(app) == APP
        assert (repo / "src/util.py").read_text() == UTIL
        return
    with pytest.raises(Exception) as info:
        await undo
    assert getattr(info.value, "code", None) == -32005, info.value
    assert "the timeline changed while the editor was asked; nothing was recorded, run it again" in str(info.value)
    assert "taken back" in str(info.value)
    # the editor holds again what it held; the disk and the timeline are as before the undo
    assert editor.text(app) == APP.replace("return 1", "return 10")
    assert (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")
    timeline = await editor.request("takeback/timeline", {})
    assert [(e["kind"], e["state"]) for e in timeline["entries"]] == [("turn", "open"), ("turn", "applied")]
