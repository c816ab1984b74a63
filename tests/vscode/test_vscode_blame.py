"""Who wrote a line, in the real VS Code workbench (code-server + Chromium, driven by driver.cjs):
the test agent's turn changes app/greet.py; the workbench's hover providers
(``vscode.executeHoverProvider``) answer the server's hover on its first line with the turn and the
prompt and trusted links to two commands only; "Takeback: Toggle Line Blame" switches the
end-of-line annotation on (the server's blame of the cursor's line, ``#1 test-agent · <prompt>``)
and off; and the hover a person sees on that line shows the turn with its two links."""

from __future__ import annotations

import pytest

from .harness import Workbench, missing_tools
from .test_vscode_e2e import _step

pytestmark = pytest.mark.timeout(420)

if missing_tools():
    pytest.skip("VS Code end-to-end tools are not set up (run scripts/setup-vscode.sh)", allow_module_level=True)

PROMPT = "Rename greet to welcome and add a helper"  # the test agent's (agent-ext/extension.js)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    return Workbench.create(tmp_path_factory.mktemp("vscode-blame")).run("blame")


def test_the_hover_provider_answers_the_turn_and_the_prompt(run):
    blame = _step(run, "blame")["blame"]
    ours = [text for text in blame["hovers"] if "Takeback" in text]
    assert len(ours) == 1, blame["hovers"]
    assert "**Agent turn #1, step 1** (test\\-agent)" in ours[0] and f"```text\n{PROMPT}\n```" in ours[0]
    assert "command:takeback.showTurnDiff?" in ours[0] and "command:takeback.revertTurn?" in ours[0]
    assert {"enabledCommands": ["takeback.showTurnDiff", "takeback.revertTurn"]} in blame["trusted"], blame["trusted"]


def test_the_annotation_toggles_on_the_cursors_line_and_off(run):
    blame = _step(run, "blame")["blame"]
    assert blame["toggled"]["mode"] == "currentLine"
    assert blame["toggled"]["shown"]["lines"] == [{"line": 1, "text": f"#1 test-agent · {PROMPT}"}]
    assert blame["toggledOff"]["mode"] == "off" and blame["toggledOff"]["shown"]["lines"] == []


def test_the_person_sees_the_hover_with_its_links(run):
    step = _step(run, "blame")
    assert PROMPT in step["hoverText"] and "Agent turn #1" in step["hoverText"]
    assert "Show turn #1's diff" in step["links"] and "Take back this line's hunk from turn #1" in step["links"], step["links"]
