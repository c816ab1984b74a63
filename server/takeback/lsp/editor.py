"""The bridge that changes open documents through the client (``workspace/applyEdit``).

One ``EditorRound`` per writing request. The engine calls it (``round(writes)``) from a worker
thread, with the store's lock let go (``takeback.engine.handoff``), with the new content of documents
open in the editor. The round hops to the event loop, checks that each document is still at the
version the operation read (else nothing is written: stale), turns the new content into the
smallest line edits against the editor's text, sends them as versioned ``TextDocumentEdit``s
(deletions as ``DeleteFile``), and answers whether the client applied them. Open documents'
undo stacks and unsaved edits thus stay the editor's.

A client says no in three ways: ``applied: false``, a JSON-RPC error (Emacs's eglot, when the
person answers "no" or a version is stale), or no answer within ``applyEditTimeout``. Each is a
refusal. A client may also apply some documents of a multi-document edit and then fail: the
round reads back what every document holds (after a moment for the client's ``didChange``) and
takes back, with a second ``workspace/applyEdit``, each document that holds the new text, so
the editor holds again what it held before; a document that reports the new text later (within
``LATE_WINDOW``) is taken back then. The same take-back runs when the write cannot complete
after the editor applied it (the timeline moved meanwhile), and for an answer that arrives
after the timeout. What could not be taken back is named in the answer. A document the client
says it changed but has not reported since is marked unsynced (``Documents.unsynced``): no
write plans with its old text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from ..core.merge import Version
from ..errors import StaleContent, StateError, TakebackError
from .documents import Snapshot, diff_edits
from .errors import Cancelled

if TYPE_CHECKING:
    from .folders import Folder
    from .server import TakebackServer

log = logging.getLogger("takeback.lsp.editor")

EDITOR_TIMEOUT = 120.0
"""Seconds to wait for the client's answer (``initializationOptions.applyEditTimeout``)."""
LATE_WINDOW = 30.0
"""Seconds during which a refused edit's documents are watched for a partial apply reported late."""
SETTLE = 1.0
"""Seconds to wait for the ``didChange`` of documents a client applied (eglot sends them after
0.5 s idle, possibly after its answer)."""


@dataclass
class Sent:
    """One document's part of a round: what it held and what it was sent."""

    rel: str
    version: int
    """The document's version when the edit was sent."""
    before: str
    after: str | None
    """None: the document's file was deleted."""
    disk: bytes | None = None
    """For a deletion: the file's bytes on disk before it, to write back on a take-back."""


