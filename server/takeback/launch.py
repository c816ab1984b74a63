"""The ``takeback`` executable's entry point: ``takeback hook`` before anything else.

An agent runs ``takeback hook`` on every prompt and tool call, so that path imports only what
reading a payload and talking to the resident process need (``hooks/run.py``); every other
command goes to the full command line (``cli.py``), which imports much more.
"""

from __future__ import annotations

import sys

from . import gitenv


def main() -> int:
    gitenv.scrub_process()  # first: nothing this process starts may inherit them
    raw = sys.argv[1:]
    if raw[:1] == ["hook"] and "-h" not in raw and "--help" not in raw:
        from .hooks.run import run  # never a usage error: a hook must not fail its agent

        return run(raw[1] if len(raw) > 1 else "", raw[2] if len(raw) > 2 else None)
    from .cli import main as cli_main

    return cli_main(raw)
