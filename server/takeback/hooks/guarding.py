"""The guard on a pre-tool hook: the call read by the classifier (``guard/classify.py``) against
this workspace, weighed by the person's rules (``guard/policy.py``, from the config's ``guard``
table) for what this agent's hook can do (``answers.abilities``), into one ``Decision``.

The classifier's view of the workspace comes from the engine already open for the hook: the
root, what git ignores and Takeback does not hold (``Engine.ignore_check``,
``scanning/ignored.py``: libgit2 on the repository the scanner keeps open, git only where the
two may disagree, a tracked file held, a folder outside git by its ``.gitignore`` files; no tree
scan; built on the classifier's first question), the capture's secrets policy and size
cap for the files Takeback withholds (those count as files it does not hold), the home folder
and virtual environment the agent's hook runs with. The guard is off when the config says so,
or for a session the person switched it off for (``engine/guard_off.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from ..engine import guard_off
from ..engine.engine import Engine
from ..guard.classify import Verdict, Workspace, classify
from ..guard.decide import ALLOW, Decision
from ..guard.policy import Rules, decide
from .answers import abilities
from .events import Event


def guard(engine: Engine, event: Event, env: Mapping[str, str]) -> tuple[Decision, Verdict | None]:
    """The decision for ``event`` (a pre-tool call) and the verdict it came from (None: the guard
    did not look: it is off, or the call is not one it reads)."""
    config = engine.config.guard
    if event.kind != "pre_tool" or not config.enabled or not event.is_step:
        return ALLOW, None
    if guard_off.is_off(engine.store.path, event.session):
        return ALLOW, None
    ws = workspace_view(engine, env)
    verdict = classify(event, ws)
    rules = Rules(
        effects=dict(config.effects), allow=tuple(config.allow), ask=tuple(config.ask), deny=tuple(config.deny),
        cannot_ask=config.cannot_ask,
    )
    return decide(verdict, event.command, rules, abilities(event.agent, event.event_name), ws), verdict


def warm() -> None:
    """Have the guard ready before a hook needs it (the resident process, as it starts): this
    module imported with the guard and one line read by its shell parser (the first parse builds
    what later ones reuse)."""
    from ..guard.shell import parse

    parse("cd src && make")


def workspace_view(engine: Engine, env: Mapping[str, str]) -> Workspace:
    root = str(engine.workspace.root)
    return Workspace(
        root=root, is_ignored=_lazy(engine.ignore_check), home=env.get("HOME") or os.path.expanduser("~"),
        in_venv=bool(env.get("VIRTUAL_ENV") or env.get("CONDA_PREFIX")),
        is_withheld=engine.capture.is_secret, max_file_bytes=engine.config.max_file_bytes,
    )


def _lazy(make: Callable[[], Callable[[str], bool]]) -> Callable[[str], bool]:
    """A check made on its first use, then kept: a call that names no path the classifier must
    place (most of them) never builds it."""
    made: list[Callable[[str], bool]] = []

    def check(rel: str) -> bool:
        if not made:
            made.append(make())
        return made[0](rel)

    return check
