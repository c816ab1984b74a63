"""No room left at a given write of the store, on a real small tmpfs, with the CLI measured.

``test_store_full_disk.py`` fails every write in turn under ``strace``, which leaves the CLI
unmeasured; here the disk itself is full (a filler file leaves exactly N free pages of a tmpfs),
so the failure lands at a chosen write: the pack, its index, a new log ref, gc's pack, a
``workspace.json`` written anew. Each is one clear line (exit 7) naming the store, leaves no
temporary file nor a pack without its index, repairs nothing at the next open, and the call
succeeds once there is room.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import make_repo, write_files

from .conftest import Takeback, expect_error, isolated_env
from .test_store_full_disk import small_disk  # noqa: F401  (the fixture: a 512 KiB tmpfs)

_PAGE = 4096


def _leave(disk: Path, pages: int) -> Path:
    """Fill ``disk`` but for ``pages`` free pages; answers the filler file."""
    filler = disk / "filler"
    filler.unlink(missing_ok=True)
    filler.write_bytes(b"\0" * (shutil.disk_usage(disk).free - pages * _PAGE))
    assert shutil.disk_usage(disk).free == pages * _PAGE
    return filler


def _runner(tmp_path: Path, store: Path) -> Takeback:
    env = {**isolated_env(tmp_path / "env"), "TAKEBACK_RESIDENT": "0", "TAKEBACK_STORE_DIR": str(store)}
    return Takeback(make_repo(tmp_path / "ws"), env)


def _two_turns(tb: Takeback) -> None:
    for i in range(2):
        tb.ok("begin", "--label", f"turn {i + 1}")
        write_files(tb.cwd, {"src/app.py": f"def main():\n    return {i}\n"})
        tb.ok("end")


def _leftovers(store: Path) -> list[str]:
    """Temporary files, and packs without their index, under the store."""
    found = [str(p) for p in store.rglob("*") if p.name.startswith("tmp_") or p.name.endswith((".tmp", ".lock"))]
    pack_dir = store / "objects.git" / "objects" / "pack"
    return found + [str(p) for p in pack_dir.glob("*.pack") if not p.with_suffix(".idx").exists()]


@pytest.mark.parametrize(
    ("pages", "says"),
    [
        (0, r"cannot write to the store {store}: \[Errno 28\] No space left on device"),  # the pack
        (1, r"cannot write to the store {store}: \[Errno 28\] No space left on device"),  # its index
        (2, r"cannot move refs/takeback/oplog in {store}: \[Errno 28\] No space left on device"),  # a new ref
    ],
    ids=["pack", "index", "ref"],
)
def test_no_room_at_the_first_end_is_one_line_and_the_turn_stays_open(pages: int, says: str, tmp_path: Path, small_disk: Path) -> None:  # noqa: F811
    store = small_disk / "store"
    tb = _runner(tmp_path, store)
    tb.ok("begin", "--label", "first")
    write_files(tb.cwd, {"README.md": "# changed\n"})
    filler = _leave(small_disk, pages)
    expect_error(tb("end"), 7, match=says.format(store=store))
    assert _leftovers(store) == []
    assert not (store / "objects.git" / "refs" / "takeback" / "oplog").exists()  # nothing published
    filler.unlink()
    status = tb.json("status")
    assert status["open_turn"]["label"] == "first" and status["repairs"] == []
    tb.ok("end")
    assert [item["number"] for item in tb.json("log")] == [1]


def test_no_room_for_gcs_pack_keeps_the_old_ones(tmp_path: Path, small_disk: Path) -> None:  # noqa: F811
    store = small_disk / "store"
    tb = _runner(tmp_path, store)
    _two_turns(tb)
    packs_before = sorted(p.name for p in (store / "objects.git" / "objects" / "pack").iterdir())
    filler = _leave(small_disk, 0)
    expect_error(tb("gc"), 7, match=rf"cannot write to the store {store}: \[Errno 28\]")
    assert sorted(p.name for p in (store / "objects.git" / "objects" / "pack").iterdir()) == packs_before
    assert _leftovers(store) == []
    filler.unlink()
    assert [item["number"] for item in tb.json("log")] == [2, 1]
    assert "+    return 1" in tb.ok("diff", "2").text


def test_no_room_to_write_the_stores_identity_again(tmp_path: Path, small_disk: Path) -> None:  # noqa: F811
    store = small_disk / "store"
    tb = _runner(tmp_path, store)
    tb.ok("gc")  # makes the store (reading commands never do)
    (store / "workspace.json").unlink()  # written anew at the next open
    filler = _leave(small_disk, 0)
    expect_error(tb("status"), 7, match=rf"cannot open the store at {store}: \[Errno 28\] No space left on device")
    assert _leftovers(store) == [] and not (store / "workspace.json").exists()
    filler.unlink()
    assert tb.json("status")["store"] == str(store)
    assert (store / "workspace.json").is_file()


def test_no_room_for_the_index_of_a_pack_gc_writes_again_keeps_that_pack(tmp_path: Path, small_disk: Path) -> None:  # noqa: F811
    """A gc of a store that is already one gc'd pack writes the same pack again, under the same
    name: when its new index cannot be written, the pack (whose old index is still there) stays."""
    store = small_disk / "store"
    tb = _runner(tmp_path, store)
    _two_turns(tb)
    tb.ok("gc")
    tb.ok("gc")  # now the pack's objects are in index order: the next gc writes the very same bytes
    pack_dir = store / "objects.git" / "objects" / "pack"
    (pack,) = pack_dir.glob("*.pack")
    filler = _leave(small_disk, -(-pack.stat().st_size // _PAGE))  # room for the pack, none for its index
    expect_error(tb("gc"), 7, match=rf"cannot write to the store {store}: \[Errno 28\]")
    assert sorted(p.name for p in pack_dir.iterdir()) == [pack.with_suffix(".idx").name, pack.name], tb.calls[-1]
    filler.unlink()
    assert [item["number"] for item in tb.json("log")] == [2, 1] and tb.json("status")["repairs"] == []
    assert "+    return 1" in tb.ok("diff", "2").text
