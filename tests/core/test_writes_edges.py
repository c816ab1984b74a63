"""The edges of writing a person's files: permission bits, hard links, folders the person had,
a file and a folder swapping places, and recovery after a crash when the person typed since;
then random turns mixing all of these.

Every case runs on real folders (git repositories and plain folders); each checks that undo
then redo is the identity and that nothing of the person's is lost.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import git_state, make_repo, write_files
from takeback.core import render
from takeback.core.models import BatchChange
from takeback.engine.engine import Engine
from takeback.errors import CannotWrite
from takeback.workspace.birth import born_ns
from takeback.workspace.files import Workspace

from .conftest import PLAIN_FILES
from .support import batch, full_state, nothing_written, open_engine
from .test_crash import FILES, _content, _run_child, _workspace


def perm(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def perms(root: Path) -> dict[str, int]:
    """Every file's exact permission bits (what full_state's git modes do not show)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            p = Path(folder) / name
            if not p.is_symlink():
                out[p.relative_to(root).as_posix()] = perm(p)
    return out


def folders(root: Path) -> set[str]:
    out = set()
    for folder, dirs, _files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        out |= {(Path(folder) / d).relative_to(root).as_posix() for d in dirs}
    return out


def knows_birth(path: Path) -> bool:
    """Whether this file system tells a folder's birth time (else Takeback keeps folders)."""
    return born_ns(path) is not None


def agent_pause() -> None:
    """A folder's birth time comes from the file system's coarse clock, which may lag the
    turn's begin by a clock tick: a folder made within that tick counts as the person's (kept,
    the safe side). Real agents do not create folders within milliseconds of begin; tests wait."""
    time.sleep(0.03)


def round_trip(engine: Engine, ws: Path, before, after) -> None:
    """Undo gives ``before`` (content, git modes, permission bits, folders), redo ``after``,
    twice over: undo then redo is the identity."""
    for _ in range(2):
        result = engine.undo()
        assert result.applied and result.verdict == "safe", (result.message, result.skipped, result.conflicts)
        assert snapshot(ws) == before
        result = engine.redo()
        assert result.applied and result.verdict == "safe", (result.message, result.skipped, result.conflicts)
        assert snapshot(ws) == after


def snapshot(ws: Path):
    return full_state(ws), perms(ws), folders(ws)


# ---------------------------------------------------------------------- permissions


def test_undo_and_redo_keep_each_files_permission_bits(ws: Path, engine: Engine) -> None:
    """A 0600 credentials file stays 0600, a 0444 file stays 0444, a 0640 file 0640; the
    executable bit follows the record (git's way: x wherever r)."""
    write_files(ws, {"creds.cfg": "user=me\n", "frozen.txt": "do not edit\n", "group.txt": "g\n", "run.sh": "echo\n"})
    for name, bits in (("creds.cfg", 0o600), ("frozen.txt", 0o444), ("group.txt", 0o640), ("run.sh", 0o700)):
        os.chmod(ws / name, bits)
    before = snapshot(ws)
    engine.begin_turn(label="edit them")
    for name in ("creds.cfg", "frozen.txt", "group.txt"):
        os.chmod(ws / name, perm(ws / name) | 0o200)
        (ws / name).write_text("the agent's version\n")
        os.chmod(ws / name, perm(ws / name) & ~0o200 if name == "frozen.txt" else perm(ws / name))
    os.chmod(ws / "run.sh", 0o600)  # the agent takes the x bit away
    engine.end_turn()
    after = snapshot(ws)
    assert after[1]["run.sh"] == 0o600 and after[1]["frozen.txt"] == 0o444
    round_trip(engine, ws, before, after)
    assert perms(ws)["creds.cfg"] == 0o600 and perms(ws)["frozen.txt"] == 0o444


