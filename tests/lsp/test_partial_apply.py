"""Editors that apply an edit only in part, refuse to take it back, report it late, or answer
after the timeout, driven against the real server over stdio: what the person then sees (the
JSON-RPC answer, the buffers, the files on disk, the timeline) and that the work goes on after
(the same edit applies when answered yes, undo and redo work).

The client answers ``workspace/applyEdit`` as real editors do when they fail: the first N
document changes applied and then ``applied: false`` with ``failedChange: N`` (the LSP's
``abort`` failure handling), the first document applied and then an error whose ``didChange``
comes later (Emacs's eglot reports after 0.5 s idle), the take-back itself refused, an answer
after ``applyEditTimeout``.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from helpers import tree_state

from .editor import Doc, Editor, start
from .test_operations import APP, UTIL
from .test_refusals import cli, refused, wait_for

README = "# demo\n"
TEN = APP.replace("return 1", "return 10")
THREE = UTIL.replace("x * 2", "x * 3")
Answer = Callable[[Editor, types.ApplyWorkspaceEditParams], Awaitable[types.ApplyWorkspaceEditResult]]


def rng(l1: int, c1: int, l2: int, c2: int) -> dict:
    return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}


class Answers:
    """Answers the next ``workspace/applyEdit`` requests with these functions, then as the test
    editor does (``Editor.on_apply_edit``: its ``answers`` words)."""

    def __init__(self, editor: Editor, *plan: Answer) -> None:
        self.editor = editor
        self.plan = list(plan)
        editor.on_apply_edit = self  # type: ignore[method-assign]

    async def __call__(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        if not self.plan:
            return await Editor.on_apply_edit(self.editor, params)
        return await self.plan.pop(0)(self.editor, params)


def applies_first(n: int, report: bool = True) -> Answer:
    """Apply the first ``n`` document changes, then answer ``applied: false, failedChange: n``
    (``report``: False keeps their ``didChange`` back until ``Editor.report()``)."""

    async def answer(editor: Editor, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        changes = list(params.edit.document_changes or [])
        assert len(changes) > n, "the test means a partial apply"
        partial = types.ApplyWorkspaceEditParams(edit=types.WorkspaceEdit(document_changes=changes[:n]), label=params.label)
        editor.answers.insert(0, "apply" if report else "apply-unreported")
        await Editor.on_apply_edit(editor, partial)
        editor.apply_requests[-1] = params  # what the server sent
        return types.ApplyWorkspaceEditResult(applied=False, failure_reason="disk full", failed_change=n)

    return answer


def three_documents(editor: Editor) -> dict:
    return {
        "label": "three documents",
        "edit": {
            "changes": {
                editor.uri("README.md"): [{"range": rng(0, 2, 0, 6), "newText": "DEMO"}],
                editor.uri("src/app.py"): [{"range": rng(1, 11, 1, 12), "newText": "10"}],
                editor.uri("src/util.py"): [{"range": rng(1, 15, 1, 16), "newText": "3"}],
            }
        },
    }


def open_all(editor: Editor) -> tuple[str, str, str]:
    return editor.open("README.md"), editor.open("src/app.py"), editor.open("src/util.py")


def labels(editor: Editor) -> list[str | None]:
    return [r.label for r in editor.apply_requests]


async def states(editor: Editor) -> list[tuple[str, str]]:
    timeline = await editor.request("takeback/timeline", {})
    return [(e["kind"], e["state"]) for e in timeline["entries"]]


@pytest.fixture
async def vscode(repo: Path, isolated_environment: Path) -> Any:
    editor, _ = await start("visual_studio_code", [repo])
    yield editor
    await editor.client.shutdown_session()
    await editor.client.stop()


async def test_the_first_changes_applied_then_failed_change_are_taken_back(vscode: Editor, repo: Path) -> None:
    """``applied: false, failedChange: 2`` after applying two of three documents: the two are
    taken back, the answer says where it failed and that it was taken back; the same edit then
    applies, and undo and redo work."""
    editor = vscode
    readme, app, util = open_all(editor)
    disk = tree_state(repo)
    Answers(editor, applies_first(2))
    result = await editor.request("takeback/applyEdit", three_documents(editor))
    assert result["applied"] is False and result["entry"]["state"] == "not-applied"
    assert result["failureReason"] == "disk full (at change 2); what the editor had applied was taken back"
    assert labels(editor) == ["Takeback: three documents", "Takeback: three documents (taken back)"]
    assert (editor.text(readme), editor.text(app), editor.text(util)) == (README, APP, UTIL)
    assert tree_state(repo) == disk
    assert await states(editor) == [("turn", "not-applied")]

    again = await editor.request("takeback/applyEdit", three_documents(editor))
    assert again["applied"] is True
    assert (editor.text(readme), editor.text(app), editor.text(util)) == ("# DEMO\n", TEN, THREE)
    assert (await editor.request("takeback/undo", {}))["applied"] is True
    assert (editor.text(readme), editor.text(app), editor.text(util)) == (README, APP, UTIL)
    assert (await editor.request("takeback/redo", {}))["applied"] is True
    assert (editor.text(readme), editor.text(app), editor.text(util)) == ("# DEMO\n", TEN, THREE)
    assert tree_state(repo) == disk  # open documents: their disk copy is the editor's to save


async def test_a_take_back_the_editor_refuses_is_named_in_the_answer(vscode: Editor, repo: Path) -> None:
    """The editor applies one document, fails, then refuses the take-back too: the answer names
    the document that still holds the edit (unsaved, not recorded) and says to use the editor's
    undo there; the disk and the timeline say not applied."""
    editor = vscode
    readme, app, util = open_all(editor)
    disk = tree_state(repo)
    Answers(editor, applies_first(1))
    editor.answers = ["false"]  # the take-back
    result = await editor.request("takeback/applyEdit", three_documents(editor))
    assert result["applied"] is False
    assert result["failureReason"] == (
        "disk full (at change 1); the editor still holds the edit in README.md (unsaved, not recorded):"
        " use the editor's undo there"
    )
    assert (editor.text(readme), editor.text(app), editor.text(util)) == ("# DEMO\n", APP, UTIL)
    assert tree_state(repo) == disk and await states(editor) == [("turn", "not-applied")]
    # the person undoes it in the editor; then the edit applies as a whole
    editor.type(readme, "DEMO", "demo")
    await asyncio.sleep(0.2)
    assert (await editor.request("takeback/applyEdit", three_documents(editor)))["applied"] is True
    assert (editor.text(readme), editor.text(app), editor.text(util)) == ("# DEMO\n", TEN, THREE)


async def test_a_take_back_reported_late_keeps_operations_waiting_for_it(vscode: Editor, repo: Path) -> None:
    """The editor takes its partial edit back but sends the ``didChange`` only later: until it
    does, no write plans with the server's (stale) text of that document."""
    editor = vscode
    readme, app, util = open_all(editor)
    Answers(editor, applies_first(1))
    editor.answers = ["apply-unreported"]  # the take-back: applied, reported later
    result = await editor.request("takeback/applyEdit", three_documents(editor))
    assert result["applied"] is False and result["failureReason"].endswith("what the editor had applied was taken back")
    assert editor.text(readme) == README
    exc = await refused(editor, "takeback/applyEdit", three_documents(editor))
    assert getattr(exc, "code", None) == -32006 and "has not sent its new text yet" in str(exc), exc
    editor.report()
    await asyncio.sleep(0.3)
    assert (await editor.request("takeback/applyEdit", three_documents(editor)))["applied"] is True
    assert (editor.text(readme), editor.text(app), editor.text(util)) == ("# DEMO\n", TEN, THREE)


