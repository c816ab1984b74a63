"""Big operations: the path checks look at each folder once, and many files are rewritten in
place (or, those that may not be, written under temporary names), flushed at once (``syncfs``)
and only then renamed — still all or nothing, whatever a kill leaves in a file written in place.

``TAKEBACK_SYNCFS_FROM=1`` sends every operation, however small, the way a 5,000-file one goes,
so the small scenarios of the crash-point harness exercise it.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from helpers import make_repo, tree_state, write_files
from takeback.engine.engine import Engine
from takeback.errors import CannotWrite
from takeback.workspace import files

from . import crashpoints
from . import test_crash_points as crash_tests
from .support import open_engine
from .test_crash_points import SCENARIOS, _check, _prepare

FOLDERS = ("pkg/core/src", "pkg/core/tests", "web/src/components")


def _big_turn(tmp_path: Path, per_folder: int = 20) -> tuple[Path, dict[str, str], dict[str, str]]:
    """A repository of ``per_folder`` files in each folder of ``FOLDERS``, then one turn that
    rewrote every one; answers the workspace, the files before and after the turn."""
    before = {f"{folder}/f{i}.py": f"def f{i}():\n    return {i}\n" for folder in FOLDERS for i in range(per_folder)}
    after = {rel: "# formatted\n" + text for rel, text in before.items()}
    ws = make_repo(tmp_path / "ws", dict(before))
    engine = open_engine(ws)
    engine.begin_turn(label="format")
    write_files(ws, after)
    engine.end_turn()
    return ws, before, after


def _to_undo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> tuple[Path, dict[str, str], Engine]:
    """``_big_turn``'s workspace, the files before the turn, and an engine to undo it with,
    ``how``: "one by one" or "all at once" (every operation written the way a big one is)."""
    ws, before, _after = _big_turn(tmp_path)
    if how == "all at once":
        monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")
    return ws, before, open_engine(ws)


def _contents(ws: Path, rels: dict[str, str]) -> dict[str, str]:
    return {rel: (ws / rel).read_text() for rel in rels}


@pytest.mark.parametrize("how", ["one by one", "all at once"])
def test_an_undo_looks_at_each_folder_once_not_at_every_folder_of_every_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Counted with a real counter: the lstat calls an undo of 60 files in 3 folders (each 3
    deep) makes under the workspace. Each file is looked at five times (read, its place checked,
    whether it may be written, its bits for the journal, its owner and bits before the write),
    and each folder once when planning and once when writing — not every folder on the way at
    every check (26 lstat per file before)."""
    ws, before, engine = _to_undo(tmp_path, monkeypatch, how)
    real = os.lstat
    counted: list[str] = []

    def lstat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if str(path).startswith(str(ws)):
            counted.append(str(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", lstat)
    result = engine.undo()
    monkeypatch.setattr(os, "lstat", real)
    assert result.applied and _contents(ws, before) == before
    on_folders = [p for p in counted if os.path.isdir(p)]
    per_file = (len(counted) - len(on_folders)) / len(before)
    assert per_file <= 5, f"{per_file:.1f} lstat per file"
    assert len(on_folders) <= 2 * len(set(on_folders)) <= 2 * 7, f"{len(on_folders)} lstat of {len(set(on_folders))} folders"


def test_a_folder_swapped_for_a_link_leading_out_is_still_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All at once, with each folder looked at once: the files behind a folder replaced by a
    symlink to a folder outside the workspace are skipped, the outside folder is untouched,
    and the rest is undone."""
    monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")
    ws, before, after = _big_turn(tmp_path)
    outside = tmp_path / "outside"
    linked = "web/src/components"
    (ws / linked).rename(outside)
    (ws / linked).symlink_to(outside)
    kept = tree_state(outside)
    result = open_engine(ws).undo()
    assert result.applied and result.verdict == "partial"
    assert {s.path for s in result.skipped} == {rel for rel in before if rel.startswith(linked + "/")}
    assert tree_state(outside) == kept
    assert all((ws / rel).read_text() == before[rel] for rel in before if not rel.startswith(linked + "/"))
    assert not list(outside.glob(".takeback-tmp-*"))


def test_a_flush_that_fails_writes_nothing_and_the_undo_can_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one ``syncfs`` before the renames fails (the disk dying): no file was put in place,
    no temporary file is left, the journal is gone; once the disk works the undo runs."""
    monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")
    ws, before, after = _big_turn(tmp_path)
    engine = open_engine(ws)

    def dying(folder: str) -> bool:
        raise OSError(errno.EIO, os.strerror(errno.EIO), folder)

    monkeypatch.setattr(files, "syncfs", dying)
    with pytest.raises(CannotWrite) as failed:
        engine.undo()
    assert failed.value.message.startswith("cannot flush ") and failed.value.message.endswith("nothing was written")
    assert _contents(ws, after) == after
    assert not list(ws.rglob(".takeback-tmp-*"))
    assert not (engine.store.path / "journal.json").exists()
    monkeypatch.undo()
    monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")
    assert engine.undo().applied and _contents(ws, before) == before


def test_files_rewritten_in_place_are_flushed_with_one_syncfs_and_no_folder_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big undo whose every file may be rewritten in place changes no folder: one ``syncfs``
    flushes the files, and no folder is flushed after (it was a second ``syncfs``); a file
    written through a rename (a second hard link) still has its folder flushed."""
    monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")
    ws, before, _after = _big_turn(tmp_path)
    engine = open_engine(ws)
    real = files.syncfs
    flushed: list[str] = []
    folders: list[str] = []
    monkeypatch.setattr(files, "syncfs", lambda folder: flushed.append(folder) or real(folder))
    monkeypatch.setattr(files, "sync_dir", lambda folder: folders.append(str(folder)))
    assert engine.undo().applied and _contents(ws, before) == before
    assert len(flushed) == 1 and folders == [], (flushed, folders)
    assert engine.redo().applied
    os.link(ws / "pkg/core/src/f1.py", tmp_path / "other-link")
    flushed.clear()
    assert engine.undo().applied and _contents(ws, before) == before
    assert len(flushed) == 2, "the renamed file's folder was not flushed"


@pytest.mark.skipif(crashpoints.strace_usable() is not None, reason=str(crashpoints.strace_usable()))
@pytest.mark.parametrize("name", ["undo", "redo", "merged-undo"])
def test_an_undo_written_all_at_once_killed_at_every_call_is_all_or_nothing(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The crash-point scenarios, written the big way: killed at each call (a temporary file
    written, the ``syncfs``, each rename …), the workspace is all-before or all-after once the
    engine opens, and the timeline agrees."""
    monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")
    run = _prepare(name, tmp_path)
    found = crashpoints.trace_points(run.ws, run.args, tmp_path / "trace", run.stdin)
    assert any(point.name == "syncfs" for point in found), f"no syncfs among {found}"
    run.snapshot.put_back()
    inode = os.lstat(run.ws / "a.txt").st_ino
    assert crashpoints.run(run.ws, run.args, run.stdin).returncode == 0
    assert os.lstat(run.ws / "a.txt").st_ino == inode, "a.txt was not rewritten in place"
    for point in found:
        run.snapshot.put_back()
        proc = crashpoints.inject(run.ws, run.args, point, "signal=KILL", run.stdin)
        assert proc.returncode == -9, f"{point}: not killed there ({proc.returncode}): {proc.stderr.decode(errors='replace')}"
        _check(run, point, SCENARIOS[name])


def test_a_rename_failing_among_the_parallel_ones_puts_every_file_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Renamed into place by several threads (``PUT_IN_PARALLEL_FROM`` lowered): the 25th
    rename fails; the other threads stop, every file already renamed is put back, no
    temporary file is left, and the undo runs once the disk allows."""
    from takeback.workspace import journal
    from takeback.workspace.files import Workspace

    monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")
    monkeypatch.setattr(journal, "PUT_IN_PARALLEL_FROM", 2)
    monkeypatch.setattr(journal, "IN_PLACE", False)  # every file through a rename: what this checks
    ws, before, after = _big_turn(tmp_path)
    engine = open_engine(ws)
    real = Workspace.put
    calls: list[str] = []

    def put(self: Workspace, staged: files.Staged) -> None:
        calls.append(staged.rel)
        if len(calls) == 25:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(self, staged)

    monkeypatch.setattr(Workspace, "put", put)
    with pytest.raises(CannotWrite) as failed:
        engine.undo()
    assert "input/output error" in failed.value.message
    assert 25 <= len(calls) < len(before)  # the other threads stopped
    assert _contents(ws, after) == after
    assert not list(ws.rglob(".takeback-tmp-*"))
    assert not (engine.store.path / "journal.json").exists()
    monkeypatch.setattr(Workspace, "put", real)
    assert engine.undo().applied and _contents(ws, before) == before


@pytest.mark.skipif(crashpoints.strace_usable() is not None, reason=str(crashpoints.strace_usable()))
def test_an_undo_written_all_at_once_with_a_disk_error_at_every_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The crash-point harness's disk errors (no space at each write and created file, an I/O
    error at each rename, fsync, syncfs …) on an undo written the big way: one clear line, and
    all-before or all-after."""
    monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")
    crash_tests.test_a_disk_error_at_every_mutating_call("undo", tmp_path)


def test_a_big_undo_rewrites_in_place_only_the_files_it_may(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Written the big way: a plain file keeps its inode (rewritten in place); a file with a
    second hard link and a read-only file are replaced through a rename as before (the other
    link keeps the old content, the bits stay); every file holds its before-side."""
    monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")
    ws, before, after = _big_turn(tmp_path)
    plain, linked, read_only = "pkg/core/src/f0.py", "pkg/core/src/f1.py", "pkg/core/src/f2.py"
    other = tmp_path / "other-link"
    os.link(ws / linked, other)
    os.chmod(ws / read_only, 0o444)
    inodes = {rel: os.lstat(ws / rel).st_ino for rel in before}
    assert open_engine(ws).undo().applied
    assert _contents(ws, before) == before
    kept = {rel for rel in before if os.lstat(ws / rel).st_ino == inodes[rel]}
    assert kept == set(before) - {linked, read_only}
    assert other.read_text() == after[linked]
    assert os.lstat(ws / read_only).st_mode & 0o777 == 0o444


def _killed_in_the_middle(monkeypatch: pytest.MonkeyPatch, at: int) -> list[str]:
    """Make the undo die (no roll-back: the process is gone) in the middle of rewriting its
    ``at``-th file in place, which then holds the first half of its new content."""
    from takeback.workspace import journal

    real = journal.rewrite_in_place
    calls: list[str] = []

    def rewrite_in_place(path: str, rel: str, content: bytes, mode: int, perm: int) -> tuple[int, str]:
        calls.append(rel)
        if len(calls) == at:
            Path(path).write_bytes(content[: len(content) // 2])
            raise KeyboardInterrupt("killed")
        return real(path, rel, content, mode, perm)

    monkeypatch.setattr(journal, "rewrite_in_place", rewrite_in_place)
    monkeypatch.setattr(journal.Journal, "roll_back", lambda self, written, error: error)
    return calls


def test_a_file_left_half_rewritten_in_place_is_rolled_back_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed halfway through the 30th file an undo rewrites in place: the next open rolls every
    file back to the turn's after-side, the torn one too (it holds the start of its new content: neither side), and a file
    the undo never reached that the person edited meanwhile is left as the person made it."""
    monkeypatch.setenv("TAKEBACK_SYNCFS_FROM", "1")
    ws, before, after = _big_turn(tmp_path)
    engine = open_engine(ws)
    with monkeypatch.context() as patched:
        calls = _killed_in_the_middle(patched, 30)
        with pytest.raises(KeyboardInterrupt):
            engine.undo()
    torn = calls[-1]
    assert (ws / torn).read_text() not in (before[torn], after[torn])
    edited = next(rel for rel in sorted(after) if rel not in calls)
    (ws / edited).write_text("# the person's own line\n" + after[edited])
    reopened = open_engine(ws)
    report = reopened.last_recovery
    assert report is not None and report.action == "rolled-back" and report.left == [edited]
    assert _contents(ws, after) == {**after, edited: "# the person's own line\n" + after[edited]}
    assert not (reopened.store.path / "journal.json").exists()


def test_what_a_cut_can_leave_of_a_file_rewritten_in_place_is_told_from_an_edit() -> None:
    """``torn_between``: every block (4 KiB) of the file holds that block of the old or of the
    new content, or zeros (a power cut), and it is no longer than either: torn. A byte of its
    own anywhere, or more bytes than either side has: the person's edit."""
    block = files.BLOCK
    before = b"b" * (2 * block + 100)
    after = b"a" * (3 * block + 7)
    assert files.torn_between(after[:block] + before[block:], before, after)  # cut after the first block
    assert files.torn_between(before[:block] + after[block: 2 * block] + before[2 * block:], before, after)
    assert files.torn_between(after[:block] + bytes(block) + after[2 * block:], before, after)  # a block lost
    assert files.torn_between(after[: block + 10], before, after)  # killed in the middle of a block
    assert files.torn_between(b"", before, after)
    assert not files.torn_between(after[:block] + b"typed" + before[block + 5:], before, after)
    assert not files.torn_between(after + b"\n", before, after)


@pytest.mark.parametrize("op", ["undo", "redo"])
def test_the_record_of_a_big_operation_names_the_versions_planning_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str
) -> None:
    """Counted with a real counter: an undo (and the redo after it) of 60 files hashes each file
    once, to compare it with the record, and stores nothing again: the operation's record names
    the recorded versions planning found on disk and read from the store (``ours_recorded``,
    ``result_recorded``), the very ids a hash of the same bytes gives."""
    from takeback.storage.store import Store

    ws, before, after = _big_turn(tmp_path)
    engine = open_engine(ws)
    if op == "redo":
        assert engine.undo().applied
    hashed: list[bytes] = []
    stored: list[bytes] = []
    real_hash, real_write = Store.hash_blob, Store.write_blob
    monkeypatch.setattr(Store, "hash_blob", staticmethod(lambda content: hashed.append(content) or real_hash(content)))
    monkeypatch.setattr(Store, "write_blob", lambda self, content: stored.append(content) or real_write(self, content))
    result = getattr(engine, op)()
    monkeypatch.undo()
    wanted = before if op == "undo" else after
    assert result.applied and _contents(ws, wanted) == wanted
    assert len(hashed) == len(before) and stored == []
    assert result.entry is not None
    record = engine.timeline.entries[result.entry.id].checkpoints[-1]
    started = after if op == "undo" else before
    assert {change.path for change in record.changes} == set(before)
    for change in record.changes:
        assert change.before is not None and change.after is not None
        assert change.before.oid == real_hash(started[change.path].encode())
        assert change.after.oid == real_hash(wanted[change.path].encode())
        assert engine.store.has(change.before.oid) and engine.store.has(change.after.oid)


@pytest.mark.parametrize("op", ["undo", "redo"])
def test_a_big_operation_takes_its_line_counts_from_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str
) -> None:
    """Counted with a real counter: an undo (and the redo after it) of 60 files, each as the
    turn left it, diffs none of them: each file's counts are its recorded change's, swapped
    (``PathPlan.counted``), and they are what a diff of the two contents gives."""
    from takeback.core import textdiff

    ws, before, after = _big_turn(tmp_path)
    engine = open_engine(ws)
    if op == "redo":
        assert engine.undo().applied
    diffed: list[tuple[bytes | None, bytes | None]] = []
    real = textdiff._line_stats
    monkeypatch.setattr(textdiff, "_line_stats", lambda old, new: diffed.append((old, new)) or real(old, new))
    monkeypatch.setattr(textdiff, "_remembered_line_stats", textdiff._line_stats)
    result = getattr(engine, op)()
    monkeypatch.undo()
    assert result.applied and diffed == []
    started, wanted = (after, before) if op == "undo" else (before, after)
    assert {o.path for o in result.restored} == set(before)
    for item in result.restored:
        assert (item.additions, item.deletions) == real(started[item.path].encode(), wanted[item.path].encode())
    assert result.entry is not None
    record = engine.timeline.entries[result.entry.id].checkpoints[-1]
    assert {(c.path, c.additions, c.deletions) for c in record.changes} == {
        (o.path, o.additions, o.deletions) for o in result.restored
    }


def test_a_file_changed_since_the_turn_is_counted_from_its_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted with a real counter: the one file edited after the turn (merged on undo) is
    diffed; the 59 others take the record's counts."""
    from takeback.core import textdiff

    ws, before, after = _big_turn(tmp_path)
    edited = "pkg/core/src/f3.py"
    (ws / edited).write_text(after[edited] + "# mine\n")
    engine = open_engine(ws)
    diffed: list[tuple[bytes | None, bytes | None]] = []
    real = textdiff._line_stats
    monkeypatch.setattr(textdiff, "_line_stats", lambda old, new: diffed.append((old, new)) or real(old, new))
    monkeypatch.setattr(textdiff, "_remembered_line_stats", textdiff._line_stats)
    result = engine.undo()
    monkeypatch.undo()
    assert result.applied
    assert {old for old, _new in diffed} == {(after[edited] + "# mine\n").encode()}
    item = next(o for o in result.restored if o.path == edited)
    assert item.merged and (item.additions, item.deletions) == (0, 1)


def test_a_big_turn_end_asks_the_secrets_patterns_nothing_it_asked_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted with a real counter: the second turn over the same 60 files (dirty at its begin,
    so read there) asks the secrets patterns about none of them at its end: under the settings
    the turn began with, the engine's own capturer (which remembers its answers) records the
    end, not a fresh one asking every file again (120 questions before)."""
    from takeback.workspace import capture

    ws, _before, after = _big_turn(tmp_path)
    engine = open_engine(ws)
    engine.begin_turn(label="again")
    again = {rel: text + "# again\n" for rel, text in after.items()}
    write_files(ws, again)
    asked: list[str] = []
    real = capture.SecretSpec.match
    monkeypatch.setattr(capture.SecretSpec, "match", lambda self, rel: asked.append(rel) or real(self, rel))
    entry = engine.end_turn()
    monkeypatch.undo()
    assert asked == []
    assert {c.path for c in engine.timeline.entries[entry.id].checkpoints[-1].changes} == set(again)


@pytest.mark.parametrize("how", ["one by one", "all at once"])
def test_an_undo_opens_each_file_it_writes_once_to_read_once_to_write_and_once_to_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Counted with a real counter: the files an undo of 60 files opens. The check that a file
    may be written (not immutable, append-only or on a read-only mount) asks the inode its
    planning read opened (``FolderLook.file_flags``), not the file opened a fourth time; the
    read-back after the writes (``Journal.verify``) opens each once more."""
    ws, before, engine = _to_undo(tmp_path, monkeypatch, how)
    real = os.open
    opened: list[str] = []

    def counted(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if str(path).startswith(f"{ws}/") and not flags & os.O_DIRECTORY:
            opened.append(str(path))
        return real(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counted)
    result = engine.undo()
    monkeypatch.setattr(os, "open", real)
    assert result.applied and _contents(ws, before) == before
    files = [p for p in opened if os.path.relpath(p, ws) in before]
    assert len(files) <= 3 * len(before), f"{len(files) / len(before):.1f} opens per file"


def test_an_undo_reads_its_files_without_making_a_file_object_for_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted with a real counter: the file objects an undo of 60 files makes over a descriptor
    (``open(fd)``: each asks the descriptor whether it is a terminal and seeks it twice). The
    files it reads are read with ``os.read`` alone; what it reads is what is there (empty and
    larger-than-a-read files included)."""
    import builtins

    ws, before, _after = _big_turn(tmp_path)
    engine = open_engine(ws)
    made: list[int] = []
    real = builtins.open

    def counted(file: object, *args: object, **kwargs: object) -> object:
        if isinstance(file, int) and os.readlink(f"/proc/self/fd/{file}").startswith(f"{ws}/"):
            made.append(file)  # a workspace file's (the store's own files are not counted)
        return real(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(builtins, "open", counted)
    result = engine.undo()
    monkeypatch.setattr(builtins, "open", real)
    assert result.applied and _contents(ws, before) == before
    assert made == []
    big = "x" * 200_000 + "\n"
    (ws / "empty.txt").write_bytes(b"")
    (ws / "big.txt").write_text(big)
    assert engine.workspace.read("empty.txt").content == b""
    assert engine.workspace.read("big.txt").content == big.encode()