def test_a_file_brought_back_gets_the_umask_default(plain: Path) -> None:
    """A deleted file comes back as a new file: 0666 under the umask (plus x where the
    record says executable); the record keeps only the executable bit, as git does."""
    write_files(plain, {"gone.txt": "g\n", "tool": "#!/bin/sh\n"})
    os.chmod(plain / "tool", 0o755)
    engine = open_engine(plain)
    engine.begin_turn()
    (plain / "gone.txt").unlink()
    (plain / "tool").unlink()
    engine.end_turn()
    old = os.umask(0o027)
    try:
        assert engine.undo().verdict == "safe"
    finally:
        os.umask(old)
    assert perm(plain / "gone.txt") == 0o640 and perm(plain / "tool") == 0o750


def test_a_failed_undo_puts_back_the_exact_bits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills up half-way: the file already written is rolled back with exactly the
    bits it had (0751, which no x-follows-r rule gives back), so nothing was written is true."""
    import errno

    ws = make_repo(tmp_path / "ws", {"a.txt": "a0\n", "b.txt": "b0\n"})
    os.chmod(ws / "a.txt", 0o640)
    engine = open_engine(ws)
    engine.begin_turn()
    (ws / "a.txt").write_text("a1\n")
    os.chmod(ws / "a.txt", 0o751)
    (ws / "b.txt").write_text("b1\n")
    engine.end_turn()
    real_write = Workspace.write

    def disk_full_on_b(self: Workspace, rel: str, *args, **kwargs) -> None:  # the system edge
        if rel == "b.txt":
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(self, rel, *args, **kwargs)

    monkeypatch.setattr(Workspace, "write", disk_full_on_b)
    before = perms(ws)
    with nothing_written(engine, ws, objects=False):
        with pytest.raises(CannotWrite, match="cannot write b.txt: no space left on device"):
            engine.undo()
    assert perms(ws) == before and before["a.txt"] == 0o751


CHILD_AS_NOBODY = r"""
import json, os, stat, sys
from pathlib import Path
import takeback.engine.operations, takeback.workspace.journal, takeback.core.planning, takeback.core.merge  # before dropping root
from takeback.engine.engine import Engine
from takeback.core.models import BatchChange
if os.geteuid() == 0:
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
ws = Path(sys.argv[1])
engine = Engine(ws)
def bits():
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in ws.iterdir() if p.is_file()}
start = bits()
engine.begin_turn(label="as a plain user")
for name in ("creds.cfg", "frozen.txt"):
    os.chmod(ws / name, 0o600)
    (ws / name).write_text("agent\n")
    os.chmod(ws / name, start[name])
turned = bits()
undone = engine.undo()
after_undo = bits()
redone = engine.redo()
print(json.dumps({"uid": os.geteuid(), "start": start, "turned": turned, "after_undo": after_undo,
                  "after_redo": bits(), "verdicts": [undone.verdict, redone.verdict],
                  "content": (ws / "frozen.txt").read_text()}))
"""


def test_permissions_hold_for_an_unprivileged_user() -> None:
    """Run as ``nobody`` when the tests run as root (as CI does): a 0444 file the person cannot
    write in place is still restored (the folder is theirs) and stays 0444; 0600 stays 0600."""
    base = Path(tempfile.mkdtemp(prefix="takeback-nobody-"))
    try:
        ws, state = base / "ws", base / "state"
        ws.mkdir()
        state.mkdir()
        write_files(ws, {"creds.cfg": "user=me\n", "frozen.txt": "do not edit\n"})
        os.chmod(ws / "creds.cfg", 0o600)
        os.chmod(ws / "frozen.txt", 0o444)
        if os.geteuid() == 0:
            os.chmod(base, 0o755)
            for p in (base, ws, state, ws / "creds.cfg", ws / "frozen.txt"):
                os.chown(p, 65534, 65534)
        env = {**os.environ, "TAKEBACK_HOME": str(state), "HOME": str(state)}
        proc = subprocess.run(
            [sys.executable, "-c", CHILD_AS_NOBODY, str(ws)], env=env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        seen = json.loads(proc.stdout.strip().splitlines()[-1])
        assert seen["uid"] != 0
        expected = {"creds.cfg": 0o600, "frozen.txt": 0o444}
        assert seen["start"] == seen["turned"] == seen["after_undo"] == seen["after_redo"] == expected
        assert seen["verdicts"] == ["safe", "safe"] and seen["content"] == "agent\n"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_file_keeps_its_owner(tmp_path: Path) -> None:
    """Run by root (an agent hook under sudo), an undo leaves the person's file theirs."""
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    ws = make_repo(tmp_path / "ws", {"mine.txt": "v0\n"})
    os.chown(ws / "mine.txt", 65534, 65534)
    engine = open_engine(ws)
    engine.begin_turn()
    (ws / "mine.txt").write_text("v1\n")
    engine.end_turn()
    for operation in (engine.undo, engine.redo):
        assert operation().verdict == "safe"
        st = os.stat(ws / "mine.txt")
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (65534, 65534, 0o644)


