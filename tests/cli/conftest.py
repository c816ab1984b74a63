"""Fixtures for the CLI tests: the real ``takeback`` command run as a subprocess.

Every call runs ``python -m takeback`` from the test's interpreter with an explicit
environment (an isolated TAKEBACK_HOME, HOME and XDG folders), against real git repositories
and plain folders in temp folders. ``Takeback.ok`` and ``Takeback.fails`` carry the CLI's
contract: exit 0 with a quiet stderr when the operation was carried out in full; otherwise the
documented status and exactly one line on stderr saying what and why.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from helpers import git_state, make_repo, tree_state

_REDIRECTING_GIT_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")
_PYCACHE: list[Path] = []


@pytest.fixture(scope="session", autouse=True)
def cli_bytecode_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Let the CLI processes keep compiled bytecode, in a folder of this test session.

    An installed ``takeback`` starts from cached bytecode; an environment with
    PYTHONDONTWRITEBYTECODE would make every one of the many CLI processes here compile the
    package again (about a fifth of each call). The cache lives outside the source tree.
    """
    _PYCACHE.append(tmp_path_factory.getbasetemp() / "cli-pycache")


def isolated_env(base: Path) -> dict[str, str]:
    """The environment of a CLI call: the test's own, with every state folder under ``base``."""
    env = {k: v for k, v in os.environ.items() if k not in _REDIRECTING_GIT_VARS and not k.startswith("TAKEBACK_")}
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        TAKEBACK_HOME=str(base / "state"),
        XDG_STATE_HOME=str(base / "xdg-state"),
        XDG_CONFIG_HOME=str(base / "xdg-config"),
        XDG_DATA_HOME=str(base / "xdg-data"),
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        TAKEBACK_RESIDENT_IDLE=os.environ.get("TAKEBACK_RESIDENT_IDLE", "20"),
        TAKEBACK_PAGER="",  # a test that puts takeback on a pseudo-terminal reads its answer, not a pager (test_pager.py)
    )
    if _PYCACHE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(_PYCACHE[0])
    return env


@dataclass
class Result:
    args: tuple[str, ...]
    code: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        return self.out.decode("utf-8")

    def json(self) -> Any:
        try:
            return json.loads(self.out)
        except ValueError as exc:  # pragma: no cover - the assertion message is the point
            raise AssertionError(f"takeback {' '.join(self.args)} printed invalid JSON ({exc}):\n{self.text}") from exc

    def __str__(self) -> str:
        return f"takeback {' '.join(self.args)} -> {self.code}\nstdout:\n{self.out.decode(errors='replace')}\nstderr:\n{self.err}"


@dataclass
class Takeback:
    """Runs ``takeback`` in ``cwd`` with ``env``."""

    cwd: Path
    env: dict[str, str] = field(repr=False)
    calls: list[Result] = field(default_factory=list, repr=False)
    prefix: tuple[str, ...] = ()
    """Words run before the command (e.g. ``setpriv`` to run it as another user)."""

    def __call__(self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Result:
        proc = subprocess.run(
            [*self.prefix, sys.executable, "-m", "takeback", *args],
            cwd=cwd or self.cwd,
            env=env or self.env,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        result = Result(args, proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace"))
        self.calls.append(result)
        return result

    def many(self, *calls: tuple[str, ...]) -> list[Result]:
        """Run independent calls side by side (read-only ones: they only share the store lock)."""
        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            return list(pool.map(lambda args: self(*args), calls))

    def ok(self, *args: str, **kw: Any) -> Result:
        return expect_ok(self(*args, **kw))

    def json(self, *args: str, **kw: Any) -> Any:
        return self.ok("--json", *args, **kw).json()

    def fails(self, code: int, *args: str, match: str | None = None, **kw: Any) -> Result:
        return expect_error(self(*args, **kw), code, match)

    def store(self) -> Path:
        """The workspace's store folder, made (by ``gc``, which records nothing) if nothing
        made it yet: reading commands never do."""
        status = self.json("status")
        if not status["store_made"]:
            self.ok("gc")
        return Path(status["store"])

    def oplog(self) -> str:
        """The store's operation-log head (changes whenever anything is recorded)."""
        found = list(Path(self.env["TAKEBACK_HOME"], "stores").glob("*/objects.git/refs/takeback/oplog"))
        if found:
            return "".join(p.read_text() for p in found)
        packed = list(Path(self.env["TAKEBACK_HOME"], "stores").glob("*/objects.git/packed-refs"))
        return "".join(p.read_text() for p in packed) or "-"


def expect_ok(result: Result) -> Result:
    """Exit 0, nothing on stderr; with --json, valid JSON on stdout."""
    assert result.code == 0, str(result)
    assert result.err == "", str(result)
    if "--json" in result.args:
        result.json()
    return result


def expect_error(result: Result, code: int, match: str | None = None) -> Result:
    """Exit ``code`` with one line on stderr; with --json a JSON error object, else no stdout."""
    assert result.code == code, str(result)
    line = one_line_error(result, match)
    if "--json" in result.args:
        data = result.json()
        assert set(data) == {"error", "message"}, str(result)
        assert line == f"takeback: error: {data['message']}"
    else:
        assert result.out == b"", str(result)
    return result


def one_line_error(result: Result, match: str | None = None) -> str:
    """The single stderr line of a failed call, checked to name the problem."""
    lines = result.err.splitlines()
    assert len(lines) == 1 and result.err.endswith("\n"), f"expected exactly one line on stderr\n{result}"
    line = lines[0]
    assert line.startswith("takeback: error: "), str(result)
    assert len(line) > len("takeback: error: ") + 10, str(result)
    if match is not None:
        assert re.search(match, line), f"{match!r} not in {line!r}"
    return line


class Snapshot:
    """Everything a failed or dry-run call must leave alone: files, the user's git state, the log."""

    def __init__(self, tb: Takeback, root: Path | None = None) -> None:
        self.tb = tb
        self.root = root or tb.cwd
        self.before = self._take()

    def _take(self) -> tuple:
        git = git_state(self.root) if (self.root / ".git").exists() else None
        return tree_state(self.root), git, self.tb.oplog()

    def assert_unchanged(self) -> None:
        after = self._take()
        assert after[0] == self.before[0], "workspace files changed"
        assert after[1] == self.before[1], "the user's git state changed"
        assert after[2] == self.before[2], "something was recorded in the store"


@pytest.fixture
def tb(tmp_path: Path) -> Takeback:
    """A CLI runner over a fresh git repository with three committed files."""
    repo = make_repo(tmp_path / "ws")
    return Takeback(repo, isolated_env(tmp_path / "env"))


@pytest.fixture
def plain_tb(tmp_path: Path) -> Takeback:
    """A CLI runner over a folder that is not a git repository."""
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.txt").write_text("one\ntwo\n")
    return Takeback(folder, isolated_env(tmp_path / "env"))
