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
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import git, git_state, make_repo
from takeback.storage import share
from takeback.storage.store import Store

from .conftest import Takeback, isolated_env
from .test_hooks import captured, hook

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


# ---------------------------------------------------------------- what is sent: secrets, prompts, redaction

PROMPT = "Rotate the staging key tok_abcdef123 and keep PROMPT-ONLY-WORDS private"


def _person_config(tb: Takeback, text: str) -> None:
    path = Path(tb.env["XDG_CONFIG_HOME"]) / "takeback" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _agent_turn(tb: Takeback, prompt: str, files: dict[str, str], command: str = "echo tok_abcdef123") -> None:
    """One turn through Claude Code's real hook payloads: the prompt, one Bash step that writes
    ``files`` while it runs, the stop."""
    repo = tb.cwd
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, prompt=prompt))
    bash = {"tool_name": "Bash", "tool_use_id": f"toolu_{len(files)}", "tool_input": {"command": command}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **bash))
    for rel, content in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(content)
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **bash))
    hook(tb, "claude", captured("claude", "Stop", repo))


def _everything_reachable(tmp_path: Path, remote: Path) -> bytes:
    """Every object reachable from the remote's ``refs/takeback/*``, as a fresh repository fetching
    them whole sees them (contents, trees, commits, one after the other)."""
    walk = tmp_path / f"walk-{len(list(tmp_path.glob('walk-*')))}.git"
    git(tmp_path, "init", "-q", "--bare", str(walk))
    git(walk, "fetch", "-q", "--no-tags", str(remote), "+refs/takeback/*:refs/takeback/*")
    listed = git(walk, "rev-list", "--objects", "--all").split("\n")
    oids = "".join(line.split(" ", 1)[0] + "\n" for line in listed if line)
    out = subprocess.run(["git", "cat-file", "--batch"], cwd=walk, input=oids.encode(), capture_output=True,
                         check=True).stdout
    assert out.count(b" blob ") >= 1 and out.count(b" commit ") >= 1
    return out


def test_no_withheld_secret_and_no_redacted_text_reaches_the_remote(tmp_path: Path, remote: Path) -> None:
    alice = _clone(tmp_path, remote, "alice")
    (alice.cwd / ".takeback.toml").write_text('[secrets]\nextra_patterns = ["config/prod.yaml"]\n')
    _person_config(alice, '[share]\nredact = ["tok_[a-z0-9]+"]\n')
    _agent_turn(alice, PROMPT, {
        ".env": "API_KEY=SECRET-ENV-BYTES-31337\n",  # the secrets policy's default patterns
        "keys/deploy.pem": "-----BEGIN PRIVATE KEY-----\nPEM-SECRET-BYTES-4242\n",
        "config/prod.yaml": "password: REPO-PATTERN-SECRET-777\n",  # the repository's added pattern
        "notes/later.txt": "LATER-SECRET-BYTES-99\n",  # not a secret yet: its content is stored
        "src/app.py": "def main():\n    return 'VISIBLE-CODE-LINE'\n",
    })
    store = alice.store()
    local = subprocess.run(["git", "--git-dir", str(store / "objects.git"), "cat-file", "--batch-all-objects",
                            "--batch"], capture_output=True, check=True).stdout
    assert b"LATER-SECRET-BYTES-99" in local and b"tok_abcdef123" in local  # stored here, as recorded
    assert b"SECRET-ENV-BYTES-31337" not in local  # withheld by the policy: never stored
    # the person makes notes/later.txt a secret after the turn was recorded
    _person_config(alice, '[share]\nredact = ["tok_[a-z0-9]+"]\n[secrets]\nextra_patterns = ["notes/later.txt"]\n')
    head = alice.oplog().strip()

    pushed = alice.json("share", "push")
    assert pushed["redact"] == ["tok_[a-z0-9]+"] and pushed["no_prompts"] is False and pushed["local"] == head
    sent = _everything_reachable(tmp_path, remote)
    for secret in (b"SECRET-ENV-BYTES-31337", b"PEM-SECRET-BYTES-4242", b"REPO-PATTERN-SECRET-777",
                   b"LATER-SECRET-BYTES-99", b"tok_abcdef123"):
        assert secret not in sent, secret
    assert b"VISIBLE-CODE-LINE" in sent and b"PROMPT-ONLY-WORDS" in sent and b"[redacted]" in sent
    # the records say what was withheld, as the local ones do for a secret
    tip = _remote_refs(remote)[pushed["ref"][len(TIMELINES):]]
    changes = {}
    for commit in git(remote, "rev-list", tip).split():
        for record in json.loads(git(remote, "cat-file", "blob", f"{commit}:meta.json"))["records"]:
            changes |= {c["path"]: c["after"] for c in record.get("changes", [])}
    for rel in (".env", "keys/deploy.pem", "config/prod.yaml", "notes/later.txt"):
        assert changes[rel]["withheld"] == "secret" and changes[rel]["oid"].startswith("hmac:"), rel
    assert changes["src/app.py"]["withheld"] is None
    assert alice.oplog().strip() == head  # the local log is the same: what is sent is a copy
    local_after = subprocess.run(["git", "--git-dir", str(store / "objects.git"), "cat-file", "--batch-all-objects",
                                  "--batch"], capture_output=True, check=True).stdout
    assert b"LATER-SECRET-BYTES-99" in local_after and b"tok_abcdef123" in local_after


