"""``takeback/hunks`` through the real server: the hunks of one file's change in a turn or a step,
in the lines of the change's result (a diff view's right side), each with the line that names it
to ``takeback/revertTurn`` (``hunk.of = "change"``) — and that line takes back that hunk only."""

from __future__ import annotations

from pathlib import Path

from .editor import Editor
from .test_operations import APP, _range
from .test_surgical import two_hunks


async def test_the_hunks_of_a_turns_file_each_name_the_hunk_a_revert_takes_back(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    await two_hunks(editor, app)
    listed = await editor.request("takeback/hunks", {"turnId": "#1", "uri": app})
    assert listed["hunks"] == [
        {"start": 1, "end": 2, "removed": 1, "line": 1},  # return 1 -> return 10
        {"start": 5, "end": 6, "removed": 1, "line": 5},  # return 2 -> return 20
    ]
    second = listed["hunks"][1]
    done = await editor.request("takeback/revertTurn", {"turnId": "#1", "hunk": {"uri": app, "line": second["line"], "of": "change"}})
    assert done["applied"] is True
    assert editor.text(app) == APP.replace("return 1", "return 10")  # only the second hunk taken back
    assert (await editor.request("takeback/hunks", {"turnId": "#1", "uri": editor.uri("src/util.py")}))["hunks"] == [
        {"start": 1, "end": 2, "removed": 1, "line": 1}
    ]


async def test_a_steps_hunks_and_hunks_that_only_removed_or_added_lines(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    begun = await editor.request("takeback/beginTurn", {"label": "two steps", "bracket": False})
    await two_hunks(editor, app, begun["id"])
    # step 2: the last two lines go (a hunk that only removed lines, at the end of the file)
    await editor.request("takeback/applyEdit", {"turnId": begun["id"], "label": "drop other", "edit": {"changes": {
        app: [{"range": _range(3, 0, 6, 0), "newText": ""}]}}})
    await editor.request("takeback/endTurn", {"turnId": begun["id"]})
    step = await editor.request("takeback/hunks", {"turnId": begun["id"], "uri": app, "step": 2})
    assert step["hunks"] == [{"start": 3, "end": 3, "removed": 3, "line": 2}]  # after the last line left
    whole = await editor.request("takeback/hunks", {"turnId": "#1", "uri": app})
    assert [(h["start"], h["end"]) for h in whole["hunks"]] == [(1, 2), (3, 3)]
    done = await editor.request("takeback/revertTurn", {"turnId": "#1.2", "hunk": {"uri": app, "line": 2, "of": "change"}})
    assert done["applied"] is True and editor.text(app) == APP.replace("return 1", "return 10").replace("return 2", "return 20")


async def test_no_hunk_in_a_deleted_or_binary_file_and_errors_as_file_at(editor: Editor, repo: Path) -> None:
    begun = await editor.request("takeback/beginTurn", {"label": "files", "bracket": True})
    (repo / "src/util.py").unlink()
    (repo / "new.txt").write_text("one\ntwo\n")
    (repo / "data.bin").write_bytes(b"\x00\x01binary")
    await editor.request("takeback/endTurn", {"turnId": begun["id"]})
    assert (await editor.request("takeback/hunks", {"turnId": "#1", "uri": editor.uri("src/util.py")}))["hunks"] == []
    added = await editor.request("takeback/hunks", {"turnId": "#1", "uri": editor.uri("new.txt")})
    assert added["hunks"] == [{"start": 0, "end": 2, "removed": 0, "line": 0}]
    assert (await editor.request("takeback/hunks", {"turnId": "#1", "uri": editor.uri("data.bin")}))["hunks"] == []
    try:
        await editor.request("takeback/hunks", {"turnId": "#1", "uri": editor.uri("README.md")})
        raise AssertionError("a file the turn did not change was accepted")
    except Exception as exc:  # noqa: BLE001
        assert getattr(exc, "code", None) == -32002 and "did not change README.md" in str(exc), exc
