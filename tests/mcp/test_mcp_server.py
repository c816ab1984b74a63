"""``takeback mcp`` as an agent meets it: the real server process on stdio, driven by the MCP
SDK's own client (``stdio_client`` + ``ClientSession``), over real git repositories whose
history is recorded by the engine in this process (the server sees it through the store).

Covers reading (list, show, diff), the two-step destructive tools (a plan that writes nothing
and gives a token; the token carries it out), every way a confirmation is refused (a file
edited in between, the timeline moved, another target, forged, from another server, reused),
bad arguments answered as tool errors while the server keeps serving, and the annotations.

(No ``__init__.py`` here: a package named ``mcp`` under tests/ would shadow the SDK.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from helpers import git_state, tree_state, write_files
from mcp import ClientSession
from takeback.engine.engine import Engine

READ_ONLY = {"list_turns", "show_turn", "diff_turn"}
DESTRUCTIVE = {"undo", "redo", "revert_turn", "restore"}

pytestmark = pytest.mark.timeout(120)


def turn(engine: Engine, files: dict[str, str], label: str, delete: tuple[str, ...] = (), **who: str) -> None:
    """One bracketed agent turn that writes ``files`` and deletes ``delete``."""
    ws = engine.workspace.root
    engine.begin_turn(label=label, **who)
    write_files(ws, files)
    for rel in delete:
        (ws / rel).unlink()
    engine.end_turn()


def oplog(engine: Engine) -> str | None:
    return engine.timeline_version()


@asynccontextmanager
async def serve(cwd: Path, *args: str) -> AsyncIterator[ClientSession]:
    """``takeback mcp`` started in ``cwd`` (with the test's isolated state folders), connected."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "takeback", "mcp", *args], cwd=str(cwd), env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(client: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    return await client.call_tool(tool, arguments)


def ok(result: CallToolResult) -> dict[str, Any]:
    """A successful answer: structured content and a non-empty text."""
    assert not result.is_error, result
    assert result.content and result.content[0].type == "text" and result.content[0].text.strip(), result
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


def error(result: CallToolResult, *words: str) -> str:
    """A tool error: one line of text naming the problem."""
    assert result.is_error, result
    message = result.content[0].text
    assert "\n" not in message.strip(), message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    return message


async def plan_and_confirm(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    planned = ok(await call(session, tool, **arguments))
    assert planned["status"] == "planned" and planned["applied"] is False and planned["confirm_token"]
    done = ok(await call(session, tool, **arguments, confirm_token=planned["confirm_token"]))
    assert done["status"] == "done" and done["applied"] is True, done
    return done


# ---------------------------------------------------------------------------------- tools


async def test_tools_are_listed_with_their_annotations(ws: Path) -> None:
    async with serve(ws) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == READ_ONLY | DESTRUCTIVE
    for name in READ_ONLY:
        hints = tools[name].annotations
        assert hints is not None and hints.read_only_hint is True and hints.destructive_hint is False, name
        assert "confirm_token" not in tools[name].input_schema["properties"]
    for name in DESTRUCTIVE:
        hints = tools[name].annotations
        assert hints is not None and hints.read_only_hint is False and hints.destructive_hint is True, name
        props = tools[name].input_schema["properties"]
        assert "confirm_token" in props and "on_conflict" in props, name
        assert "confirm_token" not in tools[name].input_schema.get("required", [])
        assert "token" in tools[name].description
    assert tools["revert_turn"].input_schema["required"] == ["turn"]
    assert tools["revert_turn"].input_schema["properties"]["turn"]["type"] == "string"  # 17 is taken too
    revert = tools["revert_turn"].input_schema  # less than a turn: a step ('12.3' as turn), paths, a hunk
    assert "'12.3'" in revert["properties"]["turn"]["description"]
    assert {"type": "array", "items": {"type": "string"}} in revert["properties"]["paths"]["anyOf"]
    assert revert["$defs"]["HunkAt"]["required"] == ["path", "line"]
    assert tools["restore"].input_schema["required"] == ["checkpoint"]


async def test_list_show_and_diff_a_real_history(ws: Path, engine: Engine) -> None:
    turn(engine, {"src/app.py": "def main():\n    return 2\n", "src/new.py": "NEW = 1\n"}, "make main return 2",
         session="s-1", agent="claude")
    turn(engine, {"README.md": "# demo\nmore\n"}, "document it", delete=("src/util.py",), session="7", agent="codex")
    async with serve(ws) as session:
        listed = ok(await call(session, "list_turns"))
        assert listed["workspace"] == str(ws.resolve())
        turns = listed["turns"]
        assert [t["number"] for t in turns] == [2, 1]
        assert [(t["label"], t["agent"], t["session"], t["state"]) for t in turns] == [
            ("document it", "codex", "7", "applied"),
            ("make main return 2", "claude", "s-1", "applied"),
        ]
        assert {f["path"]: f["kind"] for f in turns[0]["files"]} == {"README.md": "modified", "src/util.py": "deleted"}
        assert {f["path"]: f["kind"] for f in turns[1]["files"]} == {"src/app.py": "modified", "src/new.py": "added"}
        text = (await call(session, "list_turns")).content[0].text
        assert text.index("#2") < text.index("#1") and "make main return 2" in text and "session s-1" in text

        only = ok(await call(session, "list_turns", session="s-1"))["turns"]
        assert [t["number"] for t in only] == [1]
        assert [t["number"] for t in ok(await call(session, "list_turns", limit=1))["turns"]] == [2]
        assert [t["number"] for t in ok(await call(session, "list_turns", session="7"))["turns"]] == [2]

        shown = ok(await call(session, "show_turn", turn="#1"))
        assert shown["number"] == 1 and shown["label"] == "make main return 2" and shown["agent"] == "claude"
        assert {f["path"] for f in shown["files"]} == {"src/app.py", "src/new.py"}
        assert len(shown["checkpoints"]) == 1 and set(shown["checkpoints"][0]["paths"]) == {"src/app.py", "src/new.py"}
        assert ok(await call(session, "show_turn", turn=1))["id"] == shown["id"]  # a bare number works too
        assert ok(await call(session, "show_turn"))["number"] == 2  # 'last' by default
        assert "step #1.1" in (await call(session, "show_turn", turn="1")).content[0].text

        diff = ok(await call(session, "diff_turn", turn="1"))
        assert diff["truncated"] is False
        assert "-    return 1\n+    return 2\n" in diff["diff"] and "+NEW = 1\n" in diff["diff"]
        one = await call(session, "diff_turn", turn="last", path="src/util.py")
        assert ok(one)["diff"].startswith("diff --git a/src/util.py b/src/util.py")
        assert "src/app.py" not in ok(one)["diff"] and one.content[0].text == ok(one)["diff"]


async def test_the_text_beside_the_structure_says_what_an_agent_reads_out(ws: Path, engine: Engine) -> None:
    """Clients that pass only the text to the model: an empty timeline says so, and a turn's text
    names the commands it ran and its checks with their exit codes."""
    async with serve(ws) as session:
        empty = await call(session, "list_turns")
        assert ok(empty)["turns"] == [] and ok(empty)["store"] == str(engine.store.path)
        assert empty.content[0].text == f"No turns recorded for {ok(empty)['workspace']} (store: {engine.store.path})."
    engine.begin_turn(label="build it")
    write_files(ws, {"src/app.py": "def main():\n    return 3\n"})
    engine.end_turn(commands=["make build"])
    engine.record_check(None, "pytest", "failed", command="pytest -q", exit_code=1)
    async with serve(ws) as session:
        text = (await call(session, "show_turn", turn="1")).content[0].text
    assert "  ran    make build\n" in text and "  check  pytest: failed (exit 1)" in text


# ---------------------------------------------------------------------------------- operations


async def test_started_in_a_subfolder_it_serves_the_work_trees_workspace(ws: Path, engine: Engine) -> None:
    """Claude Code starts the MCP server in the folder it was started in; the hooks record into
    the work tree's top, so the server must serve that workspace too (workspace/locate.py)."""
    turn(engine, {"src/app.py": "def main():\n    return 2\n"}, "make main return 2")
    async with serve(ws / "src") as session:
        listed = ok(await call(session, "list_turns"))
        assert listed["workspace"] == str(ws.resolve()) and [t["number"] for t in listed["turns"]] == [1]


async def test_undo_plans_without_writing_then_the_token_carries_it_out(ws: Path, engine: Engine) -> None:
    start = tree_state(ws)
    git_before = git_state(ws)
    turn(engine, {"src/app.py": "def main():\n    return 2\n", "src/new.py": "NEW = 1\n"}, "agent work")
    write_files(ws, {"notes.txt": "the person's own file\n"})
    after_turn = tree_state(ws)
    log_before = oplog(engine)
    async with serve(ws) as session:
        planned = ok(await call(session, "undo"))
        assert (tree_state(ws), git_state(ws), oplog(engine)) == (after_turn, git_before, log_before)  # nothing written
        assert planned["operation"] == "undo" and planned["dry_run"] is True and planned["verdict"] == "safe"
        assert planned["target_number"] == 1
        assert {o["path"]: o["action"] for o in planned["restored"]} == {"src/app.py": "write", "src/new.py": "delete"}
        assert "-    return 2\n+    return 1\n" in planned["patch"]
        token = planned["confirm_token"]
        assert token.startswith("tb1-") and planned["confirm_expires_in"] > 0
        text = (await call(session, "undo")).content[0].text
        assert text.startswith("PLAN (SAFE)") and "src/new.py" in text and "confirm_token: tb1-" in text
        assert "confirm_token" in planned["next_action"] and "person" in planned["next_action"]

        done = ok(await call(session, "undo", confirm_token=token))
        assert done["status"] == "done" and done["applied"] is True and done["verdict"] == "safe"
        assert done["entry"]["kind"] == "undo" and done["entry"]["target_number"] == 1
        assert done["take_back"] == {"tool": "redo", "arguments": {}}
        assert tree_state(ws) == {**start, "notes.txt": b"the person's own file\n"}  # the person's file kept
        assert git_state(ws) == git_before
        states = {t["number"]: (t["kind"], t["state"]) for t in ok(await call(session, "list_turns"))["turns"]}
        assert states == {1: ("turn", "reverted"), 2: ("undo", "applied")}

        again = await call(session, "undo", confirm_token=token)  # a token is good once
        error(again, "not issued by this server", "already used")


async def test_redo_brings_an_undone_turn_back(ws: Path, engine: Engine) -> None:
    turn(engine, {"src/app.py": "def main():\n    return 2\n"}, "agent work", delete=("src/util.py",))
    after_turn = tree_state(ws)
    async with serve(ws) as session:
        await plan_and_confirm(session, "undo")
        assert tree_state(ws) != after_turn
        done = await plan_and_confirm(session, "redo")
        assert done["operation"] == "redo" and done["take_back"]["tool"] == "undo"
        assert tree_state(ws) == after_turn
        await plan_and_confirm(session, done["take_back"]["tool"], **done["take_back"]["arguments"])
        await plan_and_confirm(session, "redo")
        assert tree_state(ws) == after_turn
        error(await call(session, "redo"), "nothing")  # nothing left to redo: the engine's own message


async def test_a_redo_of_an_older_turn_is_taken_back_by_a_revert_of_it_not_by_undo(ws: Path, engine: Engine) -> None:
    turn(engine, {"a.txt": "first\n"}, "one")
    engine.undo()  # #2
    turn(engine, {"c.txt": "third\n"}, "three")  # #3, the newest applied turn: what undo would take
    with_three = tree_state(ws)
    async with serve(ws) as session:
        done = await plan_and_confirm(session, "redo")  # #4 brings turn #1 back
        assert (ws / "a.txt").read_text() == "first\n"
        assert done["take_back"] == {"tool": "revert_turn", "arguments": {"turn": "4"}}
        assert done["next_action"] == "'takeback revert 4' takes this redo back"
        await plan_and_confirm(session, done["take_back"]["tool"], **done["take_back"]["arguments"])
        states = {t["number"]: t["state"] for t in ok(await call(session, "list_turns"))["turns"]}
        assert states == {1: "reverted", 2: "applied", 3: "applied", 4: "reverted", 5: "applied"}
    assert tree_state(ws) == with_three


async def test_revert_a_middle_turn_keeps_the_later_ones(ws: Path, engine: Engine) -> None:
    turn(engine, {"a.txt": "first\n"}, "one")
    turn(engine, {"b.txt": "second\n", "src/app.py": "def main():\n    return 2\n"}, "two")
    turn(engine, {"c.txt": "third\n", "a.txt": "first\nand more\n"}, "three")
    async with serve(ws) as session:
        done = await plan_and_confirm(session, "revert_turn", turn="#2")
        assert done["target_number"] == 2 and done["verdict"] == "safe"
        assert done["take_back"] == {"tool": "revert_turn", "arguments": {"turn": "4"}}
        states = {t["number"]: t["state"] for t in ok(await call(session, "list_turns"))["turns"]}
        assert states == {1: "applied", 2: "reverted", 3: "applied", 4: "applied"}
    assert not (ws / "b.txt").exists()
    assert (ws / "src/app.py").read_text() == "def main():\n    return 1\n"
    assert (ws / "a.txt").read_text() == "first\nand more\n" and (ws / "c.txt").read_text() == "third\n"


async def test_restore_goes_back_to_a_checkpoint(ws: Path, engine: Engine) -> None:
    turn(engine, {"a.txt": "first\n"}, "one")
    turn(engine, {"a.txt": "second\n", "b.txt": "b\n"}, "two")
    turn(engine, {"c.txt": "c\n"}, "three")
    async with serve(ws) as session:
        done = await plan_and_confirm(session, "restore", checkpoint="#1")
        assert done["operation"] == "restore"
    assert (ws / "a.txt").read_text() == "first\n"
    assert not (ws / "b.txt").exists() and not (ws / "c.txt").exists()


async def test_a_conflicting_plan_gives_no_token_until_a_way_out_is_chosen(ws: Path, engine: Engine) -> None:
    turn(engine, {"src/app.py": "def main():\n    return 2\n", "a.txt": "agent\n"}, "agent work")
    write_files(ws, {"src/app.py": "def main():\n    return 3  # the person\n"})
    async with serve(ws) as session:
        planned = ok(await call(session, "undo"))
        assert planned["verdict"] == "refused" and planned["confirm_token"] is None
        assert [c["path"] for c in planned["conflicts"]] == ["src/app.py"]
        assert "no confirmation token" in planned["next_action"]
        done = await plan_and_confirm(session, "undo", on_conflict="skip")
        assert done["verdict"] == "partial"
    assert (ws / "src/app.py").read_text() == "def main():\n    return 3  # the person\n"  # never lost
    assert not (ws / "a.txt").exists()


# ---------------------------------------------------------------------------------- refusals


async def test_a_file_edited_between_plan_and_confirmation_refuses_it(ws: Path, engine: Engine) -> None:
    turn(engine, {"src/app.py": "def main():\n    return 2\n", "src/new.py": "NEW = 1\n"}, "agent work")
    async with serve(ws) as session:
        token = ok(await call(session, "undo"))["confirm_token"]
        write_files(ws, {"src/new.py": "NEW = 1\nthe person's line\n"})
        edited = tree_state(ws)
        log_before = oplog(engine)
        refused = await call(session, "undo", confirm_token=token)
        message = error(refused, "src/new.py changed since the plan", "nothing was done", "call undo without confirm_token")
        assert refused.structured_content == {"error": "confirmation-refused", "message": message}
        assert tree_state(ws) == edited and oplog(engine) == log_before
        error(await call(session, "undo", confirm_token=token), "not issued")  # stale for good

        # A fresh plan sees the person's edit (a conflict) and never overwrites it.
        planned = ok(await call(session, "undo", on_conflict="skip"))
        assert [c["path"] for c in planned["conflicts"]] == ["src/new.py"]
        await call(session, "undo", on_conflict="skip", confirm_token=planned["confirm_token"])
    assert (ws / "src/new.py").read_text() == "NEW = 1\nthe person's line\n"
    assert (ws / "src/app.py").read_text() == "def main():\n    return 1\n"


async def test_the_timeline_moving_between_plan_and_confirmation_refuses_it(ws: Path, engine: Engine) -> None:
    turn(engine, {"a.txt": "one\n"}, "one")
    async with serve(ws) as session:
        token = ok(await call(session, "undo"))["confirm_token"]
        turn(engine, {"b.txt": "two\n"}, "two")  # another turn lands meanwhile (another agent, a hook)
        before = tree_state(ws)
        error(await call(session, "undo", confirm_token=token), "the timeline changed since the plan")
        assert tree_state(ws) == before

        token = ok(await call(session, "revert_turn", turn="1"))["confirm_token"]
        engine.undo()  # an undo from elsewhere (the CLI, the editor) takes #2 back meanwhile
        error(await call(session, "revert_turn", turn="1", confirm_token=token), "timeline changed")
    assert (ws / "a.txt").exists() and not (ws / "b.txt").exists()


async def test_the_person_may_confirm_in_their_next_prompt(ws: Path, engine: Engine) -> None:
    """The plan is shown in one agent turn and the person's "yes" opens the next: turns that
    change nothing (the one that asked, the one that confirms) do not void the token."""
    turn(engine, {"src/app.py": "def main():\n    return 2\n"}, "agent work")
    async with serve(ws) as session:
        engine.begin_turn(label="undo your last turn", agent="claude")
        before = (tree_state(ws), git_state(ws), oplog(engine))
        token = ok(await call(session, "undo"))["confirm_token"]
        assert (tree_state(ws), git_state(ws), oplog(engine)) == before  # the plan leaves the open turn open
        engine.end_turn()
        engine.record_check(None, "tests", "passed")
        engine.begin_turn(label="yes, go ahead", agent="claude")
        done = ok(await call(session, "undo", confirm_token=token))
        assert done["status"] == "done" and done["target_number"] == 1
    assert (ws / "src/app.py").read_text() == "def main():\n    return 1\n"


async def test_a_token_for_another_target_or_operation_is_refused_and_stays_good_for_its_own(
    ws: Path, engine: Engine
) -> None:
    turn(engine, {"a.txt": "one\n"}, "one")
    turn(engine, {"b.txt": "two\n"}, "two")
    async with serve(ws) as session:
        token = ok(await call(session, "revert_turn", turn="#1"))["confirm_token"]
        error(await call(session, "revert_turn", turn="#2", confirm_token=token), "for revert of #1", "not revert of #2")
        error(await call(session, "undo", confirm_token=token), "for revert of #1", "not undo")
        error(await call(session, "revert_turn", turn="#1", on_conflict="force", confirm_token=token), "on_conflict abort")
        assert (ws / "a.txt").exists() and (ws / "b.txt").exists()
        done = ok(await call(session, "revert_turn", turn="1", confirm_token=token))  # '1' is '#1'
        assert done["status"] == "done" and done["target_number"] == 1
    assert not (ws / "a.txt").exists() and (ws / "b.txt").exists()


async def test_forged_tokens_and_tokens_of_another_server_are_refused(ws: Path, engine: Engine) -> None:
    turn(engine, {"a.txt": "one\n"}, "one")
    after_turn = tree_state(ws)
    async with serve(ws) as first, serve(ws) as second:
        token = ok(await call(first, "undo"))["confirm_token"]
        ok(await call(second, "undo"))  # the same plan, on another server: its own token
        for forged in (token, token[:-2] + ("AA" if not token.endswith("AA") else "BB"), "tb1-" + "A" * 32, "yes", " "):
            if forged.strip():
                error(await call(second, "undo", confirm_token=forged), "not issued by this server")
        assert tree_state(ws) == after_turn
        await call(first, "undo", confirm_token=token)  # still good where it was issued
    assert not (ws / "a.txt").exists()


async def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(ws: Path, engine: Engine) -> None:
    async with serve(ws) as session:
        error(await call(session, "undo"), "nothing to undo")
        error(await call(session, "show_turn"), "no turn yet")
        turn(engine, {"a.txt": "one\n"}, "one")
        error(await call(session, "show_turn", turn="#99"), "no turn #99")
        error(await call(session, "show_turn", turn=""), "empty turn")
        error(await call(session, "diff_turn", turn="1", path="../outside.txt"), "outside")
        error(await call(session, "diff_turn", turn="1", path="README.md"), "did not change README.md")
        error(await call(session, "restore", checkpoint="#1.7"), "not 7")
        error(await call(session, "restore", checkpoint="last-green"), "no applied entry has passing checks")
        error(await call(session, "list_turns", limit=0), "invalid arguments for list_turns: limit:", "greater than")
        error(await call(session, "list_turns", limit="many"), "limit:")
        error(await call(session, "revert_turn"), "turn: Field required")
        error(await call(session, "undo", on_conflict="yolo"), "on_conflict:", "'abort'")
        error(await call(session, "restore", checkpoint=["#1"]), "checkpoint:")
        error(await call(session, "no_such_tool"), "no_such_tool")
        assert [t["number"] for t in ok(await call(session, "list_turns"))["turns"]] == [1]


# ---------------------------------------------------------------------------------- the process


async def test_workspace_option_serves_the_named_folder(tmp_path: Path, ws: Path, engine: Engine) -> None:
    turn(engine, {"a.txt": "one\n"}, "named")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with serve(elsewhere, "--workspace", str(ws)) as session:
        listed = ok(await call(session, "list_turns"))
        assert listed["workspace"] == str(ws.resolve()) and listed["turns"][0]["label"] == "named"
        await plan_and_confirm(session, "undo")
    assert not (ws / "a.txt").exists()


def test_the_server_exits_cleanly_when_the_client_goes_away(ws: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "takeback", "mcp"], cwd=ws, capture_output=True, stdin=subprocess.DEVNULL, timeout=60
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_a_folder_that_cannot_be_served_is_one_line_on_stderr(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "takeback", "mcp", "--workspace", str(tmp_path / "missing")],
        capture_output=True, stdin=subprocess.DEVNULL, timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("takeback: error: workspace ") and "not a folder" in lines[0]


async def test_marks_are_listed_and_restored_to(ws: Path, engine: Engine) -> None:
    """The person's own checkpoint (``takeback mark``) is in the list as kind 'mark', said so in
    the text, and ``restore`` goes back to it by name (plan, then the token)."""
    turn(engine, {"a.txt": "agent\n"}, "one")
    write_files(ws, {"a.txt": "agent, then the person\n"})
    engine.mark("mine")
    turn(engine, {"a.txt": "agent again\n", "b.txt": "b\n"}, "two")
    async with serve(ws) as session:
        listed = await call(session, "list_turns")
        turns = ok(listed)["turns"]
        assert [(t["number"], t["kind"], t["label"]) for t in turns] == [(3, "turn", "two"), (2, "mark", "mine"), (1, "turn", "one")]
        assert turns[1]["agent"] is None and [f["path"] for f in turns[1]["files"]] == ["a.txt"]
        assert "the person's own checkpoint (takeback mark): restore '#2' goes back to it" in listed.content[0].text
        done = await plan_and_confirm(session, "restore", checkpoint="mark:mine")
        assert done["operation"] == "restore" and done["verdict"] == "safe"
    assert (ws / "a.txt").read_text() == "agent, then the person\n" and not (ws / "b.txt").exists()
