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

from takeback.guard import rules, walk
from takeback.guard.classify import Call, Workspace, classify, classify_command

CORPUS = Path(__file__).with_name("guard_corpus.tsv")
ROOT = "/home/u/proj"
IGNORE = ["node_modules/", ".env", ".env.*", "*.log", "build/", "dist/", "__pycache__/", "*.pyc", "data/*.db", ".venv/",
          "coverage/", ".next/", "target/", "tmp/"]
EXISTING = {f"{ROOT}/{p}" for p in (".env", ".env.local", "data/app.db", "build.log")}
LINKS = {f"{ROOT}/out-link": "/srv/shared", f"{ROOT}/docs-link": f"{ROOT}/docs"}
# The files on the (pretend) disk, for the walks under a deleted folder and the counts in an ignored one.
TREE = (".env", ".env.local", "data/app.db", "build.log", "README.md", "src/app.py", "src/__pycache__/app.cpython-312.pyc",
        "src/legacy/old.py", "lib/util.py", "lib/.env", "node_modules/left-pad/index.js", "node_modules/left-pad/package.json",
        "node_modules/.bin/left-pad", "build/app.js", "build/app.js.map", "tmp/cache.bin", "tests/fixtures/tmpdata/a.json")
# Also on the pretend disk, for a delete to lose something (a path that is not there loses nothing):
# the ignored things the corpus deletes that TREE does not hold.
ALSO_THERE = ("dist", "coverage", ".venv", "target", ".next", "__pycache__", "monorepo", *(f"{c}.log" for c in "abcdef"))
TOO_BIG = "monorepo"  # a folder too large for the walk: it gives up
SPEC = pathspec.GitIgnoreSpec.from_lines(IGNORE)


def _realpath(path: str) -> str:
    for link, target in LINKS.items():
        if path == link or path.startswith(link + "/"):
            return target + path[len(link):]
    return path


def ignored_under(rel: str, limit: int) -> list[str] | None:
    """What ``walk.ignored_under`` would find in TREE: ignored entries, an ignored folder as one."""
    rel = rel.strip("/")
    if rel == TOO_BIG or rel.startswith(TOO_BIG + "/") or not rel and limit < len(TREE):
        return None
    found = set()
    for path in TREE:
        if rel and not path.startswith(rel + "/"):
            continue
        parts = path.split("/")
        for i in range(len(rel.split("/")) if rel else 0, len(parts)):
            entry = "/".join(parts[:i + 1]) + ("/" if i < len(parts) - 1 else "")
            if SPEC.match_file(entry):
                found.add(entry)
                break
    return sorted(found)


def exists(path: str) -> bool:
    if path in EXISTING:
        return True
    rel = path[len(ROOT) + 1:].rstrip("/") if path.startswith(ROOT + "/") else None
    return rel is not None and (rel in ALSO_THERE or any(t == rel or t.startswith(rel + "/") for t in TREE))


def count_files(path: str, limit: int) -> int:
    rel = path[len(ROOT) + 1:].rstrip("/")
    return min(sum(1 for p in TREE if p == rel or p.startswith(rel + "/")), limit + 1)


def workspace(**kw: object) -> Workspace:
    fields: dict[str, object] = {
        "root": ROOT, "is_ignored": SPEC.match_file, "home": "/home/u", "exists": exists, "realpath": _realpath,
        "ignored_under": ignored_under, "count_files": count_files, "current_branch": lambda: "main",
        "is_dir": lambda p: any(t.startswith(p[len(ROOT) + 1:].rstrip("/") + "/") for t in TREE)}
    return Workspace(**{**fields, **kw})  # type: ignore[arg-type]


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
    assert verdict.reason == ("resets the branch main and discards uncommitted changes git holds (git reset --hard); "
                              "deletes 1 ignored folder Takeback does not hold: node_modules/ (3 files)")
    ok = classify_command("npm test", workspace())
    assert ok.undoable and ok.decision == "undoable" and ok.effect == "workspace" and not ok.findings


def test_relative_paths_start_in_the_calls_folder() -> None:
    ws = workspace()
    assert classify_command("rm data/app.db", ws, cwd=f"{ROOT}/pkg").undoable  # pkg/data/app.db: not ignored (data/*.db is)
    assert classify_command("rm data/app.db", ws, cwd=ROOT).effect == rules.IGNORED
    assert not classify_command("rm -rf ../x", ws, cwd=ROOT).undoable
    assert classify_command("rm -rf ../x", ws, cwd=f"{ROOT}/pkg/sub").undoable
    assert classify_command("rm -rf node_modules", ws, cwd=f"{ROOT}/web").undoable  # web/node_modules is not there: nothing to lose
    there = workspace(exists=lambda p: p == f"{ROOT}/web/node_modules")
    assert classify_command("rm -rf node_modules", there, cwd=f"{ROOT}/web").effect == rules.IGNORED
    assert classify_command("mkdir -p build && touch build/x && rm -rf build", workspace(exists=lambda p: False)).undoable


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