async def test_a_partial_apply_reported_after_the_answer_is_taken_back_then(vscode: Editor, repo: Path) -> None:
    """eglot: the first document applied, then an error; its ``didChange`` comes after the
    answer. The answer says the part applied is taken back when reported; when it is, the
    document gets its old text back, and the timeline keeps the edit as not applied."""
    editor = vscode
    readme, app, util = open_all(editor)
    Answers(editor, applies_first(1, report=False))
    result = await editor.request("takeback/applyEdit", three_documents(editor))
    assert result["applied"] is False
    assert result["failureReason"] == (
        "disk full (at change 1); whatever part of it the editor applied is taken back when the editor reports it"
    )
    assert labels(editor) == ["Takeback: three documents"] and editor.text(readme) == "# DEMO\n"
    editor.report()
    await wait_for(lambda: len(editor.apply_requests) == 2 and editor.text(readme) == README)
    assert labels(editor)[1] == "Takeback: three documents (taken back)"
    assert (editor.text(app), editor.text(util)) == (APP, UTIL)
    assert await states(editor) == [("turn", "not-applied")]
    assert (await editor.request("takeback/applyEdit", three_documents(editor)))["applied"] is True
    assert (await editor.request("takeback/undo", {}))["applied"] is True
    assert (editor.text(readme), editor.text(app), editor.text(util)) == (README, APP, UTIL)


