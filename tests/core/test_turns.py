"""Recording turns: begin/end brackets catch what shell commands wrote; edit batches join the
open turn or form their own. Each case also checks that undo and redo of it are exact."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import git, tree_state, write_files
from takeback.core.models import BatchChange
from takeback.errors import NothingToDo

from .support import batch, full_state, open_engine


@dataclass
class BracketCase:
    name: str
    during: Callable[[Path], None]
    expect: dict[str, str]  # path -> kind ("renamed:OLD" for renames)
    setup: dict[str, str] = field(default_factory=dict)  # files present (and committed in git) before begin
    untracked: dict[str, str] = field(default_factory=dict)  # files created before begin, never committed
    git_only: bool = False


def _rename(src: str, dst: str) -> Callable[[Path], None]:
    def run(ws: Path) -> None:
        (ws / dst).parent.mkdir(parents=True, exist_ok=True)
        os.rename(ws / src, ws / dst)

    return run


def _write(files: dict[str, str | bytes]) -> Callable[[Path], None]:
    return lambda ws: write_files(ws, files)


def _delete(*paths: str) -> Callable[[Path], None]:
    def run(ws: Path) -> None:
        for p in paths:
            (ws / p).unlink()

    return run


def _both(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def run(ws: Path) -> None:
        for step in steps:
            step(ws)

    return run


IGNORES = {
    ".gitignore": "*.log\nbuild/\n",
    "src/.gitignore": "*.tmp\n!keep.log\n",
    "src/deep/.gitignore": "gen/\n*.cache\n",
    "src/deep/mod.py": "x = 1\n",
}

BRACKET_CASES = [
    BracketCase("modify tracked", _write({"src/app.py": "def main():\n    return 2\n"}), {"src/app.py": "modified"}),
    BracketCase("create untracked", _write({"new.txt": "hello\n"}), {"new.txt": "added"}),
    BracketCase("create in new folders", _write({"a/b/c/d.txt": "deep\n"}), {"a/b/c/d.txt": "added"}),
    BracketCase("delete tracked", _delete("src/util.py"), {"src/util.py": "deleted"}),
    BracketCase("rename tracked", _rename("src/util.py", "lib/helpers.py"), {"lib/helpers.py": "renamed:src/util.py"}),
    BracketCase(
        "rename and edit elsewhere",
        _both(_rename("README.md", "docs/README.md"), _write({"src/app.py": "changed\n"})),
        {"docs/README.md": "renamed:README.md", "src/app.py": "modified"},
    ),
    BracketCase(
        "modify a file untracked before begin",
        _write({"notes.txt": "v2\n"}),
        {"notes.txt": "modified"},
        untracked={"notes.txt": "v1\n"},
    ),
    BracketCase(
        "delete a file untracked before begin", _delete("notes.txt"), {"notes.txt": "deleted"}, untracked={"notes.txt": "v1\n"}
    ),
    BracketCase("untracked file left alone", _write({"src/app.py": "x\n"}), {"src/app.py": "modified"}, untracked={"scratch.txt": "s\n"}),
    BracketCase(
        "ignored files at every level",
        _write({
            "x.log": "root ignored\n",
            "build/out.bin": b"\x00\x01",
            "src/a.tmp": "ignored by src/.gitignore\n",
            "src/keep.log": "re-included by src/.gitignore\n",
            "src/deep/gen/code.py": "ignored folder two levels down\n",
            "src/deep/x.cache": "ignored two levels down\n",
            "src/deep/real.py": "recorded\n",
            "src/deep/more/z.py": "recorded too\n",
        }),
        {"src/keep.log": "added", "src/deep/real.py": "added", "src/deep/more/z.py": "added"},
        setup=IGNORES,
    ),
    BracketCase(
        "deleting an ignored file is not recorded",
        _both(_delete("src/deep/gen/old.py"), _write({"src/deep/mod.py": "x = 2\n"})),
        {"src/deep/mod.py": "modified"},
        setup=IGNORES,
        untracked={"src/deep/gen/old.py": "ignored\n"},
    ),
    BracketCase(
        "info/exclude is honoured",
        _write({"secret-notes.md": "excluded\n", "kept.md": "recorded\n"}),
        {"kept.md": "added"},
        git_only=True,
    ),
    BracketCase(
        "unicode, spaces, dashes and newlines in names",
        _write({"dir with space/na\u00efve caf\u00e9.txt": "u\n", "-leading-dash.txt": "d\n", "\u65e5\u672c/\u30d5\u30a1\u30a4\u30eb.md": "j\n", "odd\nname.txt": "n\n"}),
        {"dir with space/na\u00efve caf\u00e9.txt": "added", "-leading-dash.txt": "added", "\u65e5\u672c/\u30d5\u30a1\u30a4\u30eb.md": "added", "odd\nname.txt": "added"},
    ),
    BracketCase("write back the same bytes", _write({"src/app.py": "def main():\n    return 1\n"}), {}),
    BracketCase(
        "change and change back",
        _both(_write({"src/app.py": "temp\n", "t.txt": "t\n"}), _write({"src/app.py": "def main():\n    return 1\n"}), _delete("t.txt")),
        {},
    ),
]


def _mix(start, end, recorded):
    out = []
    for s, e in zip(start, end):
        merged = {p: e[p] for p in e if p not in recorded}
        merged.update({p: s[p] for p in s if p in recorded})
        out.append(merged)
    return tuple(out)


@pytest.mark.parametrize("case", BRACKET_CASES, ids=lambda c: c.name)
def test_bracket_records_changes_on_disk(case: BracketCase, ws: Path, ws_kind: str) -> None:
    if case.git_only and ws_kind == "plain":
        pytest.skip("needs a git repository")
    if case.setup:
        write_files(ws, case.setup)
        if ws_kind != "plain":
            git(ws, "add", "-A")
            git(ws, "commit", "-q", "-m", "setup")
    if case.git_only:
        (ws / ".git" / "info").mkdir(exist_ok=True)
        (ws / ".git" / "info" / "exclude").write_text("secret-notes.md\n")
    write_files(ws, case.untracked)
    engine = open_engine(ws, git_scanner=ws_kind != "git-walk")

    start = full_state(ws)
    engine.begin_turn(label=case.name, session="s1", agent="shell")
    case.during(ws)
    end = full_state(ws)
    entry = engine.end_turn(commands=["make gen"])

    got = {f.path: (f"renamed:{f.old_path}" if f.kind == "renamed" else f.kind) for f in entry.files}
    assert got == case.expect
    assert entry.state == "applied"
    assert entry.kind == "turn"
    assert (entry.label, entry.session, entry.agent) == (case.name, "s1", "shell")
    assert entry.commands == ["make gen"]
    assert entry.finished_at is not None and entry.finished_at >= entry.created_at
    if ws_kind == "plain":
        assert entry.head is None
    else:
        assert entry.head == git(ws, "rev-parse", "HEAD").strip()

    if not case.expect:
        assert entry.checkpoints == []
        with pytest.raises(NothingToDo, match="nothing to undo"):
            engine.undo()
        return
    assert entry.state_hash
    recorded = {f.path for f in entry.files} | {f.old_path for f in entry.files if f.old_path}
    result = engine.undo()
    assert result.applied and result.verdict == "safe"
    # recorded paths go back to their start; everything else (ignored files) is left as it is
    assert full_state(ws) == _mix(start, end, recorded)
    result = engine.redo()
    assert result.applied and result.verdict == "safe"
    assert full_state(ws) == end


def test_bracket_line_stats_and_contents(ws: Path, engine) -> None:
    engine.begin_turn(label="edit")
    (ws / "src/app.py").write_text("def main():\n    return 2\n\n\ndef extra():\n    pass\n")
    entry = engine.end_turn()
    (change,) = entry.files
    assert (change.additions, change.deletions) == (5, 1)
    assert (entry.additions, entry.deletions) == (5, 1)
    assert engine.file_at("last", "src/app.py", "before") == b"def main():\n    return 1\n"
    assert engine.file_at("last", "src/app.py") == (ws / "src/app.py").read_bytes()
    diff = engine.diff("last")
    assert "-    return 1" in diff and "+    return 2" in diff


def test_bracket_sees_a_file_committed_during_the_turn(repo: Path) -> None:
    """An agent that runs `git commit` inside its turn: the before-image comes from the index
    copied at begin, so the change is still recorded and undoable."""
    engine = open_engine(repo)
    engine.begin_turn()
    (repo / "src/app.py").write_text("committed by the agent\n")
    git(repo, "commit", "-q", "-am", "agent commit")
    entry = engine.end_turn()
    assert [(f.path, f.kind) for f in entry.files] == [("src/app.py", "modified")]
    assert engine.file_at("last", "src/app.py", "before") == b"def main():\n    return 1\n"


def test_bracket_sees_files_staged_or_removed_during_the_turn(repo: Path) -> None:
    engine = open_engine(repo)
    start = full_state(repo)
    engine.begin_turn()
    (repo / "src/app.py").write_text("staged by the agent\n")
    (repo / "fresh.txt").write_text("added by the agent\n")
    git(repo, "add", "src/app.py", "fresh.txt")
    git(repo, "rm", "-q", "src/util.py")
    entry = engine.end_turn()
    assert {f.path: f.kind for f in entry.files} == {"src/app.py": "modified", "fresh.txt": "added", "src/util.py": "deleted"}
    engine.undo()
    assert full_state(repo) == start


def test_begin_while_a_turn_is_open_ends_it_first(ws: Path, engine) -> None:
    first = engine.begin_turn(label="first")
    (ws / "a.txt").write_text("a\n")
    second = engine.begin_turn(label="second")
    (ws / "b.txt").write_text("b\n")
    engine.end_turn()
    one, two = engine.entry(first.id), engine.entry(second.id)
    assert one.state == "applied" and [f.path for f in one.files] == ["a.txt"]
    assert two.state == "applied" and [f.path for f in two.files] == ["b.txt"]
    assert (one.number, two.number) == (1, 2)


# ---------------------------------------------------------------------- edit batches


def test_batch_without_open_turn_is_its_own_turn(ws: Path, engine) -> None:
    entry, cp = batch(engine, ws, {"src/app.py": "new\n", "made.txt": "m\n"}, label="edit", session="s", agent="bot")
    assert entry.kind == "turn" and entry.state == "applied" and entry.source == "edit"
    assert entry.number == 1 and [c.id for c in entry.checkpoints] == [cp]
    assert {f.path: f.kind for f in entry.files} == {"src/app.py": "modified", "made.txt": "added"}
    assert (entry.label, entry.session, entry.agent) == ("edit", "s", "bot")
    assert engine.status().open_turn is None
    entry2, _ = batch(engine, ws, {"made.txt": None})
    assert entry2.number == 2 and {f.path: f.kind for f in entry2.files} == {"made.txt": "deleted"}


def test_batch_joins_the_open_turn(ws: Path, engine) -> None:
    start = full_state(ws)
    turn = engine.begin_turn(label="agent turn")
    e1, cp1 = batch(engine, ws, {"src/app.py": "v1\n"})
    e2, cp2 = batch(engine, ws, {"src/app.py": "v2\n", "src/util.py": None})
    (ws / "shell-output.txt").write_text("from a shell command\n")
    assert e1.id == e2.id == turn.id
    assert e2.state == "open"
    entry = engine.end_turn()
    assert entry.id == turn.id and entry.state == "applied"
    assert [c.id for c in entry.checkpoints][:2] == [cp1, cp2]
    assert {f.path: f.kind for f in entry.files} == {
        "src/app.py": "modified",
        "src/util.py": "deleted",
        "shell-output.txt": "added",
    }
    assert engine.file_at(turn.id, "src/app.py", "before") == b"def main():\n    return 1\n"
    end = full_state(ws)
    engine.undo()
    assert full_state(ws) == start
    engine.redo()
    assert full_state(ws) == end


def test_bracket_does_not_record_again_what_the_batches_explain(ws: Path, engine) -> None:
    turn = engine.begin_turn(label="agent turn")
    _e, cp1 = batch(engine, ws, {"src/app.py": "v1\n"})
    _e, cp2 = batch(engine, ws, {"src/app.py": "v2\n", "src/util.py": None})
    entry = engine.end_turn()
    assert [c.id for c in entry.checkpoints] == [cp1, cp2]
    (ws / "later.txt").write_text("the person\n")
    turn2 = engine.begin_turn(label="agent and shell")
    _e, cp3 = batch(engine, ws, {"src/app.py": "v3\n"})
    (ws / "src" / "app.py").write_text("v3 formatted\n")  # a formatter runs after the batch
    entry2 = engine.end_turn()
    assert len(entry2.checkpoints) == 2 and entry2.checkpoints[0].id == cp3
    assert entry2.checkpoints[1].paths == ["src/app.py"]
    engine.undo()
    assert (ws / "src" / "app.py").read_text() == "v2\n"
    assert turn.id != turn2.id


def test_batches_only_in_a_turn_without_bracket(ws: Path, engine) -> None:
    start = full_state(ws)
    turn = engine.begin_turn(bracket=False, source="lsp")
    batch(engine, ws, {"src/app.py": "one\n"})
    batch(engine, ws, {"src/app.py": "two\n"})
    (ws / "unseen.txt").write_text("no bracket: not recorded\n")
    entry = engine.end_turn()
    assert entry.id == turn.id and entry.source == "lsp"
    assert [f.path for f in entry.files] == ["src/app.py"]
    engine.undo()
    assert tree_state(ws) == {**start[0], "unseen.txt": b"no bracket: not recorded\n"}


def test_batch_with_explicit_before_and_rename(ws: Path, engine) -> None:
    old = (ws / "src/util.py").read_bytes()
    changes = [
        BatchChange(path="src/helpers.py", after=old, before=None, renamed_from="src/util.py"),
        BatchChange(path="src/util.py", after=None, before=old),
    ]
    entry, _ = engine.record_batch(changes)
    (ws / "src/util.py").rename(ws / "src/helpers.py")
    (change,) = entry.files
    assert (change.kind, change.path, change.old_path) == ("renamed", "src/helpers.py", "src/util.py")
    engine.undo()
    assert (ws / "src/util.py").read_bytes() == old and not (ws / "src/helpers.py").exists()
    assert not (ws / "src").joinpath("helpers.py").exists()


def test_batch_before_image_of_an_unsaved_buffer(ws: Path, engine) -> None:
    """The editor's buffer held unsaved text: that is the before-image, not the disk."""
    engine.record_batch([BatchChange(path="src/app.py", after=b"agent\n", before=b"buffer text\n")])
    (ws / "src/app.py").write_bytes(b"agent\n")
    assert engine.file_at("last", "src/app.py", "before") == b"buffer text\n"
    result = engine.undo()
    assert result.applied
    assert (ws / "src/app.py").read_bytes() == b"buffer text\n"