def test_no_prompts_then_a_later_push_replaces_only_this_machines_ref(tmp_path: Path, remote: Path) -> None:
    alice, bob = _clone(tmp_path, remote, "alice"), _clone(tmp_path, remote, "bob")
    _agent_turn(bob, "bob's own prompt", {"README.md": "# bob\n"}, command="echo bob")
    bob.ok("share", "push")
    bob_ref = dict(_remote_refs(remote))
    _agent_turn(alice, PROMPT, {"src/app.py": "def main():\n    return 7\n"})
    first = alice.json("share", "push")
    assert first["commit"] == alice.oplog().strip() and first["forced"] is False  # nothing to leave out: the log as it is
    assert b"PROMPT-ONLY-WORDS" in _everything_reachable(tmp_path, remote)

    second = alice.json("share", "push", "--no-prompts")
    assert second["forced"] is True and second["no_prompts"] is True and second["commit"] != first["commit"]
    sent = _everything_reachable(tmp_path, remote)
    for text in (b"PROMPT-ONLY-WORDS", b"tok_abcdef123", b"Rotate the staging key"):
        assert text not in sent, text
    assert b"bob's own prompt" in sent  # his timeline, sent with his settings, is his
    refs = _remote_refs(remote)
    assert {who: tip for who, tip in refs.items() if who.startswith("bob@")} == bob_ref
    assert refs[second["ref"][len(TIMELINES):]] == second["commit"]
    human = alice.ok("share", "push").text  # back to prompts: replaced again, said so
    assert "was replaced, not moved forward" in human and "prompts included" in human

    # without the record of the last push (pushed.json lost), the remote's copy is still known
    # as this store's own (its log, or another settings' copy): replaced, never joined
    (alice.store() / "share" / "pushed.json").unlink()
    again = alice.json("share", "push", "--no-prompts")
    assert again["commit"] == second["commit"] and again["forced"] is True
    assert b"PROMPT-ONLY-WORDS" not in _everything_reachable(tmp_path, remote)
    (alice.store() / "share" / "pushed.json").unlink()
    assert alice.json("share", "push")["commit"] == first["commit"]
    (alice.store() / "share" / "pushed.json").unlink()
    alice.ok("share", "push", "--no-prompts")
    assert b"PROMPT-ONLY-WORDS" not in _everything_reachable(tmp_path, remote)
    # Bob still reads Alice's timeline (checked whole) whatever was left out of it
    fetched = bob.json("share", "fetch")
    assert fetched["refused"] == [] and len(fetched["accepted"]) == 2


def test_sending_is_incremental_and_deterministic(tmp_path: Path, remote: Path) -> None:
    alice = _clone(tmp_path, remote, "alice")
    _person_config(alice, '[share]\nno_prompts = true\n')
    _agent_turn(alice, PROMPT, {"src/app.py": "def main():\n    return 1\n"})
    one = alice.json("share", "push")
    assert alice.json("share", "push")["commit"] == one["commit"] and one["no_prompts"] is True
    share_dir = alice.store() / "share"
    [map_file] = share_dir.glob("map-*")
    first_lines = map_file.read_text().splitlines()
    _agent_turn(alice, "a second prompt", {"src/app.py": "def main():\n    return 2\n"})
    two = alice.json("share", "push")
    assert two["forced"] is False
    lines = map_file.read_text().splitlines()
    assert lines[: len(first_lines)] == first_lines and len(lines) > len(first_lines)  # only the new entries
    assert git(remote, "merge-base", "--is-ancestor", one["commit"], two["commit"]) == ""  # a fast-forward
    chain = git(remote, "rev-list", two["commit"]).split()
    assert len(chain) == len(git(_shared(alice), "rev-list", alice.oplog().strip()).split())  # same structure
    # the map is a cache: without it, the same commits are made again
    map_file.unlink()
    assert alice.json("share", "push")["commit"] == two["commit"]
    assert map_file.read_text().splitlines() == lines


