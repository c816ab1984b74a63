"""The guard's classifier on a corpus of real agent commands (tests/unit/guard_corpus.tsv): each
command's expected class, for a workspace whose ignored files, existing files and symlinks are
given; and the classifier's other inputs (edit tools' paths, a virtual environment, real
symlinks on disk, the rule table in front of which a person's rules go)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pathspec
import pytest

from takeback.guard import rules
from takeback.guard.classify import Call, Workspace, classify, classify_command

CORPUS = Path(__file__).with_name("guard_corpus.tsv")
ROOT = "/home/u/proj"
IGNORE = ["node_modules/", ".env", ".env.*", "*.log", "build/", "dist/", "__pycache__/", "*.pyc", "data/*.db", ".venv/",
          "coverage/", ".next/", "target/", "tmp/"]
EXISTING = {f"{ROOT}/{p}" for p in (".env", ".env.local", "data/app.db", "build.log")}
LINKS = {f"{ROOT}/out-link": "/srv/shared", f"{ROOT}/docs-link": f"{ROOT}/docs"}


def _realpath(path: str) -> str:
    for link, target in LINKS.items():
        if path == link or path.startswith(link + "/"):
            return target + path[len(link):]
    return path


def workspace(**kw: object) -> Workspace:
    spec = pathspec.GitIgnoreSpec.from_lines(IGNORE)
    return Workspace(root=ROOT, is_ignored=spec.match_file, home="/home/u", exists=EXISTING.__contains__,
                     realpath=_realpath, **kw)  # type: ignore[arg-type]


def _corpus() -> list[tuple[str, str]]:
    rows = []
    for line in CORPUS.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        expected, command = line.split("\t", 1)
        rows.append((expected, command.replace("⏎", "\n")))
    return rows


CASES = _corpus()


def test_the_corpus_is_large_and_covers_every_class() -> None:
    assert len(CASES) >= 300
    assert {expected for expected, _ in CASES} == {"undoable", *rules.EFFECTS}
    assert len({command for _, command in CASES}) == len(CASES), "a command is listed twice"


@pytest.mark.parametrize(("expected", "command"), CASES, ids=[c[:60] for _, c in CASES])
def test_corpus(expected: str, command: str) -> None:
    verdict = classify_command(command, workspace())
    got = "undoable" if verdict.undoable else verdict.effect
    assert got == expected, verdict.reason
    assert verdict.reason and "\n" not in verdict.reason.strip() or "\n" in command


def test_every_not_undoable_verdict_says_what_and_why() -> None:
    verdict = classify_command("npm test && git reset --hard && rm -rf node_modules", workspace())
    assert not verdict.undoable and verdict.decision == "not-undoable"
    assert [f.effect for f in verdict.findings] == [rules.GIT_REFS, rules.IGNORED]
    assert verdict.reason == "git reset --hard: resets the branch and discards uncommitted changes git holds (and 1 more)"
    ok = classify_command("npm test", workspace())
    assert ok.undoable and ok.decision == "undoable" and ok.effect == "workspace" and not ok.findings


def test_relative_paths_start_in_the_calls_folder() -> None:
    ws = workspace()
    assert classify_command("rm data/app.db", ws, cwd=f"{ROOT}/pkg").undoable  # pkg/data/app.db: not ignored (data/*.db is)
    assert classify_command("rm data/app.db", ws, cwd=ROOT).effect == rules.IGNORED
    assert not classify_command("rm -rf ../x", ws, cwd=ROOT).undoable
    assert classify_command("rm -rf ../x", ws, cwd=f"{ROOT}/pkg/sub").undoable
    assert classify_command("rm -rf node_modules", ws, cwd=f"{ROOT}/web").effect == rules.IGNORED


@pytest.mark.parametrize(("paths", "expected"), [
    (["src/app.py"], "undoable"),
    ([f"{ROOT}/src/app.py", f"{ROOT}/README.md"], "undoable"),
    (["docs/new.md"], "undoable"),
    ([f"{ROOT}/.env"], rules.IGNORED),
    ([".env.local"], rules.IGNORED),
    (["new.log"], "undoable"),  # ignored, but not there yet: nothing is overwritten
    (["/home/u/.bashrc"], rules.OUTSIDE),
    (["../other/x.py"], rules.OUTSIDE),
    (["out-link/a.txt"], rules.OUTSIDE),
    ([".git/config"], rules.GIT_REFS),
    (["/tmp/scratch.md"], "undoable"),
])
def test_edit_tools_paths(paths: list[str], expected: str) -> None:
    verdict = classify(Call(tool="Write", paths=paths, cwd=ROOT), workspace())
    assert ("undoable" if verdict.undoable else verdict.effect) == expected, verdict.reason


def test_a_tool_with_neither_command_nor_paths_is_recorded_as_today() -> None:
    verdict = classify(Call(tool="mcp__db__query"), workspace())
    assert verdict.undoable and "cannot look into" in verdict.reason


def test_an_event_from_the_hooks_is_read_as_it_is() -> None:
    from takeback.hooks.events import Event

    event = Event(kind="pre_tool", agent="claude", tool="Bash", command="git stash clear", cwd=ROOT)
    assert classify(event, workspace()).effect == rules.GIT_REFS
    edit = Event(kind="pre_tool", agent="claude", tool="Write", paths=[f"{ROOT}/src/a.py"], cwd=ROOT)
    assert classify(edit, workspace()).undoable


def test_pip_installs_into_an_active_virtual_environment() -> None:
    assert classify_command("pip install requests", workspace(in_venv=True)).undoable
    assert classify_command("pip install --user black", workspace(in_venv=True)).effect == rules.SYSTEM
    assert classify_command("pip install requests", workspace()).effect == rules.SYSTEM


def test_a_persons_rule_goes_in_front_of_the_table() -> None:
    mine = rules.Rule("sqlite3", rules.UNDOABLE, "the person allows it")
    assert classify_command("sqlite3 dev.db .tables", workspace(rules=(mine, *rules.RULES))).undoable
    stricter = rules.Rule("git push", rules.GIT_REFS, "the person asks before any push")
    assert classify_command("git push", workspace(rules=(stricter, *rules.RULES))).effect == rules.GIT_REFS


def test_the_scratch_paths_can_be_taken_away() -> None:
    assert classify_command("rm -rf /tmp/x", workspace()).undoable
    assert classify_command("rm -rf /tmp/x", workspace(scratch=())).effect == rules.OUTSIDE


def test_real_symlinks_leading_out_of_the_workspace(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "elsewhere"
    (root / "src").mkdir(parents=True)
    outside.mkdir()
    (root / "shared").symlink_to(outside)
    (root / "alias").symlink_to(root / "src")
    ws = Workspace(root=str(root), is_ignored=lambda _: False, home=str(tmp_path / "home"), scratch=())
    assert classify_command("echo x > shared/f.txt", ws).effect == rules.OUTSIDE
    assert classify_command("rm -rf shared/", ws).effect == rules.OUTSIDE
    assert classify_command("rm shared", ws).undoable  # removes the link itself, not what it points to
    assert classify_command("echo x > alias/f.txt", ws).undoable
    assert classify(Call(tool="Edit", paths=[str(root / "shared" / "a.py")]), ws).effect == rules.OUTSIDE
    assert classify_command(f"rm -rf {outside}", ws).effect == rules.OUTSIDE
    assert classify_command("rm -rf src", ws).undoable


def test_it_is_fast() -> None:
    ws = workspace()
    commands = [c for _, c in CASES]
    classify_command("true", ws)  # the parser is built once
    start = time.perf_counter()
    for command in commands:
        classify_command(command, ws)
    per_call = (time.perf_counter() - start) / len(commands)
    assert per_call < 0.003, f"{per_call * 1000:.2f} ms a command"
    assert os.environ.get("TAKEBACK_NO_SUCH") is None  # (no environment read on the way)
