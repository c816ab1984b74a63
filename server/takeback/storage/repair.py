"""What a crash or a power cut can leave torn in the store: finding it and setting it aside.

Without fsync (the default) the operating system writes files back in its own order, so after a
power cut the newest pack or index can be empty or cut short, a rename can be missing (the
temporary file is there, the new name is not), and the log ref can name a commit whose pack
never reached the disk. None of that may cost more than the newest entries, nor be lost without
a word. This module owns the checks and the ``quarantine/`` folder; ``store.py`` runs them when
it opens (cheap: the packs' ends, the ref, the head commit, which ``checked.py``'s stamp spares
once a big head was checked) and, deeply, when a read fails.

A file found torn is **moved**, never deleted, into ``quarantine/<UTC time>/`` inside the store,
under its path relative to the store, and ``report.json`` there names each file, what was wrong
with it, where the log ended before and after, and what the log lost (the subjects of the log
commits cut off from it, or the id of a head that could not be read). ``takeback status`` shows
every report; deleting the folder forgets it. The report is written with fsync: a repair happens
once, and must not be lost to the next cut.

Hand-written: git's own answer (``git fsck``, then reset the ref by hand) is a person's job, and
libgit2 has no repair.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..errors import StoreError
from . import atomic, commits, packs, refs

FOLDER = "quarantine"
REPORT = "report.json"


@dataclass
class Quarantine:
    """One repair: the files it sets aside and what the log lost, saved as one report."""

    store: Path
    folder: Path | None = None
    files: list[dict] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    log: dict = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.files or self.lost or self.log)

    def set_aside(self, path: Path, problem: str) -> None:
        """Move ``path`` (a file inside the store) into this repair's folder, keeping its place."""
        rel = path.relative_to(self.store)
        target = self._here() / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        self.files.append({"path": str(rel), "problem": problem})

    def _here(self) -> Path:
        """This repair's folder, ``quarantine/<UTC time>/`` (named when first needed)."""
        if self.folder is None:
            self.folder = self.store / FOLDER / datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        return self.folder

    def moved_log(self, was: str | None, now: str | None, now_subject: str | None) -> None:
        self.log = {"was": was, "now": now, "now_subject": now_subject}

    def save(self) -> None:
        """Write the report (and make the moves durable): a no-op when nothing was repaired."""
        if not self:
            return
        folder = self._here()
        folder.mkdir(parents=True, exist_ok=True)
        doc = {"at": datetime.now(UTC).isoformat(), "files": self.files, "log": self.log, "lost": self.lost}
        atomic.write(folder / REPORT, (json.dumps(doc, indent=2) + "\n").encode(), fsync=True)
        for folder in {self.store, *(self.store / f["path"] for f in self.files)}:
            _sync_up_to(folder if folder.is_dir() else folder.parent, self.store)


def _sync_up_to(folder: Path, top: Path) -> None:
    """Sync ``folder`` and each folder above it up to ``top`` (the renames out of them)."""
    while True:
        try:
            atomic.sync_dir(folder)
        except OSError:
            pass
        if folder == top or top not in folder.parents:
            return
        folder = folder.parent


def reports(store: Path) -> list[dict]:
    """Every repair report kept in the store, oldest first (with the folder it is in)."""
    found = []
    for report in sorted((store / FOLDER).glob(f"*/{REPORT}")):
        try:
            doc = json.loads(report.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict):
            found.append({**doc, "folder": str(report.parent)})
    return found


