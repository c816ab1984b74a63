"""The person's git state that Takeback cannot take back, read by hand, and what moved of it.

Takeback never changes the person's git state (promise 2), so what an agent's ``git commit``,
``git checkout -b`` or ``git stash drop`` moved stays moved after an undo. To say so, a step's
and a bracket turn's begin keep ``read``'s answer (in their file, ``engine/brackets.py``) and
their end compares it with the state then (``moves``): one ``GitMove`` per thing that moved,
with the git command that would put it back from the reflog, where there is one.

``read`` is a few small file reads, never a git process and never a write: ``HEAD``, the
branch it names (its loose ref file, else ``packed-refs``), the index file's size, time and
checksum trailer, and the stash's reflog (``logs/refs/stash``, one line an entry). Where refs
are kept in a reftable (``extensions.refStorage``), which this does not read, the answer is
None and nothing is said. Before a call the guard let through that may move the person's refs
(``AtRisk.git``), ``read(every_ref=True)`` reads every ref too (``all_refs``: ``packed-refs``
and the loose files under ``refs/``, a few dozen small reads, no object and no work-tree file),
so a ``git branch -D`` or ``git tag -d`` of a ref HEAD does not name is said, with its command.
Whether the index's entries changed is asked only when its file did
(git rewrites it for a mere ``git status``): the begin's index copy is then parsed and compared
entry by entry (``index_same``), so a refreshed stat cache is not called a change.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path

import pygit2

from ..core.models import GitMove
from ..gitenv import common_dir

_TRAILER = 20  # an index's SHA-1 checksum


def find(root: Path) -> str | None:
    """The git folder of the repository ``root`` is in (libgit2's discovery: a few stats), or None."""
    try:
        return pygit2.discover_repository(str(root)) or None
    except pygit2.GitError:
        return None


def read(git_dir: str, also: tuple[str, ...] = (), every_ref: bool = False) -> dict | None:
    """The state ``moves`` compares, as JSON data: ``head`` (the branch HEAD names, ``refs/heads/…``,
    or None when detached), ``commit`` (HEAD's commit), ``refs`` (that branch's and each of
    ``also``'s commit, None when there is none; ``every_ref``: every ref's, ``all_refs``, and
    ``"every_ref": true`` so the end reads them all again), ``index`` ([size, mtime in ns,
    checksum] or None) and ``stash`` (each entry's [commit, message], newest first). None: not
    readable here."""
    common = common_dir(git_dir)
    head = _read_line(os.path.join(git_dir, "HEAD"))
    if head is None:
        return None
    branch = head[5:].strip() if head.startswith("ref: ") else None
    if branch is not None and branch.endswith("/.invalid"):
        return None  # a reftable: refs are not files
    every = all_refs(git_dir) if every_ref else {}
    names = dict.fromkeys([*(() if branch is None else (branch,)), *also])
    refs = {name: every[name] if name in every else _resolve(git_dir, common, name) for name in names}
    refs.update(every)
    commit = refs[branch] if branch is not None else head.strip()
    state: dict = {"head": branch, "commit": commit, "refs": refs, "index": _index_identity(os.path.join(git_dir, "index")),
                   "stash": _stash(common)}
    if every_ref:
        state["every_ref"] = True
    return state


def all_refs(git_dir: str) -> dict[str, str]:
    """Every ref of the repository and its commit: ``packed-refs``, then the loose files under
    ``refs/`` (the common folder's, then a worktree's own), which win; symbolic refs, the stash
    (read apart, ``_stash``) and Takeback's own namespace are left out. No git process: a walk
    of the ``refs`` folders, which hold only refs."""
    common = common_dir(git_dir)
    found: dict[str, str] = {}
    try:
        with open(os.path.join(common, "packed-refs"), "rb") as handle:
            for raw in handle:
                if raw[:1] in (b"#", b"^"):
                    continue
                oid, _, name = raw.strip().decode("utf-8", "replace").partition(" ")
                if name.startswith("refs/") and len(oid) in (40, 64):
                    found[name] = oid
    except OSError:
        pass
    for folder in dict.fromkeys([common, git_dir]):
        base = os.path.join(folder, "refs")
        for parent, _dirs, files in os.walk(base):
            for file in files:
                if file.endswith(".lock"):
                    continue
                path = os.path.join(parent, file)
                line = _read_line(path)
                if line and not line.startswith("ref: "):
                    found["refs/" + os.path.relpath(path, base).replace(os.sep, "/")] = line
    return {name: oid for name, oid in found.items() if name != "refs/stash" and not name.startswith("refs/takeback/")}


def moves(before: dict | None, after: dict | None, index_same: Callable[[], bool] | None) -> list[GitMove]:
    """What moved between two ``read`` answers, each with the command that would put it back.
    ``index_same``: whether the index's entries are what they were (asked only when the index
    file changed; None: not known, then nothing is said of the index)."""
    if not before or not after:
        return []
    found = _head_moves(before, after)
    for name, old in before["refs"].items():
        new = after["refs"].get(name)
        if new == old:
            continue
        if not name.startswith("refs/heads/"):
            found.extend(_ref_move(name, old, new))
            continue
        short = name.removeprefix("refs/heads/")
        if old is None:
            found.append(GitMove(what="branch", fact=f"branch {short} was created at {_short(new)}"))
        elif new is None:
            found.append(GitMove(what="branch", fact=f"branch {short} was deleted (it was at {_short(old)}){_UNTIL_GC}",
                                 command=f"git branch {shlex.quote(short)} {old}"))
        else:
            undo = f"git reset --mixed {old}" if after["head"] == name else f"git branch -f {shlex.quote(short)} {old}"
            found.append(GitMove(what="branch", fact=f"branch {short} moved from {_short(old)} to {_short(new)}", command=undo))
    found.extend(_stash_moves(before["stash"], after["stash"]))
    if before["index"] != after["index"] and index_same is not None and not index_same():
        found.append(GitMove(what="index", fact="the index changed (what is staged for the next commit)"))
    return found


_UNTIL_GC = "; git keeps commits no ref reaches only until its gc prunes them (two weeks by default)"


def _ref_move(name: str, old: str | None, new: str | None) -> list[GitMove]:
    """A ref other than a branch (a tag, a remote-tracking ref, ``update-ref``'s own) that moved."""
    if old is None:
        return [GitMove(what="ref", fact=f"ref {name} was created at {_short(new)}")]
    put_back = f"git update-ref {shlex.quote(name)} {old}"
    if new is None:
        return [GitMove(what="ref", fact=f"ref {name} was deleted (it was at {_short(old)}){_UNTIL_GC}", command=put_back)]
    return [GitMove(what="ref", fact=f"ref {name} moved from {_short(old)} to {_short(new)}", command=put_back)]


def index_same(copy: pygit2.Index, index_file: Path) -> bool:
    """Whether the index at ``index_file`` holds the entries of ``copy`` (paths, ids, modes,
    conflicts), whatever its stat cache says."""
    try:
        now = pygit2.Index(str(index_file))
    except (pygit2.GitError, OSError):
        return False
    return _entries(copy) == _entries(now)


def _entries(index: pygit2.Index) -> tuple[list[tuple[str, str, int]], bool]:
    return [(e.path, str(e.id), e.mode) for e in index], index.conflicts is not None


def _head_moves(before: dict, after: dict) -> list[GitMove]:
    old, new = before["head"], after["head"]
    if old == new and (old is not None or before["commit"] == after["commit"]):
        return []
    if old is None and new is None:
        return [GitMove(what="head", fact=f"the detached HEAD moved from {_short(before['commit'])} to {_short(after['commit'])}",
                        command=f"git switch --detach {before['commit']}")]
    def said(branch: str | None, commit: str | None) -> str:
        return branch.removeprefix("refs/heads/") if branch else f"a detached {_short(commit)}"
    if old is None:
        undo = f"git switch --detach {before['commit']}" if before["commit"] else None
    else:
        undo = f"git switch {shlex.quote(old.removeprefix('refs/heads/'))}"
    fact = f"HEAD switched from {said(old, before['commit'])} to {said(new, after['commit'])}"
    return [GitMove(what="head", fact=fact, command=undo)]


def _stash_moves(before: list, after: list) -> list[GitMove]:
    kept = {sha for sha, _ in after}
    had = {sha for sha, _ in before}
    counts = f"{len(before)} → {len(after)} {'entry' if len(after) == 1 else 'entries'}"
    found = [
        GitMove(what="stash", fact=f"stash {_short(sha)} ({message}) was dropped ({counts})",
                command=f"git stash store -m {shlex.quote(message)} {sha}")
        for sha, message in before if sha not in kept
    ]
    found += [GitMove(what="stash", fact=f"stash {_short(sha)} ({message}) was pushed ({counts})")
              for sha, message in after if sha not in had]
    return found


def _short(commit: str | None) -> str:
    return commit[:7] if commit else "nothing"


def _read_line(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None


def _resolve(git_dir: str, common: str, name: str, depth: int = 0) -> str | None:
    """The commit ref ``name`` names: its loose file (the worktree's own, then the common one),
    else its line in ``packed-refs``; a symbolic ref is followed (a few levels at most)."""
    if not name.startswith("refs/") or ".." in name.split("/"):
        return None
    for folder in dict.fromkeys([git_dir, common]):
        line = _read_line(os.path.join(folder, name))
        if line is not None and line.startswith("ref: "):
            return _resolve(git_dir, common, line[5:].strip(), depth + 1) if depth < 5 else None
        if line:
            return line
    try:
        with open(os.path.join(common, "packed-refs"), "rb") as handle:
            wanted = b" " + name.encode() + b"\n"
            for raw in handle:
                if raw.endswith(wanted):
                    return raw.split(b" ", 1)[0].decode()
    except OSError:
        pass
    return None


def _index_identity(path: str) -> list | None:
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            tail = os.pread(handle.fileno(), _TRAILER, info.st_size - _TRAILER) if info.st_size > _TRAILER else b""
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, tail.hex()]


def _stash(common: str) -> list[list[str]]:
    """The stash's entries, newest first: [commit, message] from each line of its reflog."""
    try:
        with open(os.path.join(common, "logs", "refs", "stash"), "rb") as handle:
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    found = []
    for line in reversed(lines):
        fields, _, message = line.partition("\t")
        parts = fields.split(" ")
        if len(parts) >= 2:
            found.append([parts[1], message])
    return found
