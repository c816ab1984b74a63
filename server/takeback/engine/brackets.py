"""The open turn's file: a turn's begin, and what its bracket saw at begin, until the turn ends.

Opening a turn publishes nothing to the operation log. Its ``EntryBegun`` record waits in
``brackets/open-turn`` and goes into the log with the turn's first published record (an edit
batch, a check, its end, or an operation that ends it), in the same commit, so a bracketed turn
costs one log commit instead of two. Every Takeback process reads this file under the store's
lock whenever it reads the log head, so the open turn is part of everyone's timeline from the
moment ``begin`` returns.

A turn with a whole-disk bracket (``begin``, the editor's ``beginTurn``) waits in
``brackets/open-turn``; while it is open no other turn is. A turn an agent's prompt opened
through its hooks (no bracket: its changes are its steps) waits in ``brackets/open-turn-<entry>``
instead, one per agent session, so two sessions can each have a turn open at once. A turn's file
holds, in this order:

* the line ``takeback open turn 1``;
* one line of JSON: the ``EntryBegun`` record;
* one line of JSON: ``{"scan": <the bracket's begin snapshot, or null>, "index_size": <bytes
  of the index copy that follows, or null>, "config": <the settings the turn runs under>,
  "nested_index_sizes": {<folder>: <bytes>}, "git": <the person's git state>}`` (nested sizes only
  when the work tree holds nested repositories or submodules, ``nested.py``; the turn ends under
  the settings it began with: an agent that rewrites ``.takeback.toml`` during its turn changes
  nothing for that turn; ``git``, ``scanning/gitstate.read``'s answer, only in a git repository:
  what the end compares to say what moved of HEAD, the branch, the index and the stash; a
  guarded step's also ``"at_risk"``: the ignored files it kept, ``lost.py``);
* a copy of the user's git index as it was at begin (git scanner only), byte for byte;
* a copy of each nested repository's index, in the order of ``nested_index_sizes``.

It is written to a temporary file and renamed into place, so a reader sees all of it or the
file before. The index copy lives in the same file because creating a file is most of what a
small write costs on a real disk; it is read only when the index changed during the turn.

A step (one tool call of an agent, ``steps.py``) waits the same way in ``brackets/step-<key>``,
in the same layout: the open turn's ``EntryBegun`` (or, for a step that is a turn of its own,
the begin it will get), then its snapshot: a scanner's (a shell step: what changed on disk
between the call's start and end) or ``{"kind": "paths", "files": {path: version or null}}``
(an edit step: the before-images of the files the tool names, and under ``"scan"`` a scanner's
snapshot too, which tells whether those files account for what the tool changed). A step's
index copy is not embedded: its header's ``"index_link": [name, size]`` names
``brackets/ilink-step-<key>``, a hard link to ``index-copies/<checksum>-<size>`` (the store's), the copy
of that version of the index that every step beginning on it shares. The copy is made when a
step begins on an index no copy holds (written to a temporary name, then renamed); a step that
begins on the index the last one saw (the common case: a shell command that stages nothing)
copies nothing and, at its end, unlinks a link, not 12 MB. A copy no link holds any more is
removed when a step begins on another version, a link whose step file is gone at any step's
begin (``sweep``, under the store's lock like every write here). ``<key>``
is a digest of the step's caller-given key (the agent's session and call). It is removed when
the step ends, or discarded with its session.

Older versions kept every open turn, hook turns too, in ``brackets/open-turn``: such a turn is
read like a whole-disk one (the next prompt of any session ends it). Stores written before
that layout kept an open bracket's snapshot in ``brackets/<entry>.json``
and the index copy in ``brackets/<entry>.index``, with the ``EntryBegun`` in the log; those are
still read (``read`` falls back to them) so a turn opened before an upgrade ends normally. Only
files of this folder are ever read or removed, whatever such a file names.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ..core.models import EntryBegun
from ..errors import StoreError
from ..scanning.indexcopy import IndexCopy, copy_range
from ..storage import atomic
from ..workspace.files import file_stamp
from . import lost

FILE_NAME = "open-turn"
SESSION_PREFIX = FILE_NAME + "-"  # a session turn's file: open-turn-<entry>
STEP_PREFIX = "step-"
INDEX_COPIES = "index-copies"  # the store's folder of index copies, one per version, shared by steps
LINK_PREFIX = "ilink-"  # ilink-<file>: <file>'s hard link to the shared copy it began with
_TRAILER = 32  # the bytes of an index's end that name its version (a SHA-1 or SHA-256 checksum)
_MAGIC = b"takeback open turn 1\n"


@dataclass
class OpenTurn:
    """What ``begin`` left for the open turn's end."""

    begun: EntryBegun | None  # None only in a file from an older store (the log holds it)
    scan: dict | None  # the scanner's begin snapshot; None for a turn begun without a bracket
    index: IndexCopy | None
    files: list[Path] = field(default_factory=list)  # what to remove once the turn has ended
    nested: dict[str, IndexCopy] = field(default_factory=dict)  # nested repositories' indexes, by folder
    config: dict | None = None  # the settings in force at begin (None in older files)
    git: dict | None = None  # the person's git state at begin (``scanning/gitstate.read``; None in older files)
    at_risk: dict | None = None  # a guarded step's kept ignored files (``lost.keep``); None: none named
    checked: list[Path] = field(default_factory=list)  # the files its reading checked: the same again, it reads the same

    def remove(self) -> None:
        for path in self.files:
            path.unlink(missing_ok=True)


