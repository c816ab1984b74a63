"""The short human text beside each tool's structured content: what an agent reads out to the
person (clients that pass only text to the model still get every fact needed to act).

Its names, prompts and commands are quoted as the CLI quotes them (``core/render.for_terminal``):
the text goes to a model, but a client may show it as it is in the person's terminal (a
terminal agent's tool-result view), and the quoting loses nothing (its escapes are reversible).
The structured content stays exact."""

from __future__ import annotations

from ..core import wording
from ..core.models import Entry, OperationResult
from ..core.render import entry_line, for_terminal, restored_lines


def timeline(entries: list[Entry], workspace: str, store: str) -> str:
    if not entries:
        return nothing_recorded(workspace, store)
    lines = []
    for entry in for_terminal(entries):
        lines.append(entry_line(entry))
        if entry.session:
            lines.append(f"        session {entry.session}")
        if entry.kind == "mark":
            lines.append(f"        the person's own checkpoint (takeback mark): restore '#{entry.number}' goes back to it")
        for move in entry.git_moved:  # an undo does not take these back: the agent must not say it did
            lines.append(f"        cannot take back: {move.fact}")
        for path in entry.outside:
            lines.append(f"        cannot take back: {path} (written outside the workspace)")
    return "\n".join(lines)


def entry(item: Entry) -> str:
    item = for_terminal(item)
    lines = [entry_line(item), f"  id {item.id}  session {item.session or '-'}  source {item.source}"]
    for change in item.files:
        name = f"{change.old_path} → {change.path}" if change.old_path else change.path
        extra = " (binary)" if change.binary else ""
        if change.withheld:
            extra += f" (content withheld: {change.withheld})"
        lines.append(f"  {change.kind:<9} {name}  +{change.additions} -{change.deletions}{extra}")
    for k, step in enumerate(item.checkpoints, 1):
        applied = "" if step.applied else " (not applied)"
        lines.append(f"  step #{item.number}.{k} {step.label or '-'}: {', '.join(step.paths) or 'no files'}{applied}")
    for command in item.commands:
        lines.append(f"  ran    {command}")
    for check in item.checks:
        code = f" (exit {check.exit_code})" if check.exit_code is not None else ""
        lines.append(f"  check  {check.name}: {check.status}{code}")
    for notice in item.notices:
        lines.append(f"  note   {notice}")
    for move in item.git_moved:
        lines.append(f"  cannot take back  {wording.git_move(move)} (the person's git state: Takeback never changes it)")
    for path in item.outside:
        lines.append(f"  cannot take back  {path} (written outside the workspace: Takeback records nothing there)")
    return "\n".join(lines)


def result(res: OperationResult, heading: str, next_action: str) -> str:
    """An operation's plan or outcome: verdict, every file, and what to do next."""
    res = for_terminal(res)
    lines = [f"{heading} ({res.verdict.upper()}): {res.message}"]
    for notice in res.notices:
        lines.append(f"  note     {notice}")
    lines.extend(restored_lines(res, width=8))
    for skip in res.skipped:
        lines.append(f"  skipped  {skip.path}: {skip.reason}")
    for conflict in res.conflicts:
        note = " (markers written)" if conflict.markers_written else ""
        lines.append(f"  conflict {conflict.path}: {conflict.reason}{note}")
    lines.append(f"next: {next_action}")
    return "\n".join(lines)


def nothing_recorded(workspace: str, store: str) -> str:
    """What an empty timeline says: where the server looked, so a person whose turns are
    elsewhere (another folder, another store) sees which one it was."""
    return f"No turns recorded for {for_terminal(workspace)} (store: {for_terminal(store)})."
