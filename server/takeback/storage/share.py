"""Sharing a store's timeline through git: push this machine's log to a remote, fetch others'.

Git transport only. Every network step runs the person's own ``git`` (their credentials, their
``url.*.insteadOf``, their proxies), with the variables that would redirect git kept out
(``gitenv.clean``) and ``protocol.ext.allow=never`` (a remote URL never runs a program). The
person's repository is only ever read, once, for the URL of a remote NAME (``git -C WORKSPACE
remote get-url NAME``): its refs, index and config are never written.

Where it happens: ``<store>/shared.git``, a second bare repository in the store folder that only
git writes, which borrows the log's objects from ``objects.git`` (``objects/info/alternates``).
It is kept apart from ``objects.git`` because (facts checked with git 2.39 and libgit2 1.9.7)
a partial clone needs ``extensions.partialClone`` in the repository's config, which libgit2
refuses to open ("unsupported extension name extensions.partialclone"), and because retention
(``Store.prune``) keeps only what the log reaches: teammates' timelines would be dropped.

What is sent (``push``): the log ref's chain as ``refs/takeback/timelines/<who>`` (``who``:
``<person>@<machine>``, ``identity``): each commit's ``meta.json`` and the content blobs its
records name, rewritten first by the caller's ``Sending`` (``sent_chain``: a deterministic copy
made in ``shared.git``, remembered in ``<store>/share/map-<key>``; a commit the rewrite leaves as
it is is sent as it is). A push whose settings differ from the last one's replaces the remote's
ref rather than joining it (``push``), so nothing the earlier settings let through stays
reachable from it. A withheld file (a secret by the secrets policy, or one over
``max_file_bytes``) never has a blob: ``workspace/capture.py`` (``Capturer.version``) keeps
only a keyed digest of it (``hmac:…``, made with the store's own ``key``, which is never sent),
so there is no secret content in the log to send. Each machine writes only its own ref, so
pushes from several machines never race for one ref. A push the remote rejects (its ref is not
an ancestor of this log: retention rewrote the log here, or another store pushes under the same
name) is fetched and pushed again on top of a join commit whose first parent is this log and
whose second is what the remote held (its ``meta.json`` holds no record): nothing the remote
held is lost, and readers follow first parents.

What comes in (``fetch``): teammates' refs land in ``refs/takeback/incoming/<remote>/`` first
(metadata only: ``--filter=blob:none``; the records' ``meta.json`` blobs are then fetched by id),
are checked (``_check``: object types, sizes, the flat tree's shape, and every record through the
caller's ``check_meta``), and only then become ``refs/takeback/remotes/<remote>/<who>``. File
content is fetched one blob at a time when something needs it (``content``), and refused over a
size limit before anything reads it. A remote that does not allow filters (a
bare repository served locally without ``uploadpack.allowFilter``) sends everything: git says
"filtering not recognized by server, ignoring" and the checks are the same.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import struct
import subprocess
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import gitenv
from ..errors import SharingFailed
from . import atomic, commits
from .store import Store

TIMELINES = "refs/takeback/timelines/"
REMOTES = "refs/takeback/remotes/"
INCOMING = "refs/takeback/incoming/"
SHARED_DIR = "shared.git"
SHARE_DIR = "share"  # <store>/share/: map-<key> (log commit -> sent commit) and pushed.json
PUSHED_FILE = "pushed.json"

MAX_COMMIT_BYTES = 64 << 10  # a log commit is a few header lines and a subject
MAX_TREE_BYTES = 32 << 20  # a flat tree: 68 bytes per file (a 5,000-file turn's is 340 KB)
MAX_META_BYTES = 32 << 20  # one engine call's records
MAX_CONTENT_BYTES = 64 << 20  # one file's content read from a teammate's timeline (``content``)

_EMPTY_META = b'{"format": 1, "records": []}'
_JOIN_ENV = {"GIT_AUTHOR_NAME": "takeback", "GIT_AUTHOR_EMAIL": "takeback@localhost",
             "GIT_COMMITTER_NAME": "takeback", "GIT_COMMITTER_EMAIL": "takeback@localhost"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_HEX = re.compile(r"[0-9a-f]{40}")

Rewrite = Callable[[bytes, str], tuple[bytes, str, set[str]]]
"""One log commit's (``meta.json``, message) as they are to be sent, and the content blobs to
leave out of its tree (``Sending``)."""

MetaCheck = Callable[[bytes, str], None]
"""Checks one commit's ``meta.json`` (its bytes, and where it came from for the message);
raises ``TakebackError`` to refuse the timeline. The engine's records rule (``engine/sharing.py``)."""


