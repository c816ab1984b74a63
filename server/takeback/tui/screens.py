"""The window over the timeline that shows an operation's plan and asks (y or enter: do it;
n or escape: leave it), or shows its verdict after (enter or escape closes it). Its text is
``panes.result_text``: plain ``Text``, nothing in it read as markup. Keys only, no mouse."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class PlanScreen(ModalScreen[bool]):
    """``ask``: a plan waiting for a yes (dismissed with True) or a no (False); else an answer
    to read (dismissed with False)."""

    DEFAULT_CSS = """
    PlanScreen { align: center middle; }
    PlanScreen > Vertical { width: 90%; max-width: 110; height: auto; max-height: 90%;
                            border: round $accent; background: $surface; padding: 0 1; }
    PlanScreen #plan-title { text-style: bold; }
    PlanScreen VerticalScroll { height: auto; max-height: 1fr; }
    PlanScreen #plan-keys { color: $text-muted; }
    """

    BINDINGS = [
        Binding("y", "answer(True)", "yes", show=False),
        Binding("enter", "answer(True)", "yes", show=False),
        Binding("n", "answer(False)", "no", show=False),
        Binding("escape", "answer(False)", "no", show=False),
        Binding("q", "answer(False)", "close", show=False),
    ]

    def __init__(self, title: str, body: Text, ask: bool) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.ask = ask

    def compose(self) -> ComposeResult:
        keys = "y / enter: do it    n / escape: leave it, nothing is written" if self.ask else "enter / escape: close"
        with Vertical():
            yield Static(Text(self.title_text), id="plan-title")
            with VerticalScroll():
                yield Static(self.body, id="plan-body")
            yield Static(Text(keys), id="plan-keys")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes and self.ask)
