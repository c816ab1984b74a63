"""A store damaged in other ways than a power cut leaves it, opened with the real CLI.

A folder where the ref or a repair report must be, a file where the ref's folder must be, a ref
written without its newline, a torn ``config`` or ``HEAD``, a pack folder gone, a pack or index
cut other ways than the traced cuts of ``test_power_cut.py`` make, ``published.log`` that cannot
be written, loose objects and delta-compressed packs left by a person's own ``git gc`` in the
store, and a file over the in-memory cache's size: what the person sees (exit code, one line,
``status --json``'s repair reports, the entries still listed and readable) and the store after.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from helpers import git, write_files
from takeback.storage import packs

from .conftest import Takeback, expect_error


def _turns(tb: Takeback, count: int, name: str = "src/app.py") -> Path:
    """Record ``count`` turns, each rewriting ``name``; answers the store's folder."""
    for i in range(count):
        tb.ok("begin", "--label", f"turn {i + 1}")
        write_files(tb.cwd, {name: f"def main():\n    return {i + 10}\n"})
        tb.ok("end")
    return _store(tb)


def _store(tb: Takeback) -> Path:
    (store,) = Path(tb.env["TAKEBACK_HOME"], "stores").iterdir()
    return store


def _numbers(tb: Takeback) -> list[int]:
    return sorted(item["number"] for item in tb.json("log"))


def _repairs(tb: Takeback) -> list[dict]:
    return tb.json("status")["repairs"]


def test_a_folder_where_the_ref_must_be_is_set_aside_and_the_log_comes_back(tb: Takeback) -> None:
    store = _turns(tb, 1)
    ref = store / "objects.git" / "refs" / "takeback" / "oplog"
    ref.unlink()
    ref.mkdir()
    assert _numbers(tb) == [1]  # the log goes back to its newest whole commit: nothing lost
    (repair,) = _repairs(tb)
    assert repair["files"] == [{"path": "objects.git/refs/takeback/oplog", "problem": "the log ref cannot be read: Is a directory"}]
    assert repair["log_was"] is None and repair["log_now"] and ref.is_file()
    assert (Path(repair["folder"]) / "objects.git/refs/takeback/oplog").is_dir()  # moved, not deleted


def test_a_file_where_the_refs_folder_must_be_is_set_aside_and_the_log_comes_back(tb: Takeback) -> None:
    store = _turns(tb, 1)
    folder = store / "objects.git" / "refs" / "takeback"
    shutil.rmtree(folder)
    folder.write_text("not a folder\n")
    assert _numbers(tb) == [1]  # was: an empty timeline, and every later end failing (exit 7)
    (repair,) = _repairs(tb)
    assert repair["files"] == [{"path": "objects.git/refs/takeback", "problem": "a file is where the log ref's folder takeback/ must be"}]
    assert (Path(repair["folder"]) / "objects.git/refs/takeback").read_text() == "not a folder\n"
    _turns(tb, 1)
    assert _numbers(tb) == [1, 2]


def test_a_ref_without_its_newline_is_read_and_rewritten_whole(tb: Takeback) -> None:
    store = _turns(tb, 1)
    ref = store / "objects.git" / "refs" / "takeback" / "oplog"
    ref.write_bytes(ref.read_bytes().rstrip(b"\n"))  # 40 bytes, as another writer may leave it
    assert _numbers(tb) == [1] and _repairs(tb) == []
    _turns(tb, 1)
    assert _numbers(tb) == [1, 2] and len(ref.read_bytes()) == 41 and ref.read_bytes().endswith(b"\n")


def test_a_torn_config_is_written_anew(tb: Takeback) -> None:
    store = _turns(tb, 1)
    git_dir = store / "objects.git"
    (git_dir / "config").write_bytes(b"[cor")  # HEAD sound: only config is replaced
    assert _numbers(tb) == [1]
    (repair,) = _repairs(tb)
    assert [f["path"] for f in repair["files"]] == ["objects.git/config"]
    assert b"bare = true" in (git_dir / "config").read_bytes()


def test_a_pack_folder_gone_from_a_new_store_is_made_again(tb: Takeback) -> None:
    store = tb.store()  # a new store, nothing recorded yet
    shutil.rmtree(store / "objects.git" / "objects" / "pack")
    tb.ok("begin", "--label", "first")
    write_files(tb.cwd, {"README.md": "# changed twice\n"})
    tb.ok("end")
    assert _numbers(tb) == [1] and _repairs(tb) == []
    assert "+# changed twice" in tb.ok("diff", "1").text


def _pack_of(pack_dir: Path, commit: str) -> Path:
    """The index of the pack holding log commit ``commit``."""
    (found,) = [idx for idx in pack_dir.glob("*.idx") if commit in packs.commit_ids(pack_dir, idx.stem)]
    return found


