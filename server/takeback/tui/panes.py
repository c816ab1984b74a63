"""The text beside the tree and in the plan's window, as ``rich.text.Text`` (never markup):
an entry's summary, a diff coloured by line (the engine's own unified diff, ``Engine.diff``,
its control characters escaped as ``terminal.escape`` escapes a patch body), and an
operation's plan or verdict (the CLI's lines: ``render.restored_lines``). Colours are the 16
named ones, which every terminal has."""

from __future__ import annotations

from rich.text import Text

from ..core.models import Entry, OperationResult
from ..core.render import entry_name, for_terminal, restored_lines
from ..core.terminal import escape

_HEADERS = ("diff ", "--- ", "+++ ", "index ", "new file", "deleted file", "rename ", "similarity", "old mode", "new mode")
VERDICT_STYLE = {"safe": "bold green", "partial": "bold yellow", "broken": "bold red", "refused": "bold yellow"}


def entry_text(entry: Entry) -> Text:
    """A turn's (or an operation's) prompt, who did it, when, its checks and notes."""
    shown = for_terminal(entry)
    out = Text()
    out.append(f"{entry_name(entry)}  {entry.state}", style="bold")
    out.append(f"  {entry.created_at.astimezone():%Y-%m-%d %H:%M:%S}\n", style="dim")
    if shown.label:
        out.append(shown.label + "\n")
    who = " · ".join(x for x in (shown.agent, shown.session and f"session {shown.session}", f"source {entry.source}") if x)
    out.append(who + "\n", style="dim")
    for command in shown.commands:
        out.append(f"ran    {command}\n", style="dim")
    for check in shown.checks:
        out.append(f"check  {check.name}: {check.status}\n", style="green" if check.status == "passed" else "red")
    for notice in shown.notices:
        out.append(f"note   {notice}\n", style="yellow")
    if shown.reverted_by:
        out.append(f"reverted by {shown.reverted_by}\n", style="yellow")
    return out


def diff_text(patch: str) -> Text:
    """A unified diff, each line coloured by what it is."""
    out = Text()
    for line in escape(patch).splitlines(keepends=True):
        if line.startswith(_HEADERS):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("#"):
            style = "yellow"
        else:
            style = ""
        out.append(line, style=style)
    if not patch:
        out.append("(no change to show)", style="dim")
    return out


def result_text(result: OperationResult, label: str | None = None, asking: bool = False) -> Text:
    """An operation's answer, a plan (``dry_run``) or what was done: its target's prompt
    (``label``), the verdict and what it says, each file, what is skipped or in conflict, and
    the next safe action — but for a plan that asks (``asking``), whose next action is the
    window's yes, not the CLI's "run it without --dry-run"."""
    shown = for_terminal(result)
    out = Text()
    if label:
        out.append(for_terminal(label) + "\n\n", style="italic")
    out.append(result.verdict.upper(), style=VERDICT_STYLE.get(result.verdict, "bold"))
    out.append(f": {shown.message}\n")
    for notice in shown.notices:
        out.append(f"  note    {notice}\n", style="yellow")
    for line in restored_lines(shown):
        out.append(line + "\n")
    for skip in shown.skipped:
        out.append(f"  skipped {skip.path}: {skip.reason}\n", style="yellow")
    for conflict in shown.conflicts:
        note = " — markers written" if conflict.markers_written else ""
        out.append(f"  conflict {conflict.path}: {conflict.reason}{note}\n", style="red")
        if conflict.advice and not conflict.markers_possible:
            out.append(f"           {conflict.advice}\n", style="red")
    if not asking:
        out.append(f"\nnext: {shown.next_action}\n", style="dim")
    return out