async def test_after_a_refusal_a_later_edit_or_the_persons_typing_is_not_taken_back(vscode: Editor, repo: Path) -> None:
    """After a refusal the server watches each document's next report for a late partial apply.
    The person's own typing, and the next edit the agent sends (applied, reported), are not
    that: neither is taken back."""
    editor = vscode
    readme, app, util = open_all(editor)
    editor.answers = ["false"]
    result = await editor.request("takeback/applyEdit", three_documents(editor))
    assert result["failureReason"].endswith("taken back when the editor reports it")
    editor.type(readme, "# demo", "# demo, by hand")
    retry = {"label": "retry", "edit": {"changes": {app: [{"range": rng(1, 11, 1, 12), "newText": "10"}]}}}
    assert (await editor.request("takeback/applyEdit", retry))["applied"] is True
    await asyncio.sleep(1.0)  # time for a wrong take-back to be sent
    assert labels(editor) == ["Takeback: three documents", "Takeback: retry"]
    assert (editor.text(readme), editor.text(app), editor.text(util)) == ("# demo, by hand\n", TEN, UTIL)
    assert await states(editor) == [("turn", "applied"), ("turn", "not-applied")]  # newest first


@pytest.mark.parametrize("answer", ["error", "false"])
async def test_a_refusal_after_the_timeout_changes_nothing(repo: Path, isolated_environment: Path, answer: str) -> None:
    """No answer within applyEditTimeout is a refusal; a refusal that comes later (an error or
    ``applied: false``) leaves everything as it is: no take-back is sent."""
    editor, _ = await start("visual_studio_code", [repo], options={"applyEditTimeout": 1})
    try:
        readme, app, util = open_all(editor)
        editor.hold = asyncio.Event()
        editor.answers = [answer]
        result = await editor.request("takeback/applyEdit", three_documents(editor))
        assert result["applied"] is False and result["failureReason"].startswith("the editor did not answer")
        hold, editor.hold = editor.hold, None
        hold.set()
        await wait_for(lambda: not editor.answers)  # the late answer is sent
        await asyncio.sleep(1.5)  # time for a wrong take-back
        assert labels(editor) == ["Takeback: three documents"]
        assert (editor.text(readme), editor.text(app), editor.text(util)) == (README, APP, UTIL)
        assert await states(editor) == [("turn", "not-applied")]
        assert (await editor.request("takeback/applyEdit", three_documents(editor)))["applied"] is True
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()


MOVED = (
    "the timeline changed while the editor was asked; nothing was recorded, run it again;"
    " what the editor had applied was taken back"
)