def test_packs_cut_or_mismatched_in_other_ways_are_set_aside(tb: Takeback) -> None:
    store = _turns(tb, 4)
    git_dir = store / "objects.git"
    pack_dir = git_dir / "objects" / "pack"
    chain = subprocess.run(["git", "--git-dir", str(git_dir), "rev-list", "refs/takeback/oplog"], capture_output=True,
                           text=True, check=True).stdout.split()  # newest first
    newest, second, third, first = (_pack_of(pack_dir, commit) for commit in chain)
    for path in pack_dir.iterdir():
        path.chmod(0o644)
    newest.write_bytes(b"")  # an index emptied
    second.with_suffix(".pack").write_bytes(b"PACK\0\0\0\2")  # a pack cut to its first bytes
    third.with_suffix(".pack").write_bytes(first.with_suffix(".pack").read_bytes())  # another write's pack
    assert _numbers(tb) == [1]  # the log goes back past the three packs
    (repair,) = _repairs(tb)
    problems = {f["path"].rsplit("/", 1)[1]: f["problem"] for f in repair["files"]}
    assert problems[newest.name] == f"{newest.name} is empty"
    assert problems[second.with_suffix(".pack").name] == f"{second.with_suffix('.pack').name} is cut short or not a pack (8 bytes)"
    assert "cut short" in problems[third.with_suffix(".pack").name]
    assert len(repair["lost"]) == 3 and all("turn #" in line for line in repair["lost"]), repair["lost"]


def test_unreadable_repair_reports_are_passed_over(tb: Takeback) -> None:
    store = _turns(tb, 1)
    for stamp, text in (("20260101T000000.000000Z", "{not json"), ("20260102T000000.000000Z", "[1, 2]")):
        (store / "quarantine" / stamp).mkdir(parents=True)
        (store / "quarantine" / stamp / "report.json").write_text(text)
    (store / "brackets" / "kept.tmp").mkdir(parents=True)  # a folder, not a writer's temporary file
    assert _repairs(tb) == []
    assert tb.ok("status").err == ""
    assert (store / "brackets" / "kept.tmp").is_dir()


def test_a_published_log_that_cannot_be_written_does_not_stop_recording(tb: Takeback) -> None:
    store = _turns(tb, 1)
    (store / "published.log").unlink()
    (store / "published.log").mkdir()  # a folder in its way: the line is best effort
    _turns(tb, 1)
    assert _numbers(tb) == [1, 2] and (store / "published.log").is_dir()


def test_a_packed_refs_git_cannot_read_is_one_clear_line(tb: Takeback) -> None:
    store = _turns(tb, 1)
    git_dir = store / "objects.git"
    subprocess.run(["git", "--git-dir", str(git_dir), "pack-refs", "--all"], check=True)  # the ref now packed
    assert not (git_dir / "refs" / "takeback" / "oplog").exists() and _numbers(tb) == [1]
    (git_dir / "packed-refs").write_text("garbage\n")
    expect_error(tb("log"), 7, match=r"cannot read refs/takeback/oplog in .*: .*corrupted packed references")


def test_the_stores_own_git_gc_is_read_undone_and_collected(tb: Takeback) -> None:
    for count in (2000, 2100):  # two versions of a long file: git stores one as a delta of the other
        tb.ok("begin", "--label", f"{count} lines")
        write_files(tb.cwd, {"src/big.py": "".join(f"line {i}\n" for i in range(count))})
        tb.ok("end")
    store = _store(tb)
    git_dir = store / "objects.git"
    subprocess.run(["git", "--git-dir", str(git_dir), "gc", "--aggressive", "--quiet"], check=True)  # deltas, packed-refs
    verify = git(tb.cwd, "verify-pack", "-v", *map(str, (git_dir / "objects" / "pack").glob("*.idx")))
    assert any(len(line.split()) == 7 for line in verify.splitlines()), "git gc made no delta: the test proves nothing"
    diff = tb.ok("diff", "2").text
    assert [p.suffix for p in (git_dir / "objects" / "pack").iterdir() if p.suffix not in (".idx", ".pack")]  # its bitmap
    tb.ok("undo")  # flushes every pack in the folder, passing over git's other files
    assert (tb.cwd / "src" / "big.py").read_text().count("\n") == 2000
    orphan = subprocess.run(["git", "--git-dir", str(git_dir), "hash-object", "-w", "--stdin"], input=b"nobody's\n",
                            capture_output=True, check=True).stdout.decode().strip()
    loose = git_dir / "objects" / orphan[:2] / orphan[2:]
    assert loose.is_file()
    report = tb.ok("gc").text
    assert "dropped 0 entries" in report and not loose.exists()
    assert _numbers(tb) == [1, 2, 3] and tb.ok("diff", "2").text == diff
    assert len(list((git_dir / "objects" / "pack").glob("*.idx"))) == 1


def test_gc_of_a_store_that_recorded_nothing(tb: Takeback) -> None:
    tb.ok("status")
    assert "dropped 0 entries" in tb.ok("gc").text
    assert _numbers(tb) == []


def test_a_file_larger_than_the_read_cache_is_restored_byte_for_byte(tb: Takeback) -> None:
    content = os.urandom(3 << 20)  # over the 1 MiB a process keeps of recent blobs in memory
    write_files(tb.cwd, {"data.bin": content})
    tb.ok("begin", "--label", "big")
    write_files(tb.cwd, {"data.bin": b"small now\n"})
    tb.ok("end")
    tb.ok("undo")
    assert (tb.cwd / "data.bin").read_bytes() == content
    assert _numbers(tb) == [1, 2]
