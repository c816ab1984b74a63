"""What a guarded call destroyed that Takeback does not record (``engine/lost.py``,
``Engine.begin_step(at_risk=…)``): before a ``git reset --hard``, a ``git branch -D``, a ``git
stash drop`` and an ``rm -rf`` of an ignored folder, the step keeps every ref, the stash and the
ignored files it can (under the size cap and ``guard.keep_bytes``, never a secret); after, the
turn lists exactly what was lost and what can be put back, and the commands it prints really
put it back (run here in a shell, ``takeback`` the real CLI). Keeping changes nothing of the
person's git state. Real git repositories in temp folders."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from helpers import dot_git, git, git_state, make_repo, write_files
from takeback.core import wording
from takeback.core.models import AtRisk, Entry

from .support import open_engine

IGNORED = {
    "build/.env": "API_KEY=do-not-store\n",  # a secret: never copied, whatever the bound
    "build/big.bin": "b" * 5000,  # over max_file_bytes
    "build/exec.sh": "#!/bin/sh\necho built\n",
    "build/mid.bin": "m" * 2000,
    "build/over.bin": "o" * 2000,  # beyond guard.keep_bytes once mid.bin is kept
    "build/small.txt": "small\n",
    "data.db": "the person's database\n",
}


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "ws", {"README.md": "# demo\n", ".gitignore": "build/\ndata.db\n"})
    write_files(repo, {"README.md": "# demo, second\n"})
    git(repo, "commit", "-qam", "second")
    git(repo, "branch", "feature", "HEAD~1")
    write_files(repo, {"README.md": "# stashed\n"})
    git(repo, "stash", "push", "-q", "-m", "the person's stash")
    write_files(repo, IGNORED)
    (repo / "build/exec.sh").chmod(0o755)
    os.symlink("small.txt", repo / "build/link")
    return repo


def _step(engine, key: str, at_risk: AtRisk, run) -> None:
    engine.begin_step(key, session="s", agent="claude-code", at_risk=at_risk)
    run()
    engine.end_step(key, f"Bash: {key}")


def _takeback(repo: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "takeback", *args], cwd=repo, check=True, capture_output=True, timeout=60)
    return proc.stdout.decode()


def _shell(repo: Path, tmp_path: Path, command: str) -> None:
    """Run a printed command in the workspace's folder, ``takeback`` being the real CLI."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "takeback"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m takeback "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["sh", "-c", command], cwd=repo, env=env, check=True, capture_output=True, timeout=60)


