"""Sharing an engine's timeline: the engine-side glue over ``storage/share.py``.

It gives the transport the two things only this layer knows: which workspace the store belongs
to (for the remote's URL and the person's identity) and the records rule a teammate's timeline
must pass (``check_meta``: every ``meta.json`` must be a ``RecordEnvelope`` whose records name
clean workspace paths, ``history.check_record``, the same rule the local log is read under).
Nothing here writes the workspace; a fetched timeline is only kept as refs of ``shared.git``.

What is sent is this layer's rule too (``sending``): the records of every log commit, rewritten
(``Redaction``) so that with ``--no-prompts`` (or ``share.no_prompts``) no prompt, label, step
label or command is in them, every match of a ``share.redact`` pattern in their texts is
``[redacted]``, and a file the secrets policy names now whose content was stored anyway (stored
before the pattern was added, or under ``secrets.store_content``) is sent as a withheld secret: a
keyed digest, its blob left out. The commit's subject, which repeats the prompt, is made again
from the rewritten records (``transaction.subject``, the one rule for it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.models import EntryBegun, Record, RecordEnvelope
from ..errors import SharingFailed, TakebackError
from ..storage import share
from ..storage.store import Store
from ..workspace.capture import SecretSpec
from .history import check_record
from .transaction import subject

REDACTED = "[redacted]"
Pushed = share.Pushed

if TYPE_CHECKING:
    from .engine import Engine


def check_meta(data: bytes, where: str) -> None:
    """Refuse (``SharingFailed``, one line) a teammate's ``meta.json`` that is not records
    Takeback writes, or names a path outside the workspace."""
    records_of(data, where)


def records_of(data: bytes, where: str) -> list[Record]:
    """The records of a teammate's ``meta.json``, each checked by ``history.check_record`` (the
    rule the local log is read under); refused with one line (``SharingFailed``) otherwise. At
    fetch (``check_meta``) and again each time a fetched timeline is read (``remote.read``)."""
    try:
        records = RecordEnvelope.model_validate_json(data).records
    except ValueError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SharingFailed(f"{where}: meta.json is not Takeback's records ({first}): refused") from exc
    for record in records:
        try:
            check_record(record, where)
        except TakebackError as exc:
            raise SharingFailed(exc.message) from exc
    return records


def who(engine: Engine) -> str:
    """This machine's name on a remote: ``<person>@<machine>`` (``share.identity``)."""
    return share.identity(engine.workspace.root)


def sending(engine: Engine, no_prompts: bool = False) -> share.Sending:
    """How ``share push`` rewrites the timeline, from the settings (the person's, and what the
    repository added: ``config.SharePolicy``) and ``--no-prompts``. A ``[share]`` setting that
    could not be read, or a pattern that is not a regular expression, stops the push: sending
    with less redaction than the person asked for is never the fallback."""
    config = engine.config
    bad = [problem for problem in config.problems if "share." in problem or problem.startswith("share")]
    if bad:
        raise SharingFailed(f"your [share] settings could not be read ({bad[0]}): nothing was pushed")
    patterns: list[re.Pattern[str]] = []
    for text in config.share.redact:
        try:
            patterns.append(re.compile(text))
        except re.error as exc:
            raise SharingFailed(f"share.redact: {text!r} is not a regular expression ({exc}): nothing was pushed") from exc
    secrets = config.secrets
    specs = [SecretSpec(tuple(secrets.own_patterns())), SecretSpec(tuple(secrets.repository_patterns))]
    redaction = Redaction(
        no_prompts=no_prompts or config.share.no_prompts, patterns=tuple(patterns),
        secret=lambda rel: any(spec.match(rel) for spec in specs), store=engine.store,
    )
    settings: dict[str, Any] = {
        "no_prompts": redaction.no_prompts, "redact": [p.pattern for p in patterns],
        "secrets": [*secrets.own_patterns(), "--", *secrets.repository_patterns],
    }
    return share.Sending(rewrite=redaction.rewrite, settings=settings)