def _open_index(path: Path | None) -> BinaryIO | None:
    try:
        return open(path, "rb") if path is not None else None  # git replaces its index by rename: this stays whole
    except FileNotFoundError:
        return None


def write(
    directory: Path, begun: EntryBegun, scan: dict | None, index_source: Path | None, fsync: bool,
    nested_sources: dict[str, Path] | None = None, config: dict | None = None, name: str = FILE_NAME,
    index_copies: Path | None = None, git: dict | None = None, at_risk: dict | None = None,
) -> None:
    """Put the open turn's file in place (replacing one left by a turn that has ended), with a
    copy of the index at ``index_source`` and of each of ``nested_sources`` (by folder);
    ``config``: the settings the turn runs under, as JSON data. ``index_copies`` (a step's
    file): the index copy is not embedded but a hard link to the copy of that index version in
    that folder, which every step beginning on it shares (``_share``). ``git``: the person's
    git state now (``scanning/gitstate.read``), which the end compares with the state then;
    ``at_risk``: the ignored files a guarded step kept (``lost.keep``)."""
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / (FILE_NAME + ".tmp")
    source = None
    nested: dict[str, BinaryIO] = {}
    try:
        source = _open_index(index_source)
        for folder, path in (nested_sources or {}).items():
            handle = _open_index(path)
            if handle is not None:
                nested[folder] = handle
        size = os.fstat(source.fileno()).st_size if source is not None else None
        sizes = {folder: os.fstat(handle.fileno()).st_size for folder, handle in nested.items()}
        fields: dict = {"scan": scan, "index_size": size, "config": config}
        link = None
        if index_copies is not None and source is not None and size:
            link = _share(directory, index_copies, source, size, name, fsync)
        if link is not None:
            fields["index_size"], fields["index_link"] = None, [link.name, size]
            source = None  # nothing of it embedded
        if sizes:
            fields["nested_index_sizes"] = sizes
        if git is not None:
            fields["git"] = git
        if at_risk is not None:
            fields["at_risk"] = at_risk
        header = json.dumps(fields, separators=(",", ":")).encode()
        with open(tmp, "wb") as out:
            out.write(_MAGIC + begun.model_dump_json().encode() + b"\n" + header + b"\n")
            out.flush()
            for handle, length in [(source, size), *((h, sizes[f]) for f, h in nested.items())]:
                if handle is not None and length:
                    copy_range(handle.fileno(), out.fileno(), 0, length)
            if fsync:
                os.fsync(out.fileno())
        os.replace(tmp, directory / name)
        if fsync:
            atomic.sync_dir(directory)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        for handle in [source, *nested.values()]:
            if handle is not None:
                handle.close()


