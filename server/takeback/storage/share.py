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

What is sent (``push``): the log ref's chain as it is, as ``refs/takeback/timelines/<who>``
(``who``: ``<person>@<machine>``, ``identity``): each commit's ``meta.json`` and the content blobs
its records name. A withheld file (a secret by the secrets policy, or one over
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
import os
import re
import socket
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import gitenv
from ..errors import SharingFailed
from . import commits
from .store import Store

TIMELINES = "refs/takeback/timelines/"
REMOTES = "refs/takeback/remotes/"
INCOMING = "refs/takeback/incoming/"
SHARED_DIR = "shared.git"

MAX_COMMIT_BYTES = 64 << 10  # a log commit is a few header lines and a subject
MAX_TREE_BYTES = 32 << 20  # a flat tree: 68 bytes per file (a 5,000-file turn's is 340 KB)
MAX_META_BYTES = 32 << 20  # one engine call's records
MAX_CONTENT_BYTES = 64 << 20  # one file's content read from a teammate's timeline (``content``)

_EMPTY_META = b'{"format": 1, "records": []}'
_JOIN_ENV = {"GIT_AUTHOR_NAME": "takeback", "GIT_AUTHOR_EMAIL": "takeback@localhost",
             "GIT_COMMITTER_NAME": "takeback", "GIT_COMMITTER_EMAIL": "takeback@localhost"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_HEX = re.compile(r"[0-9a-f]{40}")

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


def push(store: Store, workspace: Path, remote: str, who: str, tries: int = 3) -> str:
    """Send the log to ``remote`` as ``refs/takeback/timelines/<who>``; answers the commit sent.
    A rejected push is fetched and retried on a join commit (module docstring)."""
    with store.locked():
        head = store.head()
    if head is None:
        raise SharingFailed("nothing to push: this workspace's timeline is empty")
    name, url = remote_of(workspace, remote)
    repo = shared_repo(store)
    _promisor(repo, name, url)
    ref, tip = TIMELINES + who, head
    for _ in range(tries):
        proc = _in(repo, "push", "--porcelain", "--no-verify", url, f"{tip}:{ref}", check=False)
        if proc.returncode == 0:
            return tip
        if not _rejected(proc.stdout):
            raise SharingFailed(f"git push to {remote} failed: {_last_line(proc.stderr)}")
        theirs = _fetch_own(repo, name, ref)
        if theirs is None or _ancestor(repo, theirs, head):
            tip = head  # they moved meanwhile to something this log holds (or went away): again
        else:
            tip = _join(repo, head, theirs)
    raise SharingFailed(f"git push to {remote} was rejected {tries} times (another push under {who} keeps racing)")


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
