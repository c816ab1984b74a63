"""The bracket's cheap "was the index rewritten?" check (scan._same_file_content)."""

from __future__ import annotations

import os
from pathlib import Path

from turnback.scan import _same_file_content


def _index(path: Path, body: bytes, trailer: bytes) -> Path:
    path.write_bytes(body + trailer)
    return path


def test_equal_files_are_equal_by_their_trailer(tmp_path: Path) -> None:
    body = b"DIRC" + os.urandom(4000)
    a = _index(tmp_path / "a", body, b"\x11" * 20)
    b = _index(tmp_path / "b", body, b"\x11" * 20)
    assert _same_file_content(a, b)


def test_a_different_size_or_trailer_is_a_rewrite(tmp_path: Path) -> None:
    body = b"DIRC" + os.urandom(4000)
    a = _index(tmp_path / "a", body, b"\x11" * 20)
    assert not _same_file_content(a, _index(tmp_path / "b", body + b"x", b"\x11" * 20))
    assert not _same_file_content(a, _index(tmp_path / "c", body, b"\x22" * 20))


def test_a_zero_trailer_is_compared_in_full(tmp_path: Path) -> None:
    """index.skipHash writes no checksum: equal trailers then prove nothing."""
    body = bytearray(b"DIRC" + os.urandom(3 << 20))
    a = _index(tmp_path / "a", bytes(body), b"\x00" * 20)
    assert _same_file_content(a, _index(tmp_path / "b", bytes(body), b"\x00" * 20))
    body[10] ^= 0xFF
    assert not _same_file_content(a, _index(tmp_path / "c", bytes(body), b"\x00" * 20))


def test_missing_files(tmp_path: Path) -> None:
    a = _index(tmp_path / "a", b"DIRC" + b"\x01" * 100, b"\x11" * 20)
    missing = tmp_path / "missing"
    assert _same_file_content(None, missing)  # no index at begin, none now
    assert not _same_file_content(None, a)  # an index appeared
    assert not _same_file_content(a, missing)  # the index went away
    assert not _same_file_content(missing, a)  # the copy made at begin went away
