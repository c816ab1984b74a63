"""``os`` for the hook's client: the few calls and path steps it needs, straight from ``posix``.

A hook the resident process serves runs ``python -S …/takeback/__main__.py hook …`` (the line
``takeback install`` writes): its cost is the interpreter's start, the client's imports and one
round trip. ``import os`` alone cost a hook 1.2 ms of its ~16 (``os``'s module body, the ABCs of
``_collections_abc``, ``stat``, ``posixpath``: 200 alternating runs, ``python -S -c "import os"``
against ``python -S -c pass``), where the goal is 1.5 × ``python -c pass`` (issue 18). So the
modules on that path (``launch.py``, ``gitenv.scrub_process``, ``hooks/run.py``,
``resident/address.py``, ``resident/client.py``) reach the system through this module, and
import ``os`` only off it (the in-process fallback, the resident's own start, ``resident status``).

Hand-written because the standard library offers these only through ``os``: each is what
``os`` does on a POSIX system, with the calls ``os`` itself makes (``os.environ`` *is* a view
of ``posix.environ``'s dictionary there, so a variable removed here is gone from both), and a
property test holds the path steps to ``posixpath``'s answers (``tests/unit/test_oslite.py``).
Imports nothing but ``posix`` and ``sys``, which every interpreter has loaded before it runs a line.
"""

import posix
import sys

_ENCODING = sys.getfilesystemencoding()


def fsencode(text: str) -> bytes:
    """``os.fsencode`` of a ``str``."""
    return text.encode(_ENCODING, "surrogateescape")


def fsdecode(data: bytes) -> str:
    """``os.fsdecode`` of ``bytes``."""
    return data.decode(_ENCODING, "surrogateescape")


def getenv(name: str, default: str | None = None) -> str | None:
    """``os.environ.get(name, default)``."""
    value = posix.environ.get(fsencode(name))
    return default if value is None else fsdecode(value)


def environ() -> dict[str, str]:
    """A copy of ``os.environ``."""
    return {fsdecode(name): fsdecode(value) for name, value in posix.environ.items()}


def unsetenv(name: str) -> None:
    """``os.environ.pop(name, None)``: from this process's environment (what the processes it
    starts inherit) and from the dictionary ``os.environ`` reads."""
    key = fsencode(name)
    if key in posix.environ:
        posix.unsetenv(key)
        del posix.environ[key]


def join(folder: str, name: str) -> str:
    """``os.path.join`` of two parts."""
    if name.startswith("/") or not folder:
        return name
    return folder + name if folder.endswith("/") else f"{folder}/{name}"


def dirname(path: str) -> str:
    """``os.path.dirname``."""
    head = path[: path.rfind("/") + 1]
    return head.rstrip("/") if head.strip("/") else head  # (a head of slashes only stays as it is)


def normpath(path: str) -> str:
    """``os.path.normpath``: no ``.``, ``..`` (where a folder above can take it) or doubled ``/``."""
    if not path:
        return "."
    # POSIX keeps exactly two leading slashes (they may mean something else); three or more are one.
    lead = 2 if path.startswith("//") and not path.startswith("///") else 1 if path.startswith("/") else 0
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part != ".." or (not lead and not parts) or (parts and parts[-1] == ".."):
            parts.append(part)
        elif parts:
            parts.pop()
    return "/" * lead + "/".join(parts) or "."


def abspath(path: str) -> str:
    """``os.path.abspath``."""
    return normpath(path if path.startswith("/") else join(posix.getcwd(), path))


def is_private_folder(path: str, uid: int) -> bool:
    """Whether ``path`` is a folder (not a link to one) owned by ``uid`` that no one else may
    enter, read or write (``lstat``: ``S_ISDIR``, ``st_uid``, no group or other bits)."""
    try:
        info = posix.lstat(path)
    except OSError:
        return False
    return info.st_mode & 0o170000 == 0o040000 and info.st_uid == uid and not info.st_mode & 0o077
