"""A file an agent's tool writes outside the workspace (an absolute path elsewhere, ``../``,
``~``): Takeback records nothing there, so the step lists it as not recorded, ``show`` and the
MCP text list it under "cannot take back", and an undo of the turn says it stays, so nobody
believes the turn fully undone. Claude Code's captured hook payloads, the CLI as a process."""

from __future__ import annotations

from pathlib import Path

from .conftest import Takeback
from .test_hooks import captured, hook, turns


def _write(tb: Takeback, call: str, path: str, target: Path, text: str) -> None:
    fields = {"tool_name": "Write", "tool_use_id": call, "tool_input": {"file_path": path, "content": text}}
    hook(tb, "claude", captured("claude", "PreToolUse", tb.cwd, **fields))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    hook(tb, "claude", captured("claude", "PostToolUse", tb.cwd, **fields))


def test_a_write_outside_the_workspace_is_listed_and_named_by_the_undo(tb: Takeback, tmp_path: Path) -> None:
    repo = tb.cwd
    elsewhere = tmp_path / "elsewhere" / "notes.txt"
    sibling = repo.parent / "sibling.txt"
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    _write(tb, "toolu_1", str(repo / "src/new.py"), repo / "src/new.py", "print('new')\n")
    _write(tb, "toolu_2", str(elsewhere), elsewhere, "the agent's notes\n")
    _write(tb, "toolu_3", "../sibling.txt", sibling, "next door\n")
    hook(tb, "claude", captured("claude", "Stop", repo))

    [turn] = turns(tb)
    entry = tb.json("show", str(turn["number"]))
    assert entry["outside"] == [str(elsewhere), str(sibling)]
    assert [(cp["label"], cp["outside"]) for cp in entry["checkpoints"]] == [
        ("Write src/new.py", []), (f"Write {elsewhere}", [str(elsewhere)]), (f"Write {sibling}", [str(sibling)]),
    ]
    assert [f["path"] for f in entry["files"]] == ["src/new.py"]
    shown = tb.ok("show", str(turn["number"])).text
    assert "cannot take back (written outside the workspace, where Takeback records nothing):" in shown
    assert f"    {elsewhere}\n" in shown and f"outside the workspace: {sibling}" in shown

    answer = tb.json("undo")
    assert answer["verdict"] == "safe" and not (repo / "src/new.py").exists()
    assert (f"turn #{turn['number']} also wrote outside the workspace ({elsewhere}, {sibling}): Takeback does not hold "
            "those files, so they stay as they are") in answer["notices"]
    assert elsewhere.read_text() == "the agent's notes\n" and sibling.read_text() == "next door\n"  # never touched
    # a redo takes nothing back: it names nothing
    assert not any("outside the workspace" in n for n in tb.json("redo")["notices"])


def test_a_step_that_only_wrote_outside_still_makes_the_turn_not_empty(tb: Takeback, tmp_path: Path) -> None:
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    _write(tb, "toolu_1", str(tmp_path / "out.txt"), tmp_path / "out.txt", "x\n")
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    assert turn["outside"] == [str(tmp_path / "out.txt")] and turn["files"] == []
    assert f"cannot take back  {tmp_path / 'out.txt'}" not in tb.ok("log").text  # log lines stay one per entry
    assert f"#{turn['number']}" in tb.ok("log").text  # not left out as an empty turn