def test_hard_links_are_not_written_through(tmp_path: Path) -> None:
    """A file hard-linked to one outside the workspace: the undo gives the workspace path its
    own inode with the restored content; the outside link keeps what it held (Takeback never
    writes outside the workspace, and writes atomically)."""
    ws = make_repo(tmp_path / "ws", {"shared.txt": "v0\n"})
    outside = tmp_path / "elsewhere.txt"
    os.link(ws / "shared.txt", outside)
    engine = open_engine(ws)
    engine.begin_turn()
    (ws / "shared.txt").write_text("v1\n")  # written in place: both links see it
    engine.end_turn()
    inode = os.stat(outside).st_ino
    assert engine.undo().verdict == "safe"
    assert (ws / "shared.txt").read_text() == "v0\n"
    assert outside.read_text() == "v1\n" and os.stat(outside).st_ino == inode
    assert os.stat(ws / "shared.txt").st_nlink == 1 and os.stat(outside).st_nlink == 1
    assert engine.redo().verdict == "safe" and (ws / "shared.txt").read_text() == "v1\n"


# ---------------------------------------------------------------------- folders


def test_folders_the_person_had_stay_and_the_turns_own_go(ws: Path, engine: Engine) -> None:
    """Empty folders the person had before the turn stay after its undo; the folders the
    turn made for its files go (where the file system tells birth times; else they stay)."""
    (ws / "logs").mkdir()
    (ws / "cache/deep").mkdir(parents=True)
    before = snapshot(ws)
    time.sleep(0.02)
    engine.begin_turn()
    agent_pause()
    write_files(ws, {"logs/run.log": "x\n", "cache/deep/made/by/agent.txt": "y\n", "fresh/new.txt": "z\n"})
    engine.end_turn()
    after = snapshot(ws)
    result = engine.undo()
    assert result.verdict == "safe"
    assert {"logs", "cache", "cache/deep"} <= folders(ws)
    if knows_birth(ws):
        assert snapshot(ws) == before
        assert engine.redo().verdict == "safe" and snapshot(ws) == after
        round_trip(engine, ws, before, after)
    else:
        assert {"cache/deep/made", "cache/deep/made/by", "fresh"} <= folders(ws)  # kept: safe


def test_an_edit_batch_knows_the_folders_it_made(ws: Path, engine: Engine) -> None:
    (ws / "logs").mkdir()
    before = snapshot(ws)
    batch(engine, ws, {"logs/a.log": "a\n", "new/deeper/b.txt": "b\n"})
    after = snapshot(ws)
    round_trip(engine, ws, before, after)


def test_an_undo_of_a_deleted_folder_then_its_redo(ws: Path, engine: Engine) -> None:
    """The turn removes a file and its folder: the undo makes the folder again, the redo
    (taking back what the undo created) removes it again."""
    write_files(ws, {"old/only.txt": "o\n"})
    before = snapshot(ws)
    engine.begin_turn()
    shutil.rmtree(ws / "old")
    engine.end_turn()
    after = snapshot(ws)
    round_trip(engine, ws, before, after)


# ---------------------------------------------------------------------- file <-> folder