def test_apply_batch_writes_and_records(ws: Path, engine) -> None:
    start = full_state(ws)
    entry, _ = engine.apply_batch([BatchChange(path="gen/out.txt", after=b"generated\n"), BatchChange(path="README.md", after=None)])
    assert (ws / "gen/out.txt").read_bytes() == b"generated\n" and not (ws / "README.md").exists()
    assert {f.path: f.kind for f in entry.files} == {"gen/out.txt": "added", "README.md": "deleted"}
    engine.undo()
    assert full_state(ws) == start
    assert not (ws / "gen").exists()


def test_numbers_and_timeline_survive_a_restart(ws: Path, engine, ws_kind: str) -> None:
    batch(engine, ws, {"a.txt": "a\n"}, label="one")
    engine.begin_turn(label="two")
    (ws / "b.txt").write_text("b\n")
    engine.end_turn()
    engine.undo()
    again = open_engine(ws, git_scanner=ws_kind != "git-walk")
    got = [(e.number, e.kind, e.state, e.target_number) for e in again.entries()]
    assert got == [(3, "undo", "applied", 2), (2, "turn", "reverted", None), (1, "turn", "applied", None)]
    assert [e.label for e in again.entries()][1:] == ["two", "one"]
    assert "#2" in again.entry("3").label
    assert again.status().redo_target == 3
    assert again.status().undo_target == 1
    again.redo()
    assert (ws / "b.txt").read_text() == "b\n"


