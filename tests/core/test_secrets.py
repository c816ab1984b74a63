"""Secrets: a turn touching .env (or keys) gets a notice, the content never reaches the store,
a created secret is not deleted by a revert (that could never be undone), a modified one is
skipped with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import git, write_files
from takeback.core.models import BatchChange
from takeback.errors import StateError

from .support import assert_result_shape, batch, full_state, open_engine, store_contains

SECRET = b"API_KEY=sk-live-51HxTOPSECRETvalue0042\n"
SECRET2 = b"API_KEY=sk-live-ROTATEDsecret0099\n"
PRIVATE_KEY = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEPRIVATEKEYBYTES\n-----END OPENSSH PRIVATE KEY-----\n"


def _leaks(engine, *needles: bytes) -> list[str]:
    hits = []
    for needle in needles:
        hits += store_contains(engine.store.path, needle)
        hits += store_contains(engine.store.path, needle.strip().split(b"=")[-1])
    return hits


@pytest.mark.parametrize("how", ["bracket", "batch"])
def test_created_secret_notice_no_copy_and_undo_keeps_it(ws: Path, engine, how: str) -> None:
    start = full_state(ws)
    if how == "bracket":
        engine.begin_turn()
        write_files(ws, {".env": SECRET, "config/id_ed25519": PRIVATE_KEY, "app.cfg": b"debug=1\n"})
        entry = engine.end_turn()
    else:
        entry, _ = batch(engine, ws, {".env": SECRET, "config/id_ed25519": PRIVATE_KEY, "app.cfg": b"debug=1\n"})
    files = {f.path: f for f in entry.files}
    assert files[".env"].withheld == "secret" and files["config/id_ed25519"].withheld == "secret"
    assert files["app.cfg"].withheld is None
    assert ".env: secret file, content not stored (secrets policy)" in entry.notices
    assert "config/id_ed25519: secret file, content not stored (secrets policy)" in entry.notices
    assert _leaks(engine, SECRET, PRIVATE_KEY) == []
    assert "content withheld (secret)" in engine.diff("last", ".env")
    with pytest.raises(StateError, match=r"\.env: content withheld by policy \(secret\)"):
        engine.file_at("last", ".env")

    # Deleting the secrets could never be undone (their bytes are not stored): they are kept,
    # with the reason, and everything else of the turn is undone.
    result = engine.undo()
    assert_result_shape(result)
    assert (result.verdict, result.applied) == ("partial", True)
    assert sorted(s.path for s in result.skipped) == [".env", "config/id_ed25519"]
    assert all("could not be undone" in s.reason for s in result.skipped)
    assert (ws / ".env").read_bytes() == SECRET
    assert (ws / "config" / "id_ed25519").read_bytes() == PRIVATE_KEY
    assert not (ws / "app.cfg").exists()
    assert _leaks(engine, SECRET, PRIVATE_KEY) == []
    assert not (engine.store.path / "journal-backup").exists()

    # ... so the undo itself can be undone completely.
    result = engine.redo()
    assert_result_shape(result)
    assert result.verdict == "safe"
    assert (ws / "app.cfg").read_bytes() == b"debug=1\n" and (ws / ".env").read_bytes() == SECRET
    (ws / ".env").unlink()
    (ws / "config" / "id_ed25519").unlink()
    (ws / "config").rmdir()
    (ws / "app.cfg").unlink()
    assert full_state(ws) == start


def test_modified_secret_is_skipped_with_a_reason(ws: Path, ws_kind: str) -> None:
    write_files(ws, {".env.local": SECRET})
    if ws_kind != "plain":
        git(ws, "add", "-A")  # a person who committed their .env: the git scanner reads it from the index
        git(ws, "commit", "-q", "-m", "env")
    engine = open_engine(ws, git_scanner=ws_kind != "git-walk")
    engine.begin_turn()
    (ws / ".env.local").write_bytes(SECRET2)
    (ws / "README.md").write_text("changed\n")
    entry = engine.end_turn()
    assert ".env.local: secret file, content not stored (secrets policy)" in entry.notices
    assert _leaks(engine, SECRET, SECRET2) == []

    result = engine.undo()
    assert_result_shape(result)
    assert (result.verdict, result.applied) == ("partial", True)
    (skipped,) = result.skipped
    assert skipped.path == ".env.local"
    assert skipped.reason == "secret file: its content is not stored (secrets policy), so it cannot be brought back"
    assert (ws / ".env.local").read_bytes() == SECRET2
    assert (ws / "README.md").read_text() == "# demo\n"
    assert engine.entry("1").state == "partial"
    assert _leaks(engine, SECRET, SECRET2) == []


def test_secret_changed_since_created_is_kept(ws: Path, engine) -> None:
    batch(engine, ws, {".env": SECRET})
    (ws / ".env").write_bytes(SECRET2)  # the person put their real key in
    result = engine.undo()
    assert result.verdict == "refused" and not result.applied
    assert [s.path for s in result.skipped] == [".env"]
    assert "the file changed since" in result.skipped[0].reason
    assert (ws / ".env").read_bytes() == SECRET2


def test_secret_before_image_from_an_editor_buffer_is_not_stored(ws: Path, engine) -> None:
    engine.record_batch([BatchChange(path="deploy.pem", after=PRIVATE_KEY, before=SECRET)])
    assert _leaks(engine, SECRET, PRIVATE_KEY) == []


def test_secrets_can_be_opted_in(ws: Path, ws_kind: str) -> None:
    engine = open_engine(ws, secrets={"store_content": True}, git_scanner=ws_kind != "git-walk")
    entry, _ = batch(engine, ws, {".env": SECRET})
    assert entry.files[0].withheld is None and entry.notices == []
    assert engine.file_at("last", ".env") == SECRET


SPEC_CASES = [
    ["*.pem", ".env", "!keep.pem", "secrets/", "**/deploy/*.key", "(?P<odd>", "[ab].txt", "!b.txt"],
    ["!*.pem", "*"],  # a negation before what it would un-match
    ["!nothing"],  # no pattern that includes
    [],
]
SPEC_PATHS = [
    "a.pem", "x/keep.pem", "keep.pem", ".env", "x/.env", "x/.env/y", "secrets/a", "a/secrets/b", "secrets",
    "deploy/k.key", "a/deploy/k.key", "a/deploy/x/k.key", "(?P<odd>", "a.txt", "b.txt", "c.txt", "main.py",
    "src/ä.py", "src/.envrc", "./x/.env", "/a.pem",
]


@pytest.mark.parametrize("patterns", SPEC_CASES)
def test_the_joined_secrets_check_answers_as_the_whole_spec(patterns: list[str]) -> None:
    """``SecretSpec`` answers most paths with one search of the including patterns joined; every
    path gets the answer pathspec's whole gitignore spec gives, negations and folders included."""
    import pathspec

    from takeback.workspace.capture import SecretSpec

    joined, whole = SecretSpec(tuple(patterns)), pathspec.GitIgnoreSpec.from_lines(patterns)
    for path in SPEC_PATHS:
        assert joined.match(path) == whole.match_file(path), (patterns, path)


def test_a_path_no_secrets_pattern_names_is_answered_by_one_search() -> None:
    """The default patterns: a source file is not asked of each pattern in turn (pathspec's
    whole spec, counted); a secret still is, to apply gitignore's order."""
    from takeback.config import DEFAULT_SECRET_PATTERNS
    from takeback.workspace.capture import SecretSpec

    spec = SecretSpec(tuple(DEFAULT_SECRET_PATTERNS))
    asked: list[str] = []
    whole = spec.spec.match_file
    spec.spec.match_file = lambda path: asked.append(path) or whole(path)  # type: ignore[method-assign]
    assert not spec.match("src/deep/module_12.py") and not spec.match("README.md")
    assert asked == []
    assert spec.match("config/.env") and asked == ["config/.env"]
