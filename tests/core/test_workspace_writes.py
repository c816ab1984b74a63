"""The person's files as ``workspace/files.py`` writes them, at the edges a restore can meet: a
folder, a broken link or a file where the path needs something else (refused, nothing written),
an fsynced write, a file owned by someone else (its owner kept), and the temporaries a killed
writer leaves (removed; nothing outside the workspace or that is not one is touched)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from takeback.core.models import MODE_FILE
from takeback.errors import OutsideWorkspace
from takeback.workspace.files import TEMP_PREFIX, Workspace


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize(
    ("rel", "says"),
    [
        ("folder", "cannot write folder: a folder is in the way"),
        ("dangling/a.txt", "a broken link is in the way"),
        ("plain.txt/a.txt", "plain.txt is a file"),
    ],
)
def test_a_path_that_needs_something_else_is_refused_and_nothing_is_written(tmp_path: Path, rel: str, says: str) -> None:
    root = tmp_path / "ws"
    (root / "folder").mkdir(parents=True)
    (root / "plain.txt").write_text("plain\n")
    os.symlink(root / "nowhere", root / "dangling")
    before = _listing(root)
    with pytest.raises(OutsideWorkspace, match=says):
        Workspace(root).write(rel, b"new\n", MODE_FILE)
    assert _listing(root) == before and (root / "plain.txt").read_text() == "plain\n"


def test_a_write_keeps_the_owner_and_bits_of_the_file_it_replaces(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "theirs.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    if os.geteuid() == 0:
        os.chown(target, 65534, 65534)
    Workspace(root).write("theirs.txt", b"new\n", MODE_FILE)
    st = target.stat()
    assert target.read_bytes() == b"new\n" and st.st_mode & 0o777 == 0o640
    if os.geteuid() == 0:
        assert (st.st_uid, st.st_gid) == (65534, 65534)
    assert not list(root.glob(f"{TEMP_PREFIX}*"))


def test_temporaries_left_by_a_killed_writer_are_removed_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / f"{TEMP_PREFIX}123-abcd").write_bytes(b"half")
    (root / "src" / f"{TEMP_PREFIX}folder").mkdir()  # not a file: stays
    (root / "src" / "kept.txt").write_text("kept\n")
    (tmp_path / f"{TEMP_PREFIX}outside").write_bytes(b"not ours")
    ws = Workspace(root)
    ws.remove_temporaries("src")
    ws.remove_temporaries("no/such/folder")
    ws.remove_temporaries("..")  # outside the workspace: never touched
    assert _listing(root) == ["src", f"src/{TEMP_PREFIX}folder", "src/kept.txt"]
    assert (tmp_path / f"{TEMP_PREFIX}outside").read_bytes() == b"not ours"
