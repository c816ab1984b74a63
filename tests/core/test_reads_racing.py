"""A file read while another program changes its length is read whole as it stands when the
read ends, never cut short or padded: the one read that asks for a byte more than ``fstat``
said is enough when the file is exactly that long (a big operation's reads, a verify's read
back), and the read goes on to the end when it grew or shrank in between. Real files in a temp
folder; the change in length is made between the ``fstat`` and the read, as another program's
write would fall there."""

from __future__ import annotations

import os
from pathlib import Path

from takeback.workspace import files


def _read_with_stale_stat(path: Path, change) -> bytes:  # type: ignore[no-untyped-def]
    fd = os.open(path, os.O_RDONLY)
    st = os.fstat(fd)
    change()
    return files._read_open(fd, str(path), None, st)


def test_a_file_that_grew_after_its_fstat_is_read_to_its_end(tmp_path: Path) -> None:
    path = tmp_path / "grows.txt"
    path.write_bytes(b"a" * 5000)
    grown = b"a" * 5000 + b"b" * 200_000

    assert _read_with_stale_stat(path, lambda: path.write_bytes(grown)) == grown


def test_a_file_that_shrank_after_its_fstat_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "shrinks.txt"
    path.write_bytes(b"x" * 8000)

    def shrink() -> None:
        with open(path, "r+b") as handle:
            handle.truncate(300)

    assert _read_with_stale_stat(path, shrink) == b"x" * 300


def test_a_file_as_long_as_its_fstat_said_is_read_whole(tmp_path: Path) -> None:
    for size in (0, 1, 4096, 65_537):
        path = tmp_path / f"f{size}"
        path.write_bytes(bytes(range(256)) * (size // 256) + b"z" * (size % 256))
        assert _read_with_stale_stat(path, lambda: None) == path.read_bytes()
        assert files.read_back(str(path)) is not None and files.read_back(str(path)).content == path.read_bytes()
