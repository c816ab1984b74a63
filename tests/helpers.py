"""Shared test helpers: real git repositories in temp folders and snapshots of their git state."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Person",
    "GIT_AUTHOR_EMAIL": "person@example.com",
    "GIT_COMMITTER_NAME": "Test Person",
    "GIT_COMMITTER_EMAIL": "person@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str, check: bool = True) -> str:
    env = {**os.environ, **GIT_ENV}
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode("utf-8", "replace")


def make_repo(path: Path, files: dict[str, bytes | str] | None = None, commit: bool = True) -> Path:
    """A real git repository with ``files`` committed (a small default tree if None)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    files = files if files is not None else {
        "README.md": "# demo\n",
        "src/app.py": "def main():\n    return 1\n",
        "src/util.py": "def helper(x):\n    return x * 2\n",
    }
    write_files(path, files)
    if commit and files:
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", "initial")
    return path


def write_files(root: Path, files: dict[str, bytes | str]) -> None:
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode()
        target.write_bytes(content)


def git_state(repo: Path) -> dict[str, str]:
    """Everything of the user's git state that Takeback promises never to change."""
    dot_git = repo / ".git"

    def digest(p: Path) -> str:
        return hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else "-"

    hooks = sorted(p.name for p in (dot_git / "hooks").iterdir()) if (dot_git / "hooks").exists() else []
    return {
        "refs": git(repo, "for-each-ref"),
        "stash": git(repo, "stash", "list"),
        "log": git(repo, "log", "--all", "--format=%H %s", check=False),
        "index": digest(dot_git / "index"),
        "config": digest(dot_git / "config"),
        "hooks": ",".join(hooks),
        "head": digest(dot_git / "HEAD"),
    }


def dot_git(repo: Path) -> dict[str, str]:
    """Every file under ``repo/.git`` (a linked work tree's own folder under ``worktrees/``
    included) with the digest of its bytes: stricter than ``git_state`` (objects, logs, locks)."""
    out: dict[str, str] = {}
    for folder, _dirs, files in os.walk(repo / ".git"):
        for name in files:
            path = Path(folder) / name
            out[path.relative_to(repo).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def tree_state(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (outside .git) with its bytes, for before/after comparisons."""
    out: dict[str, bytes] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            p = Path(folder) / name
            rel = p.relative_to(root).as_posix()
            out[rel] = os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
    return out


def write_user_config(config_home: str | os.PathLike[str], text: str) -> Path:
    """Write the person's own Takeback config (``$XDG_CONFIG_HOME/takeback/config.toml``)."""
    path = Path(config_home) / "takeback" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@contextlib.contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    """This process's environment made exactly ``env`` for the block, then put back: what the
    resident process's address is worked out from (``oslite`` reads the process's environment
    itself, not whatever ``os.environ`` is bound to)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def unmeasured(env: dict[str, str]) -> dict[str, str]:
    """``env`` without coverage's variables: a process traced or faulted system call by system
    call (strace) is not measured, so the calls counted and failed are Takeback's own, never
    coverage's data file written at exit."""
    return {k: v for k, v in env.items() if k not in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START", "COVERAGE_RUN")}


@contextlib.contextmanager
def new_file_system(where: Path, kind: str, *options: str) -> Iterator[Path]:
    """A fresh file system of ``kind`` (``tmpfs``, ``ramfs`` …, with ``mount -o`` options)
    mounted on the new folder ``where`` for the block; the test is skipped, with the reason,
    where mounting is not allowed (it needs root)."""
    where.mkdir()
    proc = subprocess.run(["mount", "-t", kind, *(["-o", ",".join(options)] if options else []), kind, str(where)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        import pytest

        pytest.skip(f"cannot mount a {kind} here (needs root): {proc.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
