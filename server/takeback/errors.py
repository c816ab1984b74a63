"""The engine's errors: one base class and a few precise kinds.

Each kind carries a stable ``code`` (a short name), the CLI exit status it maps to and the
JSON-RPC error code the language server answers with. The message is one line saying what
went wrong and why, written for a person.
"""

from __future__ import annotations


class TakebackError(Exception):
    """Base of every error the engine raises on purpose."""

    code = "error"
    exit_status = 1
    rpc_code = -32001

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(TakebackError):
    """An unknown turn, checkpoint or path in a turn."""

    code = "not-found"
    exit_status = 3
    rpc_code = -32002


class NothingToDo(TakebackError):
    """Nothing to undo, nothing to redo, no green turn to restore."""

    code = "nothing-to-do"
    exit_status = 4
    rpc_code = -32003


class NoStore(NothingToDo):
    """Nothing was ever recorded for the workspace: it has no store, and a command that only
    reads does not make one."""

    code = "no-store"


class InvalidInput(TakebackError):
    """Malformed arguments: a bad turn spec, a bad option, a malformed edit."""

    code = "invalid-input"
    exit_status = 2
    rpc_code = -32602


class OutsideWorkspace(InvalidInput):
    """A path that leads out of the workspace (``..``, absolute, a symlink going out)."""

    code = "outside-workspace"
    exit_status = 2
    rpc_code = -32004


class StateError(TakebackError):
    """The request does not fit the timeline's state (no open turn, a turn already open …)."""

    code = "state"
    exit_status = 5
    rpc_code = -32005


class StaleContent(TakebackError):
    """A before-image or document version that no longer matches the workspace."""

    code = "stale"
    exit_status = 6
    rpc_code = -32006


class ChangedMeanwhile(StaleContent):
    """Another program wrote to a file an operation had just written, before the operation was
    recorded (the read-back after the writes found other bytes): the operation's files were put
    back and it was not recorded; a file holding that other program's bytes is left as it is."""

    code = "changed-meanwhile"


class StoreError(TakebackError):
    """The private store cannot be read or written."""

    code = "store"
    exit_status = 7
    rpc_code = -32007


class CannotWrite(TakebackError):
    """A workspace file could not be written or removed (a read-only folder or file, a
    read-only file system, a full disk). Raised before the files already written are put back."""

    code = "cannot-write"
    exit_status = 9
    rpc_code = -32009

    @classmethod
    def at(cls, path: str, exc: OSError) -> CannotWrite:
        """The error for ``path`` (workspace-relative: never the temporary file the OS named)."""
        why = (exc.strerror or type(exc).__name__).lower()
        return cls(f"cannot write {path}: {why}; nothing was written (files already written were put back)")


class NeedsConsent(TakebackError):
    """Something big and unusual that only the person can allow: the first copy of a large
    folder that is not a git repository (``first_copy_limit``). Nothing was done; the message
    says how to allow it."""

    code = "needs-consent"
    exit_status = 14
    rpc_code = -32010


class SharingFailed(TakebackError):
    """Sharing a timeline through git did not happen: the person's ``git`` failed to reach the
    remote (its own message follows), or what the remote holds was refused as data no Takeback
    wrote (a path outside the workspace, a wrong object type, a huge object). Nothing was kept of
    a refused timeline, and nothing of it reached the workspace."""

    code = "sharing"
    exit_status = 15  # rpc_code: the base's; no request of the language server shares yet


class Busy(TakebackError):
    """Another process held the store's lock for too long."""

    code = "busy"
    exit_status = 8
    rpc_code = -32008


def cannot_read(exc: OSError) -> str:
    """Why a path could not be read, as a skip reason or notice says it."""
    what = exc.strerror.lower() if exc.strerror else type(exc).__name__
    return f"it could not be read ({what})"
