"""The code action on the lines of a file that a past turn wrote, "Take back these lines from
turn #N: <label>": offered on the hunk's lines and nowhere else, following the hunk when the
person adds lines above it (unsaved), gone once the hunk is taken back, newest turn first, and
taking back only that hunk when run. The real server, driven the way editors do."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from .editor import Editor
from .test_operations import APP, UTIL, _range, run_action
from .test_surgical import two_hunks

TAKE_BACK = "Take back these lines from "


async def line_actions(editor: Editor, uri: str, first: int, last: int | None = None) -> list[types.CodeAction]:
    """The take-back actions offered on 0-based lines ``first``..``last`` (a cursor: ``first``)."""
    end = types.Position(line=first, character=0) if last is None else types.Position(line=last, character=3)
    result = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=first, character=0), end=end),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [a for a in result or [] if a.title.startswith(TAKE_BACK)]


async def titles(editor: Editor, uri: str, first: int, last: int | None = None) -> list[str]:
    return [a.title for a in await line_actions(editor, uri, first, last)]


async def edit(editor: Editor, uri: str, label: str, line: int, c1: int, c2: int, text: str) -> dict:
    done = await editor.request("takeback/applyEdit", {
        "label": label, "edit": {"changes": {uri: [{"range": _range(line, c1, line, c2), "newText": text}]}},
    })
    assert done["applied"] is True
    return done


async def test_offered_on_the_hunks_lines_only_and_it_moves_with_the_persons_lines(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    await two_hunks(editor, app)  # turn #1 "tens": lines 2 and 6 of app.py, and util.py
    for line in (1, 5):
        assert await titles(editor, app, line) == ["Take back these lines from turn #1: tens"]
    for line in (0, 2, 3, 4):
        assert await titles(editor, app, line) == []
    assert await titles(editor, app, 0, 5) == ["Take back these lines from turn #1: tens (line 2)",
                                               "Take back these lines from turn #1: tens (line 6)"]
    assert await titles(editor, editor.uri("README.md"), 0) == []  # a file no turn changed

    editor.type(app, "def main():", "# the person's note\n\ndef main():")  # unsaved: two lines above both
    assert await titles(editor, app, 1) == []
    assert await titles(editor, app, 3) == await titles(editor, app, 7) == ["Take back these lines from turn #1: tens"]
    action = (await line_actions(editor, app, 7))[0]
    assert action.command is not None and action.command.command == "takeback.revertTurn"
    argument = (action.command.arguments or [])[0]
    assert argument["hunk"] == {"uri": app, "line": 7, "of": "now"} and argument["expectTurnId"] == argument["turnId"]

    done = await run_action(editor, action)
    assert done["operation"] == "revert" and done["verdict"] == "safe" and done["applied"] is True
    changed = APP.replace("return 1", "return 10")
    assert editor.text(app) == "# the person's note\n\n" + changed  # only that hunk; the note kept
    assert (repo / "src/util.py").read_text() == UTIL.replace("x * 2", "x * 3")

    # taken back: no longer offered there (a revert is not offered itself); the other hunk still is
    assert await titles(editor, app, 7) == []
    assert await titles(editor, app, 3) == ["Take back these lines from turn #1: tens"]
    # that revert (#2) taken back in turn: the lines hold turn #1's again, and it is offered again
    assert (await editor.request("takeback/revertTurn", {"turnId": "#2"}))["applied"] is True
    assert editor.text(app) == "# the person's note\n\n" + changed.replace("return 2", "return 20")
    assert await titles(editor, app, 7) == ["Take back these lines from turn #1: tens"]
    # an undo takes back turn #1 as a whole: nothing of it is left to offer
    assert (await editor.request("takeback/undo", {}))["targetNumber"] == 1
    assert await titles(editor, app, 3) == await titles(editor, app, 7) == []


async def test_the_newest_turn_first_and_an_older_one_once_the_newer_is_taken_back(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    await edit(editor, app, "ten", 1, 11, 12, "10")  # turn #1: line 2
    await edit(editor, app, "checked", 2, 0, 0, "    # checked\n")  # turn #2: a line 3 under it
    assert editor.text(app) == APP.replace("return 1\n", "return 10\n    # checked\n")
    assert await titles(editor, app, 1, 2) == ["Take back these lines from turn #2: checked",
                                               "Take back these lines from turn #1: ten"]
    assert await titles(editor, app, 1) == ["Take back these lines from turn #1: ten"]

    # turn #3 writes over turn #1's line: only #3 is offered there (#1's take-back would be a conflict)
    await edit(editor, app, "hundred", 1, 11, 13, "100")
    assert await titles(editor, app, 1) == ["Take back these lines from turn #3: hundred"]
    done = await run_action(editor, (await line_actions(editor, app, 1))[0])
    assert done["applied"] is True and editor.text(app) == APP.replace("return 1\n", "return 10\n    # checked\n")
    assert await titles(editor, app, 1) == ["Take back these lines from turn #1: ten"]
    done = await run_action(editor, (await line_actions(editor, app, 1))[0])
    assert done["applied"] is True and editor.text(app) == APP.replace("return 1\n", "return 1\n    # checked\n")
    assert await titles(editor, app, 1, 2) == ["Take back these lines from turn #2: checked"]


async def test_a_stale_action_is_refused_and_writes_nothing(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    await two_hunks(editor, app)
    stale = (await line_actions(editor, app, 1))[0]
    assert (await editor.request("takeback/undo", {}))["applied"] is True  # turn #1 taken back meanwhile
    assert await titles(editor, app, 1) == []
    before = editor.text(app)
    try:
        await run_action(editor, stale)
        raise AssertionError("an action on a turn taken back since was carried out")
    except AssertionError:
        raise
    except Exception as exc:  # noqa: BLE001
        assert "#1" in str(exc), exc
    assert editor.text(app) == before == APP and (repo / "src/util.py").read_text() == UTIL
