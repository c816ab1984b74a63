"""The repository is not trusted (promise 8): its files can set only harmless preferences, never
where the store lives or the secrets policy; nothing read back from the store can run code or
reach outside the workspace or into .git; a turn ends under the settings it began with."""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import os
import pickle
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import make_repo, write_files, write_user_config
from takeback.cli.output import TerminalStream
from takeback.config import default_store_dir, load_config, user_config_file
from takeback.core import render
from takeback.core.clock import new_id
from takeback.core.models import (
    Check,
    Checkpoint,
    CheckpointRecorded,
    Conflict,
    Entry,
    FileChange,
    FileOutcome,
    FileVersion,
    OperationResult,
    PathChange,
    SkippedFile,
)
from takeback.core.terminal import quote_path
from takeback.engine import brackets
from takeback.engine.engine import Engine
from takeback.engine.timeline_cache import TAIL_ENTRIES
from takeback.errors import OutsideWorkspace, StoreError
from takeback.workspace.capture import Capturer
from takeback.workspace.files import Workspace

from .support import batch, full_state, open_engine

CRAFTED_REPOSITORY = """\
store_dir = ".tb"
lock_timeout = 0.01
git_scanner = false
max_file_bytes = 5
watch_tree = false
fsync = true

[secrets]
patterns = []
store_content = true
extra_patterns = ["*.private"]

[retention]
max_entries = 1
"""


