"""Takeback in the real VS Code workbench (code-server + Chromium, driven by driver.cjs).

One workbench run per module, a person's session in order: a turn bracketed from the integrated
terminal with the CLI; a test agent extension's multi-file edit through Takeback's API; the
person's unsaved edit in a file that turn touched; "Takeback: Undo Agent Turn" from the palette;
the panel and a file's diff. Each test below checks one part of what the run saw, and the disk.
Screenshots are kept in artifacts/vscode/, and copied into the folder TAKEBACK_SCREENSHOTS names
(``TAKEBACK_SCREENSHOTS=docs/images`` refreshes the ones docs/vscode.md shows).
"""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from .harness import GREET, ROOT, Workbench, missing_tools

pytestmark = pytest.mark.timeout(420)

MISSING = missing_tools()
if MISSING:
    pytest.skip(
        "VS Code end-to-end tools are not set up (run scripts/setup-vscode.sh): " + ", ".join(MISSING),
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    return Workbench.create(tmp_path_factory.mktemp("vscode")).run()


def _step(run: dict, name: str) -> dict:
    step = run["steps"].get(name)
    assert step is not None, f"the run never reached step {name!r}; fatal: {run.get('fatal')}\n" + "\n".join(run["log"][-20:])
    assert step["ok"], f"step {name} failed:\n{step.get('error')}\n--- driver log ---\n" + "\n".join(run["log"][-30:])
    return step


def _doc(docs: list[dict], suffix: str) -> dict:
    found = [d for d in docs if d["path"].endswith(suffix)]
    assert found, f"{suffix} is not open in the editor: {[d['path'] for d in docs]}"
    return found[0]


def test_workbench_starts_the_server_and_shows_the_empty_panel(run):
    _step(run, "workbench")


def test_cli_turn_from_the_terminal_appears_in_the_panel(run):
    step = _step(run, "cli_turn")
    assert "#1" in step["row"] and "Document how to run it" in step["row"]
    bench: Workbench = run["bench"]
    entry = bench.takeback("show", "1")
    assert entry["source"] == "cli" and entry["session"] == "terminal"
    assert [f["path"] for f in entry["files"]] == ["README.md"]


def test_agent_extension_edits_three_files_as_one_turn(run):
    step = _step(run, "agent_turn")
    agent = step["agent"]
    assert agent["apiVersion"] == 1
    assert agent["applied"]["applied"] is True, agent["applied"]
    ended = agent["ended"]
    assert ended["number"] == 2 and ended["kind"] == "turn"
    assert sorted(f["path"] for f in ended["files"]) == ["app/greet.py", "app/helper.py", "app/main.py"]
    assert [c["status"] for c in ended["checks"]] == ["passed"]
    assert ended["commands"] == ["python -m pytest -q"]
    # One turn; the three files went in as one recorded batch (the applyEdit's checkpoint).
    bench: Workbench = run["bench"]
    entries = bench.takeback("log")
    turns = [e for e in entries if e["kind"] == "turn"]
    assert [t["number"] for t in turns] == [2, 1]
    checkpoints = turns[0]["checkpoints"]
    assert [c["label"] for c in checkpoints] == ["rename + helper"], checkpoints
    assert sorted(checkpoints[0]["paths"]) == ["app/greet.py", "app/helper.py", "app/main.py"], checkpoints
    # The open greet.py got the edit through the editor, and was saved (it had no unsaved edits).
    greet = _doc(step["docs"], "app/greet.py")
    assert "def welcome(name)" in greet["text"] and not greet["isDirty"]
    assert "#2" in step["statusBar"] and "3 files" in step["statusBar"]
    assert "Rename greet to welcome" in step["row"]


def test_undo_agent_turn_keeps_the_persons_unsaved_edit(run):
    step = _step(run, "undo_keeps_unsaved_edit")
    bench: Workbench = run["bench"]
    before = _doc(step["before"], "app/greet.py")
    assert before["isDirty"] and "welcome" in before["text"] and "the person's own note" in before["text"]
    # The dry run was shown first and named the turn and its files.
    assert "Undo agent turn #2" in step["preview"], step["preview"]
    assert "app/helper.py" in step["preview"] and "app/main.py" in step["preview"]
    assert "Undo of #2 done" in step["outcome"], step["outcome"]
    # In the editor: the agent's change is gone, the person's unsaved note is still there.
    after = _doc(step["after"], "app/greet.py")
    assert after["text"] == GREET + "# the person's own note, not saved", after["text"]
    assert after["isDirty"] and step["dirtyTab"]
    # On disk: the other files are back as before the turn; the agent's new file is gone; the
    # person's file keeps the agent-free text on disk until they save (their note is unsaved).
    disk = step["disk"]
    assert disk["app/main.py"] == 'from app.greet import greet\n\nprint(greet("world"))\n'
    assert disk["app/helper.py"] is None
    # The CLI turn before it is untouched.
    assert "Run it with: python -m app.main" in disk["README.md"]
    entries = {e["number"]: e for e in bench.takeback("log")}
    assert entries[3]["kind"] == "undo" and entries[3]["target_number"] == 2
    # The person's git state did not move.
    assert bench.git_state() == run["git_before"]


def test_panel_lists_the_turns_and_a_file_opens_the_diff(run):
    step = _step(run, "panel_and_diff")
    rows = "\n".join(step["rows"])
    # Sessions are titled by their first prompt and time, not their ids; operations have their own group.
    for text in ("Rename greet to welcome and add a helper · ", "Document how to run it (from the terminal) · ", "Operations", "#2 Rename greet to welcome",
                 "#1 Document how to run it", "greet.py", "main.py", "helper.py"):
        assert text in rows, f"{text!r} not in the panel:\n{rows}"
    assert "agent-session-1" not in rows and "No session" not in rows, rows
    assert "undone" in step["turnRow"], step["turnRow"]
    assert "#2 app/main.py" in step["tab"], step["tab"]
    assert "greet" in step["original"] and "welcome" in step["modified"], (step["original"], step["modified"])


def test_redo_from_the_panels_inline_action(run):
    step = _step(run, "redo_from_panel")
    bench: Workbench = run["bench"]
    assert "Redo" in step["preview"] and "app/helper.py" in step["preview"], step["preview"]
    assert "Redo of #" in step["outcome"], step["outcome"]
    greet = _doc(step["after"], "app/greet.py")
    assert greet["text"].startswith('def welcome(name):\n    return "Welcome, " + name\n')
    assert greet["text"].endswith("# the person's own note, not saved") and greet["isDirty"]
    assert step["disk"]["app/helper.py"] == 'def shout(text):\n    return text.upper() + "!"\n'
    assert "import welcome" in step["disk"]["app/main.py"]
    entries = {e["number"]: e for e in bench.takeback("log")}
    assert entries[2]["state"] == "applied" and entries[4]["kind"] == "redo"


def test_default_keybinding_asks_to_undo_and_cancel_changes_nothing(run):
    step = _step(run, "keybinding_undo_cancel")
    assert "Undo agent turn #2" in step["preview"], step["preview"]
    greet = _doc(step["after"], "app/greet.py")
    assert "def welcome(" in greet["text"] and "the person's own note" in greet["text"]
    assert max(step["numbers"]) == 4, step["numbers"]
    # No other default key binding uses Ctrl+Alt+Z (VS Code's own and the bundled extensions').
    keys = step["keybindings"]
    assert keys["ok"], keys
    bindings = json.loads(re.sub(r"^\s*//.*$", "", keys["text"], flags=re.M))
    on_key = [b["command"] for b in bindings if b.get("key") == "ctrl+alt+z"]
    assert on_key == ["takeback.undoAgentTurn"], on_key


def test_code_action_reverts_one_file_through_the_preview(run):
    step = _step(run, "code_action_revert_file")
    items = "\n".join(step["items"])
    assert "Undo agent turn #2" in items and "Revert turn #2's changes to this file" in items, items
    assert "app/greet.py" in step["preview"] and "app/main.py" not in step["preview"], step["preview"]
    assert "Revert of #2 done" in step["outcome"], step["outcome"]
    greet = _doc(step["after"], "app/greet.py")
    assert greet["text"] == GREET + "# the person's own note, not saved", greet["text"]
    # Only that file: main.py and helper.py keep the agent's changes.
    assert "import welcome" in step["disk"]["app/main.py"] and step["disk"]["app/helper.py"] is not None


def test_palette_pickers_show_a_turns_diff_and_revert_an_earlier_turn(run):
    step = _step(run, "palette_pickers")
    listed = "\n".join(step["listed"]).replace("\xa0", " ")
    assert "#1 Document how to run it" in listed and "#2 Rename greet to welcome" in listed, listed
    patch = step["patch"].replace("\xa0", " ")
    assert "README.md" in patch and "+Run it with: python -m app.main" in patch, patch
    assert "Revert agent turn #1" in step["preview"] and "README.md" in step["preview"], step["preview"]
    assert "Revert of #1 done" in step["outcome"], step["outcome"]
    # An earlier turn taken back, the later agent turn kept.
    assert step["disk"]["README.md"] == "# Project\n\nA small program.\n"
    assert "import welcome" in step["disk"]["app/main.py"]


def test_screenshots_are_kept(run):
    _step(run, "panel_and_diff")
    bench: Workbench = run["bench"]
    for name in ("panel.png", "diff.png", "confirm.png"):
        shot = bench.artifacts / name
        assert shot.exists() and shot.stat().st_size > 10_000, shot
    if into := os.environ.get("TAKEBACK_SCREENSHOTS"):
        folder = ROOT / into
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("panel.png", "diff.png", "confirm.png"):
            shutil.copy(bench.artifacts / name, folder / name)
    assert (ROOT / "docs" / "images" / "panel.png").exists()