async def moved_while_asked(editor: Editor, repo: Path, method: str, params: dict) -> Exception:
    """Send ``method``; while the editor is asked (its answer held), the CLI begins a turn (as
    an agent hook does); then the editor applies. Answer the request's error."""
    editor.hold = asyncio.Event()
    asked = len(editor.apply_requests) + 1
    pending = asyncio.ensure_future(editor.request(method, params))
    await wait_for(lambda: len(editor.apply_requests) == asked)
    begin, _seconds = await asyncio.to_thread(cli, repo, "begin", "--label", "hook")
    assert begin.returncode == 0, begin.stderr
    editor.hold.set()
    editor.hold = None
    with pytest.raises(Exception) as info:
        await pending
    assert getattr(info.value, "code", None) == -32005, info.value
    return info.value


def create_and_edit(editor: Editor) -> dict:
    new = editor.uri("src/new.py")
    return {
        "label": "new module",
        "edit": {
            "documentChanges": [
                {"kind": "create", "uri": new},
                {"textDocument": {"uri": new, "version": None}, "edits": [{"range": rng(0, 0, 0, 0), "newText": "NEW = 1\n"}]},
                {"textDocument": {"uri": editor.uri("src/app.py"), "version": 1}, "edits": [{"range": rng(1, 11, 1, 12), "newText": "10"}]},
            ]
        },
    }


@pytest.mark.parametrize("client", ["visual_studio_code", "emacs"])
async def test_an_undo_that_deleted_an_open_document_is_taken_back_when_the_timeline_moved(
    repo: Path, isolated_environment: Path, client: str
) -> None:
    """The undo deletes a document open in the editor (VS Code deletes it and closes its buffer;
    eglot cannot delete, so the server deletes the file) and changes another; the CLI begins a
    turn while the editor is asked. The undo fails, the edited document is taken back and the
    deleted file is written back with its content; the timeline is as before the undo."""
    editor, _ = await start(client, [repo])
    try:
        app = editor.open("src/app.py")
        assert (await editor.request("takeback/applyEdit", create_and_edit(editor)))["applied"] is True
        new = editor.open("src/new.py")
        assert (repo / "src/new.py").read_text() == "NEW = 1\n" and editor.text(app) == TEN
        error = await moved_while_asked(editor, repo, "takeback/undo", {})
        assert str(error).endswith(MOVED), error
        sent = editor.apply_requests[1].edit.document_changes or []
        assert any(isinstance(c, types.DeleteFile) for c in sent) == (client == "visual_studio_code")
        assert editor.text(app) == TEN and (repo / "src/new.py").read_text() == "NEW = 1\n"
        assert (new in editor.docs) == (client == "emacs")  # VS Code closed the deleted document
        assert labels(editor)[-1] == "Takeback: undo (taken back)"
        assert await states(editor) == [("turn", "open"), ("turn", "applied")]
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()


async def test_a_refused_deletion_of_two_open_documents_needs_no_take_back(vscode: Editor, repo: Path) -> None:
    editor = vscode
    readme, _app, util = open_all(editor)
    editor.answers = ["false"]
    delete = {"label": "delete two", "edit": {"documentChanges": [{"kind": "delete", "uri": readme}, {"kind": "delete", "uri": util}]}}
    result = await editor.request("takeback/applyEdit", delete)
    assert result["applied"] is False and result["failureReason"] == "refused by the test editor"
    assert (repo / "README.md").read_text() == README and (repo / "src/util.py").read_text() == UTIL
    assert readme in editor.docs and util in editor.docs and labels(editor) == ["Takeback: delete two"]
    assert await states(editor) == [("turn", "not-applied")]
    assert (await editor.request("takeback/applyEdit", delete))["applied"] is True
    assert not (repo / "README.md").exists() and not (repo / "src/util.py").exists()
    assert (await editor.request("takeback/undo", {}))["applied"] is True
    assert (repo / "README.md").read_text() == README and (repo / "src/util.py").read_text() == UTIL


