"""An edit batch the engine writes itself (``apply_batch``, as takeback/applyEdit does without an
editor) over secrets whose content the store withholds: when a later write of the batch fails
(a real fault: a file stands where the batch needs a folder), every secret is put back from the
journal's own backup, byte for byte (the store never had it), whether the batch gave the
secret's old content or let the engine read it from disk; the batch is then recorded as not
applied. The same batch without the fault writes the secrets; its undo leaves them (the store
never had their old content) and says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import make_repo, tree_state, write_files
from takeback.core.models import BatchChange
from takeback.errors import TakebackError

from .support import open_engine, store_contains

SECRETS = {".env": "API_KEY=s3cr3t-one\n", "deploy/secrets.json": '{"token": "s3cr3t-two"}\n'}


def _changes(blocked: bool) -> list[BatchChange]:
    return [
        BatchChange(path=".env", before=SECRETS[".env"].encode(), after=b"API_KEY=rotated\n"),
        BatchChange(path="deploy/secrets.json", after=b'{"token": "rotated"}\n'),  # before: read from disk
        BatchChange(path="blocker/new.txt" if blocked else "new.txt", after=b"new\n"),
    ]


def test_a_failed_batch_puts_the_withheld_secrets_back_from_the_journal(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {**SECRETS, "blocker": "a file, not a folder\n"})
    engine = open_engine(ws)
    before = tree_state(ws)
    with pytest.raises(TakebackError, match="blocker"):
        engine.apply_batch(_changes(blocked=True), label="rotate keys")
    assert tree_state(ws) == before
    entry = open_engine(ws).entry("last")
    assert entry.label == "rotate keys" and entry.state == "not-applied"
    assert not (engine.store.path / "journal.json").exists()
    assert store_contains(engine.store.path, b"s3cr3t-one") == [] and store_contains(engine.store.path, b"s3cr3t-two") == []


def test_an_applied_batch_over_secrets_is_written_and_undone(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", SECRETS)
    engine = open_engine(ws)
    before = tree_state(ws)
    entry, _ = engine.apply_batch(_changes(blocked=False), label="rotate keys")
    assert entry.state == "applied"
    assert (ws / ".env").read_text() == "API_KEY=rotated\n" and (ws / "new.txt").read_text() == "new\n"
    result = engine.undo()
    # The store never held the secrets' old content: the undo leaves them, and says why.
    assert result.verdict == "partial"
    assert {s.path: s.reason for s in result.skipped} == {
        p: "secret file: its content is not stored (secrets policy), so it cannot be brought back" for p in SECRETS
    }
    assert not (ws / "new.txt").exists() and (ws / ".env").read_text() == "API_KEY=rotated\n"
    write_files(ws, SECRETS)
    assert tree_state(ws) == before
