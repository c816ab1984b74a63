"""Turning file content into stored versions, under the secrets and size policies.

Content is copied into the store as a git blob unless the path is a secret (``.env*``, keys …,
see ``config.DEFAULT_SECRET_PATTERNS``) or the file is over ``max_file_bytes``: then only a
keyed digest is kept (``FileVersion.withheld`` says why), enough to tell whether the file
on disk is still the same, never enough to bring its bytes back.

The repository's secrets patterns (``secrets.repository_patterns``) are a second gitignore spec,
matched on its own: a path is a secret when the person's patterns or the repository's match it,
so nothing a repository writes (a ``!*`` included) can un-match one of the person's.
"""

from __future__ import annotations

import functools
import re

import pathspec
from pathspec.util import normalize_file

from ..config import Config
from ..core.models import FileVersion
from ..errors import StoreError
from ..storage.store import Store
from .files import Version, Workspace


class SecretSpec:
    """One gitignore spec of secrets patterns, asked first as one regular expression.

    pathspec tries each pattern in turn (36 regular expressions by default: 35 µs a path, the
    largest part of planning a big operation in a fresh process). A path no pattern that
    *includes* matches is never a secret whatever the rest say (a ``!pattern`` only un-matches),
    so one search of all the including patterns joined answers most paths; a path one of them
    matches is asked of the whole spec, in gitignore's order."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.spec = pathspec.GitIgnoreSpec.from_lines(patterns)
        regexes = [getattr(p, "regex", None) for p in self.spec.patterns if p.include]
        including = [r.pattern for r in regexes if isinstance(r, re.Pattern) and isinstance(r.pattern, str)]
        self._any: re.Pattern[str] | None = None
        try:
            self._any = re.compile("|".join(f"(?:{_unnamed(r)})" for r in including)) if including else None
        except re.error:  # not joinable (a flag inside one): the whole spec answers every path
            including = []
        self._exact = len(including) == sum(1 for p in self.spec.patterns if p.include)  # every one joined

    def match(self, rel: str) -> bool:
        if self._exact and (self._any is None or self._any.search(normalize_file(rel)) is None):
            return False
        return self.spec.match_file(rel)


def _unnamed(regex: str) -> str:
    """``regex`` with its named groups made plain ones (joined, their names would repeat)."""
    return re.sub(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>", "(?:", regex)


@functools.lru_cache(maxsize=64)
def _spec(patterns: tuple[str, ...]) -> SecretSpec:
    """The compiled patterns (remembered, and only read: a process that opens many engines, the
    resident one, would compile the same secrets patterns at every open)."""
    return SecretSpec(patterns)


class Capturer:
    def __init__(self, store: Store, workspace: Workspace, config: Config) -> None:
        self.store = store
        self.workspace = workspace
        self.max_bytes = config.max_file_bytes
        self.store_secrets = config.secrets.store_content
        self._secret_specs = [_spec(tuple(config.secrets.own_patterns())), _spec(tuple(config.secrets.repository_patterns))]
        self._secret_paths: dict[str, bool] = {}  # the patterns never change: remember answers

    def is_secret(self, rel: str) -> bool:
        if self.store_secrets:
            return False
        known = self._secret_paths.get(rel)
        if known is None:
            if len(self._secret_paths) > 10_000:
                self._secret_paths.clear()
            known = self._secret_paths[rel] = any(spec.match(rel) for spec in self._secret_specs)
        return known

    def version(self, rel: str, content: bytes, mode: int) -> FileVersion:
        """Store ``content`` (or only its digest, by policy) and describe it."""
        if self.is_secret(rel):
            return FileVersion(oid=self.store.secret_digest(content), mode=mode, size=len(content), withheld="secret")
        if len(content) > self.max_bytes:
            return FileVersion(oid=self.store.secret_digest(content), mode=mode, size=len(content), withheld="oversize")
        return FileVersion(oid=self.store.write_blob(content), mode=mode, size=len(content))

    def recorded(self, rel: str, content: bytes, mode: int, known: FileVersion | None) -> FileVersion:
        """``version``, without hashing and storing ``content`` again when it is ``known``, a
        recorded version planning found it to be (``PathPlan.ours_recorded``): one the store
        holds, whose bytes the policies would store today."""
        if (
            known is not None and not known.withheld and known.mode == mode and known.size == len(content)
            and len(content) <= self.max_bytes and not self.is_secret(rel) and self.store.has(known.oid)
        ):
            return known
        return self.version(rel, content, mode)

    def from_disk(self, rel: str) -> FileVersion | None:
        disk = self.workspace.read(rel)
        return None if disk is None else self.version(rel, disk.content, disk.mode)

    def identity(self, rel: str, disk: Version, like: FileVersion | None) -> str:
        """The id ``disk`` would get, computed the way ``like`` was (blob id or digest); no write."""
        if like is not None and like.withheld:
            return self.store.secret_digest(disk.content)
        if self.is_secret(rel) or len(disk.content) > self.max_bytes:
            return self.store.secret_digest(disk.content)
        return self.store.hash_blob(disk.content)

    def matches(self, rel: str, version: FileVersion | None, disk: Version | None) -> bool:
        """Whether the file on disk (or in an editor buffer) is exactly ``version``."""
        if version is None or disk is None:
            return version is None and disk is None
        if version.mode != disk.mode or version.size != len(disk.content):
            return False
        if self.identity(rel, disk, version) != version.oid:
            return False
        if not version.withheld:
            self.store.verified_blob(version.oid, disk.content)
        return True

    def content(self, version: FileVersion) -> bytes:
        if version.withheld:
            raise StoreError(f"content withheld by policy ({version.withheld}); it was never stored")
        return self.store.read_blob(version.oid)
