"""Reading the timeline from the command line: log, show, diff, cat and status, and every way
of naming a turn (17, #17, a ULID, a ULID prefix, last).

One recorded history (three bracketed turns in a real git repository) is shared by the whole
module; nothing here writes to the workspace or records anything, and the tests check that.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import make_repo, write_files

from .conftest import Snapshot, Takeback, expect_error, expect_ok, isolated_env

BINARY = bytes(range(256)) + b"\x00\xff\xfe not utf-8 \x80"
CRLF = b"first\r\nsecond\r\n"


@dataclass
class History:
    tb: Takeback
    ids: dict[int, str]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    base = tmp_path_factory.mktemp("history")
    env = isolated_env(base / "env")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", env["HOME"])
        repo = make_repo(base / "ws", {"README.md": "# demo\n", "src/app.py": "x = 1\n", "src/util.py": "y = 2\n"})
    tb = Takeback(repo, env)

    tb.ok("begin", "--label", "add the parser", "--session", "s1", "--agent", "claude")
    write_files(repo, {"src/app.py": "x = 1\nz = 3\n", "src/parser.py": "def parse():\n    pass\n",
                       "assets/logo.bin": BINARY, "crlf.txt": CRLF})
    tb.ok("end", "--command", "pytest -q")

    tb.ok("begin", "--label", "tidy up", "--session", "s2")
    (repo / "README.md").unlink()
    write_files(repo, {"src/util.py": "y = 20\n", ".env": "API_KEY=very-secret\n"})
    tb.ok("end")

    tb.ok("begin", "--label", "rename the parser", "--session", "s1")
    (repo / "src/parser.py").rename(repo / "src/parse.py")
    tb.ok("end")

    entries = tb.json("log")
    return History(tb, {e["number"]: e["id"] for e in entries})


@pytest.fixture
def tb(history: History):
    """The shared runner; every test checks it left the workspace, git and the log alone."""
    snap = Snapshot(history.tb)
    yield history.tb
    snap.assert_unchanged()


ENTRY_FIELDS = {
    "id", "number", "kind", "session", "label", "agent", "source", "created_at", "finished_at", "head",
    "state", "checkpoints", "files", "additions", "deletions", "state_hash", "commands", "checks",
    "target", "target_number", "verdict", "reverted_by", "ended_by", "notices", "git_moved", "outside", "lost",
    "failed_checks", "checks_passed", "shows_steps",  # the rules every client shows (computed)
}


def test_log_human_and_json(tb: Takeback) -> None:
    human, full, limited, session, paged = tb.many(
        ("log",), ("--json", "log"), ("--json", "log", "--limit", "1"),
        ("--json", "log", "--session", "s1"), ("--json", "log", "--session", "s1", "--before", "3"),
    )
    lines = expect_ok(human).text.splitlines()
    assert [re.search(r"#(\d+)", line).group(1) for line in lines] == ["3", "2", "1"]
    first = lines[2]
    assert re.fullmatch(
        r"  #1    turn    applied     \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  4 files \+5 -0 \[claude\]  add the parser", first
    ), first
    assert lines[0].endswith("1 file +0 -0  rename the parser"), lines[0]

    entries = expect_ok(full).json()
    assert [e["number"] for e in entries] == [3, 2, 1]
    for entry in entries:
        assert set(entry) == ENTRY_FIELDS
        assert entry["kind"] == "turn" and entry["state"] == "applied" and entry["source"] == "cli"
    first = entries[2]
    assert first["agent"] == "claude" and first["session"] == "s1" and first["commands"] == ["pytest -q"]
    assert first["head"] and len(first["head"]) == 40
    assert [c["label"] for c in first["checkpoints"]] == ["changes on disk"]
    assert {f["path"]: f["kind"] for f in first["files"]} == {
        "assets/logo.bin": "added", "crlf.txt": "added", "src/app.py": "modified", "src/parser.py": "added",
    }
    assert [e["number"] for e in expect_ok(limited).json()] == [3]
    assert [e["number"] for e in expect_ok(session).json()] == [3, 1]
    assert [e["number"] for e in expect_ok(paged).json()] == [1]


def test_turn_specs(tb: Takeback, history: History) -> None:
    ulid = history.ids[2]
    # The shortest prefix (12 at least) only this id has: ids made in one millisecond differ at the end.
    unique = next(ulid[:n] for n in range(12, 27) if not any(o.startswith(ulid[:n]) for o in history.ids.values() if o != ulid))
    specs = ["2", "#2", ulid, unique, ulid.lower()]
    *named, last, missing, ambiguous, unknown, empty = tb.many(
        *[("--json", "show", spec) for spec in specs],
        ("--json", "show", "last"), ("show", "#17"), ("show", ulid[:4]),
        ("--json", "show", "ZZZZZZZZ"), ("show", ""),
    )
    for spec, result in zip(specs, named):
        entry = expect_ok(result).json()
        assert (entry["id"], entry["number"], entry["label"]) == (ulid, 2, "tidy up"), spec
    assert expect_ok(last).json()["id"] == history.ids[3]
    expect_error(missing, 3, r"no turn #17 in this workspace's timeline \(it has 3 entries\)")
    expect_error(ambiguous, 2, r"turn id prefix \w{4} is ambiguous: it matches #1 \(\w{26}\), #2 \(\w{26}\), #3 \(\w{26}\); give more of the id, or the number")
    expect_error(unknown, 3, r"no turn matches 'ZZZZZZZZ'")
    expect_error(empty, 2, r"empty turn")


def test_show(tb: Takeback, history: History) -> None:
    patched, plain, as_json, renamed = tb.many(
        ("show", "2", "--patch"), ("show", "2"), ("--json", "show", "1", "--patch"), ("show", "3"),
    )
    text = expect_ok(patched).text
    assert text.splitlines()[1].startswith(f"  id {history.ids[2]}  session s2  source cli  head ")
    assert re.search(r"^  deleted\s+README\.md  \+0 -1$", text, re.M)
    assert re.search(r"^  modified\s+src/util\.py  \+1 -1$", text, re.M)
    assert re.search(r"^  added\s+\.env  \+0 -0 \(content withheld: secret\)$", text, re.M)
    assert "  note   .env: secret file, content not stored (secrets policy)" in text
    assert "very-secret" not in text
    assert "diff --git a/README.md b/README.md\ndeleted file mode 100644" in text
    assert "-y = 2\n+y = 20\n" in text
    summary = expect_ok(plain).text
    assert "diff --git" not in summary and text.startswith(summary)

    data = expect_ok(as_json).json()
    assert set(data) == ENTRY_FIELDS | {"patch"}
    assert "+++ b/src/parser.py" in data["patch"]
    assert "Binary files /dev/null and b/assets/logo.bin differ" in data["patch"]
    assert "  renamed   src/parser.py → src/parse.py  +0 -0" in expect_ok(renamed).text


def test_diff_whole_turn_and_one_path(tb: Takeback) -> None:
    whole, one, one_json, third, secret, unchanged, outside = tb.many(
        ("diff", "1"), ("diff", "#1", "src/app.py"), ("--json", "diff", "1", "src/app.py"),
        ("diff", "last"), ("diff", "2", ".env"),
        ("diff", "1", "src/util.py"), ("diff", "1", "../outside.txt"),
    )
    heads = [line for line in expect_ok(whole).text.splitlines() if line.startswith("diff --git")]
    assert heads == [
        "diff --git a/assets/logo.bin b/assets/logo.bin",
        "diff --git a/crlf.txt b/crlf.txt",
        "diff --git a/src/app.py b/src/app.py",
        "diff --git a/src/parser.py b/src/parser.py",
    ]
    text = expect_ok(one).text
    assert text.startswith("diff --git a/src/app.py b/src/app.py\n") and " x = 1\n+z = 3\n" in text
    assert "parser" not in text
    assert expect_ok(one_json).json() == {"turn": "1", "path": "src/app.py", "diff": text}
    assert expect_ok(third).text == (
        "diff --git a/src/parser.py b/src/parse.py\nsimilarity index 100%\nrename from src/parser.py\nrename to src/parse.py\n"
    )
    withheld = expect_ok(secret).text
    assert "content withheld (secret)" in withheld and "very-secret" not in withheld
    expect_error(unchanged, 3, r"turn #1 did not change src/util\.py")
    expect_error(outside, 2, r"path \.\./outside\.txt leads outside the workspace")


def test_cat(tb: Takeback, history: History) -> None:
    calls = {
        ("cat", "1", "assets/logo.bin"): BINARY,
        ("cat", "1", "crlf.txt"): CRLF,
        ("cat", "2", "src/util.py", "--before"): b"y = 2\n",
        ("cat", history.ids[2], "README.md", "--before"): b"# demo\n",
        ("cat", "3", "src/parser.py", "--before"): b"def parse():\n    pass\n",
    }
    json_calls = [("--json", "cat", "1", "src/app.py"), ("--json", "cat", "1", "assets/logo.bin"),
                  ("--json", "cat", "2", "README.md")]
    results = tb.many(*calls, *json_calls, ("cat", "1", "src/parser.py", "--before"))
    for (args, expected), result in zip(calls.items(), results):
        assert expect_ok(result).out == expected, args
    text, binary, absent, missing = results[len(calls):]
    assert expect_ok(text).json() == {"exists": True, "content": "x = 1\nz = 3\n", "encoding": "utf-8"}
    data = expect_ok(binary).json()
    assert data["encoding"] == "base64" and base64.b64decode(data["content"]) == BINARY
    assert expect_ok(absent).json() == {"exists": False, "content": None, "encoding": None}
    # A path that did not exist: nothing on stdout, a notice on stderr, and the answer is complete.
    assert (missing.code, missing.out) == (0, b"")
    assert missing.err == "takeback: src/parser.py did not exist before that turn\n"


def test_cat_errors(tb: Takeback) -> None:
    secret, unchanged, absolute, dot_git = tb.many(
        ("cat", "2", ".env"), ("cat", "1", "README.md"), ("cat", "1", "/etc/passwd"), ("--json", "cat", "1", ".git/config"),
    )
    expect_error(secret, 5, r"\.env: content withheld by policy \(secret\); it was never stored")
    expect_error(unchanged, 3, r"turn #1 did not change README\.md")
    expect_error(absolute, 2, r"path /etc/passwd is outside the workspace")
    expect_error(dot_git, 2, r"inside a \.git folder")


def test_status_shows_the_store_and_its_size(tb: Takeback, history: History) -> None:
    human, as_json = tb.many(("status",), ("--json", "status"))
    text, data = expect_ok(human).text, expect_ok(as_json).json()
    assert data["workspace"] == str(tb.cwd.resolve()) and data["git_repository"] is True
    assert Path(data["store"]).parent == Path(tb.env["TAKEBACK_HOME"]) / "stores"
    assert re.fullmatch(r"ws-[0-9a-f]{16}", Path(data["store"]).name)
    assert data["store_bytes"] > 0
    assert (data["entries"], data["turns"], data["undo_target"], data["redo_target"]) == (3, 3, 3, None)
    assert data["open_turn"] is None and data["last_entry"]["id"] == history.ids[3]
    assert data["retention"] == {"max_entries": 500, "max_age_days": 30, "max_bytes": 512 * 1024 * 1024}
    assert data["fsync"] is False and data["last_recovery"] is None
    assert re.search(rf"^store      {re.escape(data['store'])}  \d+\.\d KiB$", text, re.M)
    assert f"workspace  {data['workspace']}  (git)" in text
    assert "retention  500 entries, 30 days, 512.0 MiB  fsync off" in text
    assert "timeline   3 entries (3 agent turns)" in text
    assert "undo       #3" in text and "redo       nothing to redo" in text

