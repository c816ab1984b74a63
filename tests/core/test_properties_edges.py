"""Property-based tests at the edges of real work trees, against a reference of the whole folder.

An agent makes bracketed turns in its own part of the tree (``src/`` and ``.gitignore``): it
writes, deletes, flips executable bits, replaces files by folders and folders by files, and
rewrites the ignore rules so that files which were ignored become visible (the person's build
output, a local database) or visible ones become ignored. Between turns the person edits their
own files, ignored ones included. Then come undo and redo.

The reference is the folder itself, split in two: the agent's part, whose state before and
after each applied turn is kept on a stack, and the person's part (files, their permission
bits, an empty folder), which no operation may ever change. Checked after every step:

* undo of the last applied turn gives back the agent's part exactly as before that turn
  (bytes and executable bits), redo exactly as after it: undo then redo is the identity;
* the person's part is exactly what the person last left (bytes, permission bits, the empty
  folder): a person's file is never lost, whatever the ignore rules said;
* the user's git state never changes, and every answer is SAFE (nothing here conflicts).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test

from helpers import git_state, make_repo, write_files

from .support import open_engine
from .test_writes_edges import agent_pause, knows_birth

AGENT_FILES = ["src/a.txt", "src/b.txt", "src/run.sh", "src/c/d.txt", "src/gen.txt"]
IGNORE_VERSIONS = [
    "build/\n*.db\n",  # the start: the person's build output and database are ignored
    "*.db\n",  # build/ becomes visible
    "build/\n",  # the database becomes visible
    "build/\n*.db\nsrc/gen.txt\n",  # an agent file becomes ignored
    "",  # everything visible
]
PERSON_FILES = {
    "build/out.o": b"\x7fELF person's build output",
    "local.db": b"SQLite format 3\x00 the person's data",
    "notes/todo.md": b"- the person's list\n",
    "person/secret.txt": b"token=person\n",
    "person/readonly.txt": b"do not touch\n",
}
PERSON_MODES = {"person/secret.txt": 0o600, "person/readonly.txt": 0o444}
PERSON_EMPTY_FOLDER = "notes/empty"


def is_agent_path(rel: str) -> bool:
    return rel == ".gitignore" or rel == "src" or rel.startswith("src/")


def agent_state(root: Path) -> dict[str, tuple[bytes, bool]]:
    """The agent's part: path -> (bytes, executable) for every file under src/ and .gitignore."""
    out: dict[str, tuple[bytes, bool]] = {}
    gitignore = root / ".gitignore"
    if gitignore.exists():
        out[".gitignore"] = (gitignore.read_bytes(), False)
    for folder, _dirs, files in os.walk(root / "src"):
        for name in files:
            p = Path(folder) / name
            out[p.relative_to(root).as_posix()] = (p.read_bytes(), bool(os.lstat(p).st_mode & 0o111))
    return out


def person_state(root: Path) -> dict[str, tuple[bytes, int] | str]:
    """The person's part: every file outside the agent's part with its bytes and permission
    bits, and the empty folder."""
    out: dict[str, tuple[bytes, int] | str] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        rel_folder = Path(folder).relative_to(root).as_posix()
        if is_agent_path(rel_folder):
            dirs[:] = []
            continue
        for name in files:
            p = Path(folder) / name
            rel = p.relative_to(root).as_posix()
            if not is_agent_path(rel):
                out[rel] = (p.read_bytes(), stat.S_IMODE(os.lstat(p).st_mode))
    out[PERSON_EMPTY_FOLDER] = "folder" if (root / PERSON_EMPTY_FOLDER).is_dir() else "missing"
    return out


# One agent action: (what, path, argument).
actions = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(AGENT_FILES), st.none()),
    st.tuples(st.just("delete"), st.sampled_from(AGENT_FILES), st.none()),
    st.tuples(st.just("exec"), st.sampled_from(AGENT_FILES), st.booleans()),
    st.tuples(st.just("file-to-folder"), st.sampled_from(["src/a.txt", "src/b.txt"]), st.none()),
    st.tuples(st.just("folder-to-file"), st.just("src/c"), st.none()),
    st.tuples(st.just("ignore"), st.just(".gitignore"), st.sampled_from(IGNORE_VERSIONS)),
)


