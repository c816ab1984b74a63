"""Open documents: what the editor shows, kept in step with incremental sync.

The text of an open document is the person's view of a file, unsaved edits included: it is the
before-image of an agent's edit and the "ours" side of every revert. Positions are counted in
the position encoding negotiated at initialize (UTF-16 unless the client offers another), and
lines end at ``\\n``, ``\\r\\n`` or ``\\r`` only, as LSP says. The helpers here turn positions
into string offsets and back, apply text edits, and turn "old text -> new text" into the
smallest line-based edits, which is how reverts reach open documents. A document the client
says it changed through ``workspace/applyEdit`` but has not reported since is "unsynced": no
write plans with the old text the server still has for it.
"""

from __future__ import annotations

import bisect
import difflib
import logging
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from ..errors import InvalidInput, StaleContent

if TYPE_CHECKING:
    from .server import TakebackServer

log = logging.getLogger("takeback.lsp.documents")

_BREAK = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")

UTF8 = types.PositionEncodingKind.Utf8
UTF16 = types.PositionEncodingKind.Utf16
UTF32 = types.PositionEncodingKind.Utf32


def units(text: str, encoding: str) -> int:
    """The length of ``text`` in the encoding's code units."""
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _chars_for_units(text: str, count: int, encoding: str) -> int:
    """How many characters of ``text`` fit in ``count`` code units (a split character counts out)."""
    if encoding == UTF32:
        return min(count, len(text))
    used = 0
    for index, char in enumerate(text):
        step = units(char, encoding)
        if used + step > count:
            return index
        used += step
    return len(text)


def split_lines(text: str) -> list[str]:
    """Lines with their endings; LSP's line breaks only (no form feeds, no U+2028)."""
    return _LINE.findall(text)


class TextIndex:
    """Positions <-> offsets for one text."""

    def __init__(self, text: str, encoding: str) -> None:
        self.text = text
        self.encoding = encoding
        self.starts = [0] + [m.end() for m in _BREAK.finditer(text)]

    def _line_end(self, line: int) -> int:
        """Offset where ``line``'s content ends (before its line break)."""
        if line + 1 < len(self.starts):
            end = self.starts[line + 1]
            return end - (2 if self.text[end - 2 : end] == "\r\n" else 1)
        return len(self.text)

    def offset(self, position: types.Position) -> int:
        """A position's offset; a character past the line's end means the end (LSP's rule)."""
        line = position.line  # never negative: lsprotocol's Position refuses that
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[line]
        content = self.text[start : self._line_end(line)]
        return start + _chars_for_units(content, position.character, self.encoding)

    def position(self, offset: int) -> types.Position:
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return types.Position(line=line, character=units(self.text[start:offset], self.encoding))

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))


def apply_text_edits(text: str, edits: Sequence[types.TextEdit], encoding: str, where: str = "document") -> str:
    """Apply edits whose ranges refer to ``text`` (all at once, as LSP means them)."""
    index = TextIndex(text, encoding)
    spans = []
    for order, edit in enumerate(edits):
        new_text = getattr(edit, "new_text", None)
        if new_text is None:
            raise InvalidInput(f"unsupported text edit in {where}: only plain (or annotated) text edits are accepted")
        start, end = index.offset(edit.range.start), index.offset(edit.range.end)
        if end < start:
            raise InvalidInput(f"malformed edit in {where}: range {_fmt(edit.range)} ends before it starts")
        spans.append((start, end, order, new_text))
    spans.sort(key=lambda s: (s[0], s[1], s[2]))
    out = []
    cursor = 0
    for start, end, _order, new_text in spans:
        if start < cursor:
            raise InvalidInput(f"malformed edit in {where}: text edits overlap near offset {start}")
        out.append(text[cursor:start])
        out.append(new_text)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def _fmt(r: types.Range) -> str:
    return f"{r.start.line}:{r.start.character}-{r.end.line}:{r.end.character}"


def diff_edits(old: str, new: str, encoding: str) -> list[types.TextEdit]:
    """The smallest whole-line edits that turn ``old`` into ``new`` (ranges refer to ``old``)."""
    if old == new:
        return []
    a, b = split_lines(old), split_lines(new)
    index = TextIndex(old, encoding)
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    edits = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edits.append(types.TextEdit(range=index.range(starts[i1], starts[i2]), new_text="".join(b[j1:j2])))
    return edits


