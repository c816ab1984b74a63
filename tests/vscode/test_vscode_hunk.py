""""Revert This Change" on a hunk of a turn's diff view, in the real VS Code workbench (code-server +
Chromium, driven by driver.cjs). A turn recorded with the CLI changed two places of app/greet.py;
its diff view labels each hunk on the right side, hovering the second offers the action, and the
action takes back only that hunk (through the confirmation), keeping the first. The screenshot
of the diff view with the action is docs/images/vscode-revert-hunk.png. Then the server's code
action on the lines the first hunk still covers in the file ("Take back these lines from turn
#1", Ctrl+.) takes that one back too.
"""

from __future__ import annotations

import pytest

from .harness import GREET, Workbench, missing_tools
from .test_vscode_e2e import _step

pytestmark = pytest.mark.timeout(420)

if missing_tools():
    pytest.skip("VS Code end-to-end tools are not set up (run scripts/setup-vscode.sh)", allow_module_level=True)

LABEL = "Say hello and goodbye more briefly"
CHANGED = GREET.replace('"Hello, "', '"Hi, "').replace('"Goodbye, "', '"Bye, "')
EXPECTED = GREET.replace('"Hello, "', '"Hi, "')  # only the second hunk taken back


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    bench = Workbench.create(tmp_path_factory.mktemp("vscode-hunk"))
    return bench.run("hunk", label=LABEL, file="app/greet.py", changed=CHANGED, secondText='"Bye, "', expected=EXPECTED,
                     firstText='"Hi, "', original=GREET)


def test_the_diff_view_offers_revert_this_change_on_each_hunk(run):
    step = _step(run, "hunk_actions")
    assert "greet.py" in step["tab"], step["tab"]
    # one label on the first line of each hunk, on the right side (line | label)
    assert [label.replace("\xa0", " ").split(" | ")[0] for label in step["labels"]] == ['return "Hi, " + name', 'return "Bye, " + name'], step["labels"]
    assert all("Revert This Change (−1 +1)" in label for label in step["labels"]), step["labels"]
    assert "Revert This Change" in step["hoverText"] and "only this change of turn #1" in step["hoverText"], step["hoverText"]


def test_the_action_takes_back_only_that_hunk(run):
    step = _step(run, "hunk_actions")
    preview = step["preview"].replace("\xa0", " ")
    assert "Revert the change at line 6 of app/greet.py from #1?" in preview, preview
    assert "app/greet.py" in preview
    assert "Revert" in step["outcome"], step["outcome"]
    assert step["disk"] == EXPECTED, step["disk"]
    bench: Workbench = run["bench"]
    entries = {e["number"]: e for e in bench.takeback("log")}
    assert entries[2]["kind"] == "revert" and entries[2]["target_number"] == 1
    assert entries[1]["state"] == "applied"  # one hunk of it taken back: the turn itself stays
    assert bench.git_state() == run["git_before"]


def test_the_code_action_on_the_lines_takes_back_the_other_hunk(run):
    step = _step(run, "hunk_code_action")
    assert any(item.startswith("Take back these lines from turn #1") for item in step["items"]), step["items"]
    assert "Revert" in step["preview"], step["preview"]
    assert step["disk"] == GREET, step["disk"]
    bench: Workbench = run["bench"]
    entries = {e["number"]: e for e in bench.takeback("log")}
    assert entries[3]["kind"] == "revert" and entries[3]["target_number"] == 1
    assert bench.git_state() == run["git_before"]
