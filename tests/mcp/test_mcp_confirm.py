"""The confirmation book in-process, for what a test through the server cannot wait for: a
token older than its lifetime is refused (and spent). The tools run over a real engine in a
real repository; only the lifetime is shortened."""

from __future__ import annotations

from pathlib import Path

from helpers import make_repo, tree_state, write_files
from takeback.engine.engine import Engine
from takeback.mcp.confirm import ConfirmationBook
from takeback.mcp.tools import Tools


def test_an_expired_token_is_refused_and_spent(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    engine.begin_turn(label="agent work")
    write_files(ws, {"a.txt": "agent\n"})
    engine.end_turn()
    after_turn = tree_state(ws)
    tools = Tools(engine, ConfirmationBook(lifetime=0))
    token = tools.undo().structured_content["confirm_token"]
    refused = tools.undo(confirm_token=token)
    assert refused.is_error and "expired" in refused.content[0].text
    assert tree_state(ws) == after_turn
    again = tools.undo(confirm_token=token)
    assert again.is_error and "not issued by this server" in again.content[0].text

    patient = Tools(engine, ConfirmationBook())
    token = patient.undo().structured_content["confirm_token"]
    done = patient.undo(confirm_token=token)
    assert not done.is_error and done.structured_content["status"] == "done"
    assert not (ws / "a.txt").exists()