def _file_to_folder(ws: Path, name: str) -> None:
    (ws / name).unlink()
    write_files(ws, {f"{name}/y.txt": "in the folder\n", f"{name}/sub/z.txt": "deeper\n"})


def test_a_file_replaced_by_a_folder_comes_back_in_one_step(ws: Path, engine: Engine, ws_kind: str) -> None:
    """Tracked (committed) and untracked files both: the turn's deletion is recorded, the undo
    removes the folder's files, the folder, and writes the file back."""
    write_files(ws, {"untracked.cfg": "only copy of this\n"})
    before = snapshot(ws)
    time.sleep(0.02)
    engine.begin_turn()
    agent_pause()
    _file_to_folder(ws, "README.md")
    _file_to_folder(ws, "untracked.cfg")
    entry = engine.end_turn()
    kinds = {f.path: f.kind for f in entry.files}
    assert kinds["README.md"] == "deleted" and kinds["untracked.cfg"] == "deleted", kinds
    assert kinds["untracked.cfg/y.txt"] == "added"
    after = snapshot(ws)
    if not knows_birth(ws):
        result = engine.undo()  # the folders' birth is unknown: they stay, the files are skipped
        assert result.verdict == "partial" and {s.path for s in result.skipped} == {"README.md", "untracked.cfg"}
        return
    round_trip(engine, ws, before, after)


def test_a_folder_replaced_by_a_file_comes_back_in_one_step(ws: Path, engine: Engine) -> None:
    before = snapshot(ws)
    engine.begin_turn()
    shutil.rmtree(ws / "src")
    (ws / "src").write_text("now a file\n")
    engine.end_turn()
    after = snapshot(ws)
    round_trip(engine, ws, before, after)


def test_an_edit_batch_swapping_a_file_for_a_folder(ws: Path, engine: Engine) -> None:
    before = snapshot(ws)
    batch(engine, ws, {"README.md": None, "README.md/part1.md": "one\n", "README.md/x/part2.md": "two\n"})
    after = snapshot(ws)
    round_trip(engine, ws, before, after)


def test_the_persons_file_in_the_turns_folder_is_a_conflict(ws: Path, engine: Engine) -> None:
    """The person put a file in the folder that took a file's place: the undo cannot bring the
    file back without removing theirs, so it is a conflict, and nothing is written."""
    batch(engine, ws, {"README.md": None, "README.md/part1.md": "one\n"})
    write_files(ws, {"README.md/mine.txt": "the person's\n"})
    for dry_run in (True, False):
        with nothing_written(engine, ws, objects=False):
            result = engine.undo(dry_run=dry_run)
        assert result.verdict == "refused" and not result.applied
        assert [c.path for c in result.conflicts] == ["README.md"]
        assert "README.md/mine.txt" in result.conflicts[0].reason
    result = engine.undo(on_conflict="skip")  # the rest goes; the person's file stays
    assert result.verdict == "partial" and (ws / "README.md/mine.txt").read_text() == "the person's\n"
    assert not (ws / "README.md/part1.md").exists()


def _emptied_folder_turn(ws: Path, engine: Engine):
    """A turn in which README.md becomes a folder that the agent writes into and empties again,
    leaving a chain of empty folders (README.md/sub/) where the file was; it edits src/app.py too."""
    time.sleep(0.02)
    engine.begin_turn(label="file to folder, emptied")
    agent_pause()
    (ws / "README.md").unlink()
    write_files(ws, {"README.md/sub/tmp.txt": "scratch\n", "src/app.py": "def main():\n    return 2\n"})
    (ws / "README.md/sub/tmp.txt").unlink()
    return engine.end_turn()


