"""An undo through the editor changes buffers, not files, until the person saves. When the
buffer is thrown away instead (``:e!``, "Revert File"), the disk keeps the agent's change while
the timeline says undone: the real server says so (``takeback/status``, ``takeback/timeline``,
the next operation's notices, ``takeback status`` in a terminal) and ``takeback/save`` writes
the operation's content. The test editor applies the server's edits to its buffers only, as
editors do, and never saves unless told."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from .editor import Editor
from .test_operations import APP, UTIL, agent_edit

AGENT_APP = APP.replace("return 1", "return 10")


def cli_status(repo: Path) -> str:
    """``takeback status`` in a terminal, a real process on the same store."""
    done = subprocess.run([sys.executable, "-m", "takeback", "status"], cwd=repo, env=dict(os.environ),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_a_discarded_undo_is_named_everywhere_and_save_writes_it(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    assert (await agent_edit(editor, app))["applied"] is True
    editor.save(app)  # the agent's change on disk, as after :w
    undone = await editor.request("takeback/undo", {})
    assert undone["applied"] is True
    assert editor.text(app) == APP  # the buffer holds the undo
    assert (repo / "src/app.py").read_text() == AGENT_APP  # the disk does not, until the person saves
    assert (repo / "src/util.py").read_text() == UTIL  # a file not open is written by the server

    status = await editor.request("takeback/status", {})
    assert [(u["path"], u["operation"], u["kind"], u["heldBy"], u["editor"]) for u in status["unsaved"]] == [("src/app.py", 2, "undo", 1, "unsaved")]
    assert "src/app.py: undo #2 was applied in an editor and is not on disk" in cli_status(repo)

    editor.discard(app)  # :e! — the buffer reads the agent's change back from the disk
    assert editor.text(app) == AGENT_APP
    status = await editor.request("takeback/status", {})
    assert [(u["path"], u["editor"]) for u in status["unsaved"]] == [("src/app.py", "discarded")]
    timeline = await editor.request("takeback/timeline", {})
    assert [(u["path"], u["editor"]) for u in timeline["unsaved"]] == [("src/app.py", "discarded")]
    text = cli_status(repo)
    assert "'takeback save' writes it" in text, text

    # the next operation's plan says it starts from the disk, not from what the timeline says
    plan = await editor.request("takeback/redo", {"dryRun": True})
    assert any(n.startswith("src/app.py: the editor's change was discarded: the disk holds what it held before undo #2 "
                            "(turn #1's change); this plan starts from what is on disk") for n in plan["notices"]), plan["notices"]

    saved = await editor.command("takeback.save", {})
    assert saved["written"] == ["src/app.py"]
    assert (repo / "src/app.py").read_text() == APP
    status = await editor.request("takeback/status", {})
    assert status["unsaved"] == []
    assert "not saved" not in cli_status(repo)
    with pytest.raises(JsonRpcException, match="nothing to save"):
        await editor.request("takeback/save", {})


async def test_saved_buffers_and_later_edits_are_not_named(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    await agent_edit(editor, app)
    editor.save(app)
    await editor.request("takeback/undo", {})
    editor.save(app)  # saved: the disk holds what the undo wrote
    assert (await editor.request("takeback/status", {}))["unsaved"] == []
    (repo / "src/app.py").write_text("something else\n")  # neither side: the person's own change, not Takeback's
    assert (await editor.request("takeback/status", {}))["unsaved"] == []