def _share(directory: Path, copies: Path, source: BinaryIO, size: int, name: str, fsync: bool) -> Path | None:
    """A hard link ``ilink-<name>`` to the store's copy of the index open as ``source``
    (``copies/<checksum>-<size>``), the copy made only when no earlier step left one of this
    version; links and copies no step needs any more are removed first (``sweep``). None when
    the index names no version (``index.skipHash`` writes no checksum, or a torn file): then it
    is embedded as before. A step that begins on the index the last one saw copies nothing
    (a 100,000-file index is 12 MB: 5-12 ms to copy, 2-4 ms to unlink)."""
    tail = os.pread(source.fileno(), _TRAILER, size - _TRAILER) if size > _TRAILER else b""
    if len(tail) != _TRAILER or not tail[-20:].strip(b"\x00"):
        return None
    shared = copies / f"{tail.hex()}-{size}"
    sweep(directory, copies, shared)
    there = _holds(shared, size, tail)
    if not there:
        copies.mkdir(exist_ok=True)
        tmp = copies / (shared.name + ".tmp")
        try:
            with open(tmp, "wb") as out:
                copy_range(source.fileno(), out.fileno(), 0, size)
                if fsync:
                    os.fsync(out.fileno())
            os.replace(tmp, shared)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    link = directory / (LINK_PREFIX + name)
    link.unlink(missing_ok=True)
    os.link(shared, link)
    return link


def _holds(copy: Path, size: int, tail: bytes) -> bool:
    """Whether ``copy`` is whole: ``size`` bytes ending with ``tail`` (a copy a power cut left
    short or zero-filled under its name is made again)."""
    try:
        with open(copy, "rb") as handle:
            return os.fstat(handle.fileno()).st_size == size and os.pread(handle.fileno(), len(tail), size - len(tail)) == tail
    except FileNotFoundError:
        return False


def sweep(directory: Path, copies: Path | None = None, keep: Path | None = None) -> None:
    """Remove the links in ``directory`` whose step file is gone (a step ended, discarded or set
    aside) and, given ``copies``, the index copies there no link holds any more but ``keep``
    (the version a step is beginning on) and a copy's temporary file a crash left (every writer
    here holds the store's lock)."""
    if directory.is_dir():
        with os.scandir(directory) as found:
            links = [e.name for e in found if e.name.startswith(LINK_PREFIX)]
        for item in links:
            if not os.path.lexists(directory / item[len(LINK_PREFIX):]):
                (directory / item).unlink(missing_ok=True)
    if copies is not None and copies.is_dir():
        with os.scandir(copies) as found:
            held = [e.path for e in found]
        for path in held:
            try:
                if path.endswith(".tmp") or path != str(keep) and os.lstat(path).st_nlink == 1:
                    os.unlink(path)
            except FileNotFoundError:
                pass


def _read_file(path: Path, with_scan: bool) -> OpenTurn | None:
    """The open turn's file at ``path``, or None when there is none; its snapshot and index copy
    only ``with_scan`` (a walk's snapshot can be large; the begin record is two lines in)."""
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return None
    try:
        with handle:
            if handle.readline() != _MAGIC:
                raise StoreError(f"{path} is not an open turn's file (remove it to go on)")
            begun = EntryBegun.model_validate_json(handle.readline())
            line = handle.readline()
            if not line.endswith(b"\n"):
                raise ValueError("the file is cut short")
            if not with_scan:
                linked = None
                if len(line) < _CHECK_BELOW:  # a git bracket's header: cheap to check the copies' sizes too
                    linked = _check_size(handle, json.loads(line))
                return OpenTurn(begun, None, None, [path], checked=[path, *([linked.path] if linked else [])])
            header = json.loads(line)
            _check_size(handle, header)
            size = header.get("index_size")
            offset = handle.tell()
            index = IndexCopy(path, offset, size) if size is not None else None
            files = [path]
            linked = _linked(path, header)
            if linked is not None:
                index = linked
                files.append(linked.path)
            offset += size or 0
            nested: dict[str, IndexCopy] = {}
            for folder, nested_size in header.get("nested_index_sizes", {}).items():
                nested[folder] = IndexCopy(path, offset, nested_size)
                offset += nested_size
            git, at_risk = header.get("git"), header.get("at_risk")
            return OpenTurn(begun, header.get("scan"), index, files, nested=nested, config=header.get("config"),
                            git=git if isinstance(git, dict) else None,
                            at_risk=at_risk if isinstance(at_risk, dict) else None)
    except ValueError as exc:
        raise StoreError(f"unreadable open turn in {path} (remove it to go on): {exc}") from exc


