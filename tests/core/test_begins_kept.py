"""The open turns' begins a long-lived engine keeps (``brackets.BeginsKept``): read again only
when a file changed, and always what a fresh read answers — the same begins, or the same refusal
of a file cut short — whatever happens to the files in between (a property test over turns
begun, replaced, removed, cut short in place, and a whole-disk turn's shared index copy
removed); an unchanged file is not read at all."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from takeback.core.models import EntryBegun
from takeback.engine import brackets
from takeback.errors import StoreError

ENTRIES = [f"01JTESTENTRY000000000000{i:02d}" for i in range(3)]
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("begin"), st.integers(0, 2), st.integers(1, 50)),
        st.tuples(st.just("remove"), st.integers(0, 2), st.just(0)),
        st.tuples(st.just("cut"), st.integers(0, 2), st.integers(0, 40)),
        st.tuples(st.just("bracket"), st.just(0), st.integers(1, 50)),
        st.tuples(st.just("lose copy"), st.just(0), st.just(0)),
    ),
    max_size=12,
)


def _begun(entry: str, number: int) -> EntryBegun:
    return EntryBegun(id=entry, at=datetime(2026, 11, 28, tzinfo=UTC), entry=entry, number=number, label=f"turn {number}")


def _answer(folder: Path, kept: brackets.BeginsKept | None) -> list[tuple[str, EntryBegun]] | str:
    try:
        return brackets.read_begins(folder, kept)
    except StoreError:
        return "refused"


def _apply(folder: Path, index: Path, op: tuple[str, int, int]) -> None:
    what, which, n = op
    name = brackets.session_name(ENTRIES[which])
    if what == "begin":
        brackets.write(folder, _begun(ENTRIES[which], n), None, None, fsync=False, name=name)
    elif what == "remove":
        (folder / name).unlink(missing_ok=True)
    elif what == "cut" and (folder / name).exists() and (folder / name).stat().st_size > 0:
        os.truncate(folder / name, min(n, (folder / name).stat().st_size - 1))  # in place, as a torn write leaves it
    elif what == "bracket":  # a whole-disk turn: its index copy shared through a hard link
        brackets.write(folder, _begun(ENTRIES[2], n), {"kind": "git", "dirty": {}}, index, fsync=False,
                       index_copies=folder.parent / brackets.INDEX_COPIES)
    elif what == "lose copy":
        for link in folder.glob(brackets.LINK_PREFIX + "*"):
            link.unlink()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(OPS)
def test_kept_begins_answer_what_a_fresh_read_does(tmp_path_factory: pytest.TempPathFactory, ops: list) -> None:
    base = tmp_path_factory.mktemp("begins")
    folder, index = base / "brackets", base / "index"
    index.write_bytes(b"DIRC" + os.urandom(200) + b"\x22" * 20)
    folder.mkdir()
    kept = brackets.BeginsKept()
    for op in ops:
        _apply(folder, index, op)
        assert _answer(folder, kept) == _answer(folder, None), op


def test_an_unchanged_file_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "brackets"
    for i, entry in enumerate(ENTRIES[:2]):
        brackets.write(folder, _begun(entry, i + 1), None, None, fsync=False, name=brackets.session_name(entry))
    reads: list[Path] = []
    real = brackets._read_file
    monkeypatch.setattr(brackets, "_read_file", lambda path, with_scan: reads.append(path) or real(path, with_scan))
    kept = brackets.BeginsKept()
    first = brackets.read_begins(folder, kept)
    assert [b.number for _, b in first] == [1, 2] and len(reads) == 3  # the whole-disk turn's file is looked for too
    reads.clear()
    assert brackets.read_begins(folder, kept) == first and reads == [folder / brackets.FILE_NAME]  # (none there)
    brackets.write(folder, _begun(ENTRIES[1], 7), None, None, fsync=False, name=brackets.session_name(ENTRIES[1]))
    reads.clear()
    assert [b.number for _, b in brackets.read_begins(folder, kept)] == [1, 7]
    assert reads == [folder / brackets.FILE_NAME, folder / brackets.session_name(ENTRIES[1])]  # only the replaced one