class EdgeSession(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="tb-edges-"))
        self.counter = 0
        self.applied: list[tuple[dict, dict]] = []  # (agent part before, after) per applied turn
        self.undone: tuple[dict, dict] | None = None  # the turn the last step undid, if any

    @initialize(kind=st.sampled_from(["git", "plain"]), watched=st.booleans())
    def start(self, kind: str, watched: bool) -> None:
        tracked = {
            ".gitignore": IGNORE_VERSIONS[0],
            "src/a.txt": "a\n",
            "src/b.txt": "b\n",
            "src/run.sh": "#!/bin/sh\necho run\n",
            "src/c/d.txt": "d\n",
        }
        self.ws = self.tmp / "ws"
        if kind == "git":
            make_repo(self.ws, tracked)
        else:
            self.ws.mkdir()
            write_files(self.ws, tracked)
        write_files(self.ws, PERSON_FILES)
        for rel, mode in PERSON_MODES.items():
            os.chmod(self.ws / rel, mode)
        (self.ws / PERSON_EMPTY_FOLDER).mkdir(parents=True)
        self.kind = kind
        self.git0 = git_state(self.ws) if kind == "git" else None
        self.engine = open_engine(self.ws, long_lived=watched)
        self.person = person_state(self.ws)

    def teardown(self) -> None:
        engine = getattr(self, "engine", None)
        if engine is not None:
            engine.close()
        for folder, dirs, _files in os.walk(self.tmp):
            for d in dirs:
                os.chmod(Path(folder) / d, 0o755)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fresh(self) -> str:
        self.counter += 1
        return f"version {self.counter}\n"

    def act(self, what: str, rel: str, arg: object) -> None:
        path = self.ws / rel
        if what == "write":
            if path.parent.exists() and not path.parent.is_dir():
                path.parent.unlink()
            if path.is_dir():
                shutil.rmtree(path)
            write_files(self.ws, {rel: self.fresh()})
        elif what == "delete":
            if path.is_file():
                path.unlink()
        elif what == "exec":
            if path.is_file():
                mode = stat.S_IMODE(path.stat().st_mode)
                os.chmod(path, (mode | 0o111) if arg else (mode & ~0o111))
        elif what == "file-to-folder":
            if path.is_file():
                path.unlink()
                write_files(self.ws, {f"{rel}/inner.txt": self.fresh()})
        elif what == "folder-to-file":
            if path.is_dir():
                shutil.rmtree(path)
                path.write_text(self.fresh())
        elif what == "ignore":
            path.write_text(str(arg))

    @rule(steps=st.lists(actions, min_size=1, max_size=4))
    def agent_turn(self, steps: list) -> None:
        before = agent_state(self.ws)
        self.engine.begin_turn(label=f"turn {len(self.applied) + 1}")
        for what, rel, arg in steps:
            self.act(what, rel, arg)
        self.act("write", "src/a.txt" if not (self.ws / "src/a.txt").is_dir() else "src/b.txt", None)
        self.engine.end_turn()
        self.applied.append((before, agent_state(self.ws)))
        self.undone = None

    @rule(rel=st.sampled_from(sorted(PERSON_FILES)))
    def person_edits(self, rel: str) -> None:
        path = self.ws / rel
        mode = stat.S_IMODE(path.stat().st_mode)
        os.chmod(path, mode | 0o200)
        path.write_bytes(path.read_bytes() + self.fresh().encode())
        os.chmod(path, mode)
        self.person = person_state(self.ws)

    @precondition(lambda self: bool(self.applied))
    @rule()
    def undo(self) -> None:
        before, after = self.applied.pop()
        assert agent_state(self.ws) == after
        result = self.engine.undo()
        assert result.verdict == "safe", (result.message, result.skipped, result.conflicts)
        assert agent_state(self.ws) == before, "undo did not give back the agent's part as before the turn"
        self.undone = (before, after)

    @precondition(lambda self: self.undone is not None)
    @rule()
    def redo(self) -> None:
        before, after = self.undone
        result = self.engine.redo()
        assert result.verdict == "safe", (result.message, result.skipped, result.conflicts)
        assert agent_state(self.ws) == after, "redo did not give back the agent's part as after the turn"
        self.applied.append((before, after))
        self.undone = None

    @invariant()
    def person_is_never_touched(self) -> None:
        if hasattr(self, "ws"):
            assert person_state(self.ws) == self.person, "a person's file, mode or folder changed"

    @invariant()
    def git_state_is_untouched(self) -> None:
        if getattr(self, "kind", None) == "git":
            assert git_state(self.ws) == self.git0


@pytest.mark.timeout(600)
def test_random_edge_sessions() -> None:
    run_state_machine_as_test(
        EdgeSession,
        settings=settings(
            max_examples=30,
            stateful_step_count=12,
            deadline=None,
            derandomize=True,  # the same sessions every run; the gap below was found by random ones
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


def test_an_emptied_folder_a_turn_made_in_place_of_a_file_is_taken_back(tmp_path: Path) -> None:
    """Found by the random sessions above: the turn deletes the tracked file src/c, makes a
    folder src/c, writes src/c/d.txt and deletes it again. No file's record names that folder
    (git lists no empty folder): the turn's end records it with src/c's deletion, as made in the
    file's place, so the undo removes it and puts the file back."""
    ws = make_repo(tmp_path / "ws", {"src/a.txt": "a\n", "src/c": "c\n"})
    engine = open_engine(ws)
    engine.begin_turn(label="file to folder, emptied")
    agent_pause()
    (ws / "src/c").unlink()
    write_files(ws, {"src/c/d.txt": "d\n"})
    (ws / "src/c/d.txt").unlink()
    (ws / "src/a.txt").write_text("a, by the agent\n")
    engine.end_turn()
    result = engine.undo()
    engine.close()
    if not knows_birth(ws):  # the folder's birth is unknown: it stays, and the file is skipped
        assert result.verdict == "partial" and [s.path for s in result.skipped] == ["src/c"]
        return
    assert result.verdict == "safe", (result.message, result.skipped)
    assert (ws / "src/c").read_text() == "c\n"
