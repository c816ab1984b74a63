"""Sharing timelines through git (``takeback share push|fetch|delete``): two clones of one
repository and a bare remote in temp folders, each clone with its own Takeback state (its own
machine, as far as the store goes), the CLI run as a real process.

Alice records turns and pushes; Bob fetches and finds her ref and her entries; a third store
pushes at the same time (both refs survive); a push under a name the remote already holds with
another log is joined, not overwritten; a hostile timeline (a record naming ``../x``, a tree where
a blob should be) is refused with one line and never becomes a ref; the person's own repository's
refs and config are the same before and after.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import git, git_state, make_repo
from takeback.storage import share
from takeback.storage.store import Store

from .conftest import Takeback, isolated_env

TIMELINES = "refs/takeback/timelines/"


def _clone(tmp_path: Path, remote: Path, name: str) -> Takeback:
    folder = tmp_path / name
    git(tmp_path, "clone", "-q", str(remote), str(folder))
    git(folder, "config", "user.email", f"{name}@example.com")
    return Takeback(folder, isolated_env(tmp_path / f"env-{name}"))


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare repository served through file://, allowing partial-clone filters."""
    source = make_repo(tmp_path / "source")
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(bare))
    git(bare, "config", "uploadpack.allowFilter", "true")
    return bare


def _turn(tb: Takeback, label: str, files: dict[str, str]) -> None:
    tb.ok("begin", "--label", label)
    for rel, content in files.items():
        (tb.cwd / rel).write_text(content)
    tb.ok("end")


def _remote_refs(remote: Path) -> dict[str, str]:
    out = git(remote, "for-each-ref", "--format=%(refname) %(objectname)", TIMELINES)
    return {line.split()[0][len(TIMELINES):]: line.split()[1] for line in out.splitlines()}


def _shared(tb: Takeback) -> Path:
    return tb.store() / "shared.git"


def test_alice_pushes_bob_fetches_her_entries_and_neither_repository_changes(tmp_path: Path, remote: Path) -> None:
    alice, bob = _clone(tmp_path, remote, "alice"), _clone(tmp_path, remote, "bob")
    _turn(alice, "add a discount", {"src/app.py": "def main():\n    return 2\n"})
    _turn(alice, "round the tax", {"src/util.py": "def helper(x):\n    return round(x * 2)\n", "README.md": "# tax\n"})
    before = {tb.cwd: git_state(tb.cwd) for tb in (alice, bob)}
    alice_head = alice.oplog().strip()

    pushed = alice.json("share", "push")
    who = pushed["ref"][len(TIMELINES):]
    assert who.startswith("alice@") and pushed["commit"] == alice_head
    assert _remote_refs(remote) == {who: alice_head}
    assert "pushed the timeline to origin" in alice.ok("share", "push").text  # again: nothing new, still fine

    _turn(bob, "bob's own turn", {"README.md": "# bob\n"})
    fetched = bob.json("share", "fetch")
    assert fetched["accepted"] == [{"who": who, "commit": alice_head}] and fetched["refused"] == []
    shared = _shared(bob)
    assert git(shared, "rev-parse", f"refs/takeback/remotes/origin/{who}").strip() == alice_head
    # her entries are there (metadata first): the labels of both turns, read from her records
    metas = git(shared, "log", "--format=%H", f"refs/takeback/remotes/origin/{who}").split()
    labels = set()
    for commit in metas:
        records = json.loads(git(shared, "cat-file", "blob", f"{commit}:meta.json"))["records"]
        labels |= {r.get("label") for r in records if r["type"] == "begin"}
    assert {"add a discount", "round the tax"} <= labels
    # ... and the file contents were left on the remote (blob:none), to be fetched when needed
    missing = git(shared, "rev-list", "--objects", "--missing=print", f"refs/takeback/remotes/origin/{who}")
    absent = [line[1:] for line in missing.splitlines() if line.startswith("?")]
    assert absent
    # one is fetched when needed, alone, from the promisor remote (the clone's origin)
    store = Store(bob.store(), bob.cwd)
    assert share.content(store, "origin", absent[0]) == git(remote, "cat-file", "blob", absent[0]).encode()
    still = git(shared, "rev-list", "--objects", "--missing=print", f"refs/takeback/remotes/origin/{who}")
    assert sum(line.startswith("?") for line in still.splitlines()) == len(absent) - 1
    for tb in (alice, bob):
        assert git_state(tb.cwd) == before[tb.cwd], "the person's repository changed"


def test_concurrent_pushes_from_two_machines_both_survive(tmp_path: Path, remote: Path) -> None:
    alice, carol = _clone(tmp_path, remote, "alice"), _clone(tmp_path, remote, "carol")
    _turn(alice, "alice's turn", {"README.md": "# alice\n"})
    _turn(carol, "carol's turn", {"README.md": "# carol\n"})
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda tb: tb.json("share", "push"), (alice, carol)))
    refs = _remote_refs(remote)
    assert {r["ref"][len(TIMELINES):] for r in results} == set(refs)
    assert len(refs) == 2 and all(refs[r["ref"][len(TIMELINES):]] == r["commit"] for r in results)


