"""``oslite``, the hook client's ``os``, answers what ``os`` answers (property tests over paths
made of the parts that make path rules differ: empty, ``.``, ``..``, leading and doubled
slashes), and its environment is the very one ``os.environ`` reads and changes."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from takeback import oslite

PARTS = st.sampled_from(["", ".", "..", "a", "b.c", ".hidden", "..x", "é", "\udcff"])
PATHS = st.builds(lambda lead, parts: lead + "/".join(parts), st.sampled_from(["", "/", "//", "///"]),
                  st.lists(PARTS, max_size=6))


@given(PATHS)
def test_normpath_is_posixpaths(path: str) -> None:
    assert oslite.normpath(path) == posixpath.normpath(path)


@given(PATHS)
def test_dirname_is_posixpaths(path: str) -> None:
    assert oslite.dirname(path) == posixpath.dirname(path)


@given(PATHS, PATHS)
def test_join_is_posixpaths(folder: str, name: str) -> None:
    assert oslite.join(folder, name) == posixpath.join(folder, name)


@given(PATHS)
def test_abspath_is_posixpaths(path: str) -> None:
    assert oslite.abspath(path) == posixpath.abspath(path)


@given(st.text())
def test_file_names_are_encoded_as_os_encodes_them(text: str) -> None:
    encoded = os.fsencode(text) if _encodable(text) else None
    if encoded is None:
        with pytest.raises(UnicodeEncodeError):
            oslite.fsencode(text)
        return
    assert oslite.fsencode(text) == encoded
    assert oslite.fsdecode(encoded) == os.fsdecode(encoded)


def _encodable(text: str) -> bool:
    try:
        os.fsencode(text)
    except UnicodeEncodeError:
        return False
    return True


def test_the_environment_is_the_one_os_reads_and_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAKEBACK_OSLITE_PROBE", "value é")
    assert oslite.getenv("TAKEBACK_OSLITE_PROBE") == "value é"
    assert oslite.environ() == dict(os.environ)
    oslite.unsetenv("TAKEBACK_OSLITE_PROBE")
    assert "TAKEBACK_OSLITE_PROBE" not in os.environ and oslite.getenv("TAKEBACK_OSLITE_PROBE", "gone") == "gone"
    oslite.unsetenv("TAKEBACK_OSLITE_PROBE")  # absent: nothing to do, as os.environ.pop(name, None)
    assert "TAKEBACK_OSLITE_PROBE" not in oslite.environ()


def test_the_environment_processes_inherit_loses_an_unset_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    monkeypatch.setenv("TAKEBACK_OSLITE_PROBE", "1")
    oslite.unsetenv("TAKEBACK_OSLITE_PROBE")
    probe = "import os; print(os.environ.get('TAKEBACK_OSLITE_PROBE', 'unset'))"
    # no env= given: the child inherits this process's own environment (what unsetenv changed)
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "unset\n"


def test_a_private_folder_is_a_real_folder_of_the_user_that_no_one_else_may_enter(tmp_path: Path) -> None:
    uid = os.getuid()
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    mine.chmod(0o700)
    assert oslite.is_private_folder(str(mine), uid)
    assert not oslite.is_private_folder(str(mine), uid + 1)  # another user's
    mine.chmod(0o750)
    assert not oslite.is_private_folder(str(mine), uid)
    mine.chmod(0o700)
    link = tmp_path / "link"
    link.symlink_to(mine)
    assert not oslite.is_private_folder(str(link), uid)  # a link to one is not one
    file = tmp_path / "file"
    file.write_text("")
    file.chmod(0o600)
    assert not oslite.is_private_folder(str(file), uid)
    assert not oslite.is_private_folder(str(tmp_path / "missing"), uid)
