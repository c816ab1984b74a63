"""The confirmation book in-process, for what a test through the server cannot wait for or
arrange: a token older than its lifetime is refused (and spent), the oldest of too many plans is
forgotten, each way a plan made now differs from the confirmed one is named, and what a path
holds is named without reading through a symlinked folder. The tools run over a real engine in a
real repository; only the lifetime is shortened."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from helpers import make_repo, tree_state, write_files
from takeback.engine.engine import Engine
from takeback.mcp.confirm import ConfirmationBook, Plan, Refused, file_state
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


def test_what_a_path_holds_is_named_without_reading_through_a_symlinked_folder(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not the workspace's\n")
    os.symlink(outside, ws / "linked")
    (ws / "folder").mkdir()
    engine = Engine(ws)
    assert file_state(engine, "README.md") == "100644 " + hashlib.sha256(b"# demo\n").hexdigest()
    assert file_state(engine, "gone.txt") == "absent"
    assert file_state(engine, "folder") == "not a file (40000)"
    assert file_state(engine, "linked/secret.txt") == f"behind linked -> {str(outside).encode().hex()}"


def _plan(outcome: tuple[str, ...], files: tuple[tuple[str, str], ...] = (("a.txt", "x"),)) -> Plan:
    return Plan("undo", "abort", "E1", None, 1, "timeline-1", outcome, files)


def test_the_book_forgets_the_oldest_plans_beyond_the_ones_it_keeps() -> None:
    book, many = ConfirmationBook(), 1000  # far more plans than an agent keeps waiting at once
    tokens = [book.issue(_plan(("safe", f"restore a.txt +{n} -0"))) for n in range(many)]
    with pytest.raises(Refused, match="not issued by this server"):
        book.redeem(tokens[0], "undo", "abort", lambda: _plan(("safe", "restore a.txt +0 -0")), "undo")
    newest = _plan(("safe", f"restore a.txt +{many - 1} -0"))
    book.redeem(tokens[-1], "undo", "abort", lambda: newest, "undo")  # accepted: no exception


def test_a_plan_that_would_now_do_otherwise_is_refused_saying_how() -> None:
    book = ConfirmationBook()
    then = _plan(("safe", "restore a.txt +1 -0"))
    wider = _plan(("safe", "restore a.txt +1 -0", "restore b.txt +1 -0"), (("a.txt", "x"), ("b.txt", "y")))
    with pytest.raises(Refused, match=r"^the plan is not the same any more \(it now also touches b.txt\); nothing was done"):
        book.redeem(book.issue(then), "undo", "abort", lambda: wider, "undo")
    other = _plan(("partial", "restore a.txt +1 -0"))
    with pytest.raises(Refused, match=r"^the plan is not the same any more; nothing was done"):
        book.redeem(book.issue(then), "undo", "abort", lambda: other, "undo")
    edited = _plan(("safe", "restore a.txt +1 -0"), (("a.txt", "z"),))
    with pytest.raises(Refused, match=r"^a.txt changed since the plan; nothing was done"):
        book.redeem(book.issue(then), "undo", "abort", lambda: edited, "undo")
