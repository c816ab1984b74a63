"""Takeback's line attribution as Agent Trace records (the open specification Cursor published,
version 0.1.0, https://agent-trace.dev/), for review tools that read that format.

Two kinds of record, one JSON object each:

- a commit's (``for_commits``): one record per commit of a git range (``main..HEAD``, or one
  commit), oldest first, ``vcs`` naming the commit. Its files are the ones the commit changed
  against its first parent (inside the workspace, text, with lines added); each file's ranges
  cover the lines the commit added, positioned as the commit holds the file. Who wrote them is
  ``core/blame.attribute`` over the file's timeline versions (``engine/blame.file_history``)
  up to the version the commit holds: of the versions recorded before the commit's time, the
  one closest to the commit's content (fewest lines apart; the newest of equals). Commit ids
  play no part, so a commit made by an amend, a rebase or a squash is attributed as well.
- a turn's (``for_turns``): one record per agent turn of ``#A..#B`` (or ``#A``), with the files
  the turn touched and the lines of each, as it stands in the workspace now, that the turn
  wrote (``engine/blame.blame_file``). No ``vcs``: the positions are the working tree's.

Who wrote a line becomes a conversation of the file's entry:

- an agent's turn: the turn's conversation, contributor ``ai``; ``url`` names the turn
  (``takeback:turn/<ULID>``) and ``related`` its session (``takeback:session/<id>``). No
  ``model_id``: Takeback records the agent, not the model; the agent, the turn's number and its
  prompt are in ``metadata["takeback"]["turns"]``;
- the person, on a line edited from an agent's line: a range of that turn's conversation whose
  own contributor is ``mixed`` (the spec's "human-edited AI output");
- the person otherwise: one conversation, contributor ``human``;
- before the timeline, or not known (withheld content, binary): one conversation, ``unknown``.

Only reads: the store, the workspace's files and the person's repository (in-process, libgit2).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import quote

import pygit2
from pygit2.enums import DeltaStatus, RevSpecFlag, SortMode

from ..core.blame import Change, attribute
from ..core.models import MODE_LINK, BlameOrigin
from ..core.textdiff import changed_blocks, is_binary
from ..core.timeline import FoldedEntry
from ..errors import InvalidInput, NotFound
from .blame import blame_file, file_history

if TYPE_CHECKING:
    from .engine import Engine

SPEC_VERSION = "0.1.0"
VENDOR_KEY = "takeback"  # the record's ``metadata`` key for what only Takeback knows
SLACK = timedelta(seconds=1)  # a commit's time is whole seconds; a step's is finer

Key = tuple[str, str | None]  # (contributor type, the turn's id for ai and mixed lines)


@dataclass(frozen=True, slots=True)
class Tool:
    """The tool named in each record (``tool``)."""

    name: str
    version: str


def is_turn_range(spec: str) -> bool:
    """Whether RANGE names turns (``#3``, ``#3..#7``) rather than commits."""
    return spec.strip().startswith("#")


# ------------------------------------------------------------------ commits


def for_commits(engine: Engine, spec: str, tool: Tool) -> Iterator[dict]:
    """A record per commit of the git range ``spec``, oldest first."""
    repo = engine.user_repository()
    if repo is None or repo.workdir is None:
        raise InvalidInput(f"{engine.workspace.root} is not in a git work tree: a commit range needs one (or give turns, such as #3..#7)")
    commits = _commits(repo, spec)
    prefix = os.path.relpath(os.path.realpath(engine.workspace.root), os.path.realpath(repo.workdir)).replace(os.sep, "/")
    with engine.transaction():
        for commit in commits:
            yield _commit_record(engine, repo, commit, prefix, tool)


def _commits(repo: pygit2.Repository, spec: str) -> list[pygit2.Commit]:
    """The commits ``spec`` names: ``A..B`` (reachable from B, not from A), oldest first; or one."""
    text = spec.strip()
    if not text or text.startswith("-") or "..." in text:
        raise InvalidInput(f"commit range {spec!r}: give A..B (such as main..HEAD) or one commit")
    try:
        parsed = repo.revparse(text)
        if parsed.flags & RevSpecFlag.RANGE:
            start, end = parsed.from_object.peel(pygit2.Commit), parsed.to_object.peel(pygit2.Commit)
            walker = repo.walk(end.id, SortMode.TOPOLOGICAL | SortMode.REVERSE)
            walker.hide(start.id)
            return list(walker)
        return [parsed.from_object.peel(pygit2.Commit)]
    except (KeyError, ValueError, AttributeError, pygit2.GitError) as exc:
        raise InvalidInput(f"commit range {spec!r} names no commit of this repository ({exc})") from None


def _commit_record(engine: Engine, repo: pygit2.Repository, commit: pygit2.Commit, prefix: str, tool: Tool) -> dict:
    until = datetime.fromtimestamp(commit.commit_time, UTC) + SLACK
    files: list[dict] = []
    turns: dict[str, BlameOrigin] = {}
    for path, content, added in _added_lines(repo, commit):
        rel = path if prefix == "." else path[len(prefix) + 1 :] if path.startswith(prefix + "/") else None
        if rel is None:
            continue  # outside the workspace: the timeline knows nothing of it
        changes, _ = file_history(engine.timeline, engine.capture, rel)
        origins = attribute(_as_committed(changes, content, until), content)
        keys = {n: _key(origins[n - 1], turns) for n in added if n <= len(origins)}
        files.append({"path": path, "conversations": _conversations(keys, turns)})
    extra = {"commit": str(commit.id)}
    return _record(tool, files, turns, extra, revision=str(commit.id))


def _added_lines(repo: pygit2.Repository, commit: pygit2.Commit) -> Iterator[tuple[str, bytes, list[int]]]:
    """(path from the repository's root, its content in ``commit``, the line numbers the
    commit added) of each text file the commit changed against its first parent."""
    if commit.parents:
        diff = commit.parents[0].tree.diff_to_tree(commit.tree, context_lines=0)
    else:
        diff = commit.tree.diff_to_tree(context_lines=0, swap=True)
    for patch in diff:
        if patch is None:
            continue
        delta = patch.delta
        if delta.status == DeltaStatus.DELETED or delta.new_file.mode == MODE_LINK:
            continue
        content = repo[delta.new_file.id].peel(pygit2.Blob).data
        if is_binary(content):
            continue
        added = [line.new_lineno for hunk in patch.hunks for line in hunk.lines if line.origin == "+"]
        if added:
            yield delta.new_file.path, content, added


def _as_committed(changes: list[Change], content: bytes, until: datetime) -> list[Change]:
    """``changes`` up to the version a commit holding ``content`` was made from: of the versions
    recorded before ``until`` (the first change's before, then each change's after), the one
    fewest lines away from ``content``, the newest of equals."""
    best, best_distance = 0, _distance(changes[0].before if changes else None, content)
    for k, change in enumerate(changes, 1):
        if change.by.at is not None and change.by.at > until:
            break
        if change.after_known:
            distance = _distance(change.after, content)
            if distance <= best_distance:
                best, best_distance = k, distance
    return changes[:best]


def _distance(version: bytes | None, content: bytes) -> int:
    """How many lines ``version`` and ``content`` differ by."""
    return sum(max(i2 - i1, j2 - j1) for i1, i2, j1, j2 in changed_blocks(version or b"", content))


# ------------------------------------------------------------------ turns


def for_turns(engine: Engine, spec: str, tool: Tool) -> Iterator[dict]:
    """A record per agent turn of ``#A..#B`` (or ``#A``), oldest first."""
    first_text, dots, last_text = spec.strip().partition("..")
    with engine.transaction():
        timeline = engine.timeline
        first = timeline.resolve(first_text)
        last = timeline.resolve(last_text.strip() if last_text.strip() else first_text) if dots else first
        if first.begun.number > last.begun.number:
            raise InvalidInput(f"turns {spec!r}: #{first.begun.number} comes after #{last.begun.number}; give the older one first")
        chosen = [s for s in timeline.ordered() if s.begun.kind == "turn" and first.begun.number <= s.begun.number <= last.begun.number]
        if not chosen:
            raise NotFound(f"turns {spec!r}: no agent turn there (marks and operations have no Agent Trace)")
        for state in chosen:
            yield _turn_record(engine, state, tool)


def _turn_record(engine: Engine, state: FoldedEntry, tool: Tool) -> dict:
    entry = state.begun.entry
    paths = sorted({c.path for cp in state.checkpoints if state.applied.get(cp.id, True) for c in cp.changes})
    repo = engine.user_repository()
    root = os.path.realpath(engine.workspace.root)
    prefix = os.path.relpath(root, os.path.realpath(repo.workdir)).replace(os.sep, "/") if repo is not None and repo.workdir else "."
    files: list[dict] = []
    turns: dict[str, BlameOrigin] = {}
    for rel in paths:
        version = engine.workspace.read(rel)
        if version is None or version.mode == MODE_LINK or is_binary(version.content):
            continue
        blame = blame_file(engine.timeline, engine.capture, rel, version.content, None, engine.workspace.root)
        keys = {}
        for line in blame.lines:
            key = _key(line.origin, turns)
            if key[1] == entry:
                keys[line.line] = key
        if keys:
            files.append({"path": rel if prefix == "." else f"{prefix}/{rel}", "conversations": _conversations(keys, turns)})
    extra = {"turn": entry, "state": state.state, "positions": "working tree", "touched": paths}
    return _record(tool, files, turns, extra, revision=None)


# ------------------------------------------------------------------ the records


def _key(origin: BlameOrigin, turns: dict[str, BlameOrigin]) -> Key:
    """A line's contributor and turn; each turn met is kept in ``turns``."""
    if origin.kind == "turn" and origin.entry:
        turns.setdefault(origin.entry, origin)
        return "ai", origin.entry
    if origin.kind == "person":
        edited = origin.edited_from
        if edited is not None and edited.entry:
            turns.setdefault(edited.entry, edited)
            return "mixed", edited.entry
        return "human", None
    return "unknown", None


def _conversations(keys: dict[int, Key], turns: dict[str, BlameOrigin]) -> list[dict]:
    """The file's conversations: each turn's (by number), the person's, the unknown lines'."""
    by_turn = sorted({k[1] for k in keys.values() if k[1]}, key=lambda e: turns[e].number or 0)
    out = []
    for entry in by_turn:
        ranges = [_range(first, last, None if kind == "ai" else kind) for (kind, e), first, last in _runs(keys) if e == entry]
        session = turns[entry].session
        conversation: dict = {"url": f"takeback:turn/{entry}", "contributor": {"type": "ai"}, "ranges": ranges}
        if session:
            conversation["related"] = [{"type": "session", "url": f"takeback:session/{quote(session, safe='')}"}]
        out.append(conversation)
    for kind in ("human", "unknown"):
        ranges = [_range(first, last) for (k, _), first, last in _runs(keys) if k == kind]
        if ranges:
            out.append({"contributor": {"type": kind}, "ranges": ranges})
    return out


def _runs(keys: dict[int, Key]) -> Iterator[tuple[Key, int, int]]:
    """Runs of consecutive lines with one key: (key, first line, last line)."""
    run: tuple[Key, int, int] | None = None
    for n in sorted(keys):
        if run is not None and run[0] == keys[n] and run[2] == n - 1:
            run = (run[0], run[1], n)
            continue
        if run is not None:
            yield run
        run = (keys[n], n, n)
    if run is not None:
        yield run


def _range(first: int, last: int, contributor: str | None = None) -> dict:
    out: dict = {"start_line": first, "end_line": last}
    if contributor:
        out["contributor"] = {"type": contributor}
    return out


def _record(tool: Tool, files: list[dict], turns: dict[str, BlameOrigin], extra: dict, revision: str | None) -> dict:
    record: dict = {
        "version": SPEC_VERSION,
        "id": str(uuid.uuid4()),
        "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if revision is not None:
        record["vcs"] = {"type": "git", "revision": revision}
    record["tool"] = {"name": tool.name, "version": tool.version}
    record["files"] = files
    about = {
        entry: {"number": o.number, "agent": o.agent, "session": o.session, "prompt": o.label}
        for entry, o in sorted(turns.items(), key=lambda item: item[1].number or 0)
    }
    record["metadata"] = {VENDOR_KEY: {**extra, "turns": about}}
    return record