def test_settings_a_push_refuses_and_what_a_repository_may_add(tmp_path: Path, remote: Path) -> None:
    alice = _clone(tmp_path, remote, "alice")
    _agent_turn(alice, PROMPT, {"src/app.py": "def main():\n    return 1\n"})
    _person_config(alice, '[share]\nredact = ["tok_(", "ok"]\n')
    alice.fails(15, "share", "push", match="share.redact: 'tok_\\(' is not a regular expression")
    _person_config(alice, '[share]\nredcat = ["tok_[a-z0-9]+"]\n')  # a typo must not send unredacted text
    alice.fails(15, "share", "push", match="your \\[share\\] settings could not be read")
    assert _remote_refs(remote) == {}
    # the repository may only add: no_prompts on, more patterns; never switch off the person's
    _person_config(alice, '[share]\nredact = ["tok_[a-z0-9]+"]\n')
    (alice.cwd / ".takeback.toml").write_text('[share]\nredact = ["PROMPT-ONLY"]\nno_prompts = false\n')
    pushed = alice.json("share", "push")
    assert pushed["redact"] == ["tok_[a-z0-9]+", "PROMPT-ONLY"] and pushed["no_prompts"] is False
    sent = _everything_reachable(tmp_path, remote)
    assert b"tok_abcdef123" not in sent and b"PROMPT-ONLY-WORDS" not in sent and b"Rotate the staging" in sent
    (alice.cwd / ".takeback.toml").write_text('[share]\nno_prompts = true\n')
    assert alice.json("share", "push")["no_prompts"] is True
    assert b"Rotate the staging" not in _everything_reachable(tmp_path, remote)
    _person_config(alice, '[share]\nno_prompts = true\n')
    (alice.cwd / ".takeback.toml").write_text('[share]\nno_prompts = false\n')
    status = alice.ok("status").text
    assert "share.no_prompts ignored: a repository may only turn it on" in status
    alice.fails(2, "share", "fetch", "--no-prompts", match="--no-prompts goes with 'share push' only")


def test_status_says_what_was_last_pushed(tmp_path: Path, remote: Path) -> None:
    alice = _clone(tmp_path, remote, "alice")
    _agent_turn(alice, PROMPT, {"src/app.py": "def main():\n    return 1\n"})
    assert alice.json("share", "status") == {"remote": "origin", "pushed": None}
    assert "nothing was pushed to origin" in alice.ok("share", "status").text
    pushed = alice.json("share", "push", "--no-prompts")
    status = alice.json("share", "status")["pushed"]
    assert {k: status[k] for k in ("ref", "commit", "no_prompts", "local")} == \
        {"ref": pushed["ref"], "commit": pushed["commit"], "no_prompts": True, "local": alice.oplog().strip()}
    assert status["at"]
    human = alice.ok("share", "status").text
    assert f"last pushed to origin at {status['at']}" in human and "no prompts, no redaction" in human


# ---------------------------------------------------------------- opt-in: nothing else pushes


def test_nothing_pushes_unless_share_push_runs(tmp_path: Path, remote: Path) -> None:
    """Hooks, gc, status and the resident process never send: the remote holds no timeline until
    ``share push`` runs; and in the package, only the ``share push`` command reaches git's push."""
    alice = _clone(tmp_path, remote, "alice")
    _agent_turn(alice, PROMPT, {"src/app.py": "def main():\n    return 1\n"})
    for args in (("gc",), ("status",), ("log",), ("share", "status"), ("share", "fetch")):
        alice.ok(*args)
    assert _remote_refs(remote) == {}
    package = Path(share.__file__).parents[1]
    callers = {}
    for path in sorted(package.rglob("*.py")):
        text = path.read_text()
        for needle in ("sharing.push(", "share.push(", '"push", "--'):  # the last: a run of git push
            if needle in text:
                callers.setdefault(needle, []).append(path.relative_to(package).as_posix())
    assert callers == {"sharing.push(": ["cli/sharing.py"], "share.push(": ["engine/sharing.py"],
                       '"push", "--': ["storage/share.py"]}


def test_a_removed_shared_repository_costs_only_the_time_to_copy_again(tmp_path: Path, remote: Path) -> None:
    alice = _clone(tmp_path, remote, "alice")
    _agent_turn(alice, PROMPT, {"src/app.py": "def main():\n    return 1\n"})
    one = alice.json("share", "push", "--no-prompts")
    shutil.rmtree(_shared(alice))
    again = alice.json("share", "push", "--no-prompts")
    assert again["commit"] == one["commit"] and again["forced"] is False