def test_the_paths_at_risk_and_whether_git_moves() -> None:
    verdict = classify_command("rm -rf .env data/app.db build src/app.py", workspace())
    assert verdict.at_risk_paths == (".env", "data/app.db", "build/") and not verdict.moves_git
    assert [f.path for f in verdict.findings] == [".env", "data/app.db", "build/"]
    assert verdict.reason == "deletes 3 ignored files Takeback does not hold: .env, data/app.db, build/ (2 files)"
    both = classify_command("git stash clear; cp x .env", workspace())
    assert both.moves_git and both.at_risk_paths == (".env",)
    assert both.reason == "drops every stash entry (git stash clear); overwrites 1 ignored file Takeback does not hold: .env"
    assert classify_command("git config core.hooksPath /dev/null", workspace()).moves_git
    outside = classify_command("rm -rf ../x", workspace())
    assert outside.at_risk_paths == () and not outside.moves_git and [f.path for f in outside.findings] == [None]


@pytest.mark.parametrize(("command", "line"), [
    ("git reset --hard HEAD~3", "resets the branch main to HEAD~3 (its commits stay only in the reflog) and discards uncommitted "
                                "changes git holds"),
    ("git reset HEAD~1", "moves the branch main to HEAD~1 (its commits stay only in the reflog)"),
    ("git commit --amend --no-edit", "rewrites the last commit of the branch main"),
    ("git branch -D feat old", "deletes the branch feat, old"),
    ("git checkout -B main origin/main", "resets the branch main"),
    ("git stash drop stash@{1}", "drops the stash entry stash@{1}"),
    ("git stash drop", "drops the latest stash entry"),
    ("git tag -d v1 v2 v3 v4 v5 v6", "deletes the tag v1, v2, v3, v4 and 2 more"),
    ("git push --force origin main", "overwrites or deletes branches on the remote (origin, main)"),
    ("rm a.log b.log c.log d.log e.log f.log", "deletes 6 ignored files Takeback does not hold: a.log, b.log, c.log, d.log and 2 more"),
    ("rm -rf src", "deletes 1 ignored folder Takeback does not hold: src/__pycache__/ (1 file)"),
    ("rm -rf monorepo", "may delete ignored files under monorepo/ (too many files to look through before it runs)"),
    ("npm i -g x && sudo ls", "installs a package globally (npm i -g x); runs with another user's rights (sudo ls)"),
    ("takeback guard off", "turns Takeback's guard off"),
])
def test_the_one_line_says_what_exactly_cannot_be_taken_back(command: str, line: str) -> None:
    assert classify_command(command, workspace()).reason == line


def test_the_line_has_no_control_characters_and_cuts_long_lists() -> None:
    odd = workspace(current_branch=lambda: "ma\x1b[2Jin\u202e")
    assert classify_command("git reset --hard", odd).reason.startswith("resets the branch ma?[2Jin? and")
    verdict = classify_command("git branch -D $'x\ny' && git tag -d $'\x07'", workspace())
    assert verdict.reason == "deletes the branch x y; deletes the tag ?"
    many = classify_command("sudo a; sudo b; sudo c; sudo d; sudo e", workspace())
    assert many.reason.endswith("; and 2 more") and many.reason.count(";") == 3
    unknown = workspace(current_branch=lambda: None)
    assert classify_command("git rebase main", unknown).reason == "rewrites the commits of the current branch"
    huge = workspace(count_files=lambda path, limit: limit + 1)
    assert classify_command("rm -rf node_modules", huge).reason.endswith("node_modules/ (over 10,000 files)")


def test_secrets_and_big_files_takeback_withholds() -> None:
    sizes = {f"{ROOT}/big.bin": 5000, f"{ROOT}/small.bin": 10}
    ws = workspace(is_withheld=lambda rel: rel.endswith(".pem") or rel == "config/secrets.yml", max_file_bytes=1000,
                   size=sizes.get, exists=lambda p: p in sizes or p.endswith((".pem", ".yml", "/.env")))
    secret = classify_command("rm config/secrets.yml", ws)
    assert secret.effect == rules.IGNORED and secret.at_risk_paths == ("config/secrets.yml",)
    assert secret.reason == "deletes 1 file Takeback does not hold: config/secrets.yml (a secret Takeback does not copy)"
    big = classify_command("echo x > big.bin", ws)
    assert big.reason == "overwrites 1 file Takeback does not hold: big.bin (over the size cap)"
    assert classify_command("echo x > small.bin && rm small.bin", ws).undoable
    assert classify(Call(tool="Edit", paths=[f"{ROOT}/keys/server.pem"]), ws).effect == rules.IGNORED
    assert classify_command("echo x > new.pem", workspace(is_withheld=lambda rel: rel.endswith(".pem"))).undoable  # not there
    mixed = classify_command("rm .env keys/a.pem", ws)
    assert mixed.reason == "deletes 2 files Takeback does not hold: .env, keys/a.pem (a secret Takeback does not copy)"


