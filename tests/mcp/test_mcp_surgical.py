"""``revert_turn`` taking back less than a turn, as an agent meets it through the real
``takeback mcp`` process and the MCP SDK's client: one step (``turn`` ``'#1.2'``), the files a
pattern names (``paths``), one hunk (``hunk``: a file and a line of it now). Each plans first and
names what it takes back and the later changes to the same files or lines; the token binds the
step, paths and hunk, so a confirmation with others is refused and stays good for its own;
bad targets are one-line tool errors that write nothing; a hunk's revert is taken back by the
call its answer names. Turns with steps are recorded by the engine in this process, the way an
agent's hooks record them (``begin_step`` / ``end_step``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_mcp_server import call, error, ok, plan_and_confirm, serve, turn

from helpers import git_state, tree_state, write_files
from takeback.core.models import NextStep
from takeback.engine.engine import Engine
from takeback.mcp.tools import tool_call

pytestmark = pytest.mark.timeout(120)

LINES = "".join(f"line {i}\n" for i in range(1, 21))
APP = "".join(f"x{i} = {i}\n" for i in range(1, 61))


def three_steps(engine: Engine) -> None:
    """Turn #1 of three steps (tool calls) on big.txt: lines 2, 10 and 18; the second also creates two.txt."""
    ws = engine.workspace.root
    write_files(ws, {"big.txt": LINES})
    engine.begin_turn(label="three steps", session="s", agent="claude", source="hook", bracket=False)
    text, entry = LINES, None
    for k, line in ((1, 2), (2, 10), (3, 18)):
        text = text.replace(f"line {line}\n", f"line {line} by step {k}\n")
        files = {"big.txt": text, **({"two.txt": "made by step 2\n"} if k == 2 else {})}
        engine.begin_step(f"s{k}", list(files), session="s", agent="claude")
        write_files(ws, files)
        entry = engine.end_step(f"s{k}", f"step {k}")
    assert entry is not None
    engine.end_turn(turn=entry.id, ended_by="stop")


def two_hunks(engine: Engine) -> str:
    """Turn #1 changes src/app.py in two places (x5; x40, which becomes two lines); turn #2 adds
    two lines at the top (the hunks move down by 2) and changes x55. The file as it stands."""
    write_files(engine.workspace.root, {"src/app.py": APP})
    changed = APP.replace("x5 = 5\n", "x5 = 'five'\n").replace("x40 = 40\n", "x40 = 'forty'\nx40b = 'new'\n")
    turn(engine, {"src/app.py": changed}, "two hunks")
    later = "import os\nimport sys\n" + changed.replace("x55 = 55\n", "x55 = 'later'\n")
    turn(engine, {"src/app.py": later}, "later")
    return later


async def test_one_step_is_taken_back_and_the_first_and_third_stay(ws: Path, engine: Engine) -> None:
    three_steps(engine)
    write_files(ws, {"big.txt": (ws / "big.txt").read_text().replace("line 15\n", "line 15 by the person\n")})
    git_before, before = git_state(ws), tree_state(ws)
    async with serve(ws) as session:
        planned = await call(session, "revert_turn", turn="#1.2")
        plan = ok(planned)
        assert tree_state(ws) == before
        assert plan["taking_back"] == {"turn": 1, "step": "1.2", "paths": None, "hunk": None}
        assert {o["path"]: o["action"] for o in plan["restored"]} == {"big.txt": "write", "two.txt": "delete"}
        assert "step #1.3 also changed big.txt after it" in plan["notices"]
        text = planned.content[0].text
        assert "  takes back  step #1.2 of turn #1 (its other steps stay)\n" in text
        assert "note     step #1.3 also changed big.txt after it" in text
        done = ok(await call(session, "revert_turn", turn="#1.2", confirm_token=plan["confirm_token"]))
        assert done["status"] == "done" and done["verdict"] == "safe"
        states = {t["number"]: t["state"] for t in ok(await call(session, "list_turns"))["turns"]}
    big = (ws / "big.txt").read_text()
    assert "line 10\n" in big and "by step 2" not in big and not (ws / "two.txt").exists()
    for kept in ("line 2 by step 1", "line 18 by step 3", "line 15 by the person"):
        assert kept in big
    assert states[1] == "partial"
    assert done["take_back"] == {"tool": "revert_turn", "arguments": {"turn": "2"}}
    assert git_state(ws) == git_before