@pytest.mark.parametrize("meanwhile", ["type", "close"])
async def test_a_document_changed_while_the_write_waited_for_the_store_is_not_written(
    vscode: Editor, repo: Path, meanwhile: str
) -> None:
    """Another process holds the store's lock; meanwhile the person types in (or closes) the
    document the agent's edit changes. When the lock comes, nothing is written: the edit was
    made for the text the person no longer has."""
    editor = vscode
    app = editor.open("src/app.py")
    status = await editor.request("takeback/status", {})
    fd = os.open(Path(status["store"]) / "lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        edit = {"label": "ten", "edit": {"changes": {app: [{"range": rng(1, 11, 1, 12), "newText": "10"}]}}}
        pending = asyncio.ensure_future(editor.request("takeback/applyEdit", edit))
        await asyncio.sleep(0.5)
        if meanwhile == "type":
            editor.type(app, "def other", "def another")
        else:
            editor.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=app)))
        await asyncio.sleep(0.3)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    with pytest.raises(Exception) as info:
        await pending
    assert getattr(info.value, "code", None) == -32006, info.value
    if meanwhile == "type":
        assert (
            "src/app.py changed in the editor (version 1 -> 2) while Takeback was working; nothing was written, try again"
        ) in str(info.value)
        assert editor.text(app) == APP.replace("def other", "def another")
    else:
        assert "src/app.py was closed in the editor while Takeback was working; nothing was written" in str(info.value)
    assert editor.apply_requests == [] and (repo / "src/app.py").read_text() == APP
    assert await states(editor) == []  # nothing recorded
    if meanwhile == "close":
        app = editor.open("src/app.py")
    assert (await editor.request("takeback/applyEdit", edit))["applied"] is True  # run again: it applies
    assert editor.text(app).startswith("def main():\n    return 10\n")


async def test_an_undo_that_would_put_bytes_that_are_not_text_in_an_open_document_is_refused(vscode: Editor, repo: Path) -> None:
    """The agent turned a Latin-1 file into UTF-8; the person has it open. Its undo would give the
    document bytes that are not UTF-8 text, which no editor buffer can show: refused, nothing
    written. Closed, the undo writes the old bytes on disk."""
    editor = vscode
    (repo / "notes.txt").write_bytes(b"caf\xe9\n")
    assert cli(repo, "begin", "--label", "utf-8")[0].returncode == 0
    (repo / "notes.txt").write_text("café\n", encoding="utf-8")
    assert cli(repo, "end")[0].returncode == 0
    notes = editor.open("notes.txt")
    exc = await refused(editor, "takeback/undo", {})
    assert getattr(exc, "code", None) == -32005, exc
    assert "notes.txt would get content that is not UTF-8 text; an open document cannot show it" in str(exc)
    assert editor.text(notes) == "café\n" and (repo / "notes.txt").read_text(encoding="utf-8") == "café\n"
    assert editor.apply_requests == [] and await states(editor) == [("turn", "applied")]
    editor.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=notes)))
    assert (await editor.request("takeback/undo", {}))["applied"] is True
    assert (repo / "notes.txt").read_bytes() == b"caf\xe9\n"