def _tree(root: Path, files: list[str]) -> None:
    for folder in {(root / rel).parent for rel in files}:
        folder.mkdir(parents=True, exist_ok=True)
    for rel in files:
        (root / rel).write_text("x")


def _real(root: Path, **kw: object) -> Workspace:
    spec = pathspec.GitIgnoreSpec.from_lines(IGNORE)
    return Workspace(root=str(root), is_ignored=spec.match_file, home=str(root.parent / "home"), scratch=(), **kw)  # type: ignore[arg-type]


def test_ignored_files_inside_a_folder_git_does_not_ignore(tmp_path: Path) -> None:
    _tree(tmp_path, ["src/app.py", "src/.env", "src/__pycache__/a.pyc", "src/__pycache__/b.pyc", "src/deep/x/debug.log",
                     "src/deep/x/y.py", "docs/a.md", "node_modules/a/b.js", ".git/HEAD"])
    ws = _real(tmp_path)
    verdict = classify_command("rm -rf src", ws)
    assert verdict.at_risk_paths == ("src/.env", "src/__pycache__/", "src/deep/x/debug.log")
    assert verdict.reason == ("deletes 3 ignored files Takeback does not hold: src/.env, src/__pycache__/ (2 files), "
                              "src/deep/x/debug.log")
    assert classify_command("rm -rf docs", ws).undoable
    assert classify_command("rm -rf src/deep/x/y.py docs/", ws).undoable
    assert classify_command("rm -rf *", ws).at_risk_paths == ("node_modules/", "src/.env", "src/__pycache__/",
                                                               "src/deep/x/debug.log")
    assert classify_command("git clean -fdx docs", ws).effect == rules.IGNORED  # nothing ignored there: the rule still asks
    assert classify_command("git clean -fdx src/deep", ws).at_risk_paths == ("src/deep/x/debug.log",)
    assert walk.ignored_under(str(tmp_path), "src", 3, ws.is_ignored, ws.is_withheld) is None  # gives up
    gave_up = classify_command("rm -rf src", _real(tmp_path, ignored_under=lambda rel, limit: None))
    assert gave_up.effect == rules.IGNORED and gave_up.at_risk_paths == () and "may delete ignored files under src/" in gave_up.reason
    withheld = _real(tmp_path, is_withheld=lambda rel: rel.endswith(".md"))
    assert classify_command("rm -r docs", withheld).at_risk_paths == ("docs/a.md",)


def test_the_walks_are_bounded(tmp_path: Path) -> None:
    files = [f"pkg{i // 500}/m{i}.py" for i in range(walk.WALK_LIMIT * 2)] + ["node_modules/x.js"]  # past the walk's bound
    _tree(tmp_path, files)
    ws = _real(tmp_path)
    start = time.perf_counter()
    verdict = classify_command("rm -rf *", ws)
    took = time.perf_counter() - start
    assert not verdict.undoable and "may delete ignored files" in verdict.reason
    assert took < 0.1, f"{took * 1000:.1f} ms"
    assert walk.count_files(str(tmp_path / "pkg0"), 100) == 101 and walk.count_files(str(tmp_path / "pkg0"), 1000) == 500
    assert walk.count_files(str(tmp_path / "node_modules" / "x.js"), 10) == 1 and walk.count_files(str(tmp_path / "no"), 10) == 0


def test_the_current_branch_is_read_from_head(tmp_path: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", "-b", "trunk", str(tmp_path)], check=True)
    assert walk.current_branch(str(tmp_path)) == "trunk"
    assert classify_command("git reset --hard", _real(tmp_path)).reason.startswith("resets the branch trunk and")
    (tmp_path / ".git" / "worktrees" / "w").mkdir(parents=True)
    (tmp_path / ".git" / "worktrees" / "w" / "HEAD").write_text("ref: refs/heads/side\n")
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / ".git").write_text("gitdir: ../.git/worktrees/w\n")  # a worktree's .git file
    assert walk.current_branch(str(tmp_path / "w")) == "side"
    assert walk.current_branch(str(tmp_path / "no-repo")) is None