_CHECK_BELOW = 64 << 10


def _check_size(handle: BinaryIO, header: dict) -> IndexCopy | None:
    """Refuse a file shorter than the index copies its header announces (cut short), or whose
    linked index copy is gone or not whole; answers that linked copy."""
    sizes = [header.get("index_size") or 0, *header.get("nested_index_sizes", {}).values()]
    if os.fstat(handle.fileno()).st_size < handle.tell() + sum(sizes):
        raise ValueError("the file is cut short (its index copy is not whole)")
    return _linked(Path(handle.name), header)


def _linked(path: Path, header: dict) -> IndexCopy | None:
    """The index copy the file at ``path`` links to (``index_link``: a file of the same folder,
    whatever the header names), or None when its copy is embedded or there is none."""
    link = header.get("index_link")
    if link is None:
        return None
    name, size = link
    if not isinstance(name, str) or not name.startswith(LINK_PREFIX) or os.path.basename(name) != name or not isinstance(size, int):
        raise ValueError(f"its index copy's name {name!r} is not one of its folder's")
    linked = path.parent / name
    try:
        whole = os.stat(linked).st_size == size
    except FileNotFoundError:
        whole = False
    if not whole:
        raise ValueError("its index copy is gone or not whole")
    return IndexCopy(linked, 0, size)


def read_named(directory: Path, name: str) -> OpenTurn | None:
    """The file ``name`` of ``directory`` (a step's), in full, or None when there is none."""
    return _read_file(directory / name, with_scan=True)


def step_names(directory: Path) -> list[str]:
    """The names of the step files waiting in ``directory``."""
    return _names(directory, STEP_PREFIX)


def session_name(entry: str) -> str:
    """The file name of session turn ``entry``'s file."""
    return SESSION_PREFIX + entry


def session_names(directory: Path) -> list[str]:
    """The names of the session turns' files in ``directory``."""
    return _names(directory, SESSION_PREFIX)


def _names(directory: Path, prefix: str) -> list[str]:
    """The names in ``directory`` that start with ``prefix`` (not a temporary file's), sorted;
    none when there is no such folder or it cannot be read."""
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []
    return sorted(name for name in names if name.startswith(prefix) and not name.endswith(".tmp"))


def is_session_turn(directory: Path, entry: str) -> bool:
    """Whether open turn ``entry`` is a session turn (its file is its own, not ``open-turn``)."""
    return _is_entry_id(entry) and (directory / session_name(entry)).exists()


def read_begun(directory: Path) -> EntryBegun | None:
    """The ``EntryBegun`` of the whole-disk open turn's file, if there is one (cheap: two lines)."""
    opened = _read_file(directory / FILE_NAME, with_scan=False)
    return opened.begun if opened is not None else None


def read_begins(directory: Path, kept: BeginsKept | None = None) -> list[tuple[str, EntryBegun]]:
    """Every open turn's file and its ``EntryBegun`` (two lines each), by turn number; with
    ``kept``, a file read before is not read again while it and the index copy it links to are
    the same files, unchanged (``BeginsKept``)."""
    found = []
    names = [FILE_NAME, *session_names(directory)]
    if kept is not None:
        kept.retain({directory / name for name in names})
    for name in names:
        path = directory / name
        begun = kept.get(path) if kept is not None else None
        if begun is None:
            stamp = file_stamp(path)  # before the read: a file replaced meanwhile is not kept under its new stamp
            opened = _read_file(path, with_scan=False)
            begun = opened.begun if opened is not None else None
            if kept is not None and opened is not None and begun is not None:
                kept.keep(opened.checked, begun, stamp)
        if begun is not None:
            found.append((name, begun))
    return sorted(found, key=lambda item: item[1].number)