@dataclass(frozen=True)
class Redaction:
    """Rewrites one log commit's records for sending (module docstring). Works on the JSON as
    stored, so only the fields it names change; the result is checked as Takeback's records."""

    no_prompts: bool
    patterns: tuple[re.Pattern[str], ...]
    secret: Callable[[str], bool]
    store: Store

    def rewrite(self, meta: bytes, message: str) -> tuple[bytes, str, set[str]]:
        data = json.loads(meta)
        before = json.dumps(data, sort_keys=True)
        stripped: set[str] = set()
        for record in data.get("records", []):
            self._record(record, stripped)
        if json.dumps(data, sort_keys=True) == before:
            return meta, message, set()
        envelope = RecordEnvelope.model_validate(data)
        named = {version["oid"] for version in _versions(data)}
        first = envelope.records[0] if envelope.records else None
        new_message = subject(envelope.records) if isinstance(first, EntryBegun) else self._text(message)
        return envelope.model_dump_json().encode(), new_message, stripped - named

    def _record(self, record: dict[str, Any], stripped: set[str]) -> None:
        kind = record.get("type")
        if kind in ("begin", "checkpoint") and "label" in record:
            record["label"] = self._prompt(record["label"])
        if kind == "end" and "commands" in record:
            record["commands"] = [] if self.no_prompts else [self._text(c) for c in record["commands"]]
        for check in [*record.get("checks", []), *([record["check"]] if kind == "check" else [])]:
            if "command" in check:
                check["command"] = self._prompt(check["command"])
            check["name"] = self._text(check["name"])
        if "notices" in record:
            record["notices"] = [self._text(n) for n in record["notices"]]
        for item in [*record.get("git_moved", []), *record.get("lost", []), *record.get("spans", [])]:
            for key in ("fact", "command", "why"):
                if key in item:
                    item[key] = self._text(item[key])
        self._withhold(record, stripped)

    def _withhold(self, record: dict[str, Any], stripped: set[str]) -> None:
        """A stored version of a path the secrets policy names now: a keyed digest instead."""
        for change in [*record.get("changes", []), *record.get("lost", [])]:
            for side in ("before", "after", "kept"):
                version = change.get(side)
                if version and version.get("withheld") is None and self.secret(change["path"]):
                    stripped.add(version["oid"])
                    content = self.store.read_blob(version["oid"])
                    version.update(oid=self.store.secret_digest(content), size=len(content), withheld="secret")

    def _prompt(self, text: str | None) -> str | None:
        return None if self.no_prompts else self._text(text)

    def _text(self, text: Any) -> Any:
        if not isinstance(text, str):
            return text
        for pattern in self.patterns:
            text = pattern.sub(REDACTED, text)
        return text


def _versions(data: Any) -> list[dict[str, Any]]:
    """Every file version (a dict with ``oid`` and ``mode``) in stored records' JSON."""
    found: list[dict[str, Any]] = []
    if isinstance(data, dict):
        if "oid" in data and "mode" in data:
            found.append(data)
        for value in data.values():
            found += _versions(value)
    elif isinstance(data, list):
        for value in data:
            found += _versions(value)
    return found


def push(engine: Engine, remote: str, no_prompts: bool = False) -> share.Pushed:
    """Push the timeline, rewritten for sending (``sending``), to ``remote``."""
    return share.push(engine.store, engine.workspace.root, remote, who(engine), sending(engine, no_prompts))


def status(engine: Engine, remote: str) -> share.Pushed | None:
    """What the last push to ``remote`` sent, or None if none was made from this store."""
    name, _url = share.remote_of(engine.workspace.root, remote)
    return share.last_pushed(engine.store).get(name)


def fetch(engine: Engine, remote: str) -> share.Fetched:
    return share.fetch(engine.store, engine.workspace.root, remote, check_meta)


def delete(engine: Engine, remote: str) -> tuple[str, bool]:
    """Remove this machine's timeline from ``remote``; answers (its ref, whether it was there)."""
    name = who(engine)
    return share.TIMELINES + name, share.delete(engine.store, engine.workspace.root, remote, name)
