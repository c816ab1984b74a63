"""Confirmation tokens: a destructive tool's plan is carried out only by a second call that
hands back the token the plan gave, and only if nothing the plan depends on moved meanwhile.

A ``Plan`` is what a token is bound to: the operation and its options, the entry (and for a
restore, the checkpoint) it targets, for a revert of less than an entry what of it (``scope``:
the step, the paths, the hunk), the state of every timeline entry that recorded changes
(``timeline_state``: entries that changed nothing are left out), what the plan would do, and
the content and mode of every file the plan names, as they were when it was made. The token is an
HMAC of that plan under a secret made when the process starts, so no other process (another
server, a restarted one) can make or accept it, and nobody can forge one. The book keeps the
plans it issued (a bounded number, for a limited time) so a refusal can say *what* changed;
a token is spent once it is carried out, or once it is found stale.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ..core.models import OperationResult
from ..engine.engine import Engine

TOKEN_PREFIX = "tb1-"
TOKEN_LIFETIME = 15 * 60  # seconds a plan may wait for the person's yes
_KEPT = 64  # plans the book remembers at once (the oldest are forgotten first)


class Refused(Exception):
    """A confirmation the server will not carry out; the message says why and what to do."""


@dataclass(frozen=True)
class Plan:
    """Everything a confirmation token stands for (all plain, comparable values)."""

    operation: str  # undo, redo, revert, restore
    on_conflict: str
    target: str | None  # the entry the operation acts on
    checkpoint: str | None  # restore: the checkpoint it goes back to
    target_number: int | None
    timeline: str  # timeline_state()
    outcome: tuple[str, ...]  # what it would do: verdict, then one item per file
    files: tuple[tuple[str, str], ...] = field(default=())  # (path, state) of every named path
    scope: tuple[str, ...] = field(default=())  # a narrow revert's target: "step #12.3", "paths …", "hunk PATH:LINE"

    def digest_input(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":")).encode()

    def describe(self) -> str:
        what = f"{self.operation} of #{self.target_number}" if self.target_number is not None else self.operation
        narrow = f", {', '.join(self.scope)}" if self.scope else ""
        return f"{what} (on_conflict {self.on_conflict}{narrow})"


def make_plan(engine: Engine, result: OperationResult, checkpoint: str | None = None, scope: tuple[str, ...] = ()) -> Plan:
    """The plan a dry run ``result`` describes, with the workspace's state now."""
    paths = sorted(
        {o.path for o in result.restored} | {c.path for c in result.conflicts} | {s.path for s in result.skipped}
    )
    outcome = (
        result.verdict,
        *(f"{o.action} {o.path} +{o.additions} -{o.deletions}{' merged' if o.merged else ''}" for o in result.restored),
        *(f"conflict {c.path}: {c.reason}" for c in result.conflicts),
        *(f"skip {s.path}: {s.reason}" for s in result.skipped),
    )
    return Plan(
        operation=result.operation,
        on_conflict=result.on_conflict,
        target=result.target,
        checkpoint=checkpoint,
        target_number=result.target_number,
        timeline=timeline_state(engine),
        outcome=outcome,
        files=tuple((path, file_state(engine, path)) for path in paths),
        scope=scope,
    )


def timeline_state(engine: Engine) -> str:
    """A digest of what on the timeline an operation depends on: every entry that recorded
    changes, with its state and its checkpoints (applied or not). Entries that changed nothing
    leave it alone: a person who reads the plan and says "yes" in their next prompt opens (and
    may end) an empty turn, and that must not void the plan they agreed to."""
    digest = hashlib.sha256()
    for entry in engine.entries():
        if entry.checkpoints:
            steps = " ".join(cp.id + ("" if cp.applied else "!") for cp in entry.checkpoints)
            digest.update(f"{entry.id} {entry.state} {steps}\n".encode())
    return digest.hexdigest()