def test_the_turn_lists_what_was_lost_and_its_commands_put_back_what_was_kept(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    engine = open_engine(repo, max_file_bytes=4096, guard={"keep_bytes": 3000})
    refs = git(repo, "for-each-ref")
    stash = git(repo, "stash", "list", "--format=%H %gs")
    main, feature = git(repo, "rev-parse", "main").strip(), git(repo, "rev-parse", "feature").strip()
    ignored_bytes = {rel: (repo / rel).read_bytes() for rel in IGNORED}
    turn = engine.begin_turn(label="clean up", session="s", agent="claude-code", bracket=False)

    _step(engine, "git reset --hard HEAD~1", AtRisk(git=True), lambda: git(repo, "reset", "-q", "--hard", "HEAD~1"))
    _step(engine, "git branch -D feature", AtRisk(git=True), lambda: git(repo, "branch", "-qD", "feature"))
    _step(engine, "git stash drop", AtRisk(git=True), lambda: git(repo, "stash", "drop", "-q"))

    def destroy() -> None:
        subprocess.run(["rm", "-rf", str(repo / "build")], check=True)
        (repo / "data.db").write_text("overwritten\n")

    _step(engine, "rm -rf build", AtRisk(paths=("build/", "data.db")), destroy)
    engine.end_turn()
    entry: Entry = engine.entry(str(turn.number))

    facts = [m.fact for m in entry.git_moved]
    assert facts[0].startswith(f"branch main moved from {main[:7]} to ")
    assert facts[1] == "the index changed (what is staged for the next commit)"  # reset --hard rewrote it
    assert wording.git_move(entry.git_moved[1]).endswith("it cannot be put back")
    assert facts[2].startswith(f"branch feature was deleted (it was at {feature[:7]})") and "gc prunes" in facts[2]
    assert facts[3].startswith("stash ") and "was dropped (1 → 0 entries)" in facts[3]
    assert len(facts) == 4

    lost = {item.path: item for item in entry.lost}
    assert sorted(lost) == sorted([*IGNORED, "build/link"])  # exactly what was destroyed
    assert {p for p, item in lost.items() if item.kept is not None} == {
        "build/exec.sh", "build/mid.bin", "build/small.txt", "build/link", "data.db"}
    assert "secret" in (lost["build/.env"].why or "")
    assert "max_file_bytes" in (lost["build/big.bin"].why or "")
    assert "guard.keep_bytes" in (lost["build/over.bin"].why or "")
    assert lost["data.db"].how == "overwritten" and lost["build/small.txt"].how == "deleted"
    assert [cp.lost for cp in entry.checkpoints[:3]] == [[], [], []]  # each step says only its own

    undo = engine.undo()
    assert any("deleted or overwrote ignored files" in n and "this does not put them back" in n for n in undo.notices)
    shown = _takeback(repo, "show", str(turn.number))
    assert "lost, not taken back by undo" in shown
    assert "deleted build/.env: lost (not kept: a secret: Takeback never copies one)" in shown
    assert f"deleted build/small.txt: kept by Takeback; to write it back: mkdir -p build && takeback cat {turn.number} " \
           "build/small.txt --before > build/small.txt" in shown
    as_json = json.loads(_takeback(repo, "show", str(turn.number), "--json"))
    assert [item["path"] for item in as_json["lost"]] == [item.path for item in entry.lost]
    assert [item["lost"] for item in as_json["checkpoints"]][3] == as_json["lost"]

    for move in reversed(entry.git_moved):  # put back from the last one up, as show says
        if move.what != "index":
            assert move.command is not None
            _shell(repo, tmp_path, move.command)
    assert git(repo, "for-each-ref") == refs
    assert git(repo, "stash", "list", "--format=%H %gs") == stash
    for item in entry.lost:
        if item.command:
            _shell(repo, tmp_path, item.command)
    for rel in ("build/exec.sh", "build/mid.bin", "build/small.txt", "data.db"):
        assert (repo / rel).read_bytes() == ignored_bytes[rel], rel
    assert (repo / "build/exec.sh").stat().st_mode & stat.S_IXUSR
    assert os.readlink(repo / "build/link") == "small.txt"
    for rel in ("build/.env", "build/big.bin", "build/over.bin"):
        assert not (repo / rel).exists()  # not kept: nothing brings them back, and nothing says it does


def test_keeping_changes_nothing_of_the_persons_git_state(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    git(repo, "add", "-f", "build/small.txt")  # the index differs from HEAD
    engine = open_engine(repo)
    state, raw, index = git_state(repo), dot_git(repo), (repo / ".git/index").read_bytes()
    engine.begin_step("k", session="s", at_risk=AtRisk(git=True, paths=("build/", "data.db")))
    assert git_state(repo) == state and dot_git(repo) == raw and (repo / ".git/index").read_bytes() == index
    assert engine.end_step("k", "Bash: ls") is None  # nothing changed: nothing recorded
    assert git_state(repo) == state and dot_git(repo) == raw


def test_a_secret_is_never_copied_into_the_store(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    engine = open_engine(repo)
    engine.begin_step("k", session="s", at_risk=AtRisk(paths=("build/.env",)))
    (repo / "build/.env").unlink()
    entry = engine.end_step("k", "Bash: rm build/.env")
    assert entry is not None and [(item.path, item.kept) for item in entry.lost] == [("build/.env", None)]
    assert not engine.store.has(engine.store.hash_blob(IGNORED["build/.env"].encode()))


def test_a_tag_deleted_and_a_ref_moved_have_their_update_ref(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    git(repo, "tag", "v1")
    git(repo, "pack-refs", "--all")  # read from packed-refs as well as loose files
    git(repo, "update-ref", "refs/notes/mine", "HEAD~1")
    v1, notes = git(repo, "rev-parse", "v1").strip(), git(repo, "rev-parse", "refs/notes/mine").strip()
    engine = open_engine(repo)

    def move() -> None:
        git(repo, "tag", "-d", "v1")
        git(repo, "update-ref", "refs/notes/mine", "HEAD")

    engine.begin_step("k", session="s", at_risk=AtRisk(git=True))
    move()
    entry = engine.end_step("k", "Bash: git tag -d v1")
    assert entry is not None
    commands = {m.fact.split(" ")[1]: m.command for m in entry.git_moved}
    assert commands == {"refs/tags/v1": f"git update-ref refs/tags/v1 {v1}",
                        "refs/notes/mine": f"git update-ref refs/notes/mine {notes}"}
    for command in commands.values():
        git(repo, *command.split(" ")[1:])
    assert git(repo, "rev-parse", "v1").strip() == v1


def test_files_the_step_records_are_its_changes_not_losses(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    engine = open_engine(repo)
    engine.begin_step("k", session="s", at_risk=AtRisk(paths=("README.md", "build/small.txt")))
    (repo / "README.md").unlink()
    entry = engine.end_step("k", "Bash: rm README.md")
    assert entry is not None and entry.lost == [] and [f.path for f in entry.files] == ["README.md"]


def test_gc_keeps_the_kept_bytes_while_the_step_runs_and_after(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    engine = open_engine(repo)
    engine.begin_step("k", session="s", at_risk=AtRisk(paths=("data.db",)))
    oid = engine.store.hash_blob(IGNORED["data.db"].encode())
    engine.gc()  # while the call runs: the step's file names the kept blob
    assert open_engine(repo).store.has(oid)
    (repo / "data.db").unlink()
    entry = engine.end_step("k", "Bash: rm data.db")
    assert entry is not None
    engine.gc()  # after: the log commit's tree holds it, like any change's content
    fresh = open_engine(repo)  # (not this engine's memory of the blobs it wrote)
    assert fresh.file_at(str(entry.number), "data.db", "before") == IGNORED["data.db"].encode()


def test_paths_outside_missing_or_rewritten_with_the_same_bytes_are_no_loss(tmp_path: Path) -> None:
    """An ignored file rewritten with the bytes it had, a path that was not there, one outside the
    workspace or inside .git: nothing is listed as lost; a file overwritten with other bytes is."""
    repo = make_repo(tmp_path / "ws", {"README.md": "# demo\n", ".gitignore": "out/\n"})
    write_files(repo, {"out/same.txt": "same\n", "out/changed.txt": "before\n"})
    engine = open_engine(repo)
    engine.begin_turn(label="rebuild", session="s", agent="claude-code")

    def rebuild() -> None:
        (repo / "out/same.txt").unlink()
        (repo / "out/same.txt").write_text("same\n")
        (repo / "out/changed.txt").write_text("after\n")

    at_risk = AtRisk(paths=("out/", "missing/", "../elsewhere", ".git/config"))
    _step(engine, "rebuild", at_risk, rebuild)
    [turn] = [e for e in engine.entries() if e.kind == "turn"]
    assert [(lost.path, lost.how, lost.kept is not None) for lost in turn.lost] == [("out/changed.txt", "overwritten", True)]
    from takeback.mcp import text  # what the agent reads through MCP says so too

    assert "cannot take back: out/changed.txt (an ignored file, overwritten; kept by Takeback)" in text.timeline(
        [turn], str(repo), str(engine.store.path))
    assert "cannot take back  " in text.entry(turn) and "out/changed.txt" in text.entry(turn)