class _RunsCode:
    """A pickle that runs a command when loaded: what a crafted cache would hold."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _journal(entry: str, *files: dict) -> str:
    return json.dumps({"entry": entry, "operation": "undo", "started": datetime.now(UTC).isoformat(), "files": list(files)})


# ---------------------------------------------------------------------- settings


def test_a_repository_sets_only_harmless_preferences(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {".takeback.toml": CRAFTED_REPOSITORY})
    config = load_config(ws)
    assert config.store_dir is None and default_store_dir(ws) == Engine(ws, config).store.path
    assert (config.lock_timeout, config.git_scanner, config.retention.max_entries) == (30.0, True, 500)
    assert ".env" in config.secrets.patterns and not config.secrets.store_content
    # what it may set, it sets: more secrets, a lower size cap, no watch, fsync on
    assert config.secrets.repository_patterns == ["*.private"] and config.secrets.extra_patterns == []
    assert (config.max_file_bytes, config.watch_tree, config.fsync) == (5, False, True)
    refused = sorted(p.split(" ignored")[0] for p in config.problems)
    assert refused == [
        ".takeback.toml: git_scanner", ".takeback.toml: lock_timeout", ".takeback.toml: retention.max_entries",
        ".takeback.toml: secrets.patterns", ".takeback.toml: secrets.store_content", ".takeback.toml: store_dir",
    ]
    store_dir = next(p for p in config.problems if p.startswith(".takeback.toml: store_dir"))
    assert "it decides where Takeback writes" in store_dir and str(user_config_file()) in store_dir


def test_pyproject_section_is_the_repository_too(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"pyproject.toml": '[tool.takeback]\nstore_dir = "/tmp/elsewhere"\nmax_file_bytes = 7\n'})
    config = load_config(ws)
    assert config.store_dir is None and config.max_file_bytes == 7
    assert [p.split(":")[0] for p in config.problems] == ["pyproject.toml [tool.takeback]"]


def test_a_repository_only_lowers_and_only_adds(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    write_user_config(os.environ["XDG_CONFIG_HOME"], "max_file_bytes = 1000\nwatch_tree = false\n[secrets]\nextra_patterns = ['mine']\n")
    write_files(ws, {".takeback.toml": "max_file_bytes = 5000\nwatch_tree = true\nfsync = false\nbogus = 1\n"
                                       "[secrets]\nextra_patterns = ['theirs', 'mine']\n"})
    config = load_config(ws)
    assert (config.max_file_bytes, config.watch_tree, config.fsync) == (1000, False, False)
    assert config.secrets.extra_patterns == ["mine"] and config.secrets.repository_patterns == ["theirs"]
    assert sorted(config.problems) == [
        ".takeback.toml: bogus ignored: no such setting",
        ".takeback.toml: max_file_bytes ignored: a repository may only lower it (yours is 1000)",
        ".takeback.toml: watch_tree ignored: a repository may only turn it off",
    ]
    write_files(ws, {".takeback.toml": "max_file_bytes = -1\n[secrets]\nextra_patterns = 'not a list'\n"})
    config = load_config(ws)
    assert config.max_file_bytes == 1000 and config.secrets.extra_patterns == ["mine"]
    assert config.secrets.repository_patterns == []
    assert [p.split(": bad value")[0] for p in config.problems] == [
        ".takeback.toml: max_file_bytes ignored", ".takeback.toml: secrets.extra_patterns ignored",
    ]


@pytest.mark.parametrize("name", [".takeback.toml", "pyproject.toml"])
def test_a_repository_file_that_links_outside_is_not_read(tmp_path: Path, name: str) -> None:
    """A config file that is a symbolic link out of the workspace (to another project's file, to
    the person's own) is not read and is reported; one that stays inside is read."""
    ws = make_repo(tmp_path / "ws")
    outside = tmp_path / "elsewhere.toml"
    body = "max_file_bytes = 5\nsecrets = { extra_patterns = ['*.outside'] }\n"
    outside.write_text(body if name == ".takeback.toml" else "[tool.takeback]\n" + body)
    (ws / name).symlink_to(outside)
    config = load_config(ws)
    assert config.max_file_bytes == 10 * 1024 * 1024 and config.secrets.repository_patterns == []
    assert config.problems == [f"{name} ignored: it is a symbolic link that leads outside the workspace ({outside})"]
    (ws / name).unlink()
    (ws / name).symlink_to(Path("..") / ws.name / ".." / outside.name)  # relative, through ..
    assert len(load_config(ws).problems) == 1 and load_config(ws).max_file_bytes == 10 * 1024 * 1024
    (ws / name).unlink()
    (ws / "conf").mkdir()
    (ws / "conf" / "real.toml").write_text(outside.read_text())
    (ws / name).symlink_to(Path("conf") / "real.toml")  # stays inside: read
    config = load_config(ws)
    assert config.problems == [] and config.max_file_bytes == 5 and config.secrets.repository_patterns == ["*.outside"]


def test_the_person_sets_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_repo(tmp_path / "ws")
    other = make_repo(tmp_path / "other")
    store = tmp_path / "my-store"
    write_user_config(
        os.environ["XDG_CONFIG_HOME"],
        f'lock_timeout = 2.5\n[secrets]\nstore_content = true\n[retention]\nmax_entries = 9\n'
        f'[workspaces."{ws}"]\nstore_dir = "{store}"\n',
    )
    config = load_config(ws)
    assert (config.store_dir, config.lock_timeout, config.retention.max_entries) == (store, 2.5, 9)
    assert config.secrets.store_content and config.problems == []
    assert load_config(other).store_dir is None  # a workspace's table is its own
    # the environment wins over the file, and TAKEBACK_CONFIG names another file
    monkeypatch.setenv("TAKEBACK_STORE_DIR", str(tmp_path / "env-store"))
    assert load_config(ws).store_dir == tmp_path / "env-store"
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text("store_dir = '/one/for/all'\nmax_file_bytes = 3\n")
    monkeypatch.setenv("TAKEBACK_CONFIG", str(elsewhere))
    monkeypatch.delenv("TAKEBACK_STORE_DIR")
    config = load_config(ws)
    assert config.max_file_bytes == 3 and config.store_dir is None  # one store for every folder: refused
    assert "set it in a [workspaces" in config.problems[0]


# ---------------------------------------------------------------------- nothing runs, nothing leaves


def test_a_crafted_repository_runs_nothing_and_touches_nothing_outside(tmp_path: Path) -> None:
    """store_dir inside the repository, with a cache that runs code and a journal that deletes
    and writes outside: Takeback uses its own store, so none of it is even read."""
    ws = make_repo(tmp_path / "ws", {".takeback.toml": 'store_dir = ".tb"\n', "src/app.py": "x = 1\n"})
    marker, outside = tmp_path / "code-ran", tmp_path / "outside.txt"
    outside.write_text("the person's\n")
    planted = ws / ".tb"
    planted.mkdir()
    (planted / "timeline.pickle").write_bytes(pickle.dumps((3, None, _RunsCode(marker))))
    (planted / "timeline.json").write_text("{}")
    (planted / "journal.json").write_text(_journal("x", {"path": "../outside.txt", "before": None, "after": None}))
    before = full_state(ws)

    engine = Engine(ws)
    engine.entries()
    batch(engine, ws, {"src/app.py": "x = 2\n"})
    engine.undo()
    assert not marker.exists() and outside.read_text() == "the person's\n"
    assert engine.store.path == default_store_dir(ws)
    assert full_state(ws) == before
    assert any("store_dir ignored" in p for p in engine.status().config_problems)


def test_a_pickled_cache_in_the_store_is_never_loaded(ws: Path, engine) -> None:
    batch(engine, ws, {"a.txt": "a\n"})
    marker = ws.parent / "code-ran"
    (engine.store.path / "timeline.pickle").write_bytes(pickle.dumps((3, engine.store.head(), _RunsCode(marker))))
    again = open_engine(ws)
    assert [e.number for e in again.entries()] == [1]
    assert not marker.exists() and not (engine.store.path / "timeline.pickle").exists()


def test_the_timeline_cache_is_data_and_is_thrown_away_when_wrong(ws: Path, engine) -> None:
    for i in range(55):  # enough log commits for the next open to write the cache
        batch(engine, ws, {"a.txt": f"{i}\n"})
    cache = engine.store.path / "timeline.json"
    assert open_engine(ws).entries()[0].number == 55 and cache.exists()
    data = json.loads(cache.read_text())
    assert data["format"] == 8 and data["entry_count"] == 55 and len(data["tail"]) == TAIL_ENTRIES
    first = data["tail"][0]
    assert first["checkpoints"][0]["changes"] == [] and first["commits"]  # its file list stays in the log

    # a record whose path leads out: the cache is dropped, the log (which is right) is read
    first["checkpoints"][0]["changes"] = [{"path": "../../outside-the-workspace", "before": None, "after": {"oid": "0" * 40}}]
    cache.write_text(json.dumps(data))
    again = open_engine(ws)
    assert again.entries()[-1].files[0].path == "a.txt"
    assert "outside-the-workspace" not in cache.read_text()  # written again, from the log

    # a checkpoint sent to another commit's file list: refused when it is read, the cache removed
    data = json.loads(cache.read_text())
    data["tail"][0]["commits"] = data["tail"][1]["commits"]
    cache.write_text(json.dumps(data))
    forged = open_engine(ws)
    with pytest.raises(StoreError, match="holds the checkpoint .*, and it does not"):
        forged.entries()
    assert not cache.exists()
    assert open_engine(ws).entries()[-1].files[0].path == "a.txt"
    for wrong in ('{"format": 3}', "not json", '{"format": 4, "head": "x", "records": [{"type": "nope"}]}'):
        cache.write_text(wrong)
        assert len(open_engine(ws).entries()) == 55


@pytest.mark.parametrize("bad", ["../outside.txt", ".git/config", "/etc/passwd", "a/./b"])
def test_a_log_record_that_leads_out_is_refused(ws: Path, engine, bad: str) -> None:
    entry, _ = batch(engine, ws, {"a.txt": "a\n"})
    crafted = CheckpointRecorded(
        id=new_id(), at=datetime.now(UTC), entry=entry.id,
        changes=[PathChange(path=bad, before=None, after=FileVersion(oid=engine.store.write_blob(b"evil\n"), size=5))],
    )
    with engine.transaction() as tx:
        tx.add(crafted)  # what a tampered store would hold
    with pytest.raises(StoreError, match="outside the workspace or inside .git: Takeback did not write it"):
        open_engine(ws)
    assert not (ws.parent / "outside.txt").exists()


@pytest.mark.parametrize(
    "item",
    [
        {"path": "../outside.txt", "before": None, "after": None},
        {"path": ".git/config", "before": None, "after": None},
        {"path": "a.txt", "before": {"oid": "hmac:00", "withheld": "secret"}, "after": None, "backup": "../../../outside.txt"},
    ],
    ids=["dotdot", "dot-git", "backup"],
)
def test_a_crafted_journal_is_refused_before_anything_is_written(ws: Path, engine, item: dict) -> None:
    outside = ws.parent / "outside.txt"
    outside.write_text("the person's\n")
    write_files(ws, {"a.txt": "mine\n"})
    before, git_config = full_state(ws), (ws / ".git" / "config").read_bytes() if (ws / ".git").exists() else None
    journal = engine.store.path / "journal.json"
    journal.write_text(_journal(new_id(), item))
    with pytest.raises(StoreError, match="which is not a file inside the workspace: Takeback did not write it"):
        open_engine(ws)
    assert outside.read_text() == "the person's\n" and full_state(ws) == before and journal.exists()
    if git_config is not None:
        assert (ws / ".git" / "config").read_bytes() == git_config


def test_writes_and_deletes_check_every_path(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    (root / "link").symlink_to(tmp_path / "outside")
    workspace = Workspace(root)
    for bad in ("../x", ".git/config", "sub/.git/HEAD", "/etc/passwd", "link/x", "a//b", "./a", "a/"):
        with pytest.raises(OutsideWorkspace):
            workspace.write(bad, b"x", 0o100644)
        with pytest.raises(OutsideWorkspace):
            workspace.delete(bad)
    assert os.listdir(tmp_path / "outside") == [] and sorted(os.listdir(root)) == ["link"]


def test_an_older_open_turn_file_cannot_name_files_outside_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "brackets"
    folder.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    (folder / "01ENTRY.json").write_text(json.dumps({"kind": "walk", "files": {}, "index": str(victim)}))
    opened = brackets.read(folder, "01ENTRY")
    assert opened is not None and opened.index is None
    opened.remove()
    assert victim.read_text() == "keep me\n" and not (folder / "01ENTRY.json").exists()
    (tmp_path / "x.json").write_text("{}")
    assert brackets.read(folder, "../x") is None and (tmp_path / "x.json").exists()


def test_a_crafted_stat_cache_is_ignored(plain: Path) -> None:
    engine = open_engine(plain)
    engine.begin_turn()
    cache = engine.store.path / "statcache.json"
    cache.write_text(json.dumps({"README.md": "junk", "src/app.py": [[1], {"bad": 1}, "x"], "../../x": [[], {}, 0]}))
    (plain / "README.md").write_text("changed\n")
    entry = engine.end_turn()
    assert [f.path for f in entry.files] == ["README.md"]
    cache.write_text(json.dumps({"README.md": [[1], "not a version", 0]}))
    engine.gc()  # keeps what the log names; the crafted cache is dropped, not a failure
    assert not cache.exists() and engine.file_at("last", "README.md") == b"changed\n"


# ---------------------------------------------------------------------- a turn keeps its settings


def test_a_turn_ends_under_the_settings_it_began_with(ws: Path, ws_kind: str) -> None:
    """An agent that rewrites the settings during its turn (the repository's, or even the
    person's file) changes nothing for that turn: its .env stays withheld, its files stored."""
    engine = open_engine(ws, git_scanner=ws_kind != "git-walk")
    engine.begin_turn()
    write_files(ws, {".takeback.toml": "max_file_bytes = 0\n[secrets]\npatterns = []\nstore_content = true\n"})
    write_user_config(os.environ["XDG_CONFIG_HOME"], "[secrets]\npatterns = []\nstore_content = true\n")
    write_files(ws, {".env": "API_KEY=sk-live-turn\n", "src/app.py": "changed\n"})
    entry = Engine(ws, load_config(ws, {"git_scanner": ws_kind != "git-walk"})).end_turn()  # a new process
    files = {f.path: f for f in entry.files}
    assert files[".env"].withheld == "secret"
    assert files["src/app.py"].withheld is None and files[".takeback.toml"].withheld is None
    result = open_engine(ws).undo()
    assert (ws / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    assert [s.path for s in result.skipped] == [".env"]


# ---------------------------------------------------------------------- secrets


@pytest.mark.parametrize(
    "path",
    [
        ".git-credentials", "home/.aws/credentials", ".aws/credentials", "infra/prod.tfvars", "prod.tfvars.json",
        "terraform.tfstate", "terraform.tfstate.backup", ".htpasswd", "web/.htpasswd", ".kube/config",
        "ops/.kube/config", "kubeconfig", "kubeconfig-prod", "prod.kubeconfig", ".netrc", "_netrc", ".npmrc",
        "app/.npmrc", ".pypirc", ".yarnrc.yml", ".docker/config.json", "gcp-credentials.json",
        "service-account-prod.json", "vpn/office.ovpn", ".env", "config/.env.local", "id_ed25519",
    ],
)
def test_common_credential_files_are_secrets(tmp_path: Path, path: str) -> None:
    capturer = Capturer(None, Workspace(tmp_path), load_config(tmp_path))  # type: ignore[arg-type]
    assert capturer.is_secret(path)


@pytest.mark.parametrize("path", ["src/config.py", "docs/credentials.md", "kube/deployment.yaml", "aws/config.py", "README.md"])
def test_ordinary_files_are_not_secrets(tmp_path: Path, path: str) -> None:
    capturer = Capturer(None, Workspace(tmp_path), load_config(tmp_path))  # type: ignore[arg-type]
    assert not capturer.is_secret(path)


NEGATIONS = '["!*", "!.env", "*.vault", "!**/id_rsa"]'


@pytest.mark.parametrize(
    ("where", "text"),
    [(".takeback.toml", f"[secrets]\nextra_patterns = {NEGATIONS}\n"),
     ("pyproject.toml", f"[tool.takeback.secrets]\nextra_patterns = {NEGATIONS}\n")],
)
def test_a_repository_cannot_switch_the_secrets_policy_off(tmp_path: Path, where: str, text: str) -> None:
    """A gitignore negation from the repository would un-match the defaults: it is refused and
    shown, the rest of its patterns add secrets, and no secret's bytes reach the store."""
    ws = make_repo(tmp_path / "ws", {where: text})
    config = load_config(ws)
    assert config.secrets.repository_patterns == ["*.vault"] and config.secrets.extra_patterns == []
    (problem,) = config.problems
    assert problem.startswith(where) and "'!*', '!.env', '!**/id_rsa'" in problem
    assert "a repository may only add secrets" in problem
    engine = Engine(ws, config)
    secrets = {".env": "API_KEY=sk-live\n", "id_rsa": "-----BEGIN KEY-----\n", "deploy/x.vault": "v\n"}
    entry, _ = batch(engine, ws, {**secrets, "a.txt": "a\n"})
    assert {f.path: f.withheld for f in entry.files} == {**dict.fromkeys(secrets, "secret"), "a.txt": None}
    assert not any(engine.store.has(engine.store.hash_blob(c.encode())) for c in secrets.values())
    assert engine.store.has(engine.store.hash_blob(b"a\n"))
    assert engine.status().config_problems == [problem]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.text(max_size=12), st.sampled_from(["!*", "!**", "!.env", "!*.pem", "!/**", "\\!x", " !*"]))))