class BeginsKept:
    """The open turns' begins a long-lived engine read, each with the stamps (inode, size,
    change time) of the files its read checked. Every transaction asks for the open turns'
    begins (``History.refresh``); reading and checking each file again cost a hook about 0.4 ms
    (issue 18). A file is only ever replaced whole (written aside, then renamed into place: a
    new inode) or removed, and a change in place moves its change time; so the same stamps mean
    the same bytes, which were checked when they were read."""

    def __init__(self) -> None:
        self._kept: dict[Path, tuple[list[Path], list[tuple | None], EntryBegun]] = {}  # file: (checked, their stamps, begun)

    def get(self, path: Path) -> EntryBegun | None:
        found = self._kept.get(path)
        if found is None:
            return None
        checked, stamps, begun = found
        if [file_stamp(p) for p in checked] != stamps:
            del self._kept[path]
            return None
        return begun

    def keep(self, checked: list[Path], begun: EntryBegun, stamp: tuple | None) -> None:
        """Keep ``begun``, read from ``checked[0]`` (whose stamp was ``stamp`` before the read)
        after checking the files ``checked``."""
        stamps = [file_stamp(p) for p in checked]
        if stamps[0] == stamp and None not in stamps:
            self._kept[checked[0]] = (checked, stamps, begun)

    def retain(self, paths: set[Path]) -> None:
        """Forget the files not in ``paths`` (turns that ended)."""
        for path in [p for p in self._kept if p not in paths]:
            del self._kept[path]


def torn(directory: Path) -> list[tuple[Path, str]]:
    """The open turns' and steps' files whose start cannot be read (empty or cut short by a crash
    or power cut), each with what is wrong: to be set aside."""
    found = []
    for name in [FILE_NAME, *session_names(directory), *step_names(directory)]:
        try:
            _read_file(directory / name, with_scan=False)
        except StoreError as exc:
            found.append((directory / name, f"an open turn's file that is empty or cut short ({exc.message})"))
    return found


def read(directory: Path, entry: str) -> OpenTurn | None:
    """What ``begin`` left for turn ``entry``, or None (a turn begun by an older version without
    a bracket, or whose file is gone)."""
    if _is_entry_id(entry):
        opened = _read_file(directory / session_name(entry), with_scan=True)
        if opened is not None and opened.begun is not None and opened.begun.entry == entry:
            return opened
    opened = _read_file(directory / FILE_NAME, with_scan=True)
    if opened is not None and opened.begun is not None and opened.begun.entry == entry:
        return opened
    return _read_older(directory, entry)


def _is_entry_id(entry: str) -> bool:
    return os.path.basename(entry) == entry and entry not in ("", ".", "..")


def _read_older(directory: Path, entry: str) -> OpenTurn | None:
    if not _is_entry_id(entry):
        return None  # not an entry id: no file of this folder can be its
    snapshot_file = directory / f"{entry}.json"
    try:
        scan = json.loads(snapshot_file.read_text())
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise StoreError(f"unreadable bracket snapshot {snapshot_file}: {exc}") from exc
    files = [snapshot_file]
    index = None
    if scan.get("index"):
        index_file = directory / f"{entry}.index"  # where older stores kept it, whatever the file says
        files.append(index_file)
        try:
            index = IndexCopy(index_file, 0, index_file.stat().st_size)
        except FileNotFoundError:
            index = None
    return OpenTurn(None, scan, index, files)


def snapshots(directory: Path) -> list[dict]:
    """Every bracket snapshot kept in ``directory`` (the open turn's, and older stores'), for gc:
    the content they name must stay in the store."""
    found: list[dict] = []
    for path in sorted(directory.glob("*.json")) if directory.exists() else []:
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    for name in [FILE_NAME, *session_names(directory), *step_names(directory)]:
        try:
            opened = _read_file(directory / name, with_scan=True)
        except (OSError, StoreError):
            opened = None
        if opened is not None and opened.scan:
            found.append(opened.scan)
            if isinstance(opened.scan.get("scan"), dict):  # an edit step's scanner snapshot, beside its files
                found.append(opened.scan["scan"])
        if opened is not None and opened.at_risk:  # a guarded step's kept ignored files, as a snapshot's files
            found.append({"files": lost.kept_versions(opened.at_risk)})
    return found
