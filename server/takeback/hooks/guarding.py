"""The guard's view of one workspace for one hook call: ``guard_workspace(engine, env)`` builds
the ``guard.classify.Workspace`` a pre-tool hook's call is classified against.

Its root is the engine's workspace; ``is_ignored`` is the engine's ignore check
(``Engine.ignore_check``, ``scanning/ignored.py``: libgit2 on the repository the engine's
scanner keeps open, git where the two may disagree; no tree scan), built only when the
classifier first asks (most calls name no path it must place); ``home`` and ``in_venv`` come
from the hook's own environment (the agent's, not the resident process's).

Imported only for a pre-tool event: it imports the guard, whose shell parser (tree-sitter-bash)
costs 15-70 ms to import. The resident process imports it as soon as it listens, off any hook's
path (``resident/server.py``, ``Resident.load_guard``); a hook working in-process imports it
when a pre-tool event needs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from ..guard.classify import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..engine.engine import Engine


def guard_workspace(engine: Engine, env: Mapping[str, str]) -> Workspace:
    """The workspace ``engine`` records, as the guard sees it for a hook called with ``env``.
    Use it where the engine's calls take turns (as a step's scan)."""
    return Workspace(
        root=str(engine.workspace.root),
        is_ignored=_lazy(engine.ignore_check),
        home=env.get("HOME") or os.path.expanduser("~"),
        in_venv=bool(env.get("VIRTUAL_ENV") or env.get("CONDA_PREFIX")),
    )


def _lazy(make: Callable[[], Callable[[str], bool]]) -> Callable[[str], bool]:
    """A check made on its first use, then kept (the scanner it needs costs a repository
    lookup: nothing for a call that names no path)."""
    made: list[Callable[[str], bool]] = []

    def check(rel: str) -> bool:
        if not made:
            made.append(make())
        return made[0](rel)

    return check
