"""The journal through a failing disk and an odd store: an undo whose disk dies half-way, whose
folders cannot be flushed, whose journal cannot be written or set aside, and recovery meeting a
secret backed up beside the journal, a withheld content it cannot bring, a torn journal with
its backups, a recovery report it cannot keep.

What the person sees is checked each time: the one error the call raises (its words), the files
on disk (all before or all after, nothing of theirs lost), the journal and the report
``status`` shows. A dying disk is ``os.fsync`` failing with EIO from some moment on: no real
disk can be made to fail only there (strace's injection runs unmeasured, and counts calls,
not paths), so it is monkeypatched at that system edge; the rest are real (``chattr +i``, a
full tmpfs, files and folders where others are expected).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import make_repo, new_file_system, write_files
from takeback.engine.engine import Engine
from takeback.core.models import BatchChange
from takeback.errors import CannotWrite, OutsideWorkspace, StoreError
from takeback.workspace.journal import JournalFile

from .support import open_engine

TURNED = {"a.txt": "a turned\n", "b.txt": "b turned\n", "c.txt": "c turned\n"}
FIRST = {"a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c0\n"}
root_with_chattr = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("chattr") is None, reason="needs root and chattr to make a store file immutable"
)


def _turned(tmp_path: Path) -> tuple[Path, Engine]:
    """A repository whose three files one turn changed; the engine over it."""
    ws = make_repo(tmp_path / "ws", dict(FIRST))
    engine = open_engine(ws)
    engine.begin_turn(label="agent")
    write_files(ws, TURNED)
    engine.end_turn()
    return ws, engine


def _files(ws: Path) -> dict[str, str]:
    return {name: (ws / name).read_text() for name in FIRST}


def _where(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


@contextlib.contextmanager
def dying_disk(monkeypatch: pytest.MonkeyPatch, fails: object) -> Iterator[None]:
    """``os.fsync`` fails with EIO whenever ``fails(fd)`` says so (the disk dying), then heals."""
    real = os.fsync

    def fsync(fd: int) -> None:
        if fails(fd):  # type: ignore[operator]
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(fd)

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", fsync)
        yield


def test_a_disk_dying_mid_undo_keeps_the_journal_and_the_next_open_puts_all_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fails every file flush from the undo's second file on: that file is not
    written, the first cannot be put back either, so the error names it and keeps the journal;
    once the disk works again, opening the store rolls the first back too (all before)."""
    ws, engine = _turned(tmp_path)
    flushed: list[str] = []

    def from_the_second(fd: int) -> bool:
        if not stat.S_ISREG(os.fstat(fd).st_mode) or not _where(fd).startswith(str(ws)):
            return False
        flushed.append(_where(fd))
        return len(flushed) > 1

    with dying_disk(monkeypatch, from_the_second), pytest.raises(CannotWrite) as failed:
        engine.undo()
    message = failed.value.message
    assert message.startswith("cannot write ")
    assert ": input/output error; 1 path already written could not be put back yet: " in message
    assert message.endswith("(input/output error); the journal keeps them, and the next takeback command puts them back")
    changed = [name for name, text in _files(ws).items() if text != TURNED[name]]
    assert len(changed) == 1 and f"already written could not be put back yet: {changed[0]} (" in message
    assert _files(ws)[changed[0]] == FIRST[changed[0]]  # the undo's side, not rolled back yet
    assert (engine.store.path / "journal.json").is_file()
    assert not list(ws.rglob(".takeback-tmp-*"))

    reopened = Engine(ws)  # the disk works again
    report = reopened.status().last_recovery
    assert report is not None and report.action == "rolled-back" and report.left == [] and report.problems == []
    assert sorted(report.paths) == sorted(FIRST)
    assert _files(ws) == TURNED and not (engine.store.path / "journal.json").exists()
    assert [e.kind for e in reopened.entries()] == ["turn"]  # the undo never happened
    assert reopened.undo().applied and _files(ws) == FIRST


