"""The timeline cache's files: the folded timeline kept in pages, so opening reads what is new.

``timeline.json`` (the index) holds the log head the cache was folded up to, the timeline's
counts (``Timeline``'s scalars: numbers, records, entries, turns, checkpoints, open turns,
what retention dropped), the newest entries' folded state inline (the tail, at most
``TAIL_ENTRIES``), and the list of pages that hold the older entries in log order. A page
(``timeline-pages/<sha256>.page``) holds ``PAGE_ENTRIES`` entries' folded state, or fewer whose
checkpoints changed ``PAGE_PATHS`` paths between them (the last page may hold fewer still; the
rule is ``full`` and ``page_spans``) and is named by the SHA-256 of its bytes: a page is never rewritten, a changed
one is a new file, and a page whose bytes do not hash to its name, or whose entries are not
the ones the index says (count, first and last numbers), is refused (``PageRefused``).

Each entry is kept as ``CachedEntry``: its begin, its checkpoints without their file lists
(with the log commit that holds each, and its place in log order), the applied flags, its end,
checks, operation, state, who reverted it, and the (files, additions, deletions) of its view.
A page also keeps what each of its checkpoints changed (path and after's oid: the per-path
index blame and a revert's later notices read, ``Timeline.touching``), apart from its entries,
and each entry's header (``Timeline.bare_header``: what ``log`` prints, the entry without its
file lists), apart from both. A page's file is two zlib streams, one after the other: the
headers' JSON (``Headers``), then ``<entries JSON>\n<per-path index JSON>`` (compact JSON holds
no raw newline). An unlimited ``log`` reads the headers only
(``read_headers``: a fifth of the page's JSON, validated straight into ``Entry``, with no
entry folded again nor header built; it was most of ``log``'s work at 1,000 entries); an
operation that needs an older entry reads its records (``read_page``), which validates the
entries and leaves the per-path index as bytes, checked only when something asks a path's
checkpoints (``touched_of``). Compressed, a page takes a sixth of its JSON's bytes on disk.

Writing puts the pages first, then the index (``storage/atomic.py``), then removes the pages no
index names any more: a crash in between leaves the old index and its pages, or the new ones.
This module reads and writes bytes and checks what it reads against the index; what the
entries mean, and checking their paths, is ``history.py``'s.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Final, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter

from ..core.models import Check, CheckpointRecorded, DroppedSpan, Entry, EntryBegun, EntryState, OperationDone, TurnEnded
from ..errors import StoreError
from ..storage import atomic, repair

CACHE_FILE = "timeline.json"
PAGES_DIR = "timeline-pages"
FORMAT: Final = 8  # bump when the shape changes (and the models' ``format`` with it); 7's pages held no
# headers; 6's were plain JSON holding the per-path index in each entry; 5 held every record
PAGE_SUFFIX = ".page"  # (6's pages ended in ``.json``: the first sweep removes them)
PAGE_ENTRIES = 200  # entries in a full page
# Paths changed in a full page (its per-path index: about 1 MB of JSON). A save writes the last
# page again while it is not full; counted in entries alone, a page of big turns (5,000 files
# each, and their undos and redos) grew to 70 MB of index and every save after an operation
# read, decompressed and compressed all of it again: 2.5-4.5 s a save at 130 entries (issue 18).
PAGE_PATHS = 20_000
TAIL_ENTRIES = 20  # the newest entries, kept inline in the index (what opening reads)


_T = TypeVar("_T")


class PageRefused(StoreError):
    """A page that is missing, torn, or not what the index says."""


class CachedEntry(BaseModel):
    """One entry's folded state (``timeline.FoldedEntry``), each checkpoint without its file list,
    with the log commit that holds it (``commits``) and its place in log order (``positions``)."""

    model_config = ConfigDict(extra="forbid")
    begun: EntryBegun
    checkpoints: list[CheckpointRecorded]
    commits: list[str]
    positions: list[int]
    applied: dict[str, bool]
    ended: TurnEnded | None
    checks: list[Check]
    operation: OperationDone | None
    state: EntryState
    reverted_by: str | None
    summary: tuple[int, int, int] | None


class PageRef(BaseModel):
    """A page as the index names it: its SHA-256 (also its file name), how many entries, the
    first and last entry's numbers, what its entries may answer (``timeline.marks``) and the
    latest place in log order of their checkpoints (-1: none)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    count: int
    first: int
    last: int
    marks: list[str]
    last_position: int
    paths: int = 0  # paths its checkpoints changed (0 in a cache written before: judged by its count)

    @property
    def full(self) -> bool:
        return full(self.count, self.paths)