@dataclass
class Fetched:
    """What one ``fetch`` did: the timelines taken in (``who``: tip), those refused (``who``: the
    one line saying why), and those the remote no longer holds (their refs removed here)."""

    remote: str
    accepted: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------- names


def ref_component(text: str) -> str:
    """``text`` as one valid ref name component: runs of other characters than letters, digits,
    ``.``, ``_`` and ``-`` become ``-``; no leading ``.`` or ``-``, no ``..``, no ``.lock`` end."""
    name = _UNSAFE.sub("-", text).strip(".-")
    name = re.sub(r"\.{2,}", ".", name)
    while name.endswith(".lock") or name.endswith("."):
        name = name.removesuffix(".lock").rstrip(".")
    return name or "unknown"


def identity(workspace: Path) -> str:
    """``<person>@<machine>``: the local part of git's ``user.email`` (as the workspace's git sees
    it, read only) and this machine's host name, each made a valid ref name component."""
    proc = _git(["-C", str(workspace), "config", "user.email"], check=False)
    email = proc.stdout.decode(errors="replace").strip()
    person = email.split("@", 1)[0] if email else os.environ.get("USER", "")
    return f"{ref_component(person)}@{ref_component(socket.gethostname().split('.')[0])}"


def remote_of(workspace: Path, remote: str) -> tuple[str, str]:
    """(name, url) of ``remote``: a URL or path is taken as it is (named ``url-<hash>`` here); a
    NAME is looked up in the workspace's git configuration, read only (``remote get-url``)."""
    if "://" in remote or remote.startswith(("/", ".")) or re.match(r"[^/]+@[^/]+:", remote):
        return "url-" + hashlib.sha256(remote.encode()).hexdigest()[:10], remote
    proc = _git(["-C", str(workspace), "remote", "get-url", remote], check=False)
    if proc.returncode != 0:
        raise SharingFailed(f"no git remote named {remote!r} in {workspace} (give a remote's name or a URL)")
    return ref_component(remote), proc.stdout.decode(errors="replace").strip()


# ---------------------------------------------------------------------- git