def test_an_emptied_folder_made_in_a_files_place_goes_and_redo_deletes_the_file(
    ws: Path, engine: Engine, ws_kind: str
) -> None:
    """The turn deletes README.md, makes README.md/sub/ in its place, writes into it and empties
    it again: no file's record names those folders, so the turn's end records them with the
    deletion. The undo removes them and writes README.md back (SAFE); the redo deletes it again
    and leaves no empty folder behind (an empty folder holds nothing a record or git sees, as
    for the folders of an added file); undo and redo then go back and forth."""
    before = snapshot(ws)
    git_before = git_state(ws) if ws_kind != "plain" else None
    entry = _emptied_folder_turn(ws, engine)
    assert {f.path: f.kind for f in entry.files} == {"README.md": "deleted", "src/app.py": "modified"}
    after = snapshot(ws)
    assert {"README.md", "README.md/sub"} <= after[2]
    result = engine.undo()
    if not knows_birth(ws):  # the folder's birth is unknown: it stays, and the file is skipped
        assert result.verdict == "partial" and [s.path for s in result.skipped] == ["README.md"]
        assert (ws / "README.md/sub").is_dir()
        return
    assert result.verdict == "safe", (result.message, result.skipped, result.conflicts)
    assert snapshot(ws) == before
    redone = (after[0], after[1], after[2] - {"README.md", "README.md/sub"})
    for _ in range(2):
        result = engine.redo()
        assert result.verdict == "safe", (result.message, result.skipped, result.conflicts)
        assert snapshot(ws) == redone
        result = engine.undo()
        assert result.verdict == "safe", (result.message, result.skipped, result.conflicts)
        assert snapshot(ws) == before
    if git_before is not None:
        assert git_state(ws) == git_before


def test_a_folder_made_in_a_files_place_that_the_person_filled_stays(ws: Path, engine: Engine) -> None:
    """The person put a file (and an empty folder) into the folder the turn made and emptied in
    README.md's place: the undo never removes it. By default it stops and writes nothing; with
    skip, README.md is skipped with the reason (PARTIAL), the rest of the turn is taken back; once
    the person moves their file away, reverting the turn again (as the answer says) brings
    README.md back."""
    turn = _emptied_folder_turn(ws, engine)
    write_files(ws, {"README.md/mine.txt": "the person's\n"})
    (ws / "README.md/sub/kept").mkdir()
    before_undo = folders(ws)
    stopped = engine.undo()
    assert (stopped.verdict, stopped.applied, [s.path for s in stopped.skipped]) == ("refused", False, ["README.md"])
    assert "--on-conflict skip" in stopped.next_action and folders(ws) == before_undo
    result = engine.undo(on_conflict="skip")
    assert result.verdict == "partial" and result.applied, (result.message, result.skipped, result.conflicts)
    assert [s.path for s in result.skipped] == ["README.md"] and not result.conflicts
    if knows_birth(ws):
        assert "README.md/mine.txt" in result.skipped[0].reason and "does not remove it" in result.skipped[0].reason
    assert (ws / "README.md/mine.txt").read_text() == "the person's\n"
    assert folders(ws) == before_undo  # README.md/sub and the person's empty README.md/sub/kept stay
    assert (ws / "src/app.py").read_text() == PLAIN_FILES["src/app.py"]
    if not knows_birth(ws):
        return
    assert "README.md skipped: once what stands in the way is fixed, 'takeback revert 1'" in result.next_action
    (ws / "README.md/mine.txt").rename(ws / "mine.txt")
    result = engine.revert(turn.id)
    assert result.verdict == "safe", (result.message, result.skipped, result.conflicts)
    assert (ws / "README.md").read_text() == PLAIN_FILES["README.md"]


def test_a_shell_step_that_empties_a_folder_made_in_a_files_place(ws: Path, engine: Engine) -> None:
    """The same in one agent tool call (a hook's step around a shell command): its undo removes
    the emptied folder and writes README.md back."""
    before = snapshot(ws)
    time.sleep(0.02)
    engine.begin_step("call-1", session="s1")
    agent_pause()
    (ws / "README.md").unlink()
    write_files(ws, {"README.md/tmp.txt": "scratch\n"})
    (ws / "README.md/tmp.txt").unlink()
    entry = engine.end_step("call-1", "Bash: mv and rm")
    assert entry is not None and [f.path for f in entry.files] == ["README.md"]
    result = engine.undo()
    if not knows_birth(ws):
        assert result.verdict == "partial" and [s.path for s in result.skipped] == ["README.md"]
        return
    assert result.verdict == "safe", (result.message, result.skipped, result.conflicts)
    assert snapshot(ws) == before


