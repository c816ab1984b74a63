"""A revert narrowed over LSP (``takeback/revertTurn``): one step (``#1.2``), the files a
pathspec names, one hunk of a file named by a line of the document now (an unsaved buffer
included) or by a line of the change's result (a diff view's right side). The real server,
driven the way editors do."""

from __future__ import annotations

from pathlib import Path

from .editor import Editor
from .test_operations import APP, UTIL, _range


async def two_hunks(editor: Editor, app: str, turn: str | None = None) -> dict:
    """Turn #1 step 1: return 1 → 10 and return 2 → 20 in app.py, x * 2 → x * 3 in util.py."""
    return await editor.request("takeback/applyEdit", {
        "label": "tens", "turnId": turn,
        "edit": {"changes": {
            app: [{"range": _range(1, 11, 1, 12), "newText": "10"}, {"range": _range(5, 11, 5, 12), "newText": "20"}],
            editor.uri("src/util.py"): [{"range": _range(1, 15, 1, 16), "newText": "3"}],
        }},
    })


async def test_one_hunk_by_a_line_now_and_by_a_line_of_the_change(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    assert (await two_hunks(editor, app))["applied"] is True
    editor.type(app, "def main():", "# the person's note\n\ndef main():")  # unsaved: two lines above both hunks
    changed = APP.replace("return 1", "return 10").replace("return 2", "return 20")
    assert editor.text(app) == "# the person's note\n\n" + changed

    # a line of the document now: line 7 (0-based) is 'return 20' in the buffer
    plan = await editor.request("takeback/revertTurn", {"turnId": "#1", "hunk": {"uri": app, "line": 7}, "dryRun": True})
    assert plan["dryRun"] is True and "-    return 2\n+    return 20" not in plan["patch"]
    assert "+    return 2\n" in plan["patch"] and "return 1\n" not in plan["patch"]
    assert plan["next"] == [] or all(step.get("hunk") in (None, "src/app.py:8") for step in plan["next"])
    done = await editor.request("takeback/revertTurn", {"turnId": "#1", "hunk": {"uri": app, "line": 7}})
    assert done["verdict"] == "safe" and done["applied"] is True
    assert editor.text(app) == "# the person's note\n\n" + APP.replace("return 1", "return 10")  # the note kept
    assert (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")

    # a line of the change's result (the diff view's right side): line 1 is 'return 10' there
    done = await editor.request("takeback/revertTurn", {"turnId": "#1", "hunk": {"uri": app, "line": 1, "of": "change"}})
    assert done["applied"] is True and done["entry"]["label"].startswith("revert the hunk at line 4 of src/app.py")
    assert editor.text(app) == "# the person's note\n\n" + APP

    # each is an entry of its own, and redo brings back what the last one took back
    redone = await editor.request("takeback/redo", {})
    assert redone["applied"] is True
    assert editor.text(app) == "# the person's note\n\n" + APP.replace("return 1", "return 10")


async def test_a_line_in_no_hunk_is_a_clear_error_and_nothing_is_written(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    await two_hunks(editor, app)
    before = editor.text(app)
    for hunk, code, words in (
        ({"uri": app, "line": 3}, -32602, "line 4 of src/app.py is in none of the change's hunks; the nearest"),
        ({"uri": app, "line": 3, "of": "change"}, -32602, "line 4 of src/app.py as the change left it is in none of its hunks"),
        ({"uri": editor.uri("README.md"), "line": 0}, -32002, "did not change README.md"),
    ):
        try:
            await editor.request("takeback/revertTurn", {"turnId": "#1", "hunk": hunk})
            raise AssertionError(f"{hunk} was accepted")
        except Exception as exc:  # noqa: BLE001
            assert getattr(exc, "code", None) == code and words in str(exc), exc
    assert editor.text(app) == before and (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")


async def test_a_pathspec_and_one_step(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    begun = await editor.request("takeback/beginTurn", {"label": "two steps", "bracket": False})
    first = await two_hunks(editor, app, begun["id"])
    second = await editor.request("takeback/applyEdit", {
        "label": "step two", "turnId": begun["id"],
        "edit": {"changes": {editor.uri("src/util.py"): [{"range": _range(0, 4, 0, 10), "newText": "helper2"}]}},
    })
    assert second["applied"] is True and second["entry"]["id"] == first["entry"]["id"]
    await editor.request("takeback/endTurn", {"turnId": begun["id"]})
    util = UTIL.replace("x * 2", "x * 3").replace("def helper", "def helper2")
    assert (repo / "src/util.py").read_text() == util

    step = await editor.request("takeback/revertTurn", {"turnId": "#1.2"})
    assert step["applied"] is True and [r["path"] for r in step["restored"]] == ["src/util.py"]
    assert (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")  # step 1's change stays
    assert editor.text(app) == APP.replace("return 1", "return 10").replace("return 2", "return 20")

    files = await editor.request("takeback/revertTurn", {"turnId": "#1", "pathspec": ["src/*.py", ":!src/app.py"]})
    assert [r["path"] for r in files["restored"]] == ["src/util.py"]
    assert (repo / "src/util.py").read_text() == UTIL
    assert editor.text(app) == APP.replace("return 1", "return 10").replace("return 2", "return 20")
