"""The first whole-folder copy asks first (issue 19, §2): ``begin`` in a folder that is not a git
repository copies every file into the store; above the person's ``first_copy_limit`` it stops
with nothing done and says how to allow it (``--copy-all``), and a repository cannot lift it."""

from __future__ import annotations

from pathlib import Path

from .conftest import Takeback, expect_error, expect_ok
from .test_hooks import captured, failures, hook, turns


def _limit(tb: Takeback, limit: int) -> None:
    config = Path(tb.env["XDG_CONFIG_HOME"]) / "takeback" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"first_copy_limit = {limit}\n")


def _big_folder(tb: Takeback) -> None:
    for i in range(5):
        (tb.cwd / f"data{i}.txt").write_text("x" * 3000)


def test_a_big_first_copy_asks_first_and_copy_all_allows_it(plain_tb: Takeback) -> None:
    tb = plain_tb
    _limit(tb, 10_000)
    _big_folder(tb)

    refused = expect_error(tb("begin", "--label", "first"), 14,
                           r"is not a git repository, so the first checkpoint copies the whole folder into the "
                           r"store: more than 9\.8 KiB \([45] files, 1[12]\.\d KiB counted so far\); nothing was done\. "
                           r"To go on, run 'takeback begin --copy-all' to copy it")
    assert "first_copy_limit" in refused.err
    assert tb("--json", "begin").json()["error"] == "needs-consent"
    assert tb.json("log") == [] and tb.json("status")["entries"] == 0  # nothing was done

    expect_ok(tb("begin", "--copy-all", "--label", "first"))
    (tb.cwd / "data0.txt").write_text("changed\n")
    tb.ok("end")
    tb.ok("begin", "--label", "second")  # copied once: the next begin does not ask
    tb.ok("end")
    assert [e["label"] for e in tb.json("log")] == ["second", "first"]


def test_small_folders_git_repositories_and_a_zero_limit_are_not_asked(tb: Takeback, plain_tb: Takeback) -> None:
    _big_folder(plain_tb)
    plain_tb.ok("begin")  # 15 kB is under the default (32 MiB)
    plain_tb.ok("end")

    _limit(tb, 1000)
    _big_folder(tb)  # a git repository: its checkpoints never copy it whole
    tb.ok("begin")
    tb.ok("end")


def test_a_repository_cannot_lift_the_limit(plain_tb: Takeback) -> None:
    tb = plain_tb
    _limit(tb, 10_000)
    _big_folder(tb)
    (tb.cwd / ".takeback.toml").write_text("first_copy_limit = 0\n")
    refused = tb("begin")
    assert refused.code == 14 and "copies the whole folder" in refused.err.splitlines()[-1], str(refused)
    assert "first_copy_limit ignored: a repository may not set it" in refused.err  # said, as every begin says it
    assert any("first_copy_limit" in problem for problem in tb.json("status")["config_problems"])
    _limit(tb, 0)  # the person's own setting does
    assert tb("begin").code == 0


def test_an_agents_steps_record_named_files_only_and_a_shell_step_says_why_it_was_not(plain_tb: Takeback) -> None:
    """Hooks cannot ask: an edit step records the files its tool names (no scan, no copy), a
    shell step (only a scan sees its changes) is refused and logged, which ``status`` shows."""
    tb = plain_tb
    _limit(tb, 10_000)
    _big_folder(tb)
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    edit = {"tool_name": "Write", "tool_use_id": "w1", "tool_input": {"file_path": str(repo / "new.txt"), "content": "x\n"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **edit))
    (repo / "new.txt").write_text("x\n")
    (repo / "data1.txt").write_text("changed beside the tool: a scan would have seen it\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **edit))
    bash = {"tool_name": "Bash", "tool_use_id": "b1", "tool_input": {"command": "echo hi > gen.txt"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **bash))
    (repo / "gen.txt").write_text("hi\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **bash))
    hook(tb, "claude", captured("claude", "Stop", repo))

    [turn] = turns(tb)
    assert [f["path"] for f in turn["files"]] == ["new.txt"]
    count, last = failures(tb)
    assert count >= 1 and last is not None and "copies the whole folder into the store" in last
    assert "'takeback begin --copy-all' and then 'takeback end' once" in last
    assert not list((Path(tb.env["TAKEBACK_HOME"])).rglob("statcache.json"))  # nothing was copied whole

    tb.ok("begin", "--copy-all")  # the person allows it once ...
    tb.ok("end")
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    bash = {**bash, "tool_use_id": "b2"}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **bash))
    (repo / "gen.txt").write_text("hi again\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **bash))
    hook(tb, "claude", captured("claude", "Stop", repo))
    assert [f["path"] for f in turns(tb)[0]["files"]] == ["gen.txt"]  # ... and shell steps are recorded
