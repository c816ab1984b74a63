"""What every command runs with: its parsed arguments, the engine of the workspace
``--workspace`` names, or else the one the current folder belongs to (``workspace/locate.py``),
opened on first use, and the printer ``--json`` chose. The current folder is the process's,
or the one a command was typed in when the resident process serves it; that process may lend
the engine it keeps for the workspace (``Lend``: held, with the store's lock, until ``close``,
and not closed by the command), else one is opened for the command and closed after it."""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.render import for_terminal
from ..errors import InvalidInput
from ..resident.forward import DRY_RUN, READING
from ..workspace.locate import workspace_root
from .output import print_json

if TYPE_CHECKING:
    from ..engine.engine import Engine

Lend = Callable[[Path], contextlib.AbstractContextManager["Engine | None"]]
"""The engine a caller keeps for a workspace folder, for one command (None: open one)."""


class Context:
    def __init__(self, args: argparse.Namespace, cwd: str | None = None, lend: Lend | None = None) -> None:
        """``cwd``: the folder the command was typed in (default: this process's); ``lend``:
        engines kept by the caller (see above)."""
        self.args = args
        self.json: bool = args.json
        self.cwd = cwd
        self._lend = lend
        self._lent = contextlib.ExitStack()
        self._lent_now = False

    @functools.cached_property
    def root(self) -> Path:
        """The workspace folder the command is for."""
        if self.args.workspace is not None and not self.args.workspace.strip():
            raise InvalidInput("--workspace is empty: give a folder, or leave the option out to use the current folder")
        return Path(self.args.workspace if self.args.workspace is not None else workspace_root(self.cwd or os.getcwd()))

    @property
    def reads_only(self) -> bool:
        """Whether the command only reads (a reading command, a dry run): it never makes a
        store, so where nothing was recorded its engine is ``NoStore``."""
        command = self.args.command
        return command in READING or (command in DRY_RUN and getattr(self.args, "dry_run", False) is True)

    @functools.cached_property
    def engine(self) -> Engine:
        from ..engine.engine import Engine

        root = self.root
        if self._lend is not None:
            lent = self._lent.enter_context(self._lend(root))
            if lent is not None:
                self._lent_now = True
                return lent
            self._lent.close()
        return Engine(root, create=not self.reads_only)

    def close(self) -> None:
        """Give a lent engine back (not closed: its keeper holds it on), or close the one
        opened (a process that serves many commands)."""
        engine = self.__dict__.pop("engine", None)
        if self._lent_now:
            self._lent_now = False
            self._lent.close()
        elif engine is not None:
            engine.close()

    def show(self, value: Any, human: Callable[[Any], object]) -> None:
        """``value`` as JSON with ``--json``, else as ``human`` prints it, every text in it quoted
        for a terminal (``core/render.for_terminal``)."""
        if self.json:
            print_json(value)
        else:
            human(for_terminal(value))
