"""Several agent sessions in one workspace: each prompt opens its session's turn (no bracket), the
turns stay open side by side, each step lands in its own session's turn, a stop ends only its
session's turn; a whole-disk bracket is open alone; undoing one session's turn keeps the other's
work; several open turns survive other processes, gc and a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import write_files
from takeback.core.models import EntryBegun, RecordEnvelope
from takeback.engine import brackets
from takeback.errors import StateError

from .support import open_engine


def prompt(engine, session: str | None, label: str):
    return engine.begin_turn(label=label, session=session, agent="claude", source="hook", bracket=False)


def edit(engine, ws: Path, session: str | None, path: str, content: str):
    """An edit tool's call: its start and end hooks around the write."""
    key = f"{session}\0{path}\0{content}"
    engine.begin_step(key, [path], session=session, agent="claude")
    write_files(ws, {path: content})
    return engine.end_step(key, f"Write {path}")


def stop(engine, session: str | None):
    turn = engine.open_turn_of(session)
    assert turn is not None, f"no open turn for {session}"
    return engine.end_turn(turn=turn.id, ended_by="stop")


def _begins(engine) -> list[int]:
    """The numbers of the turn begins in the log, in log order."""
    head = engine.store.head()
    chain = engine.store.commit_chain(head, None) if head else []
    return [
        r.number
        for oid in chain
        for r in RecordEnvelope.model_validate_json(engine.store.read_meta(oid)).records
        if isinstance(r, EntryBegun)
    ]


def _files(entry) -> list[str]:
    return sorted(f.path for f in entry.files)


def test_two_sessions_keep_their_own_turns_across_processes(ws: Path, engine) -> None:
    prompt(engine, "A", "A's prompt")
    edit(engine, ws, "A", "a.txt", "a\n")
    prompt(engine, "B", "B's prompt")
    other = open_engine(ws)  # the second session's hooks run in other processes
    assert [(t.number, t.session, t.state) for t in other.status().open_turns] == [(1, "A", "open"), (2, "B", "open")]
    edit(other, ws, "B", "b.txt", "b\n")
    edit(engine, ws, "A", "a2.txt", "a2\n")
    stop(other, "B")
    assert [t.session for t in engine.status().open_turns] == ["A"]
    edit(engine, ws, "A", "a3.txt", "a3\n")
    stop(engine, "A")
    a_turn, b_turn = engine.entry("1"), engine.entry("2")
    assert (a_turn.session, _files(a_turn), a_turn.ended_by) == ("A", ["a.txt", "a2.txt", "a3.txt"], "stop")
    assert (b_turn.session, _files(b_turn), b_turn.ended_by) == ("B", ["b.txt"], "stop")
    assert engine.status().open_turns == [] and list((engine.store.path / "brackets").iterdir()) == []


def test_the_log_holds_turns_in_the_order_they_began(repo: Path) -> None:
    """B's step is published before anything of A's: A's begin still goes first."""
    engine = open_engine(repo)
    prompt(engine, "A", "first")
    prompt(open_engine(repo), "B", "second")
    edit(engine, repo, "B", "b.txt", "b\n")
    assert _begins(engine) == [1, 2]
    assert [(e.number, e.label, e.state) for e in engine.entries()] == [(2, "second", "open"), (1, "first", "open")]
    prompt(engine, "C", "third")
    assert engine.timeline_version().count("+") == 3  # every open turn's file is in the token


def test_a_new_prompt_ends_only_its_own_sessions_turn(repo: Path) -> None:
    engine = open_engine(repo)
    prompt(engine, "A", "A one")
    prompt(engine, "B", "B one")
    edit(engine, repo, "A", "a.txt", "a\n")
    answer = prompt(engine, "A", "A two")
    assert answer.number == 3 and answer.notices[0].startswith("turn #1 was still open")
    edit(engine, repo, "B", "b.txt", "b\n")
    assert [(t.number, t.label) for t in engine.status().open_turns] == [(2, "B one"), (3, "A two")]
    first = engine.entry("1")
    assert (first.ended_by, _files(first)) == ("next_prompt", ["a.txt"])
    assert _files(engine.entry("2")) == ["b.txt"]