def _git(args: Sequence[str], check: bool = True, stdin: bytes | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The person's ``git`` with ``args`` (clean environment; no ``ext::`` transport)."""
    command = ["git", "-c", "protocol.ext.allow=never", "-c", "core.fsmonitor=false", *args]
    try:
        proc = subprocess.run(command, input=stdin, capture_output=True, env={**gitenv.clean(), **(env or {})}, check=False)
    except OSError as exc:
        raise SharingFailed(f"cannot run git: {exc.strerror or exc}") from exc
    if check and proc.returncode != 0:
        raise SharingFailed(f"git {args[2] if args[:1] == ['--git-dir'] else args[0]} failed: {_last_line(proc.stderr)}")
    return proc


def _last_line(stderr: bytes) -> str:
    lines = [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no message"


def shared_repo(store: Store) -> Path:
    """``<store>/shared.git``, made on first use: a bare repository only git writes, borrowing the
    log's objects from ``objects.git`` (alternates), with automatic gc off."""
    git_dir = store.path / SHARED_DIR
    if not (git_dir / "HEAD").exists():
        _git(["init", "-q", "--bare", str(git_dir)])
        _git(["--git-dir", str(git_dir), "config", "gc.auto", "0"])
    alternates = git_dir / "objects" / "info" / "alternates"
    wanted = str((store.path / "objects.git" / "objects").resolve()) + "\n"
    if not alternates.exists() or alternates.read_text() != wanted:
        alternates.parent.mkdir(parents=True, exist_ok=True)
        alternates.write_text(wanted)
    return git_dir


def _in(repo: Path, *args: str, check: bool = True, stdin: bytes | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return _git(["--git-dir", str(repo), *args], check=check, stdin=stdin, env=env)


def _refs(repo: Path, prefix: str) -> dict[str, str]:
    out = _in(repo, "for-each-ref", "--format=%(objectname) %(refname)", prefix).stdout.decode()
    return {name[len(prefix):]: oid for oid, name in (line.split(" ", 1) for line in out.splitlines())}


def _promisor(repo: Path, name: str, url: str) -> None:
    """Make ``name`` a promisor remote of ``repo`` (where a missing blob is fetched from)."""
    for key, value in (("url", url), ("promisor", "true"), ("partialclonefilter", "blob:none")):
        _in(repo, "config", f"remote.{name}.{key}", value)
    if _in(repo, "config", "extensions.partialClone", check=False).returncode != 0:
        _in(repo, "config", "core.repositoryformatversion", "1")
        _in(repo, "config", "extensions.partialClone", name)


# ---------------------------------------------------------------------- push and delete


@dataclass(frozen=True)
class Sending:
    """How the log's chain is rewritten before it is sent (the engine's rule, ``engine/sharing.py``):
    ``rewrite`` turns one commit's (``meta.json``, message) into what is sent and the content
    blobs to leave out of its tree; ``settings`` says what it does, as JSON (its digest names the
    map of what was sent, and ``status`` shows it). A rewrite that changes nothing answers its
    input: that commit, and the chain up to it, is sent as it is (the same ids as the log)."""

    rewrite: Rewrite
    settings: dict[str, Any]

    @property
    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.settings, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class Pushed:
    """What one ``push`` did: the remote's name here, the ref, the commit sent (the rewritten
    chain's tip, or a join on it), the log's head it stands for, and whether the remote's ref
    was replaced rather than moved forward (``forced``: the settings changed since the last push)."""

    remote: str
    ref: str
    commit: str
    local: str
    forced: bool
    at: str = ""
    settings: dict[str, Any] = field(default_factory=dict)


def push(store: Store, workspace: Path, remote: str, who: str, sending: Sending, tries: int = 3) -> Pushed:
    """Send the log, rewritten by ``sending`` (``sent_chain``), to ``remote`` as
    ``refs/takeback/timelines/<who>``. When the last push to this remote was made with other
    settings and the remote still holds what it sent, the ref is replaced (``--force-with-lease``
    on that commit): what the earlier settings let through is no longer reachable from it; so it
    is too when a rejected push finds there this store's log sent under other settings
    (``_sent_otherwise``: ``pushed.json`` was lost). Else a rejected push is fetched and retried
    on a join commit (module docstring)."""
    with store.locked():
        head = store.head()
    if head is None:
        raise SharingFailed("nothing to push: this workspace's timeline is empty")
    name, url = remote_of(workspace, remote)
    repo = shared_repo(store)
    _promisor(repo, name, url)
    ref = TIMELINES + who
    sent = sent_chain(store, repo, head, sending)
    last = last_pushed(store).get(name)
    lease = last.commit if last is not None and last.ref == ref and last.settings != sending.settings else None
    tip = sent
    for _ in range(tries):
        force = [f"--force-with-lease={ref}:{lease}"] if lease else []
        proc = _in(repo, "push", "--porcelain", "--no-verify", *force, url, f"{tip}:{ref}", check=False)
        if proc.returncode == 0:
            done = Pushed(remote=name, ref=ref, commit=tip, local=head, forced=lease is not None,
                          at=datetime.now(UTC).isoformat(timespec="seconds"), settings=sending.settings)
            _remember(store, done)
            return done
        if not _rejected(proc.stdout):
            raise SharingFailed(f"git push to {remote} failed: {_last_line(proc.stderr)}")
        lease = None
        theirs = _fetch_own(repo, name, ref)
        if theirs is None or _ancestor(repo, theirs, sent):
            tip = sent  # they moved meanwhile to something this chain holds (or went away): again
        elif _sent_otherwise(store, repo, theirs, head, sending):
            lease, tip = theirs, sent  # this store's own log sent under other settings: replaced, never joined
        else:
            tip = _join(repo, sent, theirs)
    raise SharingFailed(f"git push to {remote} was rejected {tries} times (another push under {who} keeps racing)")


def _sent_otherwise(store: Store, repo: Path, theirs: str, head: str, sending: Sending) -> bool:
    """Whether ``theirs`` is this store's log as another push sent it under other settings: the
    log itself (an ancestor of ``head``), or a copy another settings' map names. (The current
    settings' own copies are not: that log was rewritten by retention, and is joined.)"""
    if _ancestor(repo, theirs, head):
        return True
    for path in (store.path / SHARE_DIR).glob("map-*"):
        if path.name != f"map-{sending.key}" and theirs in _read_map(path).values():
            return True
    return False


def last_pushed(store: Store) -> dict[str, Pushed]:
    """What the last push to each remote (by its name here) sent, from ``<store>/share/pushed.json``."""
    try:
        data = json.loads((store.path / SHARE_DIR / PUSHED_FILE).read_text())
        return {name: Pushed(**value) for name, value in data.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def _remember(store: Store, done: Pushed) -> None:
    known = last_pushed(store)
    known[done.remote] = done
    folder = store.path / SHARE_DIR
    folder.mkdir(mode=0o700, exist_ok=True)
    data = {name: vars(value) for name, value in sorted(known.items())}
    atomic.write(folder / PUSHED_FILE, json.dumps(data, indent=1, sort_keys=True).encode())


def sent_chain(store: Store, repo: Path, head: str, sending: Sending) -> str:
    """The chain that stands for the log up to ``head`` once rewritten by ``sending``: each
    commit with its records and message rewritten, its tree without the blobs the rewrite leaves
    out, on the rewritten parent, with the same author and committer lines. Deterministic: the
    same log and settings always give the same commits. Incremental: ``<store>/share/map-<key>``
    keeps each log commit's counterpart, so only commits not sent yet are read and rewritten.
    The new objects are written into ``shared.git`` as one pack (``git index-pack``); the log
    itself is never changed."""
    map_file = store.path / SHARE_DIR / f"map-{sending.key}"
    mapping = _read_map(map_file)
    if mapping and _in(repo, "cat-file", "-e", list(mapping.values())[-1], check=False).returncode != 0:
        mapping = {}  # shared.git was removed since: its copies are made again (the same ids)
        map_file.unlink()
    if head in mapping:
        return mapping[head]
    stdin = head + "\n" + "".join(f"^{oid}\n" for oid in mapping)
    todo = _in(repo, "rev-list", "--reverse", "--ignore-missing", "--stdin", stdin=stdin.encode()).stdout.decode().split()
    raw = _contents(repo, todo)
    trees = _contents(repo, sorted({commits.header(raw[oid], b"tree") for oid in todo}))
    metas = _contents(repo, sorted({commits.meta_of(data) for data in trees.values()}))
    objects: dict[str, tuple[int, bytes]] = {}
    lines: list[str] = []
    for oid in todo:
        data = raw[oid]
        parent = commits.parent_of(data)
        sent_parent = mapping[parent] if parent is not None else None
        tree = trees[commits.header(data, b"tree")]
        meta_oid = commits.meta_of(tree)
        message = commits.message_of(data)
        meta, new_message, leave_out = sending.rewrite(metas[meta_oid], message)
        if meta == metas[meta_oid] and new_message == message and not leave_out and sent_parent == parent:
            mapping[oid] = oid
        else:
            meta_id = meta_oid if meta == metas[meta_oid] else _object(objects, "blob", meta)
            entries = [(n, e) for _m, n, e in commits.tree_entries(tree) if n != "meta.json" and e not in leave_out]
            entries.append(("meta.json", meta_id))
            entries.sort(key=lambda entry: entry[0].encode())
            tree_id = _object(objects, "tree", b"".join(b"100644 %s\x00%s" % (n.encode(), bytes.fromhex(e)) for n, e in entries))
            mapping[oid] = _object(objects, "commit", _recommitted(data, tree_id, sent_parent, new_message))
        lines.append(f"{oid} {mapping[oid]}\n")
    if objects:
        _in(repo, "index-pack", "--stdin", stdin=_pack(objects))
    map_file.parent.mkdir(mode=0o700, exist_ok=True)
    with map_file.open("a") as out:  # a cache: lost, the same commits are made again
        out.write("".join(lines))
    return mapping[head]


def _read_map(path: Path) -> dict[str, str]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    pairs = (line.split(" ") for line in text.splitlines())
    return {pair[0]: pair[1] for pair in pairs if len(pair) == 2 and _HEX.fullmatch(pair[0]) and _HEX.fullmatch(pair[1])}


def _recommitted(data: bytes, tree: str, parent: str | None, message: str) -> bytes:
    """``data`` (a raw log commit) on ``tree`` and ``parent`` with ``message``; its other header
    lines (author, committer) as they are."""
    head = data.split(b"\n\n", 1)[0].split(b"\n")
    lines = [b"tree " + tree.encode(), *([b"parent " + parent.encode()] if parent else [])]
    lines += [line for line in head if not line.startswith((b"tree ", b"parent "))]
    return b"\n".join(lines) + b"\n\n" + message.encode()


_KINDS = {"commit": 1, "tree": 2, "blob": 3}


def _object(objects: dict[str, tuple[int, bytes]], kind: str, data: bytes) -> str:
    """Add one object to ``objects`` (id: its git id); answers the id."""
    oid = hashlib.sha1(b"%s %d\x00" % (kind.encode(), len(data)) + data, usedforsecurity=False).hexdigest()
    objects[oid] = (_KINDS[kind], data)
    return oid


def _pack(objects: dict[str, tuple[int, bytes]]) -> bytes:
    """A git pack (version 2, no deltas) of ``objects``, for ``git index-pack --stdin``."""
    out = [b"PACK", struct.pack(">II", 2, len(objects))]
    for kind, data in objects.values():
        size = len(data)
        byte, size = (kind << 4) | (size & 0x0F), size >> 4
        head = bytearray()
        while size:
            head.append(byte | 0x80)
            byte, size = size & 0x7F, size >> 7
        head.append(byte)
        out += [bytes(head), zlib.compress(data)]
    body = b"".join(out)
    return body + hashlib.sha1(body, usedforsecurity=False).digest()


def delete(store: Store, workspace: Path, remote: str, who: str) -> bool:
    """Remove ``refs/takeback/timelines/<who>`` from ``remote``; answers whether it was there."""
    _name, url = remote_of(workspace, remote)
    repo = shared_repo(store)
    listed = _in(repo, "ls-remote", url, TIMELINES + who, check=False)
    if listed.returncode != 0:
        raise SharingFailed(f"git ls-remote {remote} failed: {_last_line(listed.stderr)}")
    if not listed.stdout.strip():
        return False
    proc = _in(repo, "push", "--porcelain", "--no-verify", url, f":{TIMELINES}{who}", check=False)
    if proc.returncode != 0:
        raise SharingFailed(f"git push to {remote} failed: {_last_line(proc.stderr)}")
    return True


def _rejected(porcelain: bytes) -> bool:
    return any(line.startswith(b"!") for line in porcelain.splitlines())


def _fetch_own(repo: Path, name: str, ref: str) -> str | None:
    """The remote's value of ``ref`` fetched into ``repo`` (metadata only), or None if it has none."""
    local = f"{INCOMING}own"
    _in(repo, "update-ref", "-d", local)
    if not _in(repo, "ls-remote", name, ref).stdout.strip():
        return None
    _in(repo, "fetch", "--no-tags", "--no-write-fetch-head", "--filter=blob:none", name, f"+{ref}:{local}")
    return _refs(repo, INCOMING).get("own")


def _ancestor(repo: Path, older: str, newer: str) -> bool:
    return _in(repo, "merge-base", "--is-ancestor", older, newer, check=False).returncode == 0


def _join(repo: Path, head: str, theirs: str) -> str:
    """A commit on top of ``head`` (first parent) and ``theirs`` whose records are none."""
    meta = _in(repo, "hash-object", "-w", "--stdin", stdin=_EMPTY_META).stdout.decode().strip()
    tree = _in(repo, "mktree", stdin=f"100644 blob {meta}\tmeta.json\n".encode()).stdout.decode().strip()
    message = "share: joins what the remote held under this name (this log was rewritten or raced)"
    proc = _in(repo, "commit-tree", tree, "-p", head, "-p", theirs, "-m", message, env=_JOIN_ENV)
    return proc.stdout.decode().strip()


# ---------------------------------------------------------------------- fetch and check


def fetch(store: Store, workspace: Path, remote: str, check_meta: MetaCheck) -> Fetched:
    """Bring ``remote``'s timelines in as ``refs/takeback/remotes/<remote>/<who>``, each checked
    whole first (``_check``); a refused one is left out with the line that says why."""
    name, url = remote_of(workspace, remote)
    repo = shared_repo(store)
    _promisor(repo, name, url)
    incoming = f"{INCOMING}{name}/"
    proc = _in(repo, "fetch", "--no-tags", "--no-write-fetch-head", "--prune", "--filter=blob:none", name,
               f"+{TIMELINES}*:{incoming}*", check=False)
    if proc.returncode != 0:
        raise SharingFailed(f"git fetch from {remote} failed: {_last_line(proc.stderr)}")
    done = Fetched(remote=name)
    kept = f"{REMOTES}{name}/"
    known = _refs(repo, REMOTES)
    arrived = _refs(repo, incoming)
    for who, tip in sorted(arrived.items()):
        where = f"{name}/{who}"
        try:
            if who.count("@") != 1 or any(ref_component(part) != part for part in who.split("@")):
                raise SharingFailed(f"{where!r} is not a timeline's name (<person>@<machine>)")
            if known.get(f"{name}/{who}") != tip:
                _check(repo, name, tip, list(known.values()), check_meta, where)
        except SharingFailed as exc:
            done.refused[who] = exc.message
            continue
        _in(repo, "update-ref", kept + who, tip)
        done.accepted[who] = tip
    for who in sorted(set(_refs(repo, kept)) - set(arrived)):
        _in(repo, "update-ref", "-d", kept + who)
        done.removed.append(who)
    for who in arrived:
        _in(repo, "update-ref", "-d", incoming + who)
    return done


def _check(repo: Path, name: str, tip: str, trusted: list[str], check_meta: MetaCheck, where: str) -> None:
    """Refuse (``SharingFailed``) a timeline that no Takeback wrote: a commit or tree that is
    huge, a tree that is not flat (``meta.json`` plus blobs named by their own ids, mode 100644),
    an object of the wrong type, a commit with more than two parents, or records the caller's
    ``check_meta`` refuses. Only what ``trusted`` tips do not reach yet is read."""
    listed = _in(repo, "rev-list", "--objects", "--missing=print", tip, *[f"^{t}" for t in trusted]).stdout.decode()
    present = [line.split(" ", 1)[0] for line in listed.splitlines() if line and not line.startswith("?")]
    kinds = _kinds(repo, present)
    first_parents: list[str] = []
    following: str | None = tip
    raw = _contents(repo, [oid for oid in present if kinds[oid][0] in ("commit", "tree")])
    for oid in present:
        kind, size = kinds[oid]
        limit = {"commit": MAX_COMMIT_BYTES, "tree": MAX_TREE_BYTES}.get(kind, MAX_CONTENT_BYTES)
        if kind not in ("commit", "tree", "blob"):
            raise SharingFailed(f"{where}: object {oid} is a {kind}; a timeline holds commits, trees and blobs only")
        if size > limit:
            raise SharingFailed(f"{where}: the {kind} {oid} is {size} bytes, over the limit of {limit}: refused")
        if kind == "commit":
            parents = _parents(raw[oid])
            if len(parents) > 2:
                raise SharingFailed(f"{where}: commit {oid} has {len(parents)} parents; a log is a chain")
            if oid == following:
                first_parents.append(oid)
                following = parents[0] if parents else None
        elif kind == "tree":
            _check_tree(oid, raw[oid], where)
    trees = [commits.header(raw[c], b"tree") for c in first_parents]
    raw.update(_contents(repo, [t for t in trees if t not in raw], want="tree", limit=MAX_TREE_BYTES, where=where))
    metas = [commits.meta_of(raw[t]) for t in trees]
    _fetch_ids(repo, name, [oid for oid in metas if oid not in kinds])
    data = _contents(repo, metas, want="blob", limit=MAX_META_BYTES, where=where)
    for commit, meta in zip(first_parents, metas, strict=True):
        check_meta(data[meta], f"{where}, commit {commit}")


def _check_tree(oid: str, data: bytes, where: str) -> None:
    try:
        entries = commits.tree_entries(data)
    except ValueError as exc:
        raise SharingFailed(f"{where}: tree {oid} does not parse: {exc}") from exc
    if sum(1 for _mode, name, _oid in entries if name == "meta.json") != 1:
        raise SharingFailed(f"{where}: tree {oid} has no meta.json (not a log commit's tree)")
    for mode, name, entry in entries:
        if mode != "100644" or (name != "meta.json" and name != entry):
            raise SharingFailed(
                f"{where}: tree {oid} holds {name!r} (mode {mode}), where a log tree holds only "
                "meta.json and file contents named by their own ids: refused"
            )


def _parents(commit: bytes) -> list[str]:
    head = commit.split(b"\n\n", 1)[0]
    return [line[7:].decode() for line in head.split(b"\n") if line.startswith(b"parent ")]


def _kinds(repo: Path, oids: list[str]) -> dict[str, tuple[str, int]]:
    """Each present object's type and size (``cat-file --batch-check``)."""
    out = _in(repo, "cat-file", "--batch-check", stdin="".join(f"{o}\n" for o in oids).encode()).stdout.decode()
    found: dict[str, tuple[str, int]] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            found[parts[0]] = (parts[1], int(parts[2]))
    return found


def _contents(repo: Path, oids: list[str], want: str | None = None, limit: int | None = None,
              where: str = "") -> dict[str, bytes]:
    """The raw bytes of ``oids`` (``cat-file --batch``), each checked to be a ``want`` of at most
    ``limit`` bytes when these are given (a missing one is fetched from its promisor first)."""
    if want is not None:
        for oid, (kind, size) in _kinds(repo, oids).items():
            if kind != want or (limit is not None and size > limit):
                raise SharingFailed(f"{where}: object {oid} is a {kind} of {size} bytes where a {want} "
                                    f"of at most {limit} bytes should be: refused")
    out = _in(repo, "cat-file", "--batch", stdin="".join(f"{o}\n" for o in oids).encode()).stdout
    found: dict[str, bytes] = {}
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        parts = out[at:end].decode().split()
        if len(parts) != 3:
            raise SharingFailed(f"{where or 'shared.git'}: object {parts[0]} is missing (the remote did not send it)")
        length = int(parts[2])
        found[parts[0]] = out[end + 1 : end + 1 + length]
        at = end + 2 + length
    return found


def _fetch_ids(repo: Path, name: str, oids: list[str]) -> None:
    """Fetch the objects ``oids`` from the promisor ``name`` in one request (protocol v2 lets a
    client ask for any object by id; an object asked for by id is sent whatever the filter)."""
    if oids:
        _in(repo, "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--no-tags", "--no-write-fetch-head",
            "--filter=blob:none", "--stdin", name, stdin="".join(f"{o}\n" for o in oids).encode())


def _missing(repo: Path, oid: str) -> bool:
    proc = _in(repo, "rev-list", "--objects", "--missing=print", "--no-walk", oid, check=False)
    return proc.returncode != 0 or proc.stdout.startswith(b"?")


def content(store: Store, remote: str, oid: str, limit: int = MAX_CONTENT_BYTES) -> bytes:
    """One file's content from a fetched timeline of ``remote`` (a name as ``fetch`` took it),
    fetched now if it is not here yet (into ``shared.git``, never the workspace); refused when it
    is not a blob of at most ``limit`` bytes. A server sends an object asked for by id whatever
    its size (``blob:limit`` does not apply to it), so the size is checked once it is here."""
    if not _HEX.fullmatch(oid):
        raise SharingFailed(f"{oid!r} is not an object id")
    repo = shared_repo(store)
    if _missing(repo, oid):
        _fetch_ids(repo, ref_component(remote), [oid])
    return _contents(repo, [oid], want="blob", limit=limit, where=remote)[oid]


# ---------------------------------------------------------------------- reading a fetched timeline


def fetched(store: Store) -> dict[str, str]:
    """Every fetched teammate's timeline: ``<remote>/<who>``: its tip (none before a fetch)."""
    if not (store.path / SHARED_DIR / "HEAD").exists():
        return {}
    return _refs(shared_repo(store), REMOTES)


def metas(store: Store, name: str, tip: str) -> list[tuple[str, bytes]]:
    """The ``meta.json`` of each first-parent commit of the fetched timeline ``name``
    (``<remote>/<who>``) up to ``tip``, oldest first, with its commit: what ``fetch`` checked,
    read again (each a commit, tree and blob of bounded size: checked again by the caller)."""
    repo = shared_repo(store)
    chain = _in(repo, "rev-list", "--first-parent", "--reverse", tip).stdout.decode().split()
    raw = _contents(repo, chain, want="commit", limit=MAX_COMMIT_BYTES, where=name)
    trees = _contents(repo, [commits.header(raw[c], b"tree") for c in chain], want="tree", limit=MAX_TREE_BYTES, where=name)
    ids = [commits.meta_of(trees[commits.header(raw[c], b"tree")]) for c in chain]
    present = _kinds(repo, ids)
    _fetch_ids(repo, name.split("/", 1)[0], [oid for oid in dict.fromkeys(ids) if oid not in present])
    data = _contents(repo, ids, want="blob", limit=MAX_META_BYTES, where=name)
    return [(commit, data[oid]) for commit, oid in zip(chain, ids, strict=True)]