def test_no_repository_pattern_un_matches_a_default_secret(tmp_path: Path, patterns: list[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    listed = ", ".join(json.dumps(p, ensure_ascii=False).replace("\x7f", "\\u007f") for p in patterns)  # TOML strings
    (ws / ".takeback.toml").write_text(f"[secrets]\nextra_patterns = [{listed}]\n")
    config = load_config(ws)
    assert all("may only add secrets" in p or "not a gitignore pattern" in p for p in config.problems)  # it was read
    capturer = Capturer(None, Workspace(ws), config)  # type: ignore[arg-type]
    assert all(capturer.is_secret(p) for p in (".env", "config/.env.local", "id_rsa", "deploy/prod.pem", ".aws/credentials"))


def test_a_pattern_gitignore_cannot_read_is_reported_not_fatal(tmp_path: Path) -> None:
    """``\\`` alone is no gitignore pattern (pathspec refuses it): from the repository or the person,
    it is reported and left out, and recording goes on (it used to fail every capture)."""
    ws = make_repo(tmp_path / "ws", {".takeback.toml": '[secrets]\nextra_patterns = ["\\\\", "*.vault", "!"]\n'})
    write_user_config(os.environ["XDG_CONFIG_HOME"], '[secrets]\nextra_patterns = ["a\\\\"]\n')
    config = load_config(ws)
    assert config.secrets.repository_patterns == ["*.vault"] and config.secrets.extra_patterns == []
    assert sorted(config.problems) == [
        ".takeback.toml: secrets.extra_patterns ignored: '!': a repository may only add secrets, a negation would "
        "stop files being treated as secrets; '\\\\': not a gitignore pattern",
        "secrets.extra_patterns: 'a\\\\' ignored: not a gitignore pattern",
    ]
    entry, _ = batch(Engine(ws, config), ws, {"x.vault": "v\n", ".env": "K=1\n", "a.txt": "a\n"})
    assert {f.path: f.withheld for f in entry.files} == {"x.vault": "secret", ".env": "secret", "a.txt": None}


def test_the_person_may_still_un_match_a_secret(tmp_path: Path) -> None:
    """Your own extra_patterns are gitignore lines after the defaults: a negation of yours works."""
    ws = make_repo(tmp_path / "ws", {".takeback.toml": '[secrets]\nextra_patterns = ["!.env"]\n'})
    write_user_config(os.environ["XDG_CONFIG_HOME"], '[secrets]\nextra_patterns = ["!.env.example"]\n')
    capturer = Capturer(None, Workspace(ws), load_config(ws))  # type: ignore[arg-type]
    assert not capturer.is_secret(".env.example") and capturer.is_secret(".env")


def test_the_storage_doc_says_what_undo_does_with_withheld_files(ws: Path, engine) -> None:
    """docs/storage.md quotes the reasons undo gives for the secret files it cannot take back:
    one the turn changed (its content is not stored) and one it created (deleting it could not
    be undone)."""
    doc = " ".join((Path(__file__).parents[2] / "docs" / "storage.md").read_text().split())
    write_files(ws, {".env": "A=1\n"})
    batch(engine, ws, {".env": "A=2\n", "deploy.key": "k\n", "a.txt": "a\n"})
    result = engine.undo()
    reasons = {s.path: s.reason for s in result.skipped}
    assert sorted(reasons) == [".env", "deploy.key"] and not (ws / "a.txt").exists()
    assert (ws / ".env").read_text() == "A=2\n" and (ws / "deploy.key").read_text() == "k\n"
    for reason in reasons.values():
        assert f"`{reason}`" in doc, reason


# ---------------------------------------------------------------------- what reaches a terminal

TERMINAL_ACTS_ON = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
HOSTILE = [
    "\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "\x1b]52;c;ZXZpbA==\x07", "\x9b31m", "\x7f", "\udcff", "\r", "\n",
    "\u202e", '"', "\\", "\x00", "\t", "é",
]
TEXTS = st.lists(st.one_of(st.text(max_size=6), st.sampled_from(HOSTILE)), max_size=6).map("".join)


def _rendered(print_it, value) -> str:
    """What the CLI writes for ``value``: its texts quoted (for_terminal), through the stream guard."""
    out = io.StringIO()
    with contextlib.redirect_stdout(TerminalStream(out)):  # type: ignore[type-var]
        print_it(render.for_terminal(value))
    return out.getvalue()


def _entry(text: list[str], path: str) -> Entry:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return Entry(
        id="01ID", number=3, created_at=at, state="applied", label=text[0], session=text[1], agent=text[2],
        commands=[text[3]], notices=[text[4]], head=text[5],
        files=[FileChange(path=path, kind="renamed", old_path=text[6]), FileChange(path=text[7], kind="added")],
        checkpoints=[Checkpoint(id="a", at=at, label=text[8], paths=[path]), Checkpoint(id="b", at=at, paths=[])],
        checks=[Check(name=text[9], status="failed", exit_code=1)],
    )


def _result(text: list[str], path: str) -> OperationResult:
    return OperationResult(
        operation="undo", verdict="partial", applied=True, next_action=text[0], message=text[1], notices=[text[2]],
        restored=[FileOutcome(path=path, action="write")], skipped=[SkippedFile(path=text[3], reason=text[4])],
        conflicts=[Conflict(path=text[5], reason=text[6], advice=text[7])], patch=text[8],
    )


@settings(max_examples=100, deadline=None)
@given(st.lists(TEXTS, min_size=10, max_size=10), TEXTS)
def test_no_text_reaches_the_terminal_as_control_characters(texts: list[str], path: str) -> None:
    """Whatever a record's names, prompts and commands hold, the human text has no control
    character (C0, DEL, C1, a byte that is not UTF-8, a bidi override) but the layout's newlines
    and tabs, and no text adds a line to the layout."""
    plain = ["x"] * 10
    for print_it, make in ((render.print_entry, _entry), (render.print_log, lambda t, p: [_entry(t, p)]),
                           (render.print_result, _result)):
        shown = _rendered(print_it, make(texts, path))
        assert not TERMINAL_ACTS_ON.search(shown), shown
        if print_it is not render.print_result:  # a patch body's lines are its own
            assert shown.count("\n") == _rendered(print_it, make(plain, "x")).count("\n"), shown


@settings(max_examples=50, deadline=None)
@given(st.lists(TEXTS, min_size=10, max_size=10), TEXTS)
def test_the_mcp_text_is_quoted_the_same_way(texts: list[str], path: str) -> None:
    """The MCP server's text beside its structured content (which an agent's terminal may show)."""
    from takeback.mcp import text

    plain = ["x" if t else "" for t in texts]  # the same layout: an empty session has no line
    for shown, layout in ((text.entry(_entry(texts, path)), text.entry(_entry(plain, "x"))),
                          (text.timeline([_entry(texts, path)], "/w", "/s"), text.timeline([_entry(plain, "x")], "/w", "/s")),
                          (text.timeline([], texts[0], path), text.timeline([], "w", "s")),
                          (text.result(_result(texts, path), "Undo", "run it"), text.result(_result(plain, "x"), "Undo", "run it"))):
        assert not TERMINAL_ACTS_ON.search(shown) and shown.count("\n") == layout.count("\n"), shown


def _c_unquoted(body: str) -> bytes:
    """The bytes a quoted name's body stands for: C escapes, and ``\\uXXXX`` (a bidi control)
    as that character's UTF-8 bytes, which ``codecs.escape_decode`` alone does not read."""
    as_bytes = re.sub(r"(\\\\)|\\u([0-9a-f]{4})",
                      lambda m: m.group(1) or "".join(f"\\x{b:02x}" for b in chr(int(m.group(2), 16)).encode()), body)
    return codecs.escape_decode(as_bytes.encode("utf-8", "surrogateescape"))[0]


@given(st.lists(st.one_of(st.text(max_size=6), st.sampled_from(HOSTILE)), max_size=6).map("".join))
def test_a_quoted_name_reads_back_exactly(name: str) -> None:
    """core.quotePath style: unchanged when it prints and holds no quote or backslash, else
    quoted with C escapes that give back the very bytes (a surrogate: the byte that was not UTF-8;
    a bidi control: ``\\u`` and its code point)."""
    quoted = quote_path(name)
    if quoted == name:
        assert not TERMINAL_ACTS_ON.search(name) and '"' not in name and "\\" not in name
        return
    assert quoted.startswith('"') and quoted.endswith('"') and not TERMINAL_ACTS_ON.search(quoted)
    data = _c_unquoted(quoted[1:-1])
    assert data.decode("utf-8", "surrogateescape") == name
    assert quote_path("a\u202eb.txt") == '"a\\u202eb.txt"'  # a bidi override: escaped, not reordering the line


def test_names_are_quoted_the_way_git_quotes_them(tmp_path: Path) -> None:
    """The same answers as ``git ls-files`` with core.quotePath=false, for names git can hold."""
    ws = make_repo(tmp_path / "ws", {"plain.txt": "a\n"})
    names = ["tab\there", 'quote"d', "back\\slash", "esc\x1b[2J", "ünïcode", "bell\x07", "del\x7f"]
    for name in names:
        (ws / name).write_text("x\n")
    listed = subprocess.run(["git", "-c", "core.quotePath=false", "ls-files", "--others"], cwd=ws, capture_output=True,
                            text=True, check=True).stdout.splitlines()
    assert sorted(listed) == sorted(quote_path(n) for n in names)
