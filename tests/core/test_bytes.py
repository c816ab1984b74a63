"""Byte-exactness: whatever a file held — binary, CRLF, non-UTF-8, empty, an executable bit,
a symlink — undo and redo put back exactly those bytes and that mode. Files over the size cap
are not copied; the timeline says so and a revert skips them with a reason."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import git, write_files
from takeback.core.models import MODE_EXEC, MODE_LINK, BatchChange

from .support import assert_result_shape, full_state, nothing_written, open_engine, store_contains

ALL_BYTES = bytes(range(256)) * 4
CRLF = b"first line\r\nsecond line\r\nthird\r\n"
LATIN1 = "caf\u00e9 cr\u00e8me br\u00fbl\u00e9e\n".encode("latin-1")
BAD_UTF8 = b"valid start \xff\xfe\xc3\x28 broken \xa0\xa1 end"


@dataclass
class BytesCase:
    name: str
    during: Callable[[Path], None]
    setup: dict[str, bytes] = field(default_factory=dict)


@pytest.fixture(params=["git", "plain"])
def ws_kind(request: pytest.FixtureRequest) -> str:
    """Byte handling does not depend on the scanner: a repository (git scanner) and a plain
    folder (walk scanner) cover both (test_turns runs the walk scanner inside a repository)."""
    return request.param


def _w(files: dict[str, bytes]) -> Callable[[Path], None]:
    return lambda ws: write_files(ws, files)


def _chmod(path: str, mode: int) -> Callable[[Path], None]:
    return lambda ws: os.chmod(ws / path, mode)


def _link(path: str, target: str) -> Callable[[Path], None]:
    def run(ws: Path) -> None:
        p = ws / path
        if os.path.lexists(p):
            p.unlink()
        p.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, p)

    return run


def _rm(path: str) -> Callable[[Path], None]:
    return lambda ws: (ws / path).unlink()


def _seq(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def run(ws: Path) -> None:
        for step in steps:
            step(ws)

    return run


CASES = [
    BytesCase("binary created", _w({"img.bin": ALL_BYTES})),
    BytesCase("binary modified", _w({"img.bin": ALL_BYTES[::-1]}), setup={"img.bin": ALL_BYTES}),
    BytesCase("binary deleted", _rm("img.bin"), setup={"img.bin": ALL_BYTES}),
    BytesCase("crlf created", _w({"win.txt": CRLF})),
    BytesCase("crlf edited", _w({"win.txt": CRLF.replace(b"second", b"2nd")}), setup={"win.txt": CRLF}),
    BytesCase("crlf to lf", _w({"win.txt": CRLF.replace(b"\r\n", b"\n")}), setup={"win.txt": CRLF}),
    BytesCase("mixed endings, no final newline", _w({"mix.txt": b"a\r\nb\nc\rd"}), setup={"mix.txt": b"a\nb\nc\n"}),
    BytesCase("latin-1", _w({"fr.txt": LATIN1}), setup={"fr.txt": b"plain\n"}),
    BytesCase("invalid utf-8", _w({"bad.txt": BAD_UTF8})),
    BytesCase("utf-8 bom and nul-free", _w({"bom.txt": "\ufeffh\u00e9llo\n".encode()})),
    BytesCase("empty created", _w({"empty.txt": b""})),
    BytesCase("emptied", _w({"gone.txt": b""}), setup={"gone.txt": b"had content\n"}),
    BytesCase("empty filled", _w({"empty.txt": b"now full\n"}), setup={"empty.txt": b""}),
    BytesCase("empty deleted", _rm("empty.txt"), setup={"empty.txt": b""}),
    BytesCase("executable bit set", _chmod("run.sh", 0o755), setup={"run.sh": b"#!/bin/sh\necho hi\n"}),
    BytesCase("executable bit cleared", _chmod("run.sh", 0o644), setup={"run.sh": b"#!/bin/sh\n"}),
    BytesCase("executable created", _seq(_w({"tool.sh": b"#!/bin/sh\n"}), _chmod("tool.sh", 0o755))),
    BytesCase("symlink created", _link("link.txt", "target.txt"), setup={"target.txt": b"target\n"}),
    BytesCase("symlink to a folder inside", _link("linkdir", "sub"), setup={"sub/a.txt": b"a\n"}),
    BytesCase("symlink retargeted", _seq(_link("link.txt", "b.txt")), setup={"a.txt": b"a\n", "b.txt": b"b\n"}),
    BytesCase("symlink deleted", _rm("link.txt"), setup={"a.txt": b"a\n"}),
    BytesCase("file replaced by symlink", _link("a.txt", "b.txt"), setup={"a.txt": b"a\n", "b.txt": b"b\n"}),
    BytesCase("dangling symlink", _link("dangling", "does/not/exist")),
]


def _prepare(ws: Path, ws_kind: str, case: BytesCase) -> None:
    write_files(ws, case.setup)
    if case.name == "executable bit cleared":
        os.chmod(ws / "run.sh", 0o755)
    if case.name in ("symlink retargeted", "symlink deleted"):
        os.symlink("a.txt", ws / "link.txt")
    if ws_kind != "plain" and (case.setup or case.name.startswith("symlink")):
        git(ws, "add", "-A")
        git(ws, "commit", "-q", "-m", "setup")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bracket_undo_redo_byte_exact(case: BytesCase, ws: Path, ws_kind: str) -> None:
    _prepare(ws, ws_kind, case)
    engine = open_engine(ws, git_scanner=ws_kind != "git-walk")
    start = full_state(ws)
    engine.begin_turn(label=case.name)
    case.during(ws)
    end = full_state(ws)
    assert end != start
    entry = engine.end_turn()
    assert entry.files, "the change was not recorded"
    for _ in range(2):
        assert_result_shape(engine.undo())
        assert full_state(ws) == start
        assert_result_shape(engine.redo())
        assert full_state(ws) == end


BATCHES = [
    ("binary", {"img.bin": ALL_BYTES}, None),
    ("crlf", {"win.txt": CRLF}, None),
    ("non-utf-8", {"bad.txt": BAD_UTF8, "fr.txt": LATIN1}, None),
    ("empty", {"empty.txt": b""}, None),
    ("executable", {"run.sh": b"#!/bin/sh\n"}, MODE_EXEC),
    ("symlink", {"link": b"README.md"}, MODE_LINK),
]


@pytest.mark.parametrize("name,files,mode", BATCHES, ids=[b[0] for b in BATCHES])
def test_batch_content_and_mode_round_trip(name: str, files: dict[str, bytes], mode: int | None, ws: Path, engine) -> None:
    start = full_state(ws)
    entry, _ = engine.apply_batch([BatchChange(path=p, after=c, mode=mode) for p, c in files.items()])
    end = full_state(ws)
    for path, content in files.items():
        if mode == MODE_LINK:
            assert os.readlink(ws / path).encode() == content
        else:
            assert (ws / path).read_bytes() == content
            assert bool(os.stat(ws / path).st_mode & 0o111) == (mode == MODE_EXEC)
        assert engine.file_at("last", path) == content
    binary = {f.path: f.binary for f in entry.files}
    assert binary.get("img.bin", False) is ("img.bin" in files)
    engine.undo()
    assert full_state(ws) == start
    engine.redo()
    assert full_state(ws) == end


def test_crlf_three_way_revert_keeps_line_endings(ws: Path, engine) -> None:
    lines = [f"line {i}\r\n".encode() for i in range(12)]
    write_files(ws, {"win.txt": b"".join(lines)})
    engine.begin_turn()
    agent = list(lines)
    agent[1] = b"agent line\r\n"
    (ws / "win.txt").write_bytes(b"".join(agent))
    engine.end_turn()
    person = list(agent)
    person[9] = b"person line\r\n"
    (ws / "win.txt").write_bytes(b"".join(person))
    result = engine.undo()
    assert result.verdict == "safe" and result.restored[0].merged
    expected = list(lines)
    expected[9] = b"person line\r\n"
    assert (ws / "win.txt").read_bytes() == b"".join(expected)


def test_symlink_leading_outside_is_recorded_as_a_link_not_followed(ws: Path, engine, tmp_path: Path) -> None:
    outside = tmp_path / "outside-secret.txt"
    outside.write_bytes(b"OUTSIDE-CONTENT-7f3a\n")
    engine.begin_turn()
    os.symlink(outside, ws / "out-link")
    entry = engine.end_turn()
    assert [(f.path, f.after.mode) for f in entry.files] == [("out-link", MODE_LINK)]
    assert engine.file_at("last", "out-link") == str(outside).encode()
    assert store_contains(engine.store.path, b"OUTSIDE-CONTENT-7f3a") == []
    engine.undo()
    assert not os.path.lexists(ws / "out-link")
    assert outside.read_bytes() == b"OUTSIDE-CONTENT-7f3a\n"


# ---------------------------------------------------------------------- the size cap


def test_oversize_file_gets_a_notice_and_is_not_stored(ws: Path, ws_kind: str) -> None:
    engine = open_engine(ws, max_file_bytes=100, git_scanner=ws_kind != "git-walk")
    big = b"BIG-CONTENT-" + b"x" * 200
    engine.begin_turn()
    (ws / "big.bin").write_bytes(big)
    (ws / "small.txt").write_text("small\n")
    entry = engine.end_turn()
    files = {f.path: f for f in entry.files}
    assert files["big.bin"].withheld == "oversize" and files["small.txt"].withheld is None
    assert "big.bin: 212 bytes, over the size cap; content not stored" in entry.notices
    assert store_contains(engine.store.path, b"BIG-CONTENT-") == []
    # created and unchanged since, but deleting it could never be undone: kept, with the reason
    result = engine.undo()
    assert_result_shape(result)
    assert result.verdict == "partial" and [s.path for s in result.skipped] == ["big.bin"]
    assert "over the size cap (212 bytes)" in result.skipped[0].reason
    assert "could not be undone" in result.skipped[0].reason
    assert (ws / "big.bin").read_bytes() == big and not (ws / "small.txt").exists()
    # so the undo can be undone in full
    result = engine.redo()
    assert_result_shape(result)
    assert result.verdict == "safe"
    assert (ws / "small.txt").read_text() == "small\n" and (ws / "big.bin").read_bytes() == big


def test_oversize_modified_file_is_skipped_on_revert_with_a_reason(ws: Path, ws_kind: str) -> None:
    write_files(ws, {"big.dat": b"A" * 150})
    if ws_kind != "plain":
        git(ws, "add", "-A")
        git(ws, "commit", "-q", "-m", "big")
    engine = open_engine(ws, max_file_bytes=100, git_scanner=ws_kind != "git-walk")
    engine.begin_turn()
    (ws / "big.dat").write_bytes(b"B" * 160)
    (ws / "README.md").write_text("edited\n")
    entry = engine.end_turn()
    assert any("big.dat" in n and "over the size cap" in n for n in entry.notices)

    result = engine.undo()
    assert_result_shape(result)
    assert result.verdict == "partial" and result.applied
    (skipped,) = result.skipped
    assert skipped.path == "big.dat" and "over the size cap (150 bytes)" in skipped.reason
    assert (ws / "big.dat").read_bytes() == b"B" * 160
    assert (ws / "README.md").read_text() == "# demo\n"
    assert any("big.dat" in n for n in result.entry.notices)

    # alone in a turn: nothing can be done, nothing is written, the answer says why
    engine.begin_turn()
    (ws / "big.dat").write_bytes(b"C" * 170)
    engine.end_turn()
    with nothing_written(engine, ws):
        result = engine.undo()
    assert_result_shape(result)
    assert (result.verdict, result.applied) == ("refused", False)
    assert [s.path for s in result.skipped] == ["big.dat"]
