"""What the timeline's tree holds: the entries grouped by agent session (each titled by its
first prompt and time), then the turns without a session, then the operations (undo, redo,
revert, restore) in their own group; under a turn its steps and under each step its files (or
its files directly when ``Entry.shows_steps`` says its steps are not worth showing).

Labels are ``rich.text.Text`` built from ``render.for_terminal`` copies: a prompt or a file
name is someone else's text, shown literally (never read as Textual markup) and quoted as the
CLI quotes it. Turns that changed no file are left out, as ``takeback log`` leaves them out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.text import Text

from ..core.models import Entry, FileChange
from ..core.render import for_terminal
from ..core.wording import counted

Kind = Literal["group", "turn", "step", "file"]

STATE_STYLE = {"applied": "green", "reverted": "yellow", "partial": "yellow", "open": "cyan", "not-applied": "red"}


@dataclass(frozen=True)
class Item:
    """What one node of the tree stands for. ``key`` stays the same across refreshes (the
    cursor and the expanded nodes are kept by it)."""

    kind: Kind
    key: str
    entry: Entry | None = None  # a turn, step or file: its entry (a header: no file list)
    step: int | None = None  # a step (and a step's file): its number in the turn, from 1
    path: str | None = None  # a file

    @property
    def spec(self) -> str | None:
        """How the CLI names it: ``#N`` for an entry, ``#N.k`` for a step (a checkpoint)."""
        if self.entry is None:
            return None
        return f"#{self.entry.number}" + (f".{self.step}" if self.step is not None else "")


@dataclass(frozen=True)
class Group:
    key: str
    title: Text
    entries: list[Entry]


def groups(entries: list[Entry]) -> tuple[list[Group], int]:
    """The groups the tree shows, newest activity first (``entries``: newest first, as
    ``Engine.entries`` gives them), and how many empty turns were left out."""
    sessions: dict[str, list[Entry]] = {}
    loose: list[Entry] = []
    operations: list[Entry] = []
    left_out = 0
    for entry in entries:
        if entry.empty_turn:
            left_out += 1
        elif entry.kind != "turn":
            operations.append(entry)
        elif entry.session:
            sessions.setdefault(entry.session, []).append(entry)
        else:
            loose.append(entry)
    out = [Group(f"session:{name}", session_title(turns), turns) for name, turns in sessions.items()]
    if loose:
        out.append(Group("loose", Text("turns without a session", style="bold"), loose))
    if operations:
        out.append(Group("operations", Text("operations (undo, redo, revert, restore)", style="bold"), operations))
    return out, left_out


def session_title(turns: list[Entry]) -> Text:
    """A session by its first prompt and when it began (``turns``: newest first)."""
    first = turns[-1]
    when = first.created_at.astimezone().strftime("%m-%d %H:%M")
    label = for_terminal(first.label) or "(no prompt)"
    title = Text.assemble((when, "bold"), "  ", _short(label, 60))
    title.append(f"  ({counted(len(turns), 'turn')})", style="dim")
    return title


def entry_label(entry: Entry) -> Text:
    """``#3 fix the parser  2 files +4 -1``: the prompt first (a narrow tree cuts the end),
    the state only when it is not ``applied``; an operation names its target."""
    shown = for_terminal(entry)
    label = Text(f"#{entry.number}", style="bold")
    if entry.state != "applied":
        label.append(f" {entry.state}", style=STATE_STYLE.get(entry.state, ""))
    if entry.kind != "turn":
        label.append(f" {entry.kind}" + (f" of #{entry.target_number}" if entry.target_number else ""))
    elif shown.label:
        label.append(" " + _short(shown.label, 70))
    label.append(f"  {counted(entry.file_count, 'file')} +{entry.additions} -{entry.deletions}", style="dim")
    if entry.checks_passed is not None:
        label.append("  checks passed" if entry.checks_passed else "  checks FAILED", style="green" if entry.checks_passed else "red")
    return label


def step_label(entry: Entry, index: int) -> Text:
    """``#3.2 Edit src/app.py (1 file)``: ``restore #3.2`` goes back to just after it."""
    checkpoint = for_terminal(entry.checkpoints[index - 1])
    label = Text.assemble((f"#{entry.number}.{index}", "bold"), " ", _short(checkpoint.label or "changes", 60))
    label.append(f" ({counted(len(checkpoint.paths), 'file')})", style="dim")
    if not checkpoint.applied:
        label.append(" (not applied)", style="red")
    return label


def file_label(change: FileChange) -> Text:
    shown = for_terminal(change)
    name = f"{shown.old_path} → {shown.path}" if shown.old_path else shown.path
    label = Text.assemble((f"{change.kind:<8}", "dim"), " ", name, (f"  +{change.additions} -{change.deletions}", "dim"))
    if change.withheld:
        label.append(f"  (withheld: {for_terminal(change.withheld)})", style="yellow")
    return label


def children(entry: Entry) -> list[tuple[Item, Text]]:
    """The nodes under a turn (``entry`` with its files): its steps, or its files."""
    if entry.shows_steps:
        return [(Item("step", f"{entry.id}.{k}", entry, step=k), step_label(entry, k)) for k in range(1, len(entry.checkpoints) + 1)]
    return [(Item("file", f"{entry.id}:{c.path}", entry, path=c.path), file_label(c)) for c in entry.files]


def step_files(entry: Entry, index: int) -> list[tuple[Item, Text]]:
    """The files a step touched, as the turn changed them (``entry`` with its files)."""
    paths = entry.checkpoints[index - 1].paths
    changes = {c.path: c for c in entry.files}
    out = []
    for path in paths:
        change = changes.get(path)
        label = file_label(change) if change is not None else Text(for_terminal({"path": path})["path"])
        out.append((Item("file", f"{entry.id}.{index}:{path}", entry, step=index, path=path), label))
    return out


def _short(text: str, width: int) -> str:
    """One line of at most ``width`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"