def test_a_step_leaves_out_what_another_session_recorded_while_it_ran(ws: Path, engine) -> None:
    """A's shell command runs while B edits the same file: B's edit is B's; A records only what
    came after it (or before it), and reverting A gives the file back as B left it."""
    write_files(ws, {"shared.txt": "x\n", "other.txt": "1\n2\n3\n4\n5\n"})
    prompt(engine, "A", "A")
    prompt(engine, "B", "B")
    engine.begin_step("A-make", None, session="A")
    edit(engine, ws, "B", "shared.txt", "by B\n")
    write_files(ws, {"shared.txt": "by B, then A's command\n", "gen.txt": "generated\n"})
    engine.end_step("A-make", "Bash: make")
    engine.begin_step("A-make2", None, session="A")
    write_files(ws, {"other.txt": "1 by A's command\n2\n3\n4\n5\n"})
    edit(engine, ws, "B", "other.txt", "1 by A's command\n2\n3\n4\n5 by B\n")
    engine.end_step("A-make2", "Bash: make again")
    stop(engine, "A")
    stop(engine, "B")
    a_turn = engine.entry("1")
    changes = {c.path: c for c in a_turn.files}
    assert sorted(changes) == ["gen.txt", "other.txt", "shared.txt"]
    b_side = engine.entry("2")
    b_after = {c.path: c.after.oid for c in b_side.files}
    assert changes["shared.txt"].before.oid == b_after["shared.txt"]  # A's change starts where B's ended
    assert changes["other.txt"].after.oid != b_after["other.txt"]  # A's change ends where B's began
    result = engine.revert("1")
    assert result.verdict == "safe", result.message
    assert (ws / "shared.txt").read_text() == "by B\n" and not (ws / "gen.txt").exists()
    assert (ws / "other.txt").read_text() == "1\n2\n3\n4\n5 by B\n"


def test_reverting_one_session_keeps_the_other_and_reports_a_conflict(repo: Path) -> None:
    engine = open_engine(repo)
    prompt(engine, "A", "A")
    prompt(engine, "B", "B")
    edit(engine, repo, "A", "a.txt", "a\n")
    edit(engine, repo, "B", "b.txt", "b\n")
    edit(engine, repo, "A", "src/app.py", "def main():\n    return 'A'\n")
    edit(engine, repo, "B", "src/app.py", "def main():\n    return 'B'\n")
    stop(engine, "A")
    stop(engine, "B")
    result = engine.revert("1")
    assert result.verdict == "refused" and not result.applied
    assert [c.path for c in result.conflicts] == ["src/app.py"]
    assert (repo / "a.txt").exists() and (repo / "src/app.py").read_text() == "def main():\n    return 'B'\n"
    result = engine.revert("1", on_conflict="skip")
    assert (result.verdict, [c.path for c in result.conflicts], result.applied) == ("partial", ["src/app.py"], True)
    assert not (repo / "a.txt").exists() and (repo / "b.txt").read_text() == "b\n"
    assert (repo / "src/app.py").read_text() == "def main():\n    return 'B'\n"


def test_undo_takes_back_the_newest_turn_and_the_other_session_goes_on(repo: Path) -> None:
    engine = open_engine(repo)
    prompt(engine, "A", "A")
    edit(engine, repo, "A", "a.txt", "a\n")
    prompt(engine, "B", "B")
    edit(engine, repo, "B", "b.txt", "b\n")
    result = engine.undo()
    assert result.target_number == 2 and result.notices == [
        "turn #2 was still open; undo ended it first (what changed on disk during it is recorded as its changes)"]
    assert not (repo / "b.txt").exists() and (repo / "a.txt").exists()
    assert [t.number for t in engine.status().open_turns] == [1]  # A's turn goes on
    edit(engine, repo, "A", "a2.txt", "a2\n")
    assert _files(engine.entry("1")) == ["a.txt", "a2.txt"]
    edit(engine, repo, "B", "b2.txt", "b2\n")  # B's turn is over: this step is a turn of its own
    assert [(e.label, e.session) for e in engine.entries()][:1] == [("Write b2.txt", "B")]


def test_end_with_no_turn_named_ends_every_open_turn(repo: Path) -> None:
    engine = open_engine(repo)
    prompt(engine, "A", "A")
    prompt(engine, "B", "B")
    prompt(engine, "C", "C")
    engine.end_turn(turn="2", ended_by="end_command")
    with pytest.raises(StateError, match=r"turn 2 is not open \(the open turns are #1, #3\)"):
        engine.end_turn(turn="2")
    entry = engine.end_turn(ended_by="end_command", commands=["make"])
    assert entry.number == 3 and entry.commands == ["make"] and entry.notices[0] == "also ended turn #1 (session A)"
    assert [e.ended_by for e in engine.entries()] == ["end_command"] * 3
    with pytest.raises(StateError, match="no turn is open"):
        engine.end_turn()


