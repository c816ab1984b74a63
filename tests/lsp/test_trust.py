"""The language server takes its settings from the person (initializationOptions.settings, the
environment, the person's config file), never the folder's repository: a repository's store_dir,
a negation of the secrets patterns and a config file linked out of the workspace are ignored,
logged and listed in takeback/status."""

from __future__ import annotations

from pathlib import Path

from helpers import make_repo

from .editor import start


async def test_settings_come_from_the_client_not_the_repository(tmp_path: Path, isolated_environment: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".takeback.toml": 'store_dir = ".tb"\nmax_file_bytes = 100\n', "a.txt": "a\n"})
    chosen = tmp_path / "chosen-store"
    editor, _ = await start("neovim", [repo], options={"settings": {"store_dir": str(chosen), "max_file_bytes": 1000}})
    try:
        status = await editor.request("takeback/status", {})
        assert status["store"] == str(chosen) and (chosen / "objects.git").is_dir()
        assert not (repo / ".tb").exists()
        (problem,) = status["configProblems"]
        assert problem.startswith(".takeback.toml: store_dir ignored: a repository may not set it")
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()


async def test_a_repository_cannot_switch_secrets_off_nor_speak_through_a_link(tmp_path: Path, isolated_environment: Path) -> None:
    """A negation in the repository's secrets patterns and a .takeback.toml linked out of the
    workspace: both refused and listed in takeback/status, the defaults still in force."""
    outside = tmp_path / "theirs.toml"
    outside.write_text('store_dir = "/tmp/x"\nmax_file_bytes = 1\n')
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": '[tool.takeback.secrets]\nextra_patterns = ["!*"]\n', "a.txt": "a\n"})
    (repo / ".takeback.toml").symlink_to(outside)
    editor, _ = await start("neovim", [repo])
    try:
        status = await editor.request("takeback/status", {})
        assert status["configProblems"] == [
            f".takeback.toml ignored: it is a symbolic link that leads outside the workspace ({outside})",
            "pyproject.toml [tool.takeback]: secrets.extra_patterns ignored: '!*': a repository may only add secrets, "
            "a negation would stop files being treated as secrets",
        ]
        assert status["store"] != "/tmp/x"
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()