def file_path(uri: str) -> str:
    """The file-system path of a ``file:`` URI (absolute, normalised), or InvalidInput."""
    path = to_fs_path(uri) if isinstance(uri, str) else None
    if not path or not os.path.isabs(path):
        raise InvalidInput(f"{uri!r} is not a file: URI; Takeback only works with files in a workspace folder")
    return os.path.normpath(path)


def real_path(path: str) -> str:
    """``path`` with its folders' symlinks resolved (the file itself is not followed)."""
    parent, name = os.path.split(path)
    return os.path.join(os.path.realpath(parent), name)


def path_uri(path: str) -> str:
    return from_fs_path(path)


@dataclass
class Document:
    uri: str
    path: str
    """Real path (folders' symlinks resolved): the key the rest of the server uses."""
    version: int
    text: str
    language_id: str = ""

    def apply(self, change: types.TextDocumentContentChangeEvent, encoding: str) -> None:
        if isinstance(change, types.TextDocumentContentChangePartial):
            index = TextIndex(self.text, encoding)
            start, end = index.offset(change.range.start), index.offset(change.range.end)
            if end < start:
                start, end = end, start
            self.text = self.text[:start] + change.text + self.text[end:]
        else:
            self.text = change.text


@dataclass(frozen=True)
class Snapshot:
    """An open document's text and version at one moment."""

    uri: str
    path: str
    version: int
    text: str


class Documents:
    """The open documents, by URI and by real path."""

    def __init__(self) -> None:
        self.by_uri: dict[str, Document] = {}
        self.by_path: dict[str, Document] = {}
        self.unsynced: set[str] = set()
        """Paths of documents the client said it changed (``workspace/applyEdit``) and has not
        reported since: the server's text for them is old until their next ``didChange``."""
        self.next_change: dict[str, list[Callable[[Document], None]]] = {}
        """One-shot listeners called with a document after its next ``didChange``."""
        self.edits_sent: dict[str, int] = {}
        """How many ``workspace/applyEdit`` requests have named each document (by path)."""

    def open(self, item: types.TextDocumentItem) -> None:
        try:
            path = real_path(file_path(item.uri))
        except InvalidInput:
            return  # untitled:, git: … are not files in a workspace; nothing to track
        doc = Document(uri=item.uri, path=path, version=item.version, text=item.text, language_id=item.language_id)
        self.by_uri[item.uri] = doc
        self.by_path[path] = doc

    def change(self, params: types.DidChangeTextDocumentParams, encoding: str) -> None:
        doc = self.by_uri.get(params.text_document.uri)
        if doc is None:
            log.debug("change to a document that is not open: %s", params.text_document.uri)
            return
        for change in params.content_changes:
            doc.apply(change, encoding)
        doc.version = params.text_document.version
        self.unsynced.discard(doc.path)
        for listener in self.next_change.pop(doc.path, []):
            listener(doc)
        log.debug("%s is at version %d (%d characters)", doc.uri, doc.version, len(doc.text))

    def close(self, uri: str) -> None:
        doc = self.by_uri.pop(uri, None)
        if doc is not None and self.by_path.get(doc.path) is doc:
            del self.by_path[doc.path]
            self.unsynced.discard(doc.path)
            self.next_change.pop(doc.path, None)

    def get(self, path: str) -> Document | None:
        return self.by_path.get(path)

    def require_synced(self, docs: Iterable[str]) -> None:
        """Refuse to plan with a document whose text the client has not reported since it
        applied an edit of Takeback's (``unsynced``)."""
        for path in docs:
            if path in self.unsynced:
                raise StaleContent(
                    f"{os.path.basename(path)}: the editor applied Takeback's last edit to it but has not sent its "
                    "new text yet; nothing was done, try again in a moment"
                )

    def snapshot(self, paths: Iterable[str] | None = None, under: str | None = None) -> dict[str, Snapshot]:
        """Open documents by real path: the given paths, or all under a folder, or all."""
        if paths is not None:
            docs = [self.by_path[p] for p in paths if p in self.by_path]
        elif under is not None:
            prefix = under.rstrip(os.sep) + os.sep
            docs = [d for p, d in self.by_path.items() if p.startswith(prefix)]
        else:
            docs = list(self.by_path.values())
        return {d.path: Snapshot(d.uri, d.path, d.version, d.text) for d in docs}


def setup(server: TakebackServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TakebackServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.documents.open(params.text_document)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TakebackServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.documents.change(params, ls.position_encoding)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TakebackServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.documents.close(params.text_document.uri)