def full(count: int, paths: int) -> bool:
    """Whether a page of ``count`` entries whose checkpoints changed ``paths`` paths is full
    (a save writes it again while it is not)."""
    return count >= PAGE_ENTRIES or paths >= PAGE_PATHS


def page_spans(paths: list[int]) -> list[tuple[int, int]]:
    """Where entries that changed ``paths`` paths each, in log order, are cut into pages:
    (start, end) of each, every page but the last ``full``."""
    spans: list[tuple[int, int]] = []
    start = total = 0
    for i, count in enumerate(paths):
        total += count
        if full(i + 1 - start, total):
            spans.append((start, i + 1))
            start, total = i + 1, 0
    if start < len(paths):
        spans.append((start, len(paths)))
    return spans


class Page(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal[8]
    entries: list[CachedEntry]


class Headers(BaseModel):
    """A page's headers: each entry as ``log`` shows it without its file lists (``entries``,
    their computed fields left out: ``HEADER_DUMP``), and how many files each changed (the
    header's ``file_count``, which no field of ``Entry`` holds)."""

    model_config = ConfigDict(extra="forbid")
    format: Literal[8]
    entries: list[Entry]
    file_counts: list[int]


HEADER_DUMP: Final = {"entries": {"__all__": {name for name in Entry.model_computed_fields}}}
"""What of ``Headers`` is not written: the entries' computed fields (worked out again when read)."""


TouchedKept = dict[str, list[tuple[str, str]]]
"""A page's per-path index: checkpoint id: what it changed (path, after's oid or "" when the
change left no file), as ``timeline.Touched`` holds it."""
_TOUCHED: TypeAdapter[TouchedKept] = TypeAdapter(TouchedKept)


class PageRead(NamedTuple):
    """A page as read: its entries, validated, its per-path index still as bytes, and its
    headers when they were asked for (``read_page``)."""

    entries: list[CachedEntry]
    touched: bytes
    headers: list[Entry] | None = None


class Index(BaseModel):
    """What ``timeline.json`` holds (see the module's docstring)."""

    model_config = ConfigDict(extra="forbid")
    format: Literal[8]
    head: str
    max_number: int
    record_count: int
    entry_count: int
    turn_count: int
    checkpoint_count: int
    open_ids: list[str]
    dropped: list[DroppedSpan]
    pages: list[PageRef]
    tail: list[CachedEntry]


def read_index(data: bytes) -> Index:
    """The index in ``data``, validated (strict): pydantic's ``ValidationError`` when it is not
    valid, ``StoreError`` when its counts do not add up."""
    index = Index.model_validate_json(data, strict=True)
    if sum(p.count for p in index.pages) + len(index.tail) != index.entry_count:
        raise StoreError("the timeline cache's pages and tail do not hold as many entries as it counts")
    return index


def read_page(store: Path, ref: PageRef, headers: bool = False) -> PageRead:
    """A page's entries, and its per-path index unread (and, with ``headers``, its headers:
    ``read_headers``), refused (``PageRefused``: the file is then set aside when torn, else
    removed) unless its bytes hash to its name and it holds the entries the index says."""

    def parse(data: bytes) -> PageRead:
        shown, records = _streams(data)
        entries_json, touched = _parts(records)
        entries = Page.model_validate_json(entries_json, strict=True).entries
        _check_numbers(ref, [entry.begun.number for entry in entries])
        return PageRead(entries, touched, _headers_in(ref, shown) if headers else None)

    return _read(store, ref, parse)


def read_headers(store: Path, ref: PageRef) -> list[Entry]:
    """A page's entries as headers (``Headers``: each with its ``file_count``), in log order,
    refused as ``read_page`` refuses a page."""
    return _read(store, ref, lambda data: _headers_in(ref, _streams(data)[0]))


def _headers_in(ref: PageRef, data: bytes) -> list[Entry]:
    """The headers in a page's first stream (``_streams``), validated (``ValueError`` when not)."""
    headers = Headers.model_validate_json(data, strict=True)
    if len(headers.file_counts) != len(headers.entries):
        raise ValueError("it does not count the files of each header")
    _check_numbers(ref, [entry.number for entry in headers.entries])
    for entry, count in zip(headers.entries, headers.file_counts, strict=True):
        entry._file_count = count
    return headers.entries


def _read(store: Path, ref: PageRef, parse: Callable[[bytes], _T]) -> _T:
    """What ``parse`` reads from a page's bytes once they hash to its name; a ``ValueError`` it
    raises (not what a page holds) refuses the page: ``PageRefused``, the file set aside when
    torn (its entries' JSON cannot be read), else removed."""
    path = store / PAGES_DIR / f"{ref.name}{PAGE_SUFFIX}"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PageRefused(f"the timeline page {ref.name} cannot be read: {exc}") from exc
    try:
        if hashlib.sha256(data).hexdigest() != ref.name:
            raise ValueError("its content does not match its name")
        return parse(data)
    except ValueError as exc:
        discard(store, path, "a timeline page", parse=lambda data: json.loads(_parts(_streams(data)[1])[0]))
        raise PageRefused(f"the timeline page {ref.name} is refused: {exc}") from exc


def _check_numbers(ref: PageRef, numbers: list[int]) -> None:
    if len(numbers) != ref.count or not numbers or (numbers[0], numbers[-1]) != (ref.first, ref.last):
        raise ValueError("it does not hold the entries the index names")


def touched_of(data: bytes) -> TouchedKept:
    """A page's per-path index (``PageRead.touched``), validated (strict): pydantic's
    ``ValidationError`` (a ``ValueError``) when it is not valid."""
    return _TOUCHED.validate_json(data, strict=True)


def _streams(data: bytes) -> tuple[bytes, bytes]:
    """A page file's headers JSON, and its second stream still compressed (``_parts``): only the
    first stream is decompressed (``ValueError`` when it is not one)."""
    stream = zlib.decompressobj()
    try:
        headers = stream.decompress(data)
    except zlib.error as exc:
        raise ValueError(f"it is not compressed as a page is ({exc})") from exc
    if not stream.eof:
        raise ValueError("its headers are cut short")
    return headers, stream.unused_data


def _parts(data: bytes) -> tuple[bytes, bytes]:
    """A page's second stream (``_streams``) as its entries JSON and per-path index JSON
    (``ValueError`` when it is not one)."""
    try:
        body = zlib.decompress(data)
    except zlib.error as exc:
        raise ValueError(f"it is not compressed as a page is ({exc})") from exc
    entries, newline, touched = body.partition(b"\n")
    if not newline:
        raise ValueError("it lacks its per-path index")
    return entries, touched


def write_page(
    store: Path, entries: list[CachedEntry], headers: list[Entry], touched: TouchedKept, marks: set[str],
) -> PageRef:
    """Write a page of ``entries``, their ``headers`` (``Timeline.bare_header``) and what their
    checkpoints changed (unless a page with these bytes is there already)."""
    shown = Headers(format=FORMAT, entries=headers, file_counts=[header.file_count for header in headers])
    head = zlib.compress(shown.model_dump_json(exclude=HEADER_DUMP).encode("utf-8"), 6)
    body = Page(format=FORMAT, entries=entries).model_dump_json().encode("utf-8") + b"\n" + _TOUCHED.dump_json(touched)
    data = head + zlib.compress(body, 6)
    name = hashlib.sha256(data).hexdigest()
    folder = store / PAGES_DIR
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / f"{name}{PAGE_SUFFIX}"
    if not path.is_file() or path.stat().st_size != len(data):
        atomic.write(path, data)
    return PageRef(name=name, count=len(entries), first=entries[0].begun.number, last=entries[-1].begun.number,
                   marks=sorted(marks), last_position=max((p for e in entries for p in e.positions), default=-1),
                   paths=sum(map(len, touched.values())))


def write_index(store: Path, data: bytes, named: set[str]) -> None:
    """Write the index ``data`` (the pages it ``named`` are written already), then remove the
    pages it does not name."""
    atomic.write(store / CACHE_FILE, data)
    sweep(store, named)


def sweep(store: Path, kept: set[str]) -> None:
    """Remove the pages (and a crash's temporary files) that are not in ``kept``."""
    try:
        found = list((store / PAGES_DIR).iterdir())
    except OSError:
        return
    for path in found:
        if path.name.removesuffix(PAGE_SUFFIX) not in kept:
            try:
                path.unlink(missing_ok=True)
            except OSError:
                continue  # (a folder someone put there: left alone)


def remove(store: Path) -> None:
    """Remove the cache: the index, then its pages."""
    (store / CACHE_FILE).unlink(missing_ok=True)
    sweep(store, set())


def discard(store: Path, path: Path, what: str = "the timeline cache", parse: Callable[[bytes], object] = json.loads) -> None:
    """Drop a cache file that is not valid: one that ``parse`` cannot even read (empty or cut
    short: a crash or power cut tore it), or a folder in its place, is set aside (``repair.py``);
    one of an older format, or one that cannot be read (a symlink loop), is removed."""
    problem = None
    try:
        parse(path.read_bytes())
    except ValueError:
        problem = f"{what} is empty or cut short (it is rebuilt from the log)"
    except IsADirectoryError:
        problem = f"a folder stood where {what} goes (the cache is rebuilt from the log)"
    except OSError:
        pass
    if problem is not None:
        aside = repair.Quarantine(store)
        aside.set_aside(path, problem)
        aside.save()
    path.unlink(missing_ok=True)