def torn_packs(pack_dir: Path, deep: bool, merging: Callable[[], bool] = lambda: False) -> list[tuple[list[Path], str]]:
    """The files of the pack folder a crash or power cut left torn, each group with its problem:
    temporary files whose rename did not happen, packs without an index (or the reverse), and
    packs whose index or ends do not hold together (``packs.problem``). A merge's files
    (``packs.MERGING``) are written without the store's lock: leftovers only when no merge is at
    work (``merging()``, asked once, only when there are such files)."""
    try:
        names = sorted(os.listdir(pack_dir))
    except FileNotFoundError:
        return []
    found: list[tuple[list[Path], str]] = []
    stems = {n.rsplit(".", 1)[0] for n in names if n.startswith("pack-")}
    merge_at_work = any(n.startswith(packs.MERGING) for n in names) and merging()
    for name in names:
        if name.startswith(packs.TEMPORARY) or (name.startswith(packs.MERGING) and not merge_at_work):
            found.append(([pack_dir / name], "a temporary file a writer left: its rename into place did not happen"))
    for stem in sorted(stems):
        files = [pack_dir / n for n in names if n.rsplit(".", 1)[0] == stem]
        problem = packs.problem(pack_dir, stem, deep)
        if problem is not None:
            found.append((files, problem))
    return found


class LogWalk:
    """The log's commits as what survived holds them: which can be read whole, back to the
    first, and which is the newest such (where the log goes back to when its head is lost).

    ``read`` answers a raw object's bytes (``StoreError`` when it cannot), ``has_all`` whether the
    store holds every one of some objects, ``all_commits`` every commit id the packs hold.
    """

    def __init__(
        self, read: Callable[[str], bytes], has_all: Callable[[list[str]], bool], all_commits: Callable[[], list[str]]
    ) -> None:
        self._read = read
        self._has_all = has_all
        self._all_commits = all_commits
        self._whole: dict[str, bool] = {}  # commit: it and every commit before it can be read
        self._depth: dict[str, int] = {}
        self._owned: dict[str, bytes] = {}  # commits ``_own`` found whole (a big turn's tree costs its size)
        self._objects: dict[str, list[str]] = {}  # what ``_own`` checked of each: commit, tree, meta.json, blobs

    def _own(self, oid: str) -> bytes | None:
        """The commit's bytes when it, its tree, its ``meta.json`` and every blob it names are
        there; else None."""
        if oid in self._owned:
            return self._owned[oid]
        try:
            data = self._read(oid)
            tree = commits.header(data, b"tree")
            entries = commits.parse_tree(self._read(tree))
            self._read(entries["meta.json"])
            if self._has_all([blob for name, blob in entries.items() if name != "meta.json"]):
                self._owned[oid] = data
                self._objects[oid] = [oid, tree, *entries.values()]
                return data
        except (StoreError, KeyError, ValueError):
            pass
        return None

    def objects(self, oid: str) -> list[str]:
        """The objects checked of ``oid`` when it was found whole (itself, its tree, everything the
        tree names); none when it was not checked or not whole."""
        return self._objects.get(oid, [])

    def readable(self, head: str, whole: bool) -> bool:
        """Whether ``head`` can be read (with ``whole``: and every commit before it)."""
        oid: str | None = head
        path: list[str] = []
        while oid is not None and oid not in self._whole:
            data = self._own(oid)
            if data is None:
                self._whole[oid] = False
                break
            path.append(oid)
            if not whole:
                return True
            oid = commits.parent_of(data)
        good = oid is None or self._whole[oid]
        depth = self._depth.get(oid, 0) if oid is not None else 0
        for done in reversed(path):
            depth += 1
            self._whole[done], self._depth[done] = good, depth
        return good

    def newest_whole(self, head: str | None, store: Path) -> tuple[str | None, list[str]]:
        """The commit the log goes back to (the newest whose whole chain can be read; the longer
        chain where two are as new), and one line for each commit lost: those ``published.log``
        names after the last one kept (by subject: their content is gone), each readable commit
        cut off from the log (by its subject), and a ``head`` that cannot be read."""
        times: dict[str, int] = {}
        cut_off: list[str] = []
        for oid in self._all_commits():
            if self.readable(oid, whole=True):
                times[oid] = commits.time_of(self._read(oid))
            else:
                cut_off.append(oid)
        tip = max(times, key=lambda c: (times[c], self._depth[c]), default=None)
        kept: set[str] = set()
        walk = tip
        while walk is not None:
            kept.add(walk)
            walk = commits.parent_of(self._read(walk))
        named = _published_after(store, kept)
        lines = [f"{oid[:12]} {subject} (its content was lost)" for oid, subject in named.items() if oid not in cut_off]
        lines += [f"{oid[:12]} {self.subject(oid)} (cut off from the log)" for oid in cut_off]
        if head is not None and head not in times and head not in named and head not in cut_off:
            lines.insert(0, f"{head[:12]} (the log's head: it could not be read)")
        return tip, lines

    def subject(self, oid: str) -> str:
        try:
            return commits.message_of(self._read(oid)).split("\n", 1)[0]
        except StoreError:
            return "(unreadable)"


