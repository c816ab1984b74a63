"""``takeback export --agent-trace [RANGE]``: Takeback's line attribution as Agent Trace records
(``engine/agent_trace.py``). The CLI as a real process in real git repositories; turns recorded
through Claude Code's real hook payloads (``test_hooks.captured``). Every record is checked
against the spec's own JSON schema, vendored in ``tests/fixtures/agent_trace/`` (its README says
from where, which version and under which licence), and against the same schema closed (no
field the spec does not name, ``metadata`` aside)."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator, FormatChecker

from helpers import git

from .conftest import Takeback, expect_error
from .test_hooks import captured, hook

SCHEMA = json.loads((Path(__file__).parents[1] / "fixtures" / "agent_trace" / "trace-record.schema.json").read_text())
APP = "def main():\n    return 1\n"


def _closed(node: Any) -> Any:
    """``node`` with every object that names its properties closed to others (``metadata``, which
    names none, stays open)."""
    if isinstance(node, dict):
        out = {k: _closed(v) for k, v in node.items()}
        if "properties" in out:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [_closed(v) for v in node]
    return node


VALIDATORS = [Draft202012Validator(schema, format_checker=FormatChecker()) for schema in (SCHEMA, _closed(copy.deepcopy(SCHEMA)))]


def _records(out: bytes) -> list[dict]:
    """The records of JSON Lines output, each valid against the spec's schema (open and closed)."""
    assert out.isascii(), "records are ASCII JSON: nothing in them a terminal acts on"
    records = [json.loads(line) for line in out.decode().splitlines()]
    for record in records:
        for validator in VALIDATORS:
            errors = [e.message for e in validator.iter_errors(record)]
            assert not errors, (errors, record)
        # formats jsonschema checks only with optional packages: checked here
        assert datetime.fromisoformat(record["timestamp"]).tzinfo is not None
        for file in record["files"]:
            for conversation in file["conversations"]:
                for url in [conversation.get("url"), *(r["url"] for r in conversation.get("related", []))]:
                    assert url is None or urlsplit(url).scheme == "takeback"
    return records


def _export(tb: Takeback, *args: str) -> list[dict]:
    return _records(tb.ok("export", "--agent-trace", *args).out)


def _turn(tb: Takeback, prompt: str, files: dict[str, str]) -> None:
    """An agent's turn through Claude Code's hooks: one Write step per file."""
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, prompt=prompt))
    for n, (rel, content) in enumerate(files.items()):
        write = {"tool_name": "Write", "tool_use_id": f"toolu_{prompt[:8]}_{n}",
                 "tool_input": {"file_path": str(repo / rel), "content": content}}
        hook(tb, "claude", captured("claude", "PreToolUse", repo, **write))
        (repo / rel).write_text(content)
        hook(tb, "claude", captured("claude", "PostToolUse", repo, **write))
    hook(tb, "claude", captured("claude", "Stop", repo))


def _who(record: dict) -> dict[str, dict[int, tuple]]:
    """Each file's lines: line number → (contributor type, the turn's number or None)."""
    turns = record["metadata"]["takeback"]["turns"]
    out: dict[str, dict[int, tuple]] = {}
    for file in record["files"]:
        lines = out.setdefault(file["path"], {})
        for conversation in file["conversations"]:
            url = conversation.get("url")
            number = turns[url.rpartition("/")[2]]["number"] if url else None
            for r in conversation["ranges"]:
                kind = r.get("contributor", conversation["contributor"])["type"]
                for n in range(r["start_line"], r["end_line"] + 1):
                    assert n not in lines, f"line {n} of {file['path']} is in two ranges"
                    lines[n] = (kind, number)
    return out