@pytest.mark.parametrize("written_by", ["editor", "engine"])
def test_edit_batches_that_empty_a_folder_made_in_a_files_place(ws: Path, engine: Engine, written_by: str) -> None:
    """The same through edit batches (written by the editor, or by the engine as
    takeback/applyEdit does without one): one batch deletes README.md and creates
    README.md/part.md (the batch knows it makes the folder), a later one in the same turn
    deletes part.md. The undo of the turn removes the emptied folder and writes README.md back."""
    before = snapshot(ws)
    engine.begin_turn(label="two batches")
    for files in ({"README.md": None, "README.md/part.md": "one\n"}, {"README.md/part.md": None}):
        if written_by == "editor":
            batch(engine, ws, files)
        else:
            engine.apply_batch([BatchChange(path=p, after=c and c.encode()) for p, c in files.items()])
    engine.end_turn()
    after = snapshot(ws)
    assert "README.md" in after[2]
    result = engine.undo()
    assert result.verdict == "safe", (result.message, result.skipped, result.conflicts)
    assert snapshot(ws) == before
    result = engine.redo()
    assert result.verdict == "safe", (result.message, result.skipped, result.conflicts)
    assert snapshot(ws) == (after[0], after[1], after[2] - {"README.md"})


# ---------------------------------------------------------------------- recovery


def test_recovery_leaves_what_the_person_typed_after_a_crash(tmp_path: Path) -> None:
    """An undo killed half-way; before Takeback runs again the person edits one of its files.
    Recovery rolls every other path to one side, leaves that one as the person left it, and
    says so (status, and the human status line)."""
    ws = _workspace(tmp_path)
    engine = open_engine(ws)
    engine.begin_turn(label="rewrite everything")
    for i in range(FILES):
        (ws / f"pkg{i % 10}/mod{i:03d}.txt").write_bytes(_content(i, 1))
    engine.end_turn()
    git_before = git_state(ws)
    journal = engine.store.path / "journal.json"
    rng = random.Random(7)
    typed = ws / "pkg4/mod004.txt"
    for _attempt in range(20):
        mid_way, _ = _run_child(ws, "undo", journal, rng, 0.0)
        if mid_way:
            break
        Engine(ws)  # recovery of a kill after the journal was gone: nothing to do
        if engine.entry("1").state != "applied":
            Engine(ws).redo()
    else:
        pytest.skip("no kill landed while the journal existed")
    typed.write_bytes(b"the person typed this after the crash\n")
    reopened = Engine(ws)  # recovery runs here
    report = reopened.status().last_recovery
    assert report is not None and report.left == ["pkg4/mod004.txt"]
    assert typed.read_bytes() == b"the person typed this after the crash\n"
    version = 0 if report.action == "rolled-forward" else 1
    for i in range(FILES):
        if i != 4:
            assert (ws / f"pkg{i % 10}/mod{i:03d}.txt").read_bytes() == _content(i, version), i
    assert not [p for p in full_state(ws)[0] if ".takeback-tmp" in p]
    assert git_state(ws) == git_before
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        render.print_status(reopened.status())
    assert "1 left as they were, changed since (not overwritten): pkg4/mod004.txt" in out.getvalue()