async def test_the_files_a_pattern_names_are_taken_back_and_the_rest_stays(ws: Path, engine: Engine) -> None:
    turn(engine, {"src/app.py": "def main():\n    return 2\n", "tests/test_a.py": "A = 1\n",
                  "tests/deep/test_b.py": "B = 1\n", "README.md": "# changed\n"}, "four files")
    async with serve(ws) as session:
        planned = await call(session, "revert_turn", turn="1", paths=["tests/**"])
        plan = ok(planned)
        assert plan["taking_back"] == {"turn": 1, "step": None, "paths": ["tests/**"], "hunk": None}
        assert sorted(o["path"] for o in plan["restored"]) == ["tests/deep/test_b.py", "tests/test_a.py"]
        assert "  takes back  turn #1: only the files tests/** names\n" in planned.content[0].text
        done = await plan_and_confirm(session, "revert_turn", turn="1", paths=["tests/**"])
        assert done["verdict"] == "safe"
        one = await plan_and_confirm(session, "revert_turn", turn="1", paths="README.md")  # one path: a string is taken
        assert [o["path"] for o in one["restored"]] == ["README.md"]
        states = {t["number"]: t["state"] for t in ok(await call(session, "list_turns"))["turns"]}
    assert not (ws / "tests").exists() and (ws / "README.md").read_text() == "# demo\n"
    assert (ws / "src/app.py").read_text() == "def main():\n    return 2\n"
    assert states[1] == "applied"  # the rest of the turn is still in place


async def test_one_hunk_is_taken_back_the_other_stays_and_its_revert_is_taken_back(ws: Path, engine: Engine) -> None:
    later = two_hunks(engine)
    before = tree_state(ws)
    hunk = {"path": "src/app.py", "line": 43}
    async with serve(ws) as session:
        planned = await call(session, "revert_turn", turn="1", hunk=hunk)
        plan = ok(planned)
        assert tree_state(ws) == before
        assert plan["taking_back"] == {
            "turn": 1, "step": None, "paths": None, "hunk": {"path": "src/app.py", "line": 43, "lines": "lines 42-43"}}
        assert [o["path"] for o in plan["restored"]] == ["src/app.py"]
        assert "turn #2 also changed other lines of src/app.py after it" in plan["notices"]
        assert "-x40 = 'forty'\n-x40b = 'new'\n+x40 = 40\n" in plan["patch"]
        text = planned.content[0].text
        assert ("  takes back  turn #1: only the hunk of src/app.py at line 43 (lines 42-43 as the file stands now)\n"
                in text)
        assert "  | -x40 = 'forty'\n  | -x40b = 'new'\n  | +x40 = 40\n" in text  # the lines themselves
        done = ok(await call(session, "revert_turn", turn="1", hunk=hunk, confirm_token=plan["confirm_token"]))
        assert done["status"] == "done" and done["verdict"] == "safe"
        assert (ws / "src/app.py").read_text() == later.replace("x40 = 'forty'\nx40b = 'new'\n", "x40 = 40\n")
        assert "x5 = 'five'\n" in (ws / "src/app.py").read_text()  # the other hunk stays
        back = done["take_back"]
        assert back == {"tool": "revert_turn", "arguments": {"turn": "3"}}
        await plan_and_confirm(session, back["tool"], **back["arguments"])
    assert tree_state(ws) == before  # the hunk is back, exactly


