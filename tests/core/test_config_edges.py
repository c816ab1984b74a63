"""Settings that cannot be read are reported, one line each, and the rest still apply: a TOML
file that does not parse, a repository file that is a symbolic link leading outside the
workspace, a top-level store_dir in the person's own file, a repository key that does not exist.
Real files in temp folders, read by the real ``load_config``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from takeback.config import load_config


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    monkeypatch.setenv("TAKEBACK_CONFIG", str(tmp_path / "user.toml"))
    for name in ("TAKEBACK_STORE_DIR", "TAKEBACK_FSYNC", "TAKEBACK_MAX_FILE_BYTES"):
        monkeypatch.delenv(name, raising=False)
    return folder.resolve()


def test_a_repository_file_that_does_not_parse_is_reported(ws: Path) -> None:
    (ws / ".takeback.toml").write_text("max_file_bytes = = 3\n")
    config = load_config(ws)
    assert any(p.startswith(".takeback.toml:") for p in config.problems)
    assert config.max_file_bytes == 10 * 1024 * 1024  # the default still holds


def test_a_repository_file_linking_outside_is_not_read(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("max_file_bytes = 5\n")
    (ws / ".takeback.toml").symlink_to(outside)
    config = load_config(ws)
    assert config.max_file_bytes == 10 * 1024 * 1024
    assert any("symbolic link that leads outside" in p for p in config.problems)


def test_an_unknown_repository_key_and_a_top_level_store_dir_are_reported(ws: Path, tmp_path: Path) -> None:
    (ws / ".takeback.toml").write_text("no_such_thing = 1\n")
    (tmp_path / "user.toml").write_text(f'store_dir = "{tmp_path / "one"}"\n')
    config = load_config(ws)
    assert any("no_such_thing ignored: no such setting" in p for p in config.problems)
    assert any("store_dir at the top level" in p for p in config.problems)
    assert config.store_dir is None or Path(config.store_dir) != tmp_path / "one"


def test_environment_overrides_apply(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAKEBACK_STORE_DIR", str(tmp_path / "store"))
    monkeypatch.setenv("TAKEBACK_FSYNC", "yes")
    monkeypatch.setenv("TAKEBACK_MAX_FILE_BYTES", "123")
    config = load_config(ws)
    assert Path(config.store_dir) == tmp_path / "store"
    assert config.fsync is True and config.max_file_bytes == 123


def test_a_repository_may_only_make_the_guard_stricter(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "user.toml").write_text('[guard]\ncannot_ask = "deny"\nkeep_bytes = 1000\n')
    (ws / ".takeback.toml").write_text('[guard]\ncannot_ask = "warn"\nkeep_bytes = 5000\nask = ["make *", "make *"]\n'
                                       'effects = {unknown = "deny", system = "allow"}\n')
    config = load_config(ws)
    assert config.guard.cannot_ask == "deny" and config.guard.keep_bytes == 1000
    assert config.guard.ask == ["make *"] and config.guard.effects == {"unknown": "deny"}
    problems = " | ".join(config.problems)
    assert "guard.cannot_ask ignored: a repository may only make it 'deny'" in problems
    assert "guard.keep_bytes ignored: a repository may only lower it (yours is 1000)" in problems
    assert "system = 'allow' (yours is 'ask')" in problems
    (ws / ".takeback.toml").write_text('[guard]\nkeep_bytes = 10\ncannot_ask = "deny"\nenabled = true\n[guard.effects]\nbogus = "ask"\n')
    config = load_config(ws)
    assert config.guard.keep_bytes == 10 and config.guard.enabled
    assert not any("cannot_ask" in p or "enabled" in p for p in config.problems)
    assert any("no such effect class: bogus" in p for p in config.problems)
