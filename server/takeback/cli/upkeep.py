"""Keeping the store bounded by hand: ``gc`` (retention runs by itself too)."""

from __future__ import annotations

from ..core import render
from .context import Context
from .output import EXIT_OK
from .parser import AddCommand, Handler


def register(command: AddCommand) -> dict[str, Handler]:
    command("gc", "apply the retention policy now")
    return {"gc": gc}


def gc(ctx: Context) -> int:
    ctx.show(ctx.engine.gc(), render.print_gc)
    return EXIT_OK
