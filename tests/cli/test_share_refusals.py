"""What sharing refuses, each with one line and nothing written: a remote's timeline of any shape
Takeback never writes (a ref that names no ``person@machine``, a commit with three parents, an
object of another kind, a tree holding more than ``meta.json``, a ``meta.json`` that is not
records), a push of an empty timeline, a remote that is not there, and the teammates' turns a
revert cannot take back here (not fetched yet, a mark, a turn taken back on her own machine, a
path or a hunk of it, a name that is not REMOTE/WHO#N).

Real git: a bare remote and clones in temp folders, every command a real ``takeback`` process,
hostile objects written straight into the remote with git's plumbing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import git, git_state

from .conftest import Takeback
from .test_remote import _alice_shares, _bob_pulls, _clone, _edit_turn, remote  # noqa: F401 (the fixture)
from .test_share import TIMELINES, _plant, _remote_refs, _shared


def _one_line(result) -> str:  # type: ignore[no-untyped-def]
    assert result.code != 0 and result.err.count("\n") == 1, result
    return result.err


def _hash(remote: Path, data: bytes, kind: str = "blob") -> str:
    return subprocess.run(["git", "hash-object", "-w", "-t", kind, "--stdin", "--literally"], cwd=remote, input=data,
                          capture_output=True, check=True).stdout.decode().strip()


def test_every_shape_takeback_never_writes_is_refused_and_never_kept(tmp_path: Path, remote: Path) -> None:
    alice, who = _alice_shares(tmp_path, remote)
    commit = _remote_refs(remote)[who]
    tree = git(remote, "rev-parse", f"{commit}^{{tree}}").strip()
    git(remote, "update-ref", TIMELINES + "no-machine", commit)  # no @: not a timeline's name
    other = git(remote, "commit-tree", tree, "-m", "another root").strip()
    three = git(remote, "commit-tree", tree, "-p", commit, "-p", f"{commit}~1", "-p", other, "-m", "x").strip()
    git(remote, "update-ref", TIMELINES + "tri@parents", three)
    tag = _hash(remote, f"object {commit}\ntype commit\ntag t\ntagger x <x@y> 0 +0000\n\nt\n".encode(), "tag")
    git(remote, "update-ref", TIMELINES + "tag@object", tag)
    _plant(remote, "extra@entry", f"100644 blob {{meta}}\tmeta.json\n100644 blob {{meta}}\tnotes.txt\n", b"{}")
    _plant(remote, "no@meta", f"040000 tree {tree}\tsub\n")
    _plant(remote, "not@records", "100644 blob {meta}\tmeta.json\n", b'{"records": [{"type": "nonsense"}]}')
    bob = _bob_pulls(tmp_path, remote)
    before = git_state(bob.cwd)

    result = bob("--json", "share", "fetch")
    assert result.code == 15, result
    data = result.json()
    assert [item["who"] for item in data["accepted"]] == [who]
    refused = {item["who"]: item["reason"] for item in data["refused"]}
    said = {
        "no-machine": "is not a timeline's name",
        "tri@parents": "has 3 parents",
        "tag@object": "is a tag",
        "extra@entry": "notes.txt",
        "no@meta": "has no meta.json",
        "not@records": "is not Takeback's records",
    }
    assert set(refused) == set(said), refused
    for name, words in said.items():
        assert words in refused[name] and "\n" not in refused[name], (name, refused[name])
    kept = git(_shared(bob), "for-each-ref", "--format=%(refname)", "refs/takeback/")
    assert kept.strip().splitlines() == [f"refs/takeback/remotes/origin/{who}"], kept
    assert git_state(bob.cwd) == before
    assert [mate["who"] for mate in bob.json("log", "--remote", "origin")] == [who]
    assert alice.json("share", "status")["pushed"]


def test_pushing_nothing_and_remotes_that_are_not_there(tmp_path: Path, remote: Path) -> None:
    carol = _clone(tmp_path, remote, "carol")
    assert "nothing to push" in _one_line(carol("share", "push"))
    assert carol("share", "push").code == 15
    nowhere = str(tmp_path / "no-such-remote.git")
    _edit_turn(carol, "carol's readme", "README.md", "# demo", "# demo, by carol")
    for action in ("push", "fetch", "delete"):
        result = carol("share", action, nowhere)
        assert result.code == 15 and "failed" in _one_line(result), (action, result)
    gone = carol.json("share", "delete")
    assert gone["deleted"] is False, gone  # (never pushed: there was nothing to remove)
    assert _remote_refs(remote) == {}


def test_a_teammates_turn_that_cannot_be_taken_back_here_is_one_line(tmp_path: Path, remote: Path) -> None:
    alice, who = _alice_shares(tmp_path, remote)
    bob = _bob_pulls(tmp_path, remote)
    assert "nothing is recorded" in _one_line(bob("log", "--remote", "origin"))  # (no store yet: fetch makes it)
    bob.ok("share", "fetch")
    cases = {
        ("revert", "origin/alice#twelve"): "REMOTE/PERSON@MACHINE#N",
        ("revert", f"origin/{who}#1", "--", "src/app.py"): "taken back whole",
        ("revert", f"origin/{who}#1", "--hunk", "src/app.py:2"): "taken back whole",
    }
    for args, words in cases.items():
        assert words in _one_line(bob(*args)), (args, bob(*args))

    # Alice takes her second turn back on her own machine and marks the moment; Bob fetches again
    alice.ok("undo")
    alice.ok("mark", "alice-checkpoint")
    alice.ok("share", "push")
    bob.ok("share", "fetch")
    entries = {e["number"]: e for e in bob.json("log", "--remote", "origin")[0]["entries"]}
    mark = next(n for n, e in entries.items() if e["kind"] == "mark")
    assert f"taken back on {who}'s own machine already" in _one_line(bob("revert", f"origin/{who}#2"))
    assert "not an agent turn" in _one_line(bob("revert", f"origin/{who}#{mark}"))
    shown = bob.ok("show", f"origin/{who}#1", "--patch").text
    assert "add a discount" in shown and "+    return 2  # discount" in shown
    assert (bob.cwd / "src/app.py").read_text().count("round(x)") == 1  # (nothing written by any refusal)

    # Alice removes her timeline from the remote: Bob's next fetch drops his copy of it
    assert alice.json("share", "delete")["deleted"] is True
    fetched = bob.json("share", "fetch")
    assert fetched["removed"] == [who] and fetched["accepted"] == [], fetched
    assert "no timeline fetched from origin" in _one_line(bob("log", "--remote", "origin"))