def test_folders_that_cannot_be_flushed_fail_the_undo_and_put_every_file_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the first flush of a workspace folder on, no folder can be flushed (the store's
    neither): the undo fails with one error saying so, every file is put back, and the journal
    is gone (its removal is only not flushed): the next open has nothing to recover."""
    ws, engine = _turned(tmp_path)
    dying: list[bool] = []

    def folders_after_the_first(fd: int) -> bool:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            return False
        if _where(fd) == str(ws):
            dying.append(True)
        return bool(dying)

    with dying_disk(monkeypatch, folders_after_the_first), pytest.raises(CannotWrite) as failed:
        engine.undo()
    assert failed.value.message == (
        "cannot flush the folders of a.txt and the rest to disk: input/output error; "
        "nothing was written (files already written were put back)"
    )
    assert _files(ws) == TURNED and not list(ws.rglob(".takeback-tmp-*"))
    assert not (engine.store.path / "journal.json").exists()
    reopened = Engine(ws)
    assert reopened.last_recovery is None and [e.kind for e in reopened.entries()] == ["turn"]


@root_with_chattr
def test_an_immutable_torn_journal_is_left_in_place_and_stops_every_operation(tmp_path: Path) -> None:
    """A torn journal that cannot be moved (``chattr +i``): recovery says it was left in
    place, and an undo cannot write its own journal, so it writes nothing and says why."""
    ws, engine = _turned(tmp_path)
    journal = engine.store.path / "journal.json"
    journal.write_bytes(b'{"entry": "x", "opera')
    subprocess.run(["chattr", "+i", str(journal)], check=True)
    try:
        reopened = Engine(ws)
        report = reopened.status().last_recovery
        assert report is not None and report.action == "set-aside" and report.journal_kept is None
        assert len(report.problems) == 1 and "; it was left in place and nothing was rolled" in report.problems[0]
        with pytest.raises(StoreError) as failed:
            reopened.undo()
        assert failed.value.message == f"cannot write the journal {journal}: operation not permitted; nothing was written"
        assert _files(ws) == TURNED and journal.read_bytes() == b'{"entry": "x", "opera'
        assert not (engine.store.path / "journal-backup").exists()
    finally:
        subprocess.run(["chattr", "-i", str(journal)], check=True)
    again = Engine(ws)  # movable now: set aside, and the undo goes through
    assert again.last_recovery is not None and again.last_recovery.journal_kept is not None
    assert again.undo().applied and _files(ws) == FIRST


def test_a_torn_journal_is_set_aside_with_its_backups(tmp_path: Path) -> None:
    """A torn journal (an older version's power cut) beside the secret contents it backed up:
    both are moved aside together, the backup's bytes kept, and status names where."""
    ws, engine = _turned(tmp_path)
    journal, backups = engine.store.path / "journal.json", engine.store.path / "journal-backup"
    journal.write_bytes(b"")
    backups.mkdir(mode=0o700)
    (backups / "0.bin").write_bytes(b"TOKEN=the person's secret\n")
    report = Engine(ws).status().last_recovery
    assert report is not None and report.action == "set-aside" and report.journal_kept is not None
    kept = engine.store.path / report.journal_kept
    assert kept.is_file() and kept.read_bytes() == b""
    assert (kept.with_name(kept.name + "-backup") / "0.bin").read_bytes() == b"TOKEN=the person's secret\n"
    assert not journal.exists() and not backups.exists() and _files(ws) == TURNED


def test_recovery_brings_a_secret_back_from_the_journals_backup(tmp_path: Path) -> None:
    """An operation that rewrote a secret (``.env``, whose content the store never holds)
    died before reaching the log: recovery puts the secret back from the journal's private
    backup, and the backup goes with the journal."""
    ws = make_repo(tmp_path / "ws", {"a.txt": "a0\n"})
    (ws / ".env").write_text("TOKEN=old\n")
    engine = open_engine(ws)
    version = engine.capture.version
    item = JournalFile(path=".env", before=version(".env", b"TOKEN=old\n", 0o100644),
                       after=version(".env", b"TOKEN=new\n", 0o100644), backup="0.bin")
    assert item.before is not None and item.before.withheld == "secret"
    engine.journal.start("never-published", "undo", [item], {"0.bin": b"TOKEN=old\n"})
    backups = engine.store.path / "journal-backup"
    assert stat.S_IMODE(backups.stat().st_mode) == 0o700 and stat.S_IMODE((backups / "0.bin").stat().st_mode) == 0o600
    (ws / ".env").write_text("TOKEN=new\n")  # written, then the process died
    report = Engine(ws).status().last_recovery
    assert report is not None and report.action == "rolled-back" and report.left == [] and report.paths == [".env"]
    assert (ws / ".env").read_text() == "TOKEN=old\n"
    assert not backups.exists() and not (engine.store.path / "journal.json").exists()


def test_recovery_cannot_roll_forward_a_content_it_never_had(tmp_path: Path) -> None:
    """An operation that reached the log died before writing a secret whose new content only
    it held: recovery rolls the other path forward and leaves the secret as it is, saying why."""
    ws = make_repo(tmp_path / "ws", {"a.txt": "a0\n"})
    (ws / ".env").write_text("TOKEN=old\n")
    engine = open_engine(ws)
    engine.begin_turn(label="agent")
    write_files(ws, {"b.txt": "b\n"})
    engine.end_turn()
    committed = next(iter(engine.timeline.checkpoint_owner))  # a batch's journal rolls forward once recorded
    version = engine.capture.version
    items = [
        JournalFile(path=".env", before=version(".env", b"TOKEN=old\n", 0o100644),
                    after=version(".env", b"TOKEN=new\n", 0o100644)),
        JournalFile(path="a.txt", before=version("a.txt", b"a0\n", 0o100644), after=version("a.txt", b"a1\n", 0o100644)),
    ]
    engine.journal.start(committed, "apply", items, {})
    report = Engine(ws).status().last_recovery
    assert report is not None and report.action == "rolled-forward" and report.left == [".env"]
    assert report.problems == [".env left as it was: it could not be read (its content was withheld by policy and has no backup)"]
    assert (ws / ".env").read_text() == "TOKEN=old\n" and (ws / "a.txt").read_text() == "a1\n"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with new_file_system(tmp_path / "disk", "tmpfs", "size=256k") as mount:
        yield mount


def test_a_recovery_on_a_full_disk_still_reports_what_it_did(tmp_path: Path, small_disk: Path) -> None:
    """The store's disk is full when a torn journal is found: it is still set aside (a rename
    needs no room) and reported to the process that found it, only not kept for later."""
    ws = make_repo(tmp_path / "ws", dict(FIRST))
    store = small_disk / "store"
    engine = open_engine(ws, store_dir=str(store))
    (store / "journal.json").write_bytes(b"{")
    filler = small_disk / "filler"
    with contextlib.suppress(OSError), filler.open("wb") as out:
        while True:
            out.write(b"\0" * 4096)
            out.flush()
    reopened = open_engine(ws, store_dir=str(store))
    report = reopened.status().last_recovery
    assert report is not None and report.action == "set-aside" and report.journal_kept is not None
    assert (store / report.journal_kept).read_bytes() == b"{" and not (store / "journal.json").exists()
    assert not (store / "last-recovery.json").exists()
    filler.unlink()
    assert open_engine(ws, store_dir=str(store)).status().last_recovery is None  # nothing kept, nothing new
    assert engine.status().open_turn is None and json.loads(json.dumps(_files(ws))) == FIRST


def test_a_backup_folder_a_killed_process_left_is_used_and_cleared(tmp_path: Path) -> None:
    """A process killed after writing the journal's backups, before the journal: its backup
    folder stays. The next undo that must back a content up (a file grown past the size cap,
    which the store does not hold) writes into it, and clears it with its own journal."""
    ws = make_repo(tmp_path / "ws", dict(FIRST))
    engine = open_engine(ws, max_file_bytes=100)
    engine.begin_turn(label="agent")
    write_files(ws, {"a.txt": "x" * 200 + "\n", "b.txt": "b turned\n"})
    engine.end_turn()
    backups = engine.store.path / "journal-backup"
    backups.mkdir(mode=0o700)
    (backups / "7.bin").write_bytes(b"left by a killed process\n")
    result = engine.undo()
    assert result.applied and result.skipped == [] and _files(ws) == FIRST
    assert not backups.exists() and not (engine.store.path / "journal.json").exists()


def test_an_edit_batch_over_a_file_never_known_is_taken_back_whole(tmp_path: Path) -> None:
    """An edit batch whose first file's before-image the editor did not know (and no file is
    there), whose second path cannot be written (a file where its folder must be): the batch
    fails, and the first file, which it wrote, is removed again: all or nothing."""
    ws = make_repo(tmp_path / "ws", {"a.txt": "a\n"})
    engine = open_engine(ws)
    changes = [BatchChange(path="new.txt", before="unknown", after=b"x\n"),
               BatchChange(path="a.txt/inner.txt", before=None, after=b"y\n")]
    with pytest.raises(OutsideWorkspace, match="a.txt is a file"):
        engine.apply_through(changes)
    assert sorted(p.name for p in ws.iterdir()) == [".git", "a.txt"] and (ws / "a.txt").read_text() == "a\n"
    assert not (engine.store.path / "journal.json").exists()
    entry = engine.entries()[0]
    assert entry.number == 1 and Engine(ws).last_recovery is None
