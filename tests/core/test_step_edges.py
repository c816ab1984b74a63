"""Steps (an agent's tool calls, ``begin_step``/``end_step``) at their edges, through the engine's
public API on real repositories: a shell step whose only change on disk an editor's batch
recorded meanwhile records nothing of its own; one whose change an editor's batch only passed
through records the whole of it; an edit step leaves to another session the part of its file's
change that session's editor batch recorded (all of it, its last part, or a middle part that
leaves the step the whole); a step file a crash left empty neither blocks another step's
end nor survives ``discard_steps``, which removes only its own session's steps; an edit reported
after it was made on a file that is gone is refused by name; in a repository with no commit
yet the index's version of the file is the before-image that fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import git, make_repo
from takeback.core.models import BatchChange
from takeback.engine import brackets
from takeback.errors import InvalidInput

from .support import open_engine


def test_a_shell_step_whose_only_change_an_editor_recorded_records_nothing(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    engine.begin_step("shell-1", session="s")
    engine.record_batch([BatchChange(path="README.md", after=b"typed in the editor\n")], label="editor", session="other")
    (ws / "README.md").write_text("typed in the editor\n")
    assert engine.end_step("shell-1", "Bash: make") is None
    assert [e.label for e in engine.entries()] == ["editor"]


def test_a_shell_step_records_all_it_saw_when_a_batch_only_passed_through(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    engine.begin_step("shell-1", session="s")
    (ws / "README.md").write_text("the command's first write\n")
    engine.record_batch([BatchChange(path="README.md", after=b"the editor's\n")], label="editor", session="other")
    (ws / "README.md").write_text("the command's last write\n")
    entry = engine.end_step("shell-1", "Bash: gen")
    assert entry is not None and entry.label == "Bash: gen"
    assert engine.file_at(entry.id, "README.md", "before") == b"# demo\n"
    assert engine.file_at(entry.id, "README.md", "after") == b"the command's last write\n"
    assert engine.undo().verdict == "safe"
    assert (ws / "README.md").read_text() == "# demo\n"


def test_a_step_file_a_crash_left_empty_blocks_nothing_and_is_discarded(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    folder = engine.store.path / "brackets"
    engine.begin_step("mine", session="s")
    engine.begin_step("theirs", session="other")
    folder.mkdir(exist_ok=True)
    torn = folder / (brackets.STEP_PREFIX + "0" * 32)
    torn.write_bytes(b"")  # a step whose start a crash tore
    engine.begin_step("edit", ["src/app.py"], session="s")
    (ws / "src/app.py").write_text("edited\n")
    (ws / "src/util.py").write_text("also written\n")
    entry = engine.end_step("edit", "Edit src/app.py")
    # src/util.py is left to the shell steps still open beside it: they see it at their end
    assert entry is not None and [f.path for f in entry.files] == ["src/app.py"] and entry.notices == []
    assert engine.discard_steps("s") == 1  # "mine"; the torn file goes too, "theirs" stays
    assert not torn.exists()
    assert engine.end_step("mine", "Bash: never ended") is None
    (ws / "README.md").write_text("theirs\n")
    theirs = engine.end_step("theirs", "Bash: echo")
    assert theirs is not None and sorted(f.path for f in theirs.files) == ["README.md", "src/util.py"]


def test_an_edit_reported_on_a_file_that_is_gone_is_refused(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    (ws / "README.md").unlink()
    with pytest.raises(InvalidInput, match="^README.md is gone: the edit reported on it cannot be recorded$"):
        engine.record_made_edit("README.md", [("# demo\n", "# new\n")], "Edit README.md")
    assert engine.entries() == []


def test_before_the_first_commit_the_index_version_is_the_before_image(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / "notes.txt").write_text("one\ntwo\n")
    git(ws, "add", "notes.txt")
    engine = open_engine(ws)
    (ws / "notes.txt").write_text("one\n2\n")  # the agent replaced "two" by "2" (a fit that is not unique alone)
    entry = engine.record_made_edit(str(ws / "notes.txt"), [("two", "2")], "Edit notes.txt")
    assert entry is not None and entry.head is None
    assert engine.file_at(entry.id, "notes.txt", "before") == b"one\ntwo\n"
    assert engine.undo().verdict == "safe" and (ws / "notes.txt").read_text() == "one\ntwo\n"


def test_an_edit_step_leaves_to_another_session_what_its_batch_recorded_on_the_same_file(tmp_path: Path) -> None:
    """Another session's editor batch changed the file an edit step names, while the step ran:
    all of the change (nothing is the step's), its last part (the step's is the rest), or a
    middle part (the step's is the whole: it wrote after the batch too)."""
    ws = make_repo(tmp_path / "ws")
    engine = open_engine(ws)
    readme = ws / "README.md"

    def editor(text: str) -> None:
        engine.record_batch([BatchChange(path="README.md", after=text.encode())], label="editor", session="other")
        readme.write_text(text)

    engine.begin_step("all", ["README.md"], session="s")
    editor("the editor's\n")
    assert engine.end_step("all", "Edit README.md") is None

    engine.begin_step("first", ["README.md"], session="s")
    readme.write_text("the tool's\n")
    editor("the editor's, after the tool\n")
    step = engine.end_step("first", "Edit README.md")
    assert step is not None
    assert engine.file_at(step.id, "README.md", "before") == b"the editor's\n"
    assert engine.file_at(step.id, "README.md", "after") == b"the tool's\n"

    engine.begin_step("around", ["README.md"], session="s")
    readme.write_text("the tool's first\n")
    editor("the editor's, between\n")
    readme.write_text("the tool's last\n")
    step = engine.end_step("around", "Edit README.md")
    assert step is not None
    assert engine.file_at(step.id, "README.md", "before") == b"the editor's, after the tool\n"
    assert engine.file_at(step.id, "README.md", "after") == b"the tool's last\n"