@pytest.mark.parametrize("client", ["visual_studio_code", "emacs"])
async def test_an_unsaved_document_the_edit_deleted_is_not_made_a_file_by_the_take_back(
    repo: Path, isolated_environment: Path, client: str
) -> None:
    """The agent's edit deletes a document that is open but was never saved (no file on disk)
    and changes another; the timeline moves while the editor is asked. The take-back gives the
    changed document its text back and writes no file where there was none."""
    editor, _ = await start(client, [repo])
    try:
        app = editor.open("src/app.py")
        scratch = editor.uri("src/scratch.py")
        editor.docs[scratch] = Doc("SCRATCH = 1\n", 1)
        editor.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=scratch, language_id="python", version=1, text="SCRATCH = 1\n"))
        )
        edit = {"label": "drop scratch", "edit": {"documentChanges": [
            {"textDocument": {"uri": app, "version": 1}, "edits": [{"range": rng(1, 11, 1, 12), "newText": "10"}]},
            {"kind": "delete", "uri": scratch},
        ]}}
        error = await moved_while_asked(editor, repo, "takeback/applyEdit", edit)
        assert str(error).endswith(MOVED), error
        assert editor.text(app) == APP and not (repo / "src/scratch.py").exists()
        assert (scratch in editor.docs) == (client == "emacs")  # VS Code closed the deleted document
        assert await states(editor) == [("turn", "open")]
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()


async def test_a_document_applied_then_closed_unsaved_is_not_taken_back(vscode: Editor, repo: Path) -> None:
    """The editor applies the first document, the person closes it without saving (the edit is
    gone with the buffer), and the editor then fails: there is nothing to take back in it, and
    no take-back is sent for a document that is not open."""
    editor = vscode
    readme, app, util = open_all(editor)
    partial = applies_first(1)

    async def then_closed(ed: Editor, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        result = await partial(ed, params)
        del ed.docs[readme]
        ed.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=readme)))
        return result

    Answers(editor, then_closed)
    result = await editor.request("takeback/applyEdit", three_documents(editor))
    assert result["applied"] is False
    assert result["failureReason"] == (
        "disk full (at change 1); whatever part of it the editor applied is taken back when the editor reports it"
    )
    assert labels(editor) == ["Takeback: three documents"]
    assert (repo / "README.md").read_text() == README and (editor.text(app), editor.text(util)) == (APP, UTIL)
    assert await states(editor) == [("turn", "not-applied")]
    assert (await editor.request("takeback/applyEdit", three_documents(editor)))["applied"] is True
    assert (repo / "README.md").read_text() == "# DEMO\n" and (editor.text(app), editor.text(util)) == (TEN, THREE)


async def test_a_deletion_alone_is_written_back_when_the_timeline_moved(vscode: Editor, repo: Path) -> None:
    """The agent's edit only deletes an open document; the editor deletes it (closing its
    buffer) while the CLI begins a turn: the file is written back with its bytes, and the
    take-back needs no second request (there is no text to give back)."""
    editor = vscode
    readme = editor.open("README.md")
    delete = {"label": "drop readme", "edit": {"documentChanges": [{"kind": "delete", "uri": readme}]}}
    error = await moved_while_asked(editor, repo, "takeback/applyEdit", delete)
    assert str(error).endswith(MOVED), error
    assert (repo / "README.md").read_text() == README and readme not in editor.docs
    assert labels(editor) == ["Takeback: drop readme"]
    assert await states(editor) == [("turn", "open")]


async def test_an_open_documents_x_bit_is_taken_back_and_redone_on_disk(editor: Editor, repo: Path) -> None:
    """A turn made src/app.py executable and changed its text; the person has it open. The
    editor takes the text back; the x bit, which no editor can change, is set on disk by the
    server (the undo once said it was done and left the file executable)."""
    app_file = repo / "src/app.py"
    assert cli(repo, "begin", "--label", "make it a script")[0].returncode == 0
    app_file.write_text("#!/usr/bin/env python3\n" + APP)
    app_file.chmod(0o755)
    assert cli(repo, "end")[0].returncode == 0
    app = editor.open("src/app.py")

    undo = await editor.request("takeback/undo", {})
    assert undo["verdict"] == "safe" and undo["applied"] is True, undo
    assert editor.text(app) == APP
    assert app_file.stat().st_mode & 0o777 == 0o644

    redo = await editor.request("takeback/redo", {})
    assert redo["applied"] is True, redo
    assert editor.text(app) == "#!/usr/bin/env python3\n" + APP
    assert app_file.stat().st_mode & 0o777 == 0o755