async def test_a_token_is_refused_for_another_step_other_paths_or_another_hunk(ws: Path, engine: Engine) -> None:
    two_hunks(engine)
    before = tree_state(ws)
    hunk = {"path": "src/app.py", "line": 43}
    async with serve(ws) as session:
        token = ok(await call(session, "revert_turn", turn="1", hunk=hunk))["confirm_token"]
        for other, shown in (
            ({"hunk": {"path": "src/app.py", "line": 7}}, "hunk src/app.py:7"),
            ({"hunk": hunk, "paths": ["src/**"]}, "paths src/**, hunk src/app.py:43"),
            ({}, "not revert of #1 (on_conflict abort);"),
        ):
            refused = await call(session, "revert_turn", turn="1", **other, confirm_token=token)
            error(refused, "this confirmation token is for revert of #1 (on_conflict abort, hunk src/app.py:43)", shown)
            assert tree_state(ws) == before
        step_token = ok(await call(session, "revert_turn", turn="1.1"))["confirm_token"]
        refused = await call(session, "revert_turn", turn="1", confirm_token=step_token)
        error(refused, "is for revert of #1 (on_conflict abort, step #1.1), not revert of #1 (on_conflict abort)")
        assert tree_state(ws) == before
        done = ok(await call(session, "revert_turn", turn="1", hunk=hunk, confirm_token=token))  # still good for its own
    assert done["status"] == "done" and "x40 = 40\n" in (ws / "src/app.py").read_text()


async def test_a_target_that_is_not_there_is_a_tool_error_and_nothing_is_written(ws: Path, engine: Engine) -> None:
    two_hunks(engine)
    write_files(ws, {"logo.bin": "a\x00b\n"})
    turn(engine, {"logo.bin": "a\x00c\n"}, "binary")
    before = tree_state(ws)
    async with serve(ws) as session:
        token = ok(await call(session, "revert_turn", turn="1", hunk={"path": "src/app.py", "line": 43}))["confirm_token"]
        for arguments, words in (
            ({"turn": "1", "hunk": {"path": "src/app.py", "line": 20}},
             ("line 20 of src/app.py is in none of the change's hunks; the nearest, as the file stands now: lines 7 and 42-43",)),
            ({"turn": "3", "hunk": {"path": "logo.bin", "line": 1}}, ("logo.bin is binary", "take the whole file back")),
            ({"turn": "1", "hunk": {"path": "README.md", "line": 1}}, ("turn #1 did not change README.md",)),
            ({"turn": "1", "paths": ["docs/**"]}, ("changed no file that docs/** names",)),
            ({"turn": "#1.9"}, ("not 9",)),
            ({"turn": "1", "hunk": {"path": "src/app.py", "line": 0}}, ("invalid arguments for revert_turn: hunk.line",)),
            ({"turn": "1", "hunk": "src/app.py:43"}, ("invalid arguments for revert_turn: hunk",)),
        ):
            error(await call(session, "revert_turn", **arguments), *words)
            error(await call(session, "revert_turn", **arguments, confirm_token=token), *words)  # with a token too
            assert tree_state(ws) == before, arguments
        assert ok(await call(session, "list_turns"))["turns"][0]["number"] == 3  # no entry was made


def test_a_next_step_becomes_the_tool_call_that_does_it() -> None:
    step = NextStep(command="revert", number=12, step="12.3", paths=["src/**", "a b.py"], hunk="src/a:b.py:40",
                    on_conflict="skip", does="")
    assert tool_call(step) == {"tool": "revert_turn", "arguments": {
        "turn": "12.3", "paths": ["src/**", "a b.py"], "hunk": {"path": "src/a:b.py", "line": 40}, "on_conflict": "skip"}}
    assert tool_call(NextStep(command="revert", number=7, does="")) == {"tool": "revert_turn", "arguments": {"turn": "7"}}
    assert tool_call(NextStep(command="restore", checkpoint="3.1", does="")) == {
        "tool": "restore", "arguments": {"checkpoint": "3.1"}}
    assert tool_call(NextStep(command="redo", does="")) == {"tool": "redo", "arguments": {}}