def go_back(aside: Quarantine, walk: LogWalk, head: str | None, ref_file: Path) -> bool:
    """Move the log back to the newest commit whose whole chain can be read (``LogWalk.newest_whole``),
    the ref it leaves set aside and what was lost named in ``aside``; answers whether the ref moved."""
    tip, lost = walk.newest_whole(head, aside.store)
    aside.lost += lost
    if tip == head:
        return False
    if head is not None:
        aside.set_aside(ref_file, f"the log ref names {head}, which cannot be read whole")
    if tip is not None:
        refs.move(ref_file, tip, fsync=True)
    aside.moved_log(head, tip, walk.subject(tip) if tip else None)
    return True


def leftovers(store: Path) -> list[tuple[list[Path], str]]:
    """Temporary files a writer left in the store's folder, ``brackets/`` or the timeline cache's
    ``timeline-pages/`` (``.<name>.*.tmp``, ``open-turn.tmp``): a rename into place that a crash or
    power cut kept from happening. Only ever read with the store's lock held, when no writer of the
    store is at work."""
    found = []
    for folder in (store, store / "brackets", store / "timeline-pages"):
        for path in sorted(folder.glob("*.tmp")) if folder.is_dir() else []:
            if path.is_file():
                found.append(([path], "a temporary file a writer left: its rename into place did not happen"))
    return found


def set_aside_torn(
    aside: Quarantine, pack_dir: Path, ref_file: Path, deep: bool, merging: Callable[[], bool] = lambda: False,
) -> bool:
    """Set aside every torn file of the pack folder, the store's leftovers and the ref's
    (``torn_packs``, ``leftovers``, ``refs.problems``); answers whether one was."""
    found = [*torn_packs(pack_dir, deep, merging), *leftovers(aside.store), *(([f], why) for f, why in refs.problems(ref_file))]
    for files, problem in found:
        for file in files:
            aside.set_aside(file, problem)
    return bool(found)


PUBLISHED = "published.log"
_PUBLISHED_KEEP = 64 * 1024


def note_published(store: Path, oid: str, message: str) -> None:
    """Append ``oid`` and its subject to ``published.log``: after a power cut the commit can be
    gone with its pack, and this line still names what was lost (not flushed, ordered after the
    ref; best effort: a line that cannot be written is not an error). Bounded: past 64 KiB its
    older half is dropped."""
    line = f"{oid} {message.split(chr(10), 1)[0]}\n".encode()
    try:
        with open(store / PUBLISHED, "ab") as out:
            out.write(line)
            size = out.tell()
        if size > _PUBLISHED_KEEP:
            lines = (store / PUBLISHED).read_bytes().splitlines(keepends=True)
            atomic.write(store / PUBLISHED, b"".join(lines[len(lines) // 2 :]))
    except OSError:
        pass


def _published_after(store: Path, kept: set[str]) -> dict[str, str]:
    """The commits ``published.log`` names after the last one of ``kept`` (id: subject); none
    when it names none of them (a log older than the file, or rewritten since)."""
    try:
        lines = (store / PUBLISHED).read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:
        return {}
    pairs = [(line[:40], line[41:]) for line in lines if len(line) > 41 and line[40] == " "]
    last = max((i for i, (oid, _subject) in enumerate(pairs) if oid in kept), default=None)
    return {} if last is None else {oid: subject for oid, subject in pairs[last + 1 :] if oid not in kept}