def test_recovery_leaves_a_path_that_is_neither_side(tmp_path: Path) -> None:
    """The journal of an operation that never reached the log, found on open, with one path
    changed by the person and one already written: the written one goes back, the person's
    stays, and a path neither written nor changed is not touched."""
    from takeback.workspace.journal import JournalFile

    ws = make_repo(tmp_path / "ws", {"a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c0\n"})
    os.chmod(ws / "a.txt", 0o600)
    engine = open_engine(ws)
    version = engine.capture.version
    items = [
        JournalFile(path=p, before=version(p, f"{p[0]}0\n".encode(), 0o100644), after=version(p, f"{p[0]}1\n".encode(), 0o100644))
        for p in ("a.txt", "b.txt", "c.txt")
    ]
    items.append(JournalFile(path="new/d.txt", before=None, after=version("new/d.txt", b"d\n", 0o100644), new_folders=["new"]))
    engine.journal.start("never-published", "revert", items, {})
    engine.journal.write_side(items[0], "after")  # written before the "crash"
    engine.journal.write_side(items[3], "after")
    (ws / "b.txt").write_text("the person's\n")
    assert perm(ws / "a.txt") == 0o600
    report = Engine(ws).last_recovery
    assert report is not None and report.action == "rolled-back" and report.left == ["b.txt"]
    assert (ws / "a.txt").read_text() == "a0\n" and perm(ws / "a.txt") == 0o600
    assert (ws / "b.txt").read_text() == "the person's\n" and (ws / "c.txt").read_text() == "c0\n"
    assert not (ws / "new").exists()


# ---------------------------------------------------------------------- random turns

PERSON_FOLDERS = {"empty", "keep/inner"}  # empty folders the person had before any turn
ACTIONS = st.lists(
    st.tuples(st.sampled_from(["to_folder", "to_file", "chmod", "new", "edit", "delete"]), st.integers(0, 99),
              st.sampled_from([0o600, 0o640, 0o644, 0o700, 0o755, 0o444])),
    min_size=1, max_size=4,
)


def _agent_action(ws: Path, action: str, pick: int, bits: int, turn: int, step: int) -> None:
    """One thing an agent does on disk (what it picks among is what is there now)."""
    files = sorted(p for p in full_state(ws)[0] if not p.startswith(".takeback"))
    folder_names = sorted(f for f in folders(ws) if f not in PERSON_FOLDERS and "keep" != f)
    if action == "new":
        write_files(ws, {f"n{turn}{step}/m/f.txt": f"new {turn} {step}\n"})
    elif action == "to_folder" and files:
        path = files[pick % len(files)]
        (ws / path).unlink()
        write_files(ws, {f"{path}/x.txt": f"x {turn}\n", f"{path}/sub/y.txt": "y\n"})
    elif action == "to_file" and folder_names:
        path = folder_names[pick % len(folder_names)]
        shutil.rmtree(ws / path)
        (ws / path).write_text(f"was a folder, turn {turn}\n")
    elif action == "chmod" and files:
        os.chmod(ws / files[pick % len(files)], bits)
    elif action == "edit" and files:
        path = ws / files[pick % len(files)]
        os.chmod(path, perm(path) | 0o200)
        with open(path, "ab") as handle:
            handle.write(f"turn {turn}\n".encode())
    elif action == "delete" and files:
        (ws / files[pick % len(files)]).unlink()


