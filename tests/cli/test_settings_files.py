"""Your own settings, as the real ``takeback`` reads them: where the stores live when no
TAKEBACK_HOME says, a workspace's table merged into the top level key by key, a config file
that is a link (dotfile managers) read through it, and every setting that cannot be used — a bad
value, a ``workspaces`` that is no table, a folder or a link to nothing where the file should be
— reported on one ``settings`` line of ``takeback status`` (and a warning of ``begin``) while the
rest applies. Real files in temp folders.
"""

from __future__ import annotations

from pathlib import Path

from helpers import write_user_config

from .conftest import Takeback


def settings_lines(tb: Takeback) -> list[str]:
    return [line for line in tb.ok("status").text.splitlines() if line.startswith("settings ")]


def retention(tb: Takeback) -> str:
    (line,) = [line for line in tb.ok("status").text.splitlines() if line.startswith("retention ")]
    return line


def test_without_takeback_home_the_stores_live_in_the_state_home(tb: Takeback) -> None:
    env = {k: v for k, v in tb.env.items() if k != "TAKEBACK_HOME"}
    store = Path(tb.json("status", env=env)["store"])
    assert store.parent == Path(env["XDG_STATE_HOME"], "takeback", "stores")
    env.pop("XDG_STATE_HOME")
    store = Path(tb.json("status", env=env)["store"])
    assert store.parent == Path(env["HOME"], ".local", "state", "takeback", "stores")


def test_a_workspace_table_adds_to_the_top_level_key_by_key(tb: Takeback) -> None:
    write_user_config(tb.env["XDG_CONFIG_HOME"], (
        "[retention]\nmax_entries = 50\nmax_age_days = 9\n"
        f'[workspaces."{tb.cwd}".retention]\nmax_age_days = 3\n'
    ))
    assert retention(tb).startswith("retention  50 entries, 3 days, ")
    assert settings_lines(tb) == []


def test_bad_values_are_one_line_each_and_the_rest_applies(tb: Takeback) -> None:
    config = write_user_config(tb.env["XDG_CONFIG_HOME"], (
        'lock_timeout = "soon"\nno_such_key = 1\nworkspaces = 5\n[retention]\nmax_entries = 7\nmax_age_days = "a week"\n'
        '[secrets]\nextra_patterns = ["*.vault", 5]\n'
    ))
    assert settings_lines(tb) == [
        f'settings   {config}: workspaces ignored: not a table of [workspaces."<folder>"] tables',
        "settings   retention.max_age_days: Input should be a valid integer, unable to parse string as an integer (default used)",
        "settings   secrets.extra_patterns.1: Input should be a valid string (default used)",
        "settings   lock_timeout: Input should be a valid number, unable to parse string as a number (default used)",
        "settings   no_such_key: no such setting (ignored)",
    ]
    assert retention(tb).startswith("retention  7 entries, 30 days, ")  # the bad value's default, its neighbour's value
    begun = tb("begin", "--label", "under these settings")
    assert begun.code == 0 and begun.text.startswith("turn #1 open")
    assert begun.err.splitlines() == [f"takeback: warning: {line.split('   ', 1)[1]}" for line in settings_lines(tb)]


def test_a_config_file_linked_from_a_dotfiles_repository_is_read_through_the_link(tb: Takeback, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "takeback.toml"
    dotfiles.parent.mkdir()
    dotfiles.write_text("[retention]\nmax_entries = 42\n")
    link = Path(tb.env["XDG_CONFIG_HOME"], "takeback", "config.toml")
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfiles)
    assert retention(tb).startswith("retention  42 entries, ")
    assert settings_lines(tb) == []
    dotfiles.unlink()  # the dotfiles repository moved: the link leads nowhere
    assert settings_lines(tb) == [f"settings   {link} ignored: it is a symbolic link to {dotfiles}, which does not exist"]
    assert retention(tb).startswith("retention  500 entries, ")


def test_a_folder_where_a_config_file_should_be_is_reported(tb: Takeback) -> None:
    config = Path(tb.env["XDG_CONFIG_HOME"], "takeback", "config.toml")
    config.mkdir(parents=True)
    (tb.cwd / ".takeback.toml").mkdir()
    assert settings_lines(tb) == [f"settings   {config} ignored: it is not a file", "settings   .takeback.toml ignored: it is not a file"]
    assert tb.json("status")["config_problems"] == [line.split("   ", 1)[1] for line in settings_lines(tb)]


def test_a_repository_file_nested_too_deeply_is_reported_and_everything_still_works(tb: Takeback) -> None:
    """A ``.takeback.toml`` of arrays nested deeper than Python's TOML reader goes: it used to stop
    every command and every hook in that repository (a cloned file switching recording off);
    now it is one settings line, ignored."""
    (tb.cwd / ".takeback.toml").write_text("fsync = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert settings_lines(tb) == ["settings   .takeback.toml ignored: it nests too deeply to be read"]
    begun = tb("begin", "--label", "still recorded")
    assert begun.code == 0 and begun.err == "takeback: warning: .takeback.toml ignored: it nests too deeply to be read\n"
    tb.ok("end")
    assert [e["label"] for e in tb.json("log")] == ["still recorded"]
