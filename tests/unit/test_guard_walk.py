"""The guard's bounded looks at the disk (``guard/walk.py``) where they meet what is not there,
not a folder, or not a repository: each answers without raising."""

from __future__ import annotations

from pathlib import Path

from takeback.guard import walk


def test_counts_sizes_and_folders_of_what_is_or_is_not_there(tmp_path: Path) -> None:
    (tmp_path / "d" / "e").mkdir(parents=True)
    for name in ("d/a", "d/b", "d/e/c"):
        (tmp_path / name).write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "d")
    assert walk.count_files(str(tmp_path / "d"), 10) == 3
    assert walk.count_files(str(tmp_path / "d"), 1) == 2  # over the limit: counting stops
    assert walk.count_files(str(tmp_path / "d" / "a"), 10) == 1
    assert walk.count_files(str(tmp_path / "missing"), 10) == 0
    assert walk.count_files(str(tmp_path / "link"), 10) == 1  # a link is one entry, not followed
    assert walk.size(str(tmp_path / "d" / "a")) == 1
    assert walk.size(str(tmp_path / "d")) is None and walk.size(str(tmp_path / "missing")) is None
    assert walk.is_dir(str(tmp_path / "d")) and not walk.is_dir(str(tmp_path / "missing"))
    assert not walk.is_dir(str(tmp_path / "link"))


def test_the_current_branch_from_head_or_none(tmp_path: Path) -> None:
    assert walk.current_branch(str(tmp_path)) is None  # no repository
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/topic\n")
    assert walk.current_branch(str(tmp_path)) == "topic"
    (tmp_path / ".git" / "HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")
    assert walk.current_branch(str(tmp_path)) is None  # detached
    other = tmp_path / "wt"
    other.mkdir()
    (other / ".git").write_text("not a gitdir line\n")
    assert walk.current_branch(str(other)) is None