def file_state(engine: Engine, rel: str) -> str:
    """What ``rel`` holds now, as a short string: its content's digest and mode, or why there is
    none. Nothing behind a symlinked folder is read (it may lead outside the workspace)."""
    link = engine.workspace.link_above(rel)
    if link is not None:
        try:
            target = engine.workspace.read(link)  # the link itself, never what it points at
        except OSError as exc:
            return f"behind {link}: {exc.strerror or type(exc).__name__}"
        return f"behind {link} -> {target.content.hex() if target else '?'}"
    try:
        disk = engine.workspace.read(rel)
    except OSError as exc:
        return f"unreadable: {exc.strerror or type(exc).__name__}"
    if disk is None:
        try:
            kind = stat.S_IFMT((engine.workspace.root / rel).lstat().st_mode)
        except OSError:
            return "absent"
        return f"not a file ({kind:o})"
    return f"{disk.mode:o} {hashlib.sha256(disk.content).hexdigest()}"


class ConfirmationBook:
    """Issues tokens for plans, and checks a token against the plan that would run now."""

    def __init__(self, lifetime: float = TOKEN_LIFETIME) -> None:
        self._secret = secrets.token_bytes(32)
        self._issued: OrderedDict[str, tuple[Plan, float]] = OrderedDict()
        self._lifetime = lifetime
        self._lock = threading.Lock()

    def _token(self, plan: Plan) -> str:
        mac = hmac.new(self._secret, plan.digest_input(), hashlib.sha256).digest()
        return TOKEN_PREFIX + base64.urlsafe_b64encode(mac[:24]).decode("ascii")

    def issue(self, plan: Plan) -> str:
        token = self._token(plan)
        with self._lock:
            self._issued.pop(token, None)
            self._issued[token] = (plan, time.monotonic())
            while len(self._issued) > _KEPT:
                self._issued.popitem(last=False)
        return token

    def redeem(self, token: str, operation: str, on_conflict: str, current: Callable[[], Plan], again: str) -> None:
        """Accept ``token`` for ``operation`` with ``on_conflict`` and the plan ``current()`` makes
        now, just before it is carried out, spending the token; or raise ``Refused`` saying what
        differs. A token the book does not hold, or holds for another operation, is refused
        before ``current`` runs. ``again`` names the call that plans anew."""
        fresh = f"nothing was done; call {again} without confirm_token for a new plan, and ask the person again"
        token = token.strip()
        with self._lock:
            found = self._issued.get(token)
            if found is not None and time.monotonic() - found[1] > self._lifetime:
                del self._issued[token]
                raise Refused(f"this confirmation token expired ({int(self._lifetime // 60)} minutes after its plan); {fresh}")
        if found is None:
            raise Refused(
                "this confirmation token was not issued by this server for a plan it still holds (it is "
                f"malformed, from another server or session, or already used); {fresh}"
            )
        then = found[0]
        if (then.operation, then.on_conflict) != (operation, on_conflict):
            raise Refused(f"this confirmation token is for {then.describe()}, not {operation} (on_conflict {on_conflict}); {fresh}")
        now = current()
        if then.timeline == now.timeline and (then.target, then.checkpoint, then.scope) != (now.target, now.checkpoint, now.scope):
            # A call for another target (another step, other paths, another hunk): the token stays good for its own.
            raise Refused(f"this confirmation token is for {then.describe()}, not {now.describe()}; {fresh}")
        why = _what_changed(then, now)  # then: the plan this book issued the token for
        with self._lock:
            if self._issued.pop(token, None) is not found:  # carried out now, or stale for good
                raise Refused(f"this confirmation token was used meanwhile; {fresh}")
        if why is not None:
            raise Refused(f"{why}; {fresh}")


def _what_changed(then: Plan, now: Plan) -> str | None:
    """Why the plan made now is not the one confirmed, in words (None: the same)."""
    if then.timeline != now.timeline:
        return "the timeline changed since the plan (a turn recorded changes, or an undo, redo, revert or restore ran)"
    before, after = dict(then.files), dict(now.files)
    changed = sorted(p for p in before.keys() & after.keys() if before[p] != after[p])
    if changed:
        return f"{_paths(changed)} changed since the plan"
    if then != now:  # the outcome, or a path now named or no longer named
        added = sorted(after.keys() - before.keys())
        extra = f" (it now also touches {_paths(added)})" if added else ""
        return f"the plan is not the same any more{extra}"
    return None


def _paths(paths: list[str]) -> str:
    shown = ", ".join(paths[:5])
    return shown + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
