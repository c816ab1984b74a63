"""What a guarded call may destroy that Takeback does not record: kept before it, listed after.

Takeback records the files an agent changes, but not ignored files (``.env``, a database, a
build folder). Before a call the guard let through that may delete or overwrite some
(``AtRisk.paths``, named by the classifier), a step's begin keeps what it can of them
(``keep``): each file's stat, and its bytes copied into Takeback's own store (never the person's
repository) while they fit in ``guard.keep_bytes`` — a file over ``max_file_bytes``, beyond that
bound, or a secret (never copied, whatever the bound: a withheld secret is never stored) is
listed as not kept. Only those paths are read: a folder is walked (without following links or
entering ``.git``), never the work tree, and at most ``MAX_LISTED`` files are listed.

The step's end compares (``losses``): a file gone, or no longer what it was, is a
``LostFile`` on the step, with the command that writes a kept one back
(``takeback cat N PATH --before > PATH``, run in the workspace's folder; ``Reading.file_at``
answers a kept file's bytes) or why it is lost. A file the step records anyway (a tracked
file) is its change, not a loss. Nothing changed: nothing is said.

The data kept between begin and end is JSON in the step's file (``brackets.py``, its header's
``at_risk``): ``{"files": {path: {"sig": [size, mtime_ns, mode], "kept": version or null,
"why": str or null}}, "unlisted": {folder: files not listed}}``; ``kept_versions`` gives gc the
content it names.
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Iterable, Iterator
from typing import Literal

from ..core.models import MODE_EXEC, MODE_LINK, FileVersion, LostFile
from ..errors import TakebackError
from ..workspace.capture import Capturer
from ..workspace.files import Workspace, is_recorded_path, mode_of

MAX_LISTED = 10_000
"""Files listed at a step's begin, at most (a ``node_modules`` of 100,000 files is not walked
whole on the hot path: the rest of a folder is counted as not listed)."""


def keep(capture: Capturer, workspace: Workspace, paths: Iterable[str], bound: int) -> dict:
    """Each file under ``paths`` (workspace-relative; a folder ends in ``/``) with its stat, its
    bytes stored while they fit in ``bound`` in all (``FileVersion``), or why not."""
    files: dict[str, dict] = {}
    unlisted: dict[str, int] = {}
    used = 0
    for rel, st in _listed(workspace, paths, unlisted):
        why, kept = None, None
        size = st.st_size
        if capture.is_secret(rel):
            why = "a secret: Takeback never copies one"
        elif not stat.S_ISLNK(st.st_mode) and size > capture.max_bytes:
            why = f"over max_file_bytes ({capture.max_bytes} bytes)"
        elif used + size > bound:
            why = f"beyond guard.keep_bytes ({bound} bytes in all)"
        else:
            try:
                disk = workspace.read(rel)
            except OSError as exc:
                disk, why = None, f"unreadable: {exc.strerror or exc}"
            if disk is not None:
                version = capture.version(rel, disk.content, disk.mode)
                kept = None if version.withheld else version.model_dump()
                why = None if kept else f"withheld ({version.withheld})"
                used += len(disk.content) if kept else 0
        files[rel] = {"sig": _sig(st), "kept": kept, "why": why}
    return {"files": files, "unlisted": unlisted}


def losses(kept: dict, capture: Capturer, workspace: Workspace, number: int, recorded: set[str]) -> list[LostFile]:
    """What of ``kept`` (``keep``'s answer) is gone or changed now, each with how to write it
    back (``number``: the entry a ``takeback cat`` reads it from) or why it is lost; ``recorded``:
    the paths the step records as its own changes, which are not losses."""
    found: list[LostFile] = []
    for rel, item in sorted(kept.get("files", {}).items()):
        if rel in recorded or not is_recorded_path(rel):
            continue
        try:
            st: os.stat_result | None = os.lstat(workspace.root / rel)
        except OSError:
            st = None
        gone = st is None or stat.S_ISDIR(st.st_mode)
        if not gone and st is not None and _sig(st) == item.get("sig"):
            continue
        version = FileVersion.model_validate(item["kept"]) if item.get("kept") else None
        if not gone and version is not None and _same(capture, workspace, rel, version):
            continue  # rewritten with the same bytes
        how: Literal["deleted", "overwritten"] = "deleted" if gone else "overwritten"
        if version is None:
            found.append(LostFile(path=rel, how=how, why=item.get("why") or "not kept"))
        else:
            found.append(LostFile(path=rel, how=how, kept=version, command=_write_back(capture, rel, version, number)))
    for folder, count in sorted(kept.get("unlisted", {}).items()):
        if is_recorded_path(folder) and not (workspace.root / folder).is_dir():
            found.append(LostFile(path=folder, how="deleted",
                                  why=f"{count} more files in it were not listed (only {MAX_LISTED} are)"))
    return found


def kept_versions(kept: dict | None) -> dict[str, dict]:
    """The stored versions ``keep``'s answer names, by path (what gc must keep while the step is open)."""
    files = (kept or {}).get("files", {})
    return {rel: item["kept"] for rel, item in files.items() if isinstance(item, dict) and item.get("kept")}


def _listed(workspace: Workspace, paths: Iterable[str], unlisted: dict[str, int]) -> Iterator[tuple[str, os.stat_result]]:
    """Each file (or link) under ``paths``, once, and its ``lstat``; past ``MAX_LISTED``, how many
    more each folder holds goes to ``unlisted``."""
    seen: set[str] = set()
    for raw in paths:
        try:
            rel = workspace.rel(raw.rstrip("/") or ".")
        except TakebackError:
            continue  # outside the workspace or inside .git: not this step's to keep
        root = workspace.root / rel
        try:
            st = os.lstat(root)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            if rel not in seen and (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                seen.add(rel)
                yield rel, st
            continue
        for parent, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != ".git")
            base = os.path.relpath(parent, workspace.root).replace(os.sep, "/")
            for name in sorted(names):
                child = f"{base}/{name}"
                if child in seen or not is_recorded_path(child):
                    continue
                if len(seen) >= MAX_LISTED:
                    unlisted[rel] = unlisted.get(rel, 0) + 1
                    continue
                try:
                    child_st = os.lstat(os.path.join(parent, name))
                except OSError:
                    continue
                if stat.S_ISREG(child_st.st_mode) or stat.S_ISLNK(child_st.st_mode):
                    seen.add(child)
                    yield child, child_st


def _sig(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, mode_of(st)]


def _same(capture: Capturer, workspace: Workspace, rel: str, version: FileVersion) -> bool:
    try:
        return capture.matches(rel, version, workspace.read(rel))
    except OSError:
        return False


def _write_back(capture: Capturer, rel: str, version: FileVersion, number: int) -> str:
    """The shell command, run in the workspace's folder, that puts ``version`` back at ``rel``."""
    path = shlex.quote("./" + rel if rel.startswith("-") else rel)  # never read as an option
    folder = rel.rpartition("/")[0]
    make = f"mkdir -p {shlex.quote('./' + folder if folder.startswith('-') else folder)} && " if folder else ""
    if version.mode == MODE_LINK:
        target = capture.content(version).decode("utf-8", "surrogateescape")
        return f"{make}ln -sfn {shlex.quote(target)} {path}"
    command = f"{make}takeback cat {number} {path} --before > {path}"
    return command + (f" && chmod +x {path}" if version.mode == MODE_EXEC else "")
