"""``takeback mcp`` at its edges, as an agent and a person meet them: the real server process
(driven by the MCP SDK's client, or by its exit status and stderr) refuses an empty
``--workspace`` clearly, warns about the settings a cloned repository may not set and serves
anyway; a diff past the answer's size limit is cut and says how to read the rest; a turn that changed a secret shows it as withheld. In-process, the confirmation book
refuses a token that a second call spent while the first was still checking its plan, and a
path whose name the file system refuses is named as unreadable."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from test_mcp_server import call, ok, serve, turn

from helpers import make_repo
from takeback.engine.engine import Engine
from takeback.mcp.confirm import ConfirmationBook, Plan, Refused, file_state
from takeback.mcp.tools import MAX_DIFF_CHARS

pytestmark = pytest.mark.timeout(120)


def _mcp(cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "takeback", "mcp", *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60,
    )


def test_an_empty_workspace_option_is_refused(tmp_path: Path) -> None:
    done = _mcp(tmp_path, "--workspace", "  ")
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.strip() == (
        "takeback: error: --workspace is empty: give a folder, or leave the option out to use the current folder"
    )


def test_settings_a_repository_may_not_set_are_named_and_the_server_still_serves(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {".takeback.toml": "[secrets]\nstore_content = true\n"})
    done = _mcp(ws)  # stdin closed at once: the client went away
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("takeback: warning: ")]
    assert len(warnings) == 1 and "secrets.store_content" in warnings[0] and "Traceback" not in done.stderr


async def test_a_diff_past_the_limit_is_cut_and_says_how_to_read_the_rest(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    big = "".join(f"line {n} of a generated file\n" for n in range(MAX_DIFF_CHARS // 20))
    turn(engine, {"gen/big.txt": big, "small.txt": "small\n"}, "generate")
    async with serve(ws) as session:
        cut = ok(await call(session, "diff_turn", turn="1"))
        one = ok(await call(session, "diff_turn", turn="1", path="small.txt"))
        text = (await call(session, "diff_turn", turn="1")).content[0].text
    assert cut["truncated"] is True and len(cut["diff"]) == MAX_DIFF_CHARS
    assert f"… cut at {MAX_DIFF_CHARS} characters of " in text and "ask for one file with 'path'" in text
    assert one["truncated"] is False and "+small" in one["diff"] and "big.txt" not in one["diff"]


async def test_a_changed_secret_is_shown_as_withheld(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    turn(engine, {".env": "API_KEY=s3cr3t\n", "app.txt": "uses the key\n"}, "configure")
    async with serve(ws) as session:
        shown = await call(session, "show_turn", turn="1")
    text = shown.content[0].text
    line = next(line for line in text.splitlines() if ".env" in line)
    assert "(content withheld: secret)" in line and "s3cr3t" not in text
    assert "withheld" not in next(line for line in text.splitlines() if "app.txt" in line)


def _plan() -> Plan:
    return Plan("undo", "abort", "E1", None, 1, "timeline-1", ("safe", "restore a.txt +1 -0"), (("a.txt", "x"),))


def test_a_token_spent_by_another_call_while_its_plan_was_checked_is_refused() -> None:
    book = ConfirmationBook()
    token = book.issue(_plan())
    checking, spent = threading.Event(), threading.Event()
    outcome: list[BaseException | None] = []

    def slow_plan() -> Plan:
        checking.set()
        assert spent.wait(30)
        return _plan()

    def first() -> None:
        try:
            book.redeem(token, "undo", "abort", slow_plan, "undo")
            outcome.append(None)
        except Refused as exc:
            outcome.append(exc)

    worker = threading.Thread(target=first)
    worker.start()
    assert checking.wait(30)
    book.redeem(token, "undo", "abort", _plan, "undo")  # the second call carries it out
    spent.set()
    worker.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], Refused)
    assert str(outcome[0]).startswith("this confirmation token was used meanwhile; nothing was done")


def test_a_path_the_file_system_refuses_is_named_unreadable(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    assert file_state(engine, "x" * 300) == "unreadable: File name too long"
    assert sorted(os.listdir(ws)) == [".git", "README.md", "src"]
