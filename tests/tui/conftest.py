"""Fixtures for the terminal UI's tests: a real git repository in a temp folder whose turns
were recorded through the real engine (as an agent's hooks record them: a prompt, its tool
calls as steps), and the app over an engine of its own, driven headless by Textual's
``App.run_test``."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import make_repo
from takeback.engine.engine import Engine

PROMPT = "fix [bold]the[/bold] parser"  # markup that must be shown as typed


def record_turn(repo: Path, label: str, steps: dict[str, str], session: str = "s1") -> None:
    """One agent turn whose steps each write one file (``steps``: path -> new content)."""
    engine = Engine(repo)
    try:
        engine.begin_turn(label=label, session=session, agent="claude", source="hook", bracket=False)
        entry = None
        for n, (path, content) in enumerate(steps.items()):
            engine.begin_step(f"{label}-{n}", [path], session=session, agent="claude")
            (repo / path).write_text(content)
            entry = engine.end_step(f"{label}-{n}", f"Edit {path}")
        assert entry is not None
        engine.end_turn(turn=entry.id, ended_by="stop")
    finally:
        engine.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with two turns of session s1: #1 (the prompt with markup) edits two files
    in two steps, #2 edits the README in one."""
    repo = make_repo(tmp_path / "ws")
    record_turn(repo, PROMPT, {"src/app.py": "def main():\n    return 2\n", "src/util.py": "def helper(x):\n    return x * 3\n"})
    record_turn(repo, "add a title", {"README.md": "# demo\n\nA title.\n"})
    return repo


@pytest.fixture
def engine(repo: Path):
    engine = Engine(repo)
    yield engine
    engine.close()
