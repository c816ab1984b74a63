"""Taking turns back: ``undo``, ``redo``, ``revert`` (a turn, one step ``N.k``, files by
pathspec after ``--``, one ``--hunk PATH:LINE``) and ``restore``; the exit status says the
verdict (partial 10, refused 11: nothing was written). ``save`` writes what the newest
operation applied in an editor and the disk lacks (``engine/unsaved.py``)."""

from __future__ import annotations

import argparse

from ..core import render
from ..core.hunks import parse_hunk
from ..core.models import ON_CONFLICT, OperationResult
from .context import Context
from .output import EXIT_OK, EXIT_PARTIAL, EXIT_REFUSED
from .parser import AddCommand, Handler


def _add_operation_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", action="store_true", help="show exactly what would change, write nothing")
    p.add_argument("--patch", action="store_true", help="with --dry-run, also print the diff it would apply")
    p.add_argument("--stat", action="store_true", help="list the files as a diffstat (path | changes +++--)")
    p.add_argument(
        "--on-conflict",
        choices=ON_CONFLICT,
        default="abort",
        help="when later edits overlap: abort (default, write nothing), skip (only clean files), "
        "markers (write conflict markers), force (put back the turn's starting content)",
    )


def register(command: AddCommand) -> dict[str, Handler]:
    _add_operation_flags(command("undo", "revert the last applied agent turn"))
    _add_operation_flags(command("redo", "re-apply what the last undo, revert or restore took away"))
    p = command("revert", "take back one turn's changes (or one step's, a few files', one hunk's), keeping later edits")
    p.add_argument("turn", help="a turn (12, #12, an id, last) or one step of it (12.3, #12.3)")
    p.add_argument("paths", nargs="*", metavar="PATHSPEC",
                   help="after --: only the files these paths or patterns name (from the workspace's top: src/app.py, 'tests/**')")
    p.add_argument("--hunk", metavar="PATH:LINE", help="only the hunk of PATH's change that covers LINE, as the file stands now")
    _add_operation_flags(p)
    p = command("restore", "bring files touched since a checkpoint back to their state then")
    p.add_argument("checkpoint", help="a checkpoint id, a turn (#N: its last checkpoint), #N.k (#N.0: where turn N started), or last-green")
    _add_operation_flags(p)
    p = command("save", "write what the newest operation applied in an editor but the disk lacks (discarded or unsaved buffers)")
    p.add_argument("paths", nargs="*", help="only these files (default: every one 'takeback status' lists)")
    return {"undo": undo, "redo": redo, "revert": revert, "restore": restore, "save": save}


def save(ctx: Context) -> int:
    ctx.show(ctx.engine.save(ctx.args.paths or None), render.print_save)
    return EXIT_OK


def _finish(ctx: Context, result: OperationResult) -> int:
    ctx.show(result, lambda shown: render.print_result(shown, patch=ctx.args.patch, stat=ctx.args.stat))
    return {"refused": EXIT_REFUSED, "broken": EXIT_REFUSED, "partial": EXIT_PARTIAL}.get(result.verdict, EXIT_OK)


def undo(ctx: Context) -> int:
    return _finish(ctx, ctx.engine.undo(dry_run=ctx.args.dry_run, on_conflict=ctx.args.on_conflict))


def redo(ctx: Context) -> int:
    return _finish(ctx, ctx.engine.redo(dry_run=ctx.args.dry_run, on_conflict=ctx.args.on_conflict))


def revert(ctx: Context) -> int:
    hunk = None if ctx.args.hunk is None else parse_hunk(ctx.args.hunk)
    return _finish(ctx, ctx.engine.revert(ctx.args.turn, dry_run=ctx.args.dry_run, on_conflict=ctx.args.on_conflict,
                                          pathspec=ctx.args.paths or None, hunk=hunk))


def restore(ctx: Context) -> int:
    return _finish(ctx, ctx.engine.restore(ctx.args.checkpoint, dry_run=ctx.args.dry_run, on_conflict=ctx.args.on_conflict))
