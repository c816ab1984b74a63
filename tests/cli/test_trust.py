"""The repository is not trusted, as the CLI shows it: a crafted repository runs nothing and
touches nothing outside the workspace, its refused settings are reported by begin and status,
a crafted journal is refused with one line, and a turn ends under the settings it began with."""

from __future__ import annotations

import json
import pickle
from datetime import UTC, datetime
from pathlib import Path

from helpers import write_files, write_user_config

from .conftest import Snapshot, Takeback, expect_error

REFUSED = 'store_dir = ".tb"\n[secrets]\npatterns = []\n'


class _RunsCode:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def test_a_crafted_repository_runs_nothing_and_its_settings_are_reported(tb: Takeback, tmp_path: Path) -> None:
    ws = tb.cwd
    marker, outside = tmp_path / "code-ran", tmp_path / "outside.txt"
    outside.write_text("the person's\n")
    write_files(ws, {".takeback.toml": REFUSED})
    (ws / ".tb").mkdir()
    (ws / ".tb" / "timeline.pickle").write_bytes(pickle.dumps((3, None, _RunsCode(marker))))
    journal = {"entry": "x", "operation": "undo", "started": datetime.now(UTC).isoformat(),
               "files": [{"path": "../outside.txt", "before": None, "after": None}]}
    (ws / ".tb" / "journal.json").write_text(json.dumps(journal))

    assert tb("log").code == 0  # what an agent hook, or the person, runs first in a fresh clone
    begun = tb("begin", "--label", "t")
    assert begun.code == 0 and begun.text.startswith("turn #1 open")
    warnings = begun.err.splitlines()
    assert [w.split(" ignored")[0] for w in warnings] == [
        "takeback: warning: .takeback.toml: store_dir", "takeback: warning: .takeback.toml: secrets.patterns",
    ]
    assert "only your own settings can" in warnings[0]
    write_files(ws, {"src/app.py": "changed\n", ".env": "KEY=1\n"})
    entry = tb.json("end")
    assert {f["path"]: f["withheld"] for f in entry["files"]} == {"src/app.py": None, ".env": "secret"}
    assert tb("undo").code == 10  # partial: the created .env is kept (its deletion could not be undone)
    assert (ws / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    assert not marker.exists() and outside.read_text() == "the person's\n"
    assert sorted(p.name for p in (ws / ".tb").iterdir()) == ["journal.json", "timeline.pickle"]

    status = tb("status")
    assert status.code == 0 and status.err == ""
    assert [line.split(" ignored")[0] for line in status.text.splitlines() if line.startswith("settings")] == [
        "settings   .takeback.toml: store_dir", "settings   .takeback.toml: secrets.patterns",
    ]
    assert len(tb.json("status")["config_problems"]) == 2


def test_a_crafted_journal_in_the_store_is_refused(tb: Takeback, tmp_path: Path) -> None:
    ws = tb.cwd
    store = tb.store()
    outside = tmp_path / "outside.txt"
    outside.write_text("the person's\n")
    journal = {"entry": "x", "operation": "undo", "started": datetime.now(UTC).isoformat(),
               "files": [{"path": "src/app.py", "before": None, "after": None},
                         {"path": "../outside.txt", "before": None, "after": None}]}
    (store / "journal.json").write_text(json.dumps(journal))
    snap = Snapshot(tb)
    result = expect_error(tb("--json", "log"), 7, r"the journal .* names '\.\./outside\.txt'")
    assert result.json()["error"] == "store"
    snap.assert_unchanged()
    assert outside.read_text() == "the person's\n" and (ws / "src" / "app.py").exists()


def test_a_turn_ends_under_the_settings_it_began_with(tb: Takeback) -> None:
    """The agent rewrites the repository's settings and the person's file between begin and end
    (separate processes): its own .env is still withheld, its files still stored in full."""
    ws = tb.cwd
    tb.ok("begin")
    write_files(ws, {".takeback.toml": "max_file_bytes = 0\n[secrets]\npatterns = []\nstore_content = true\n"})
    write_user_config(tb.env["XDG_CONFIG_HOME"], "[secrets]\npatterns = []\nstore_content = true\n")
    write_files(ws, {".env": "API_KEY=sk-live-turn\n", "src/app.py": "changed\n"})
    entry = tb.json("end")
    assert {f["path"]: f["withheld"] for f in entry["files"]} == {
        ".env": "secret", ".takeback.toml": None, "src/app.py": None,
    }


def test_a_repository_negation_cannot_copy_secrets_into_the_store(tb: Takeback) -> None:
    """``extra_patterns = ["!*"]`` in the repository: refused and shown; .env and the key stay
    withheld (digest only) through a real begin and end."""
    ws = tb.cwd
    write_files(ws, {"pyproject.toml": '[tool.takeback.secrets]\nextra_patterns = ["!*", "*.vault"]\n'})
    begun = tb("begin")
    assert begun.code == 0
    assert "pyproject.toml [tool.takeback]: secrets.extra_patterns ignored: '!*': a repository may only add secrets" in begun.err
    write_files(ws, {".env": "API_KEY=sk-live\n", "deploy/id_ed25519": "KEY\n", "x.vault": "v\n", "a.txt": "a\n"})
    entry = tb.json("end")
    assert {f["path"]: f["withheld"] for f in entry["files"]} == {
        ".env": "secret", "deploy/id_ed25519": "secret", "x.vault": "secret", "a.txt": None,
    }
    (problem,) = tb.json("status")["config_problems"]
    assert "'!*'" in problem


def test_a_config_file_linked_out_of_the_workspace_is_not_read(tb: Takeback, tmp_path: Path) -> None:
    ws = tb.cwd
    elsewhere = tmp_path / "theirs.toml"
    elsewhere.write_text('[tool.takeback]\nmax_file_bytes = 1\n')
    (ws / "pyproject.toml").symlink_to(elsewhere)
    status = tb("status")
    assert status.code == 0
    assert f"settings   pyproject.toml ignored: it is a symbolic link that leads outside the workspace ({elsewhere})" in status.text
    assert "symbolic link that leads outside" in tb("begin").err
    write_files(ws, {"a.txt": "more than one byte\n"})
    (entry_file,) = tb.json("end")["files"]
    assert entry_file["withheld"] is None  # the linked max_file_bytes = 1 did not apply
