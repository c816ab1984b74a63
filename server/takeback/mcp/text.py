"""The short human text beside each tool's structured content: what an agent reads out to the
person (clients that pass only text to the model still get every fact needed to act).

Its names, prompts and commands are quoted as the CLI quotes them (``core/render.for_terminal``):
the text goes to a model, but a client may show it as it is in the person's terminal (a
terminal agent's tool-result view), and the quoting loses nothing (its escapes are reversible).
The structured content stays exact."""

from __future__ import annotations

import re
from typing import Any

from ..core import wording
from ..core.models import Entry, OperationResult
from ..core.render import entry_line, for_terminal, restored_lines
from ..core.terminal import quote_text


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
        for lost in entry.lost:
            kept = "kept by Takeback" if lost.kept is not None else "lost"
            lines.append(f"        cannot take back: {lost.path} (an ignored file, {lost.how}; {kept})")
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
    for lost in item.lost:  # the person runs the command, not the agent: it is shown, never offered as a step
        lines.append(f"  cannot take back  {wording.lost_file(lost)} (an ignored file: no undo puts it back)")
    return "\n".join(lines)


def result(res: OperationResult, heading: str, next_action: str, taking_back: dict[str, Any] | None = None) -> str:
    """An operation's plan or outcome: verdict, what of the entry it takes back (a revert of
    less than an entry: its step, files, hunk, and the hunk's patch), every file, and what to
    do next."""
    res = for_terminal(res)
    lines = [f"{heading} ({res.verdict.upper()}): {res.message}"]
    narrow = "" if taking_back is None else _narrow(for_terminal(taking_back))
    if narrow:
        lines.append(f"  takes back  {narrow}")
    for notice in res.notices:
        lines.append(f"  note     {notice}")
    lines.extend(restored_lines(res, width=8))
    for skip in res.skipped:
        lines.append(f"  skipped  {skip.path}: {skip.reason}")
    for conflict in res.conflicts:
        note = " (markers written)" if conflict.markers_written else ""
        lines.append(f"  conflict {conflict.path}: {conflict.reason}{note}")
    if narrow and taking_back and taking_back["hunk"] and res.patch:
        lines.extend(f"  | {quote_text(line)}" for line in res.patch.splitlines())  # the lines it changes
    lines.append(f"next: {next_action}")
    return "\n".join(lines)


def _narrow(taking_back: dict[str, Any]) -> str:
    """``step #12.3 of turn #12: only the files src/** names, only the hunk of src/app.py at
    line 43 (lines 42-43 as the file stands now)``; '' for a whole entry."""
    step, paths, hunk = taking_back["step"], taking_back["paths"], taking_back["hunk"]
    if not (step or paths is not None or hunk):
        return ""
    head = f"step #{step} of turn #{taking_back['turn']} (its other steps stay)" if step else f"turn #{taking_back['turn']}"
    parts = []
    if paths is not None:
        parts.append(f"only the files {' '.join(paths)} {'names' if len(paths) == 1 else 'name'}")
    if hunk:
        where = f" ({hunk['lines']} as the file stands now)" if hunk["lines"] else ""
        parts.append(f"only the hunk of {hunk['path']} at line {hunk['line']}{where}")
    return head + (": " + ", ".join(parts) if parts else "")


def lines_now(patch: str, path: str) -> str | None:
    """Which lines of ``path`` as it stands now ``patch`` changes (a dry run's patch goes from
    the file now to what the operation writes): ``lines 42-43``, ``lines 7 and 42-43``, or
    ``new lines after line 12`` where it only adds some. None: it changes no line of it."""
    removed: list[int] = []
    added_after: list[int] = []
    inside = in_hunk = False
    old = 0
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            inside, in_hunk = line.endswith(f" b/{path}"), False
        elif inside and line.startswith("@@"):
            found = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
            if found is None:
                continue
            start, count = int(found.group(1)), found.group(2)
            old, in_hunk = (start + 1 if count == "0" else start), True
        elif inside and in_hunk and line[:1] == "-":
            removed.append(old)
            old += 1
        elif inside and in_hunk and line[:1] == "+":
            added_after.append(old - 1)
        elif inside and in_hunk and line[:1] == " ":
            old += 1
    if removed:
        spans: list[list[int]] = []
        for number in removed:
            if spans and spans[-1][1] == number - 1:
                spans[-1][1] = number
            else:
                spans.append([number, number])
        shown = [str(a) if a == b else f"{a}-{b}" for a, b in spans]
        return ("line " if shown == [str(removed[0])] else "lines ") + " and ".join(shown)
    if added_after:
        return "new lines at the top" if added_after[0] == 0 else f"new lines after line {added_after[0]}"
    return None


def nothing_recorded(workspace: str, store: str) -> str:
    """What an empty timeline says: where the server looked, so a person whose turns are
    elsewhere (another folder, another store) sees which one it was."""
    return f"No turns recorded for {for_terminal(workspace)} (store: {for_terminal(store)})."
