"""Which workspace ``takeback mcp`` serves when none is named, as an agent starts it: with
``--agent claude`` (what ``takeback install --mcp`` writes), the project folder Claude Code puts
in its MCP servers' environment (``CLAUDE_PROJECT_DIR``) wins over the folder it was started in,
so a server started in a subfolder of a plain folder, or anywhere else, serves the project's
turns; without ``--agent`` that variable is not read (an inherited one says nothing about who
started the server). An empty timeline names the workspace and the store it looked in.

(No ``__init__.py`` here: a package named ``mcp`` under tests/ would shadow the SDK.)"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from helpers import make_repo, write_files
from mcp import ClientSession
from takeback.engine.engine import Engine

pytestmark = pytest.mark.timeout(120)


@asynccontextmanager
async def serve(cwd: Path, *args: str, **env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "takeback", "mcp", *args], cwd=str(cwd), env={**os.environ, **env}
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def listed(session: ClientSession) -> tuple[dict[str, Any], str]:
    result = await session.call_tool("list_turns", {})
    assert not result.is_error and result.structured_content is not None, result
    return result.structured_content, result.content[0].text  # type: ignore[union-attr]


def one_turn(folder: Path) -> Engine:
    engine = Engine(folder)
    engine.begin_turn(label="add notes", agent="claude")
    write_files(folder, {"notes.txt": "agent\n"})
    engine.end_turn()
    return engine


async def test_the_agents_project_folder_wins_over_the_folder_it_was_started_in(tmp_path: Path) -> None:
    project = tmp_path / "plain"  # no git: a subfolder would be a workspace of its own
    (project / "sub").mkdir(parents=True)
    engine = one_turn(project)
    async with serve(project / "sub", "--agent", "claude", CLAUDE_PROJECT_DIR=str(project)) as session:
        data, text = await listed(session)
    assert data["workspace"] == str(engine.workspace.root) and [t["label"] for t in data["turns"]] == ["add notes"]
    assert data["store"] == str(engine.store.path) and "add notes" in text

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    repo_engine = one_turn(repo)
    async with serve(elsewhere, "--agent", "claude", CLAUDE_PROJECT_DIR=str(repo / "src")) as session:
        data, _ = await listed(session)
    assert data["workspace"] == str(repo_engine.workspace.root) and len(data["turns"]) == 1  # the work tree's top


async def test_without_agent_the_folder_it_was_started_in_decides_and_an_empty_timeline_names_its_store(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    (project / "sub").mkdir(parents=True)
    one_turn(project)
    async with serve(project / "sub", CLAUDE_PROJECT_DIR=str(project)) as session:
        data, text = await listed(session)
    sub = str((project / "sub").resolve())
    assert data["workspace"] == sub and data["turns"] == []
    assert text == f"No turns recorded for {sub} (store: {data['store']})."
    assert data["store"] != str(Engine(project).store.path)


async def test_a_project_folder_that_is_gone_falls_back_to_the_folder_it_was_started_in(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = one_turn(repo)
    async with serve(repo, "--agent", "claude", CLAUDE_PROJECT_DIR=str(tmp_path / "gone")) as session:
        data, _ = await listed(session)
    assert data["workspace"] == str(engine.workspace.root) and len(data["turns"]) == 1
