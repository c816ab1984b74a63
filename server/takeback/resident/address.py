"""Where the resident process listens, and which one a caller may use.

One resident process per user and per *setting*: its socket lives in a folder only the user can
enter (``$XDG_RUNTIME_DIR/takeback`` when that runtime folder is the user's own, else
``takeback-<uid>`` in ``$TMPDIR``, by default ``/tmp``). The folder must be a real folder (not a
link), owned by the user, with no access for anyone else; when it is not, and cannot be made so,
there is no resident process and every call does its work in-process (``problem`` says why, for
``takeback resident status``). Never TCP.

The socket's name is a checksum of the *fingerprint*: the Takeback that runs (its package folder
and version), the Python that runs it, and the environment variables that decide settings and
where stores live (``TAKEBACK_*``, ``HOME``, ``XDG_CONFIG_HOME``, ``XDG_STATE_HOME``,
``GIT_CONFIG_*``). A caller with other settings reaches another process. The process compares
the whole fingerprint on every request, so a checksum collision costs only in-process work.

Standard library only, and cheap to import: ``takeback hook`` runs this on every agent event, so
what a served hook calls here reaches the system through ``oslite`` (not ``os``, a millisecond of
every hook), and the name's checksum is worked out here (not ``zlib``'s crc32: loading that
module cost a hook 0.5 ms).
"""

import posix
import sys

from .. import oslite

TYPE_CHECKING = False  # typing's own import costs a hook milliseconds
if TYPE_CHECKING:
    import socket

# The socket name's checksum: the fingerprint's bytes read as one number, modulo this prime (the
# largest below 2^32: eight hex digits, as long as a crc32's, for a socket's path is at most 107
# bytes). Not a guard against a chosen collision, which only costs in-process work (above).
_MODULUS = 4_294_967_291

# Variables that never change what a request does (so they do not split processes).
_NOT_SETTINGS = ("TAKEBACK_DEBUG", "TAKEBACK_RESIDENT", "TAKEBACK_RESIDENT_IDLE", "TAKEBACK_VIA", "TAKEBACK_BIN")
_SETTINGS = ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL",
             "GIT_CONFIG_SYSTEM")


def enabled() -> bool:
    """``TAKEBACK_RESIDENT=0`` (or ``off``, ``false``, ``no``) keeps every call in-process."""
    return (oslite.getenv("TAKEBACK_RESIDENT") or "").strip().lower() not in ("0", "off", "false", "no")


def fingerprint() -> str:
    """What a resident process must share with its caller (see the module docstring)."""
    from .. import __version__

    package = oslite.dirname(oslite.dirname(oslite.abspath(__file__)))
    env = sorted(
        (name, value) for name, value in oslite.environ().items()
        if (name.startswith("TAKEBACK_") and name not in _NOT_SETTINGS) or name in _SETTINGS
    )
    lines = [f"takeback {__version__} {package}", f"python {sys.executable}"]
    lines += [f"{name}={value}" for name, value in env]
    return "\n".join(lines)


def folder_path() -> str:
    """Where the sockets' folder is (whether or not it exists or can be used)."""
    uid = posix.getuid()
    runtime = oslite.getenv("XDG_RUNTIME_DIR")
    if runtime and oslite.is_private_folder(runtime, uid):
        return oslite.join(runtime, "takeback")
    return oslite.join(oslite.getenv("TMPDIR") or "/tmp", f"takeback-{uid}")


def private_folder(create: bool = True) -> str | None:
    """The folder the sockets live in, made if ``create`` and missing; None when there is no
    folder that only this user can enter."""
    folder = folder_path()
    if create:
        try:
            posix.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
    return folder if oslite.is_private_folder(folder, posix.getuid()) else None


def problem() -> str | None:
    """Why the sockets' folder cannot be used, and what to do, in one line; None when it can
    be (or does not exist yet and can be made: the first hook makes it)."""
    import os
    import stat

    folder = folder_path()
    uid = os.getuid()
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        parent = os.path.dirname(folder)
        if os.path.isdir(parent):
            return None
        return f"{folder} cannot be made (there is no folder {parent}); set XDG_RUNTIME_DIR to a folder only you can enter"
    except OSError as exc:
        return f"{folder} cannot be looked at ({exc.strerror}); set XDG_RUNTIME_DIR to a folder only you can enter"
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        what = f"is a symbolic link (to {os.readlink(folder)}), not a folder"
    elif not stat.S_ISDIR(info.st_mode):
        what = "is not a folder"
    elif info.st_uid != uid:
        what = f"belongs to another user (uid {info.st_uid}), not to you (uid {uid})"
    elif mode & 0o077:
        return (f"{folder} can be entered by others (mode {mode:04o}): remove it ('rm -r {folder}'; the next hook "
                "makes it anew, yours alone) or set XDG_RUNTIME_DIR to a folder only you can enter")
    else:
        return None
    return (f"{folder} {what}: another user may have put it there; have it removed (its owner or an "
            "administrator can) or set XDG_RUNTIME_DIR to a folder only you can enter")


def socket_path(folder: str, print_: str) -> str:
    """The socket of the process serving fingerprint ``print_``."""
    number = int.from_bytes(print_.encode("utf-8", "surrogateescape"), "big") % _MODULUS
    return oslite.join(folder, f"r-{number:08x}.sock")


def sibling(socket: str, suffix: str) -> str:
    """The process's other files beside its socket: ``.lock`` (held while it lives), ``.log``."""
    return socket[: -len(".sock")] + suffix


def take_lock(socket: str, wait_seconds: float) -> int | None:
    """Hold the lock of the process serving ``socket`` (its pid written in it), waiting up to
    ``wait_seconds`` for a process that is leaving; None when another one holds it."""
    import os

    from ..storage.lock import flock_within  # not on a hook's path: only ``takeback resident run`` locks

    fd = os.open(sibling(socket, ".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    if not flock_within(fd, wait_seconds):
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def listen(path: str) -> "socket.socket":
    """Listen at ``path`` (made readable by the user only; a socket left there by a process that
    died is replaced: the caller holds the lock). Done as soon as the process holds the lock,
    before it imports the engine: a hook made meanwhile connects and waits in the queue instead
    of doing its work in-process (which would cost it that same import)."""
    import os
    import socket  # not at the top: a hook never listens

    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)
    try:
        sock.bind(path)
    except BaseException:
        sock.close()
        raise
    finally:
        os.umask(old_mask)
    sock.listen(64)
    sock.settimeout(1.0)
    return sock


def lock_held(socket: str) -> bool:
    """Whether a process holds the lock of ``socket`` (it is starting up, serving or leaving)."""
    import fcntl
    import os

    try:
        fd = os.open(sibling(socket, ".lock"), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