def test_a_whole_disk_bracket_is_open_alone(ws: Path, engine) -> None:
    """A bracket claims every change on disk: beginning it ends the sessions' turns, a step of
    any session joins it (recorded once), and a session's prompt ends it."""
    prompt(engine, "A", "A")
    prompt(engine, "B", "B")
    opened = engine.begin_turn(label="bracket", session="chat-1")
    assert len(opened.notices) == 2 and [t.label for t in engine.status().open_turns] == ["bracket"]
    edit(engine, ws, "A", "a.txt", "a\n")
    write_files(ws, {"shell.txt": "by a command\n"})
    assert engine.open_turn_of("A") is None  # A's stop does not end another's bracket
    entry = engine.end_turn()
    assert entry.label == "bracket" and _files(entry) == ["a.txt", "shell.txt"]
    assert sum(len(cp.paths) for cp in entry.checkpoints) == 2  # a.txt once: by the step, not the bracket too
    engine.begin_turn(label="bracket 2")
    answer = prompt(engine, "A", "A again")
    assert answer.notices and engine.entry("4").ended_by == "next_prompt"
    assert [t.label for t in engine.status().open_turns] == ["A again"]


def test_gc_keeps_every_open_turn_and_their_order(repo: Path) -> None:
    engine = open_engine(repo, retention={"max_entries": 2})
    for i in range(3):
        prompt(engine, f"old{i}", f"old {i}")
        edit(engine, repo, f"old{i}", f"f{i}.txt", f"{i}\n")
        stop(engine, f"old{i}")
    prompt(engine, "A", "A")
    prompt(engine, "B", "B")
    engine.gc()
    edit(engine, repo, "B", "b.txt", "b\n")
    edit(engine, repo, "A", "a.txt", "a\n")
    assert [(t.number, t.label) for t in open_engine(repo).status().open_turns] == [(4, "A"), (5, "B")]
    assert _files(stop(engine, "A")) == ["a.txt"] and _files(stop(engine, "B")) == ["b.txt"]


def test_a_session_turns_file_left_after_its_end_is_stale(repo: Path) -> None:
    """The process stopped between publishing a session turn's end and removing its file."""
    engine = open_engine(repo)
    prompt(engine, "A", "A")
    turn = prompt(engine, "B", "B")
    path = engine.store.path / "brackets" / brackets.session_name(turn.id)
    kept = path.read_bytes()
    stop(engine, "B")
    path.write_bytes(kept)
    other = open_engine(repo)
    assert [t.label for t in other.status().open_turns] == ["A"] and not path.exists()


def test_an_older_versions_open_hook_turn_ends_at_the_next_prompt(repo: Path) -> None:
    """Older versions kept a hook turn in brackets/open-turn too: it is open, taken for a whole-disk
    turn (the next prompt of any session ends it), and its session's stop ends it."""
    engine = open_engine(repo)
    turn = prompt(engine, "A", "old")
    folder = engine.store.path / "brackets"
    (folder / brackets.session_name(turn.id)).rename(folder / brackets.FILE_NAME)
    other = open_engine(repo)
    assert [t.label for t in other.status().open_turns] == ["old"]
    edit(other, repo, "A", "a.txt", "a\n")
    assert stop(other, "A").label == "old"
    prompt(other, "A", "old again")
    (folder / brackets.session_name(other.status().open_turn.id)).rename(folder / brackets.FILE_NAME)
    prompt(open_engine(repo), "B", "new")
    old = open_engine(repo).entry("2")
    assert old.ended_by == "next_prompt" and [t.label for t in open_engine(repo).status().open_turns] == ["new"]


def test_a_step_that_outlives_its_turn_is_not_claimed_by_the_bracket_that_ended_it(ws: Path, engine) -> None:
    """A's shell command is running when 'takeback begin' ends A's turn: the command's change is
    A's step (a turn of its own now), and the bracket does not record it a second time."""
    prompt(engine, "A", "A")
    engine.begin_step("A-make", None, session="A")
    engine.begin_turn(label="bracket")
    write_files(ws, {"gen.txt": "by A's command\n"})
    step = engine.end_step("A-make", "Bash: make")
    assert (step.session, step.label, _files(step)) == ("A", "Bash: make", ["gen.txt"])
    write_files(ws, {"person.txt": "during the bracket\n"})
    bracket = engine.end_turn()
    assert _files(bracket) == ["person.txt"]
