"""An agent's hooks in the real VS Code workbench (code-server + Chromium, driven by driver.cjs).

While the workbench is open, Claude Code's hooks (its real payloads, tests/cli/hook_payloads/,
run as `takeback hook claude` processes) record a turn of two tool calls: the panel lists the
turn's steps under it, and "Restore to Before This Step" on the second step takes the files back
to just after the first. Then a hook fails: the person gets one warning with "Show Hook
Failures", the status bar warns (its tooltip names the failure), the log opens, and once seen
the warning goes.
"""

from __future__ import annotations

import pytest

from .harness import SHELL_COMMAND, STEPS_PROMPT, Workbench, missing_tools
from .test_vscode_e2e import _step

pytestmark = pytest.mark.timeout(420)

if missing_tools():
    pytest.skip("VS Code end-to-end tools are not set up (run scripts/setup-vscode.sh)", allow_module_level=True)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    bench = Workbench.create(tmp_path_factory.mktemp("vscode-steps"))
    return bench.run("steps", hookScript=bench.hook_turn_script())


def test_a_hook_recorded_turn_shows_its_steps_in_the_panel(run):
    step = _step(run, "hook_turn_steps")
    rows = [r.replace("\xa0", " ") for r in step["rows"]]
    assert f"#1 {STEPS_PROMPT}" in step["turnRow"], step["turnRow"]
    turn = next(i for i, r in enumerate(rows) if f"#1 {STEPS_PROMPT}" in r)
    below = "\n".join(rows[turn + 1:])
    # The turn's files, then its steps: one per tool call, named after the tool and its target.
    for text in ("steps.txt", "gen.txt", "#1.1 Write steps.txt", f"#1.2 Bash: {SHELL_COMMAND}"):
        assert text in below, f"{text!r} not under the turn:\n{below}"
    assert below.index("#1.1 Write steps.txt") < below.index("#1.2 Bash")
    assert "1 file" in step["stepAria"], step["stepAria"]
    bench: Workbench = run["bench"]
    entry = bench.takeback("show", "1")
    assert (entry["agent"], entry["label"]) == ("claude", STEPS_PROMPT)
    assert [c["label"] for c in entry["checkpoints"]] == ["Write steps.txt", f"Bash: {SHELL_COMMAND}"]


def test_restore_to_before_a_step_keeps_the_steps_before_it(run):
    step = _step(run, "restore_before_step")
    preview = step["preview"].replace("\xa0", " ")
    assert "Restore the files to just before step #1.2" in preview, preview
    assert "gen.txt" in preview and "steps.txt" not in preview, preview
    assert "Restore of #1 done" in step["outcome"], step["outcome"]
    assert step["disk"] == {"steps.txt": "written by the Write tool\n", "gen.txt": None}
    bench: Workbench = run["bench"]
    entries = {e["number"]: e for e in bench.takeback("log")}
    assert entries[2]["kind"] == "restore" and entries[2]["target_number"] == 1
    assert entries[1]["state"] == "partial"
    assert bench.git_state() == run["git_before"]


def test_a_failing_hook_warns_once_and_the_log_can_be_seen(run):
    step = _step(run, "hook_failure_warning")
    assert "an agent's hook failed to record" in step["message"] and "claude" in step["message"], step["message"]
    assert "Show Hook Failures" in step["message"]
    assert step["serverToasts"] == 0  # the server's own warning is off for this client
    assert "1 hook failure" in step["statusText"], step["statusText"]
    tooltip = step["tooltip"] or ""
    assert "1 failure logged" in tooltip and "claude" in tooltip and "Show Hook Failures" in tooltip, tooltip
    report = step["report"].replace("\xa0", " ")
    assert "1 hook failure" in report and "claude" in report and "hook-failures.log" in report, report
    assert "hook failure" not in step["after"] and "#1 ·" in step["after"], step["after"]
    bench: Workbench = run["bench"]
    status = bench.takeback("status")
    assert status["hook_failures"] == 1 and "claude" in status["last_hook_failure"]
