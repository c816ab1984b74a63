"""The first whole-folder copy asks first (issue 19, §2): ``begin`` in a folder that is not a git
repository copies every file into the store; above the person's ``first_copy_limit`` it stops
with nothing done and says how to allow it (``--copy-all``), and a repository cannot lift it."""

from __future__ import annotations

from pathlib import Path

from .conftest import Takeback, expect_error, expect_ok


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
                           r"is not a git repository, so the first turn's checkpoint copies the whole folder into the "
                           r"store: more than 9\.8 KiB \([45] files, 1[12]\.\d KiB counted so far\); nothing was done\. "
                           r"Run 'takeback begin --copy-all'")
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