def _as_batch(engine: Engine, ws: Path, actions: list, turn: int) -> None:
    """The same actions as one edit batch, as an editor sends it: worked out on a copy,
    recorded (before-images from disk), then written: deletions, then folders that give way to
    a file, then the writes."""
    scratch = ws.parent / f"scratch-{turn}"
    shutil.copytree(ws, scratch, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    for step, (action, pick, bits) in enumerate(actions):
        _agent_action(scratch, action, pick, bits, turn, step)
    (old, old_modes), (new, new_modes) = full_state(ws), full_state(scratch)
    shutil.rmtree(scratch)
    changed = sorted(p for p in old.keys() | new.keys() if (old.get(p), old_modes.get(p)) != (new.get(p), new_modes.get(p)))
    if not changed:
        return
    engine.record_batch([BatchChange(path=p, after=new.get(p), mode=new_modes.get(p)) for p in changed])
    for path in changed:
        if path not in new:
            (ws / path).unlink()
    for path in changed:
        if path in new:
            if (ws / path).is_dir():
                shutil.rmtree(ws / path)  # holds no file any more: the batch deleted them
            write_files(ws, {path: new[path]})
            os.chmod(ws / path, 0o755 if new_modes[path] == 0o100755 else perm(ws / path) & ~0o111)


def lived_in(ws: Path) -> set[str]:
    """The folders that hold a file at some depth, and the person's empty ones (an empty folder
    an agent makes is not recorded: no file changed)."""
    found = set(PERSON_FOLDERS & folders(ws))
    for path in full_state(ws)[0]:
        parts = path.split("/")[:-1]
        found |= {"/".join(parts[: i + 1]) for i in range(len(parts))}
    return found


def _no_bits_but_x_changed(before: dict[str, int], after: dict[str, int]) -> None:
    """An operation never changes a file's permission bits other than x (x follows r)."""
    for path in before.keys() & after.keys():
        assert before[path] & ~0o111 == after[path] & ~0o111, (path, oct(before[path]), oct(after[path]))
        x = after[path] & 0o111
        assert x in (0, (after[path] & 0o444) >> 2), (path, oct(after[path]))


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(use_git=st.booleans(), turns=st.lists(st.tuples(st.sampled_from(["bracket", "batch"]), ACTIONS), min_size=1, max_size=3))
def test_random_turns_swap_files_and_folders_and_change_modes(use_git: bool, turns: list) -> None:
    """Random turns (brackets, or edit batches) swap files and folders, change modes, add files
    in new folders, edit and delete; undoing them all, one by one, gives back each earlier state exactly (content, git
    modes, the folders that hold files, the person's empty folders), redoing them all gives
    each later state, and no operation changes permission bits other than x."""
    base = Path(tempfile.mkdtemp(prefix="takeback-random-"))
    try:
        files = {"a.txt": "a\n", "b.txt": "b\n", "dir/c.txt": "c\n", "dir/deep/d.txt": "d\n", "tool.sh": "#!/bin/sh\n"}
        ws = make_repo(base / "ws", files) if use_git else base / "ws"
        if not use_git:
            ws.mkdir()
            write_files(ws, files)
        os.chmod(ws / "a.txt", 0o600)
        os.chmod(ws / "tool.sh", 0o755)
        for folder in PERSON_FOLDERS:
            (ws / folder).mkdir(parents=True)
        git_before = git_state(ws) if use_git else None
        engine = open_engine(ws)
        states = [(full_state(ws), lived_in(ws))]
        for turn, (style, actions) in enumerate(turns):
            if style == "batch":
                _as_batch(engine, ws, actions, turn)
            else:
                time.sleep(0.02)
                engine.begin_turn(label=f"turn {turn}")
                agent_pause()
                for step, (action, pick, bits) in enumerate(actions):
                    _agent_action(ws, action, pick, bits, turn, step)
                engine.end_turn()
            states.append((full_state(ws), lived_in(ws)))
        birth = knows_birth(ws)
        for k in range(len(turns), 0, -1):
            if states[k][0] == states[k - 1][0]:
                continue  # a turn that changed no file recorded nothing to undo
            bits_before = perms(ws)
            result = engine.undo()
            _no_bits_but_x_changed(bits_before, perms(ws))
            assert PERSON_FOLDERS <= folders(ws)
            if not birth:
                return  # folders a turn made stay where birth times are unknown: no exact states
            assert result.verdict == "safe", (result.message, result.skipped, result.conflicts)
            assert (full_state(ws), lived_in(ws)) == states[k - 1], f"undo of turn {k}"
        for k in range(1, len(turns) + 1):
            if states[k][0] == states[k - 1][0]:
                continue
            bits_before = perms(ws)
            result = engine.redo()
            assert result.verdict == "safe", (result.message, result.skipped, result.conflicts)
            _no_bits_but_x_changed(bits_before, perms(ws))
            assert (full_state(ws), lived_in(ws)) == states[k], f"redo of turn {k}"
        if git_before is not None:
            assert git_state(ws) == git_before
    finally:
        shutil.rmtree(base, ignore_errors=True)
