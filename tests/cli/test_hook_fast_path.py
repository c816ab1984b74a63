"""The hook's fast path: with a resident process serving, ``takeback hook`` imports only what
reading a payload and forwarding it needs (``launch.py`` → ``hooks/run.py`` → ``resident/``).

The hook runs as the installed console script runs it (``from takeback.launch import main``, not
``python -m``, whose ``runpy`` imports half the standard library itself), under ``python -X
importtime``, whose report names every module the process imported. Those processes run
unmeasured (``helpers.unmeasured``): coverage's start-up in a measured process imports much of
the standard library itself.

The line ``takeback install`` writes (``PYTHON -S …/takeback/__main__.py hook …``) skips ``site``
as well: served, it imports nothing ``python -S -c pass`` does not but the hook client's own
modules and ``_socket`` (not even ``os``: ``oslite.py``); worked in-process it loads ``site`` (the
engine's packages); and the resident it starts is the one the next hook reaches.
"""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import unmeasured

from .conftest import Takeback
from .test_hooks import captured, turns
from .test_resident import resident, started, wait_running

# The console script ``pip`` writes for ``takeback`` (pyproject's ``[project.scripts]``).
CONSOLE_SCRIPT = 'import sys; from takeback.launch import main; sys.argv[0] = "takeback"; sys.exit(main())'
# Modules that cost a hook milliseconds each, and the engine: none is needed to forward a payload.
HEAVY = (
    "pathlib", "dataclasses", "inspect", "subprocess", "typing", "re", "json", "enum", "socket",
    "collections", "contextlib", "urllib.parse", "locale", "importlib.util", "pydantic", "pygit2",
    "takeback.hooks.handle", "takeback.hooks.agents", "takeback.hooks.events", "takeback.engine",
)


def imported(tb: Takeback, argv: list[str], payload: str) -> set[str]:
    """The modules a ``python -X importtime`` process imported (it must exit 0, quietly)."""
    env = unmeasured({**tb.env, "CLAUDECODE": "1"})
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], input=payload, capture_output=True, text=True,
        cwd=tb.cwd, env=env, timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    names = {line.rsplit("|", 1)[1].strip() for line in lines[1:]}  # the first line is the header
    assert "takeback.launch" in names or argv[-2:] == ["-c", "pass"], proc.stderr
    return names


def test_a_hook_served_by_the_resident_imports_no_heavy_module(tb: Takeback) -> None:
    first = started(tb)
    payload = json.dumps(captured("claude", "UserPromptSubmit", tb.cwd))
    names = imported(tb, ["-c", CONSOLE_SCRIPT, "hook", "claude", "UserPromptSubmit"], payload)

    assert resident(tb)["requests"] > first["requests"]  # the resident process served it (no handle.py here)
    assert len(turns(tb)) == 1  # and recorded it: the prompt opened a turn
    assert sorted(names & set(HEAVY)) == []
    floor = imported(tb, ["-c", "pass"], "")
    extra = {name for name in names - floor if not name.startswith("takeback")}
    assert extra <= {"_socket"}, sorted(extra)


def test_the_in_process_fallback_still_imports_what_it_needs(tb: Takeback) -> None:
    """The same command with the resident turned off records in-process (the check above can fail)."""
    payload = json.dumps(captured("claude", "UserPromptSubmit", tb.cwd))
    env_off = {**tb.env, "TAKEBACK_RESIDENT": "0"}
    names = imported(Takeback(tb.cwd, env_off), ["-c", CONSOLE_SCRIPT, "hook", "claude", "UserPromptSubmit"], payload)
    assert "takeback.hooks.handle" in names and "dataclasses" in names
    assert len(turns(tb)) == 1


def installed_line(event: str) -> list[str]:
    """What follows the interpreter in the hook line ``takeback install`` writes."""
    from takeback.install.command import hook_argv

    argv = hook_argv("claude", event)
    assert argv[0] == sys.executable and argv[1] == "-S" and argv[2].endswith("/takeback/__main__.py"), argv
    return argv[1:]


def test_the_installed_hook_line_runs_without_site_when_served(tb: Takeback) -> None:
    first = started(tb)
    payload = json.dumps(captured("claude", "UserPromptSubmit", tb.cwd))
    names = imported(tb, installed_line("UserPromptSubmit"), payload)

    assert resident(tb)["requests"] > first["requests"]
    assert len(turns(tb)) == 1
    assert "site" not in names and sorted(names & set(HEAVY)) == []
    floor = imported(tb, ["-S", "-c", "pass"], "")
    extra = {name for name in names - floor if not name.startswith("takeback")}
    assert extra <= {"_socket"}, sorted(extra)  # not even ``os`` (``oslite.py``)


def test_the_installed_hook_line_worked_in_process_loads_site_and_the_engine(tb: Takeback) -> None:
    payload = json.dumps(captured("claude", "UserPromptSubmit", tb.cwd))
    env_off = {**tb.env, "TAKEBACK_RESIDENT": "0"}
    names = imported(Takeback(tb.cwd, env_off), installed_line("UserPromptSubmit"), payload)
    assert {"site", "pygit2", "takeback.hooks.handle"} <= names
    assert len(turns(tb)) == 1


def test_the_resident_an_installed_hook_line_starts_serves_the_next_one(tb: Takeback) -> None:
    """Started from a process that found Takeback without ``site``, the resident is this very
    Takeback (its socket is the one the next hook line looks for)."""
    assert resident(tb)["running"] is False
    imported(tb, installed_line("Stop"), json.dumps(captured("claude", "Stop", tb.cwd)))
    first = wait_running(tb)
    names = imported(tb, installed_line("UserPromptSubmit"), json.dumps(captured("claude", "UserPromptSubmit", tb.cwd)))
    assert "takeback.hooks.handle" not in names
    assert resident(tb)["requests"] == first["requests"] + 1 and len(turns(tb)) == 1
