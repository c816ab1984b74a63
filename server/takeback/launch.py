"""The ``takeback`` executable's entry point: the short paths before anything else.

An agent runs ``takeback hook`` on every prompt and tool call, so that path imports only what
reading a payload and talking to the resident process need (``hooks/run.py``). A reading
command (``status``, ``log``, ``show``, a dry run …), an operation, ``begin`` or ``end`` is
first handed to the resident process the same way (``resident/forward.py``), which answers it
with the engine already loaded; every other command, and any that the resident process did not
accept, goes to the full command line (``cli/``), which imports much more. A long answer on a
terminal goes through a pager either way (``pager.py``), started before both.
"""

import sys

from . import gitenv


def main() -> int:
    gitenv.scrub_process()  # first: nothing this process starts may inherit them
    raw = sys.argv[1:]
    if raw[:1] == ["hook"] and "-h" not in raw and "--help" not in raw:
        from .hooks.run import run  # never a usage error: a hook must not fail its agent

        return run(raw[1] if len(raw) > 1 else "", raw[2] if len(raw) > 2 else None)
    from . import pager

    paging = pager.start(raw)  # a long answer on a terminal: through less, as git's
    try:
        return _answer(raw)
    finally:
        if paging is not None:
            paging.finish()


def _answer(raw: list[str]) -> int:
    from .resident import forward

    try:
        status = forward.answered(raw)
    except KeyboardInterrupt:  # as the command line says it (nothing was accepted: ``forward`` says that case)
        print("takeback: interrupted", file=sys.stderr)
        return 130
    if status is not None:
        return status
    from .cli import main as cli_main

    return cli_main(raw)