def test_store_inside_the_workspace_is_never_recorded(ws: Path, ws_kind: str) -> None:
    engine = open_engine(ws, store_dir=str(ws / ".takeback-store"), git_scanner=ws_kind != "git-walk")
    assert engine.store.path == ws / ".takeback-store"
    engine.begin_turn()
    (ws / "a.txt").write_text("a\n")
    entry = engine.end_turn()
    engine.begin_turn()  # the store changed a lot since (objects, log): none of it is a change
    (ws / "b.txt").write_text("b\n")
    entry2 = engine.end_turn()
    assert [f.path for f in entry.files] == ["a.txt"] and [f.path for f in entry2.files] == ["b.txt"]
    engine.undo()
    engine.undo()
    assert (ws / ".takeback-store" / "objects.git").is_dir()
    assert not (ws / "a.txt").exists() and not (ws / "b.txt").exists()


def test_record_and_undo_spawn_no_process(ws: Path, engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The record and undo path is in-process (pygit2): no git or other process is started."""
    import subprocess

    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was spawned: {args[:1]}")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    monkeypatch.setattr(os, "posix_spawn", refuse)
    monkeypatch.setattr(os, "fork", refuse)
    start = full_state(ws)
    batch(engine, ws, {"src/app.py": "fast\n", "new.txt": "n\n"})
    engine.undo()
    assert full_state(ws) == start
    engine.redo()
    engine.status()


def test_fsync_policy_on(ws: Path, ws_kind: str) -> None:
    engine = open_engine(ws, fsync=True, git_scanner=ws_kind != "git-walk")
    start = full_state(ws)
    batch(engine, ws, {"durable.txt": "d\n"})
    engine.undo()
    assert full_state(ws) == start and engine.status().fsync is True
    open_engine(ws, fsync=False)  # back to the default for the rest of the process


def test_a_begin_that_cannot_write_its_file_opens_no_turn(ws: Path, engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's disk fails as the open turn's file is written (full, say): no turn is opened,
    nothing is left in the store's brackets folder, and the next begin works."""
    from takeback.errors import StoreError

    write_files(ws, {"dirty.txt": "changed before the turn\n"})
    real_replace = os.replace

    def full(src, dst, *args, **kwargs):  # the system edge: the store's disk
        if Path(dst).name == "open-turn":
            raise OSError(28, "No space left on device")
        return real_replace(src, dst, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(os, "replace", full)
        with pytest.raises(StoreError, match="No space left"):
            engine.begin_turn(label="never opened")
    assert list((engine.store.path / "brackets").glob("*")) == []
    assert engine.entries() == [] and engine.status().open_turn is None
    engine.begin_turn(label="opened")
    assert [e.label for e in engine.entries()] == ["opened"]


def test_an_end_that_cannot_publish_keeps_the_turn_open(ws: Path, engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The log cannot be written as the turn ends: the turn stays open with its bracket's
    snapshot, and a later end records what changed since its begin."""
    from takeback.errors import StoreError
    from takeback.storage.store import Store

    engine.begin_turn(label="the turn")
    write_files(ws, {"made.txt": "by the agent\n"})

    def fails(*args, **kwargs):  # the system edge: the store's disk
        raise StoreError("cannot write to the store: No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(Store, "append", fails)
        with pytest.raises(StoreError, match="No space left"):
            engine.end_turn()
    assert engine.status().open_turn is not None
    assert open_engine(ws).status().open_turn.label == "the turn"  # another process sees it too
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["made.txt"] and entry.state == "applied"
    assert list((engine.store.path / "brackets").glob("*")) == []