def _two_commits(tb: Takeback) -> tuple[str, str]:
    """Turn 1 writes src/app.py's tail, the person a line on top: commit one. Turn 2 changes
    one of turn 1's lines, adds one the person then edits, and writes notes.txt: commit two."""
    repo = tb.cwd
    _turn(tb, "add the tail", {"src/app.py": APP + "# t1 a\n# t1 b\n# t1 c\n"})
    (repo / "src/app.py").write_text("# the person's top\n" + APP + "# t1 a\n# t1 b\n# t1 c\n")
    git(repo, "commit", "-qam", "one")
    one = git(repo, "rev-parse", "HEAD").strip()
    after_one = (repo / "src/app.py").read_text()
    _turn(tb, "change b, \x1b[31mend it", {"src/app.py": after_one.replace("# t1 b", "# t2 b") + "# t2 end\n",
                                            "notes.txt": "n1\nn2\n"})
    (repo / "src/app.py").write_text((repo / "src/app.py").read_text().replace("# t2 end", "# t2 end, says the person"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    return one, git(repo, "rev-parse", "HEAD").strip()


def test_a_commit_range_attributes_exactly_the_lines_each_commit_added(tb: Takeback) -> None:
    one, two = _two_commits(tb)
    first, second = _export(tb, "HEAD~2..HEAD")
    assert (first["vcs"], second["vcs"]) == ({"type": "git", "revision": one}, {"type": "git", "revision": two})
    assert first["tool"]["name"] == "takeback" and first["version"] == "0.1.0"
    assert _who(first) == {"src/app.py": {1: ("human", None), 4: ("ai", 1), 5: ("ai", 1), 6: ("ai", 1)}}
    assert _who(second) == {"notes.txt": {1: ("ai", 2), 2: ("ai", 2)},
                            "src/app.py": {5: ("ai", 2), 7: ("mixed", 2)}}
    about = second["metadata"]["takeback"]["turns"]
    [(entry, turn2)] = about.items()
    assert turn2 == {"number": 2, "agent": "claude", "session": "4d05a520-7a24-4b32-87e1-8545289c6332",
                     "prompt": "change b, \x1b[31mend it"}
    [conversation] = [c for f in second["files"] if f["path"] == "notes.txt" for c in f["conversations"]]
    assert conversation["url"] == f"takeback:turn/{entry}" and conversation["contributor"] == {"type": "ai"}
    assert conversation["related"] == [{"type": "session", "url": "takeback:session/4d05a520-7a24-4b32-87e1-8545289c6332"}]
    assert b"\x1b" not in tb.ok("export", "--agent-trace", "HEAD").out  # the prompt's escape is a JSON escape
    assert [r["vcs"]["revision"] for r in _export(tb, "HEAD")] == [two]
    assert [r["vcs"]["revision"] for r in _export(tb)] == [two]  # RANGE defaults to HEAD
    assert [r["vcs"]["revision"] for r in _export(tb, one)] == [one]


def test_an_amended_and_a_squashed_commit_still_attribute(tb: Takeback) -> None:
    repo = tb.cwd
    git(repo, "checkout", "-q", "-b", "work")
    _turn(tb, "first", {"src/app.py": APP + "# first\n"})
    git(repo, "commit", "-qam", "first")
    _turn(tb, "second", {"src/util.py": (repo / "src/util.py").read_text() + "# second\n"})
    git(repo, "commit", "-q", "--amend", "-am", "first and second, amended")
    [amended] = _export(tb, "main..work")
    assert _who(amended) == {"src/app.py": {3: ("ai", 1)}, "src/util.py": {3: ("ai", 2)}}
    _turn(tb, "third", {"src/app.py": (repo / "src/app.py").read_text() + "# third\n"})
    git(repo, "commit", "-qam", "third")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--squash", "work")
    git(repo, "commit", "-qm", "squashed")
    git(repo, "branch", "-q", "-D", "work")
    [squashed] = _export(tb, "HEAD~1..HEAD")
    assert squashed["vcs"]["revision"] == git(repo, "rev-parse", "HEAD").strip()
    assert _who(squashed) == {"src/app.py": {3: ("ai", 1), 4: ("ai", 3)}, "src/util.py": {3: ("ai", 2)}}


def test_a_set_of_turns_names_the_lines_each_wrote_as_the_files_stand_now(tb: Takeback) -> None:
    _two_commits(tb)
    (tb.cwd / "src/app.py").write_text("# not committed\n" + (tb.cwd / "src/app.py").read_text())
    first, second = _export(tb, "#1..#2")
    assert "vcs" not in first and first["metadata"]["takeback"]["positions"] == "working tree"
    assert _who(first) == {"src/app.py": {5: ("ai", 1), 7: ("ai", 1)}}  # its b was turn 2's since
    assert _who(second) == {"notes.txt": {1: ("ai", 2), 2: ("ai", 2)}, "src/app.py": {6: ("ai", 2), 8: ("mixed", 2)}}
    assert _who(_export(tb, "#2")[0]) == _who(second)
    assert tb("undo", "--on-conflict", "force").code == 10  # partial (over the person's edit); turn 2's lines go

    [reverted] = _export(tb, "#2")
    assert reverted["files"] == [] and reverted["metadata"]["takeback"]["state"] == "reverted"


def test_output_to_a_file(tb: Takeback) -> None:
    _two_commits(tb)
    said = tb.ok("export", "--agent-trace", "HEAD~2..HEAD", "--output", "trace.jsonl")
    assert said.text == "wrote 2 Agent Trace records to " + str(tb.cwd / "trace.jsonl") + "\n"
    assert [r["vcs"] for r in _records((tb.cwd / "trace.jsonl").read_bytes())] == [r["vcs"] for r in _export(tb, "HEAD~2..HEAD")]


def test_bad_ranges_say_so_in_one_line(tb: Takeback, plain_tb: Takeback) -> None:
    tb.fails(4, "export", "--agent-trace", "HEAD", match="nothing is recorded")  # no store: none is made
    assert not Path(tb.env["TAKEBACK_HOME"], "stores").exists()
    _turn(tb, "one", {"src/app.py": APP + "# one\n"})
    tb.fails(2, "export", "--agent-trace", "nope..HEAD", match="names no commit")
    tb.fails(2, "export", "--agent-trace", "HEAD...main", match="give A..B")
    tb.fails(3, "export", "--agent-trace", "#7", match="no turn #7")
    tb.fails(2, "export", "HEAD", match="--agent-trace")
    data = expect_error(tb("--json", "export", "--agent-trace", "nope"), 2).json()
    assert data["error"] == "invalid-input"
    plain_tb.ok("begin", "--label", "p")
    (plain_tb.cwd / "notes.txt").write_text("one\nTWO\n")
    plain_tb.ok("end")
    plain_tb.fails(2, "export", "--agent-trace", "HEAD", match="not in a git work tree")
    assert _who(_export(plain_tb, "#1")[0]) == {"notes.txt": {2: ("ai", 1)}}


def test_a_root_commit_deleted_binary_and_linked_files_and_turn_ranges(tb: Takeback) -> None:
    """A commit with no parent exports every text file it holds; a deleted file, a binary file
    and a symlink carry no lines; turns are given oldest first, never backwards or as marks."""
    _turn(tb, "one", {"src/app.py": APP + "# one\n"})
    repo = tb.cwd
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    [record] = _export(tb, root)
    assert record["vcs"]["revision"] == root and all(f["conversations"] for f in record["files"])
    for validator in VALIDATORS:
        validator.validate(record)
    (repo / "blob.bin").write_bytes(b"\x00\x01binary\x00")
    (repo / "link").symlink_to("src/app.py")
    git(repo, "rm", "-q", "README.md")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "binary, link, deletion")
    [record] = _export(tb, "HEAD")
    assert [f["path"] for f in record["files"]] == ["src/app.py"]  # (app.py: the turn's change, committed with them)
    tb.ok("mark", "mine")
    tb.fails(2, "export", "--agent-trace", "#2..#1", match="give the older one first")
    tb.fails(3, "export", "--agent-trace", "#2", match="no agent turn there")