def test_a_rejected_push_is_joined_and_loses_nothing(tmp_path: Path, remote: Path) -> None:
    """Two stores under one name (same person, same machine): the second push is rejected as
    not a fast-forward, fetched, and sent again on a join commit keeping both logs."""
    first, second = _clone(tmp_path, remote, "alice"), _clone(tmp_path, remote, "alice2")
    git(second.cwd, "config", "user.email", "alice@example.com")
    _turn(first, "first store", {"README.md": "# one\n"})
    _turn(second, "second store", {"README.md": "# two\n"})
    one = first.json("share", "push")
    two = second.json("share", "push")
    assert one["ref"] == two["ref"]
    tip = _remote_refs(remote)[one["ref"][len(TIMELINES):]]
    parents = git(remote, "rev-list", "--parents", "-n1", tip).split()[1:]
    assert parents == [second.oplog().strip(), one["commit"]]  # this log first, what it held kept
    assert json.loads(git(remote, "cat-file", "blob", f"{tip}:meta.json"))["records"] == []


def test_delete_removes_only_this_machines_ref(tmp_path: Path, remote: Path) -> None:
    alice, bob = _clone(tmp_path, remote, "alice"), _clone(tmp_path, remote, "bob")
    for tb in (alice, bob):
        _turn(tb, "a turn", {"README.md": f"# {tb.cwd.name}\n"})
        tb.ok("share", "push")
    deleted = alice.json("share", "delete")
    assert deleted["deleted"] is True
    assert [who.split("@")[0] for who in _remote_refs(remote)] == ["bob"]
    assert "nothing to remove" in alice.ok("share", "delete").text
    fetched = bob.json("share", "fetch")
    assert [item["who"].split("@")[0] for item in fetched["accepted"]] == ["bob"]


def _plant(remote: Path, who: str, tree_lines: str, meta: bytes | None = None) -> None:
    """Write a commit with the tree ``tree_lines`` (mktree input; ``{meta}`` is replaced by the
    blob of ``meta``) straight into the remote as ``who``'s timeline."""
    if meta is not None:
        blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=remote, input=meta,
                              capture_output=True, check=True).stdout.decode().strip()
        tree_lines = tree_lines.replace("{meta}", blob)
    tree = subprocess.run(["git", "mktree"], cwd=remote, input=tree_lines.encode(), capture_output=True,
                          check=True).stdout.decode().strip()
    commit = git(remote, "commit-tree", tree, "-m", "planted").strip()
    git(remote, "update-ref", TIMELINES + who, commit)


def test_a_hostile_timeline_is_refused_with_one_line_and_never_kept(tmp_path: Path, remote: Path) -> None:
    alice, bob = _clone(tmp_path, remote, "alice"), _clone(tmp_path, remote, "bob")
    _turn(alice, "a good turn", {"src/app.py": "def main():\n    return 3\n"})
    alice.ok("share", "push")
    good = _remote_refs(remote)
    commit = next(iter(good.values()))
    meta = subprocess.run(["git", "cat-file", "blob", f"{commit}:meta.json"], cwd=remote, capture_output=True,
                          check=True).stdout
    assert b'"src/app.py"' in meta
    _plant(remote, "mallory@evil", "100644 blob {meta}\tmeta.json\n", meta.replace(b'"src/app.py"', b'"../x"'))
    some_tree = git(remote, "rev-parse", f"{commit}^{{tree}}").strip()
    _plant(remote, "trudy@evil", f"040000 tree {some_tree}\tmeta.json\n")
    before = git_state(bob.cwd)

    result = bob("--json", "share", "fetch")
    assert result.code == 15, str(result)
    data = result.json()
    assert [item["who"] for item in data["accepted"]] == list(good)
    refused = {item["who"]: item["reason"] for item in data["refused"]}
    assert set(refused) == {"mallory@evil", "trudy@evil"}
    assert "'../x'" in refused["mallory@evil"] and "outside the workspace" in refused["mallory@evil"]
    assert "meta.json" in refused["trudy@evil"] and "mode 40000" in refused["trudy@evil"]
    assert all("\n" not in why for why in refused.values())
    kept = git(_shared(bob), "for-each-ref", "--format=%(refname)", "refs/takeback/")
    assert "evil" not in kept and list(good)[0] in kept
    human = bob("share", "fetch")
    assert human.code == 15 and "refused origin/mallory@evil:" in human.text
    assert git_state(bob.cwd) == before


def test_an_unknown_remote_name_is_one_clear_line(tb: Takeback) -> None:
    _turn(tb, "a turn", {"README.md": "# x\n"})
    tb.fails(15, "share", "push", "nowhere", match="no git remote named 'nowhere'")
