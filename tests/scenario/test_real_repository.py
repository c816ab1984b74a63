"""A scripted agent session on a copy of a real repository (this project's own, cloned).

Three agent turns (shell-style writes inside a bracket, an edit batch, a rename and a delete),
the person editing between them, then undo, redo, a revert of the first turn and a restore.
After every step the person's edits are checked, and the clone's git state must never change.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import git, git_state, tree_state
from takeback.core.models import BatchChange
from takeback.engine.engine import Engine

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture
def real_repo(tmp_path: Path) -> Path:
    if not (PROJECT / ".git").exists():
        pytest.skip("the project is not a git checkout")
    target = tmp_path / "copy"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(PROJECT), str(target)], check=True)
    return target


def test_scripted_session_on_a_real_repository(real_repo: Path) -> None:
    repo = real_repo
    state0 = git_state(repo)
    engine = Engine(repo)
    readme0 = (repo / "README.md").read_bytes()
    engine_py = "server/takeback/engine/engine.py"
    engine0 = (repo / engine_py).read_bytes()
    assert (repo / "pyproject.toml").exists()

    # Turn 1: the agent's shell commands rewrite a file, create one, delete one.
    t1 = engine.begin_turn(label="Document the engine", session="s", agent="script")
    (repo / engine_py).write_bytes(engine0 + b"\n# agent: documented\n")
    (repo / "docs" / "agent-notes.md").parent.mkdir(exist_ok=True)
    (repo / "docs" / "agent-notes.md").write_text("# Notes from the agent\n")
    deleted = "tests/helpers.py"
    helpers0 = (repo / deleted).read_bytes()
    (repo / deleted).unlink()
    t1 = engine.end_turn(commands=["sed -i ...", "rm tests/helpers.py"])
    assert {f.path: f.kind for f in t1.files} == {
        engine_py: "modified",
        "docs/agent-notes.md": "added",
        deleted: "deleted",
    }
    assert git_state(repo) == state0

    # The person edits the README by hand.
    person_readme = readme0.replace(b"# Takeback", b"# Takeback (person's copy)")
    (repo / "README.md").write_bytes(person_readme)

    # Turn 2: an edit batch that renames a file and edits the README further down.
    pyproject = (repo / "pyproject.toml").read_bytes()
    t2, _cp = engine.record_batch(
        [
            BatchChange(path="pyproject.renamed.toml", after=pyproject, before=None, renamed_from="pyproject.toml"),
            BatchChange(path="pyproject.toml", after=None),
            BatchChange(path="README.md", after=person_readme + b"\nAgent line.\n"),
        ],
        label="Rename pyproject and extend README",
        session="s",
    )
    (repo / "pyproject.renamed.toml").write_bytes(pyproject)
    (repo / "pyproject.toml").unlink()
    (repo / "README.md").write_bytes(person_readme + b"\nAgent line.\n")
    kinds = {f.path: f.kind for f in t2.files}
    assert kinds["pyproject.renamed.toml"] == "renamed" and kinds["README.md"] == "modified"

    # Undo turn 2: the rename is reverted, the README keeps the person's edit.
    result = engine.undo()
    assert result.verdict == "safe", result
    assert (repo / "pyproject.toml").read_bytes() == pyproject
    assert not (repo / "pyproject.renamed.toml").exists()
    assert (repo / "README.md").read_bytes() == person_readme

    # Redo brings it back exactly.
    assert engine.redo().verdict == "safe"
    assert (repo / "README.md").read_bytes() == person_readme + b"\nAgent line.\n"
    assert (repo / "pyproject.renamed.toml").read_bytes() == pyproject

    # Revert turn 1 while turn 2 stays.
    result = engine.revert(str(t1.number))
    assert result.verdict == "safe", result
    assert (repo / engine_py).read_bytes() == engine0
    assert (repo / deleted).read_bytes() == helpers0
    assert not (repo / "docs" / "agent-notes.md").exists()
    assert (repo / "pyproject.renamed.toml").exists()
    assert (repo / "README.md").read_bytes() == person_readme + b"\nAgent line.\n"

    # Restore to turn 1's checkpoint: every later change is taken back, the person's edit stays.
    before_restore = tree_state(repo)
    result = engine.restore(f"#{t1.number}")
    assert result.verdict == "safe", result
    assert (repo / engine_py).read_bytes() == engine0 + b"\n# agent: documented\n"
    assert (repo / "pyproject.toml").read_bytes() == pyproject
    assert (repo / "README.md").read_bytes() == person_readme
    # ... and the restore itself can be undone.
    assert engine.redo().verdict == "safe"
    assert tree_state(repo) == before_restore
    assert git_state(repo) == state0
    assert not (repo / ".git" / "takeback").exists()
    assert git(repo, "stash", "list") == ""