class EditorRound:
    """One request's edits to open documents (see the module's docstring)."""

    def __init__(
        self,
        server: TakebackServer,
        folder: Folder,
        snapshot: dict[str, Snapshot],
        label: str,
        cancel: threading.Event | None = None,
    ) -> None:
        self.server = server
        self.folder = folder
        self.snapshot = snapshot
        self.label = label
        self.cancel = cancel
        self.sent: dict[str, Sent] = {}
        self.reason: str | None = None
        """Why the editor did not apply the edit (None: it did, or was not asked)."""
        self.holding = False
        """Whether the editor (or the disk, for deletions) may hold some of this round's edit."""
        self._deleted_here: list[str] = []
        self._reported_late: set[str] = set()

    # ------------------------------------------------------------------ engine side (a thread)

    def __call__(self, writes: list[tuple[str, Version | None]]) -> bool:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled("cancelled before anything was written")
        loop = self.server.loop
        assert loop is not None
        future = asyncio.run_coroutine_threadsafe(self.send(writes), loop)
        return future.result(timeout=self.server.editor_timeout + 4 * SETTLE + 30)

    # ------------------------------------------------------------------ event loop side

    async def send(self, writes: list[tuple[str, Version | None]]) -> bool:
        """Ask the editor to apply ``writes``; answer whether it applied all of them."""
        server = self.server
        text_edits: list[types.TextDocumentEdit] = []
        deletes: list[types.DeleteFile] = []
        for rel, version in writes:
            path = os.path.join(self.folder.path, rel)
            seen = self.snapshot.get(path)
            doc = server.documents.get(path)
            if seen is None or doc is None:
                raise StaleContent(f"{rel} was closed in the editor while Takeback was working; nothing was written")
            if doc.version != seen.version:
                raise StaleContent(
                    f"{rel} changed in the editor (version {seen.version} -> {doc.version}) while Takeback "
                    "was working; nothing was written, try again"
                )
            if version is None:
                disk = await asyncio.to_thread(_read, path)
                self.sent[path] = Sent(rel, doc.version, doc.text, None, disk)
                deletes.append(types.DeleteFile(uri=doc.uri, options=types.DeleteFileOptions(ignore_if_not_exists=True)))
                continue
            try:
                new_text = version.content.decode("utf-8")
            except UnicodeDecodeError:
                raise StateError(f"{rel} would get content that is not UTF-8 text; an open document cannot show it") from None
            edits = diff_edits(doc.text, new_text, server.position_encoding)
            if edits:
                self.sent[path] = Sent(rel, doc.version, doc.text, new_text)
                identifier = types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version)
                text_edits.append(types.TextDocumentEdit(text_document=identifier, edits=edits))
        on_disk: list[str] = []
        if deletes and "delete" not in server.resource_operations:
            # The client cannot delete files: the server deletes them on disk once the client
            # applied the rest (its buffer stays until closed).
            on_disk = [server.documents.by_uri[d.uri].path for d in deletes]
            deletes = []
        if text_edits or deletes:
            applied, why = await self._ask(text_edits, deletes)
            if not applied:
                await self._refused(why, len(text_edits) + len(deletes))
                return False
            self.holding = True
            await self._settle()
            for path in self._unreported():
                server.documents.unsynced.add(path)  # its next didChange says what it holds
        for path in on_disk:
            await asyncio.to_thread(_unlink, path)
            self._deleted_here.append(path)
            self.holding = True
        return True

    async def _refused(self, why: str, documents: int) -> None:
        """The editor did not apply an edit of ``documents`` documents: say why, and take back
        any part of it the editor did apply (now, or when it reports it)."""
        self.reason = why
        log.warning("%s: the editor did not apply the edit: %s", self.label, why)
        if documents <= 1:
            return
        await self._settle()  # a client that applied some documents says so late
        if self._applied_paths():
            self.holding = True
            self.reason += "; " + _taken_back_note(await self.take_back())
        elif self._unreported():
            # It may still have applied some, and not said so yet (eglot reports
            # changes after 0.5 s idle): whatever it reports later is taken back.
            self._watch_first_reports()
            self.reason += "; whatever part of it the editor applied is taken back when the editor reports it"

    async def _ask(
        self, text_edits: list[types.TextDocumentEdit], deletes: list[types.DeleteFile], label: str | None = None
    ) -> tuple[bool, str]:
        """Send one ``workspace/applyEdit``; answer (applied, why not). A JSON-RPC error and no
        answer in time are refusals; an answer that cannot be read arrives as a JSON-RPC error
        (``stream.py`` fails the request with it), so the result is always one pygls could read."""
        server = self.server
        if server.document_changes:
            edit = types.WorkspaceEdit(document_changes=[*text_edits, *deletes])
        else:
            edit = types.WorkspaceEdit(changes={e.text_document.uri: cast(list[types.TextEdit], list(e.edits)) for e in text_edits})
        for change in text_edits:
            path = server.documents.by_uri[change.text_document.uri].path
            server.documents.edits_sent[path] = server.documents.edits_sent.get(path, 0) + 1
        request = asyncio.ensure_future(
            server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=label or self.label))
        )
        timeout = server.editor_timeout
        try:
            result: types.ApplyWorkspaceEditResult = await asyncio.wait_for(asyncio.shield(request), timeout)
        except TimeoutError:
            server.background(self._late(request), "late workspace/applyEdit answer")
            return False, f"the editor did not answer workspace/applyEdit within {timeout:g} s"
        except JsonRpcException as exc:
            return False, f"the editor answered with an error ({exc.code}: {exc.message})"
        if not result.applied:
            reason = result.failure_reason or "the editor refused the edit"
            if result.failed_change is not None:
                reason += f" (at change {result.failed_change})"
            return False, reason
        return True, ""

    async def _late(self, request: asyncio.Future[Any]) -> None:
        """An answer after the timeout: whatever the editor applied then is taken back."""
        try:
            await request
        except Exception:  # noqa: BLE001 - a refusal, late: nothing to take back
            return
        await self._settle()
        async with self.folder.writes:  # not in the middle of another write's round
            if self._applied_paths():
                self.holding = True
                left = await self.take_back()
                log.warning("%s: the editor applied the edit after the timeout; %s", self.label, _taken_back_note(left))

    def _watch_first_reports(self) -> None:
        """After a refusal: each document's first report (its next ``didChange``, within
        ``LATE_WINDOW``) says whether the client had applied this round's edit to it; such
        documents are taken back. Only the first report counts: a later one may come from a
        later write that happens to produce the same text."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + LATE_WINDOW
        documents = self.server.documents
        for path in self._unreported():
            sent = self.sent[path]
            edits_sent = documents.edits_sent.get(path, 0)

            def first_report(doc: Any, sent: Sent = sent, path: str = path, edits_sent: int = edits_sent) -> None:
                if documents.edits_sent.get(path, 0) != edits_sent:
                    return  # another edit was sent since: the report may be that edit's
                if loop.time() < deadline and doc.text == sent.after:
                    self.server.background(self._take_back_late(path), "take back a partial edit reported late")

            documents.next_change.setdefault(path, []).append(first_report)

    async def _take_back_late(self, path: str) -> None:
        async with self.folder.writes:  # not in the middle of another write's round
            self._reported_late.add(path)
            self.holding = True
            left = await self.take_back()
            log.warning("%s: the editor reported applying part of the refused edit; %s", self.label, _taken_back_note(left))

    def _unreported(self) -> list[str]:
        """Open documents sent an edit that have not reported any change since."""
        documents = self.server.documents
        return [
            p for p, s in self.sent.items()
            if s.after is not None and (doc := documents.get(p)) is not None and doc.version == s.version
        ]

    def _state(self, path: str, sent: Sent) -> str:
        """What a document holds now: ``new`` (this round's text, or deleted), ``old``, ``other``."""
        doc = self.server.documents.get(path)
        if sent.after is None:
            return "new" if doc is None and not os.path.lexists(path) else "old"
        if doc is None:
            return "other"
        if doc.text == sent.after:
            return "new"
        return "old" if doc.text == sent.before else "other"

    def _applied_paths(self) -> list[str]:
        applied = [p for p, s in self.sent.items() if self._state(p, s) == "new"]
        if self._reported_late:  # only these: the others' text may come from a later write
            applied = [p for p in applied if p in self._reported_late]
        return applied + self._deleted_here

    async def _settle(self) -> None:
        """Wait (at most ``SETTLE``) until every document sent shows the new text."""
        deadline = asyncio.get_running_loop().time() + SETTLE
        while asyncio.get_running_loop().time() < deadline:
            if all(self._state(p, s) == "new" for p, s in self.sent.items()):
                return
            await asyncio.sleep(0.05)

    async def take_back(self) -> list[str]:
        """Bring the documents (and files deleted on disk) that hold this round's edit back to
        what they held before; answer the paths that still hold it."""
        server = self.server
        edits: list[types.TextDocumentEdit] = []
        versions: dict[str, int] = {}  # the documents taken back, at their version now
        restore: list[tuple[str, bytes]] = []
        for path in dict.fromkeys(self._applied_paths()):
            sent = self.sent[path]
            if sent.after is None:
                if sent.disk is not None:
                    restore.append((path, sent.disk))
                continue
            doc = server.documents.get(path)
            assert doc is not None
            versions[path] = doc.version
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version)
            edits.append(
                types.TextDocumentEdit(text_document=identifier, edits=diff_edits(doc.text, sent.before, server.position_encoding))
            )
        for path, content in restore:
            await asyncio.to_thread(_write, path, content)
        self._deleted_here = []
        left: list[str] = []
        if edits:
            applied, why = await self._ask(edits, [], f"{self.label} (taken back)")
            unreported: set[str] = set()  # taken back, says the editor, but not reported yet
            if applied:
                await self._settle_back()
                for path, version in versions.items():
                    doc = server.documents.get(path)
                    if doc is not None and doc.version == version:
                        server.documents.unsynced.add(path)
                        unreported.add(path)
            else:
                log.warning("%s: the editor refused to take its edit back: %s", self.label, why)
            left = [
                self.sent[p].rel for p, s in self.sent.items()
                if s.after is not None and p not in unreported and self._state(p, s) == "new"
            ]
        self.holding = bool(left)
        return left

    async def _settle_back(self) -> None:
        deadline = asyncio.get_running_loop().time() + SETTLE
        while asyncio.get_running_loop().time() < deadline:
            if not any(self._state(p, s) == "new" for p, s in self.sent.items() if s.after is not None):
                return
            await asyncio.sleep(0.05)

    @contextlib.asynccontextmanager
    async def taking_back(self) -> AsyncIterator[None]:
        """Around the write this round belongs to: if it fails after the editor applied its
        part, that part is taken back, and the error says what the editor holds now."""
        try:
            yield
        except Exception as exc:
            if not self.holding:
                raise
            note = _taken_back_note(await self.take_back())
            if not isinstance(exc, TakebackError):
                log.error("%s failed after the editor applied its edit; %s", self.label, note)
                raise
            raise type(exc)(f"{exc.message}; {note}") from exc


def _taken_back_note(left: list[str]) -> str:
    if left:
        return (
            f"the editor still holds the edit in {', '.join(sorted(left))} (unsaved, not recorded):"
            " use the editor's undo there"
        )
    return "what the editor had applied was taken back"


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _write(path: str, content: bytes) -> None:
    if not os.path.lexists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
