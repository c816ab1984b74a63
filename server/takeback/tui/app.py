"""The ``takeback ui`` application: the tree of the timeline (``outline``) on the left, the
selected item's diff on the right (below it under ``NARROW`` columns), the keys that take
turns back (``plans``, through ``screens.PlanScreen``), and the refresh.

The refresh asks the engine every ``POLL`` seconds for ``Engine.timeline_version`` (the log's
head and the open turns' files, read under the store's lock without folding anything: what the
language server asks every second) and reads the timeline again only when it changed, keeping
the cursor and the open nodes by their keys. Every engine call runs in a worker thread, one at
a time, so a hook holding the store's lock never freezes the screen. A worker whose engine call
comes back after the app closed (its panes torn down) lets its answer go (``_shown``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.events import Resize
from textual.widgets import Footer, Static, Tree
from textual.widgets.tree import TreeNode

from ..core.models import Entry
from ..core.terminal import quote_path
from ..core.wording import counted
from ..errors import TakebackError
from . import outline, panes, plans
from .outline import Item
from .screens import PlanScreen

if TYPE_CHECKING:
    from ..engine.engine import Engine

POLL = 0.7  # seconds between two looks at the timeline's version
NARROW = 80  # columns under which the diff goes below the tree
_T = TypeVar("_T")


class TimelineApp(App[None]):
    """The timeline of one workspace's engine."""

    TITLE = "takeback"
    CSS = """
    #where { height: 1; padding: 0 1; background: $boost; }
    #body { height: 1fr; }
    #timeline { width: 45%; min-width: 30; border-right: vkey $foreground 30%; }
    #detail { width: 1fr; padding: 0 1; }
    #body.narrow { layout: vertical; }
    #body.narrow #timeline { width: 100%; height: 45%; min-width: 0; border-right: none; border-bottom: hkey $foreground 30%; }
    #body.narrow #detail { width: 100%; height: 1fr; }
    """
    # No key for hunks yet: they come with the surgical-undo work, as one more ``plans.Request``
    # field planned and confirmed like the four below.
    BINDINGS = [
        Binding("u", "operate('undo')", "undo"),
        Binding("r", "operate('redo')", "redo"),
        Binding("v", "operate('revert')", "revert turn"),
        Binding("s", "operate('restore')", "restore to here"),
        Binding("q", "quit", "quit"),
    ]

    def __init__(self, engine: Engine, poll: float = POLL) -> None:
        super().__init__()
        self.engine = engine
        self.poll = poll
        self.version: str | None = None
        self.entries: list[Entry] = []
        self._lock = asyncio.Lock()
        self._full: dict[str, Entry] = {}  # entries with their files, read when first needed
        self._filling: set[str] = set()
        self._operating = False  # one operation at a time, from its plan to its verdict

    def compose(self) -> ComposeResult:
        yield Static(Text(f"takeback · {quote_path(str(self.engine.workspace.root))}"), id="where")
        with Horizontal(id="body"):
            tree: Tree[Item] = Tree(Text("timeline"), id="timeline")
            tree.show_root = False
            yield tree
            with VerticalScroll(id="detail"):
                yield Static(Text("Loading the timeline…"), id="diff")
        yield Footer()

    async def on_mount(self) -> None:
        self._lay_out(self.size.width)
        await self.reload()
        self.query_one(Tree).focus()
        self.set_interval(self.poll, self.look)

    def on_resize(self, event: Resize) -> None:
        self._lay_out(event.size.width)

    def _lay_out(self, width: int) -> None:
        self.query_one("#body").set_class(width < NARROW, "narrow")

    async def call(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """``fn`` (an engine call) in a worker thread, after any other one of this app."""
        async with self._lock:
            return await asyncio.to_thread(fn, *args, **kwargs)

    # ------------------------------------------------------------------ refresh

    @contextlib.contextmanager
    def _shown(self) -> Iterator[None]:
        """Around what shows an engine call's answer: if the app closed while the call ran in its
        thread (the panes torn down before the worker resumed), the answer is let go. Any other
        missing widget is a fault, and raises."""
        try:
            yield
        except NoMatches:
            if self.query("#body"):
                raise

    async def look(self) -> None:
        """Read the timeline again if its version moved (a hook recorded, another process
        took a turn back)."""
        try:
            version = await self.call(self.engine.timeline_version)
        except TakebackError as exc:
            with self._shown():
                self._where(f"cannot read the timeline: {exc.message}")
            return
        if version != self.version:
            await self.reload()

    async def reload(self) -> None:
        with self._shown():
            try:
                version = await self.call(self.engine.timeline_version)
                entries = await self.call(self.engine.entries, files=False)
            except TakebackError as exc:
                self._where(f"cannot read the timeline: {exc.message}")
                return
            self.version, self.entries = version, entries
            self._full.clear()
            await self._rebuild(entries)

    def _where(self, note: str) -> None:
        line = Text(f"takeback · {quote_path(str(self.engine.workspace.root))}")
        if note:
            line.append(f"  ({note})", style="dim")
        self.query_one("#where", Static).update(line)

    async def _rebuild(self, entries: list[Entry]) -> None:
        tree: Tree[Item] = self.query_one(Tree)
        first = not tree.root.children
        cursor = tree.cursor_node.data.key if tree.cursor_node and tree.cursor_node.data else None
        expanded = {n.data.key for n in _walk(tree.root) if n.is_expanded and n.data}
        tree.clear()
        groups, left_out = outline.groups(entries)
        self._where(f"{counted(left_out, 'turn')} that changed no file left out" if left_out else "")
        for index, group in enumerate(groups):
            node = tree.root.add(group.title, data=Item("group", group.key), expand=group.key in expanded or (first and index == 0))
            for entry in group.entries:
                node.add(outline.entry_label(entry), data=Item("turn", entry.id, entry), allow_expand=entry.file_count > 0)
        for kind in ("turn", "step"):  # open again what was open (a turn's steps first read now)
            for node in _walk(tree.root):
                if node.data and node.data.kind == kind and node.data.key in expanded:
                    await self._fill(node)
                    node.expand()
        if not groups:
            self.query_one("#diff", Static).update(Text("No turn has changed a file yet. Turns appear here as agents record them."))
        target = next((n for n in _walk(tree.root) if n.data and n.data.key == cursor), None)
        if target is not None:
            tree.move_cursor(target)
        elif first and groups:
            tree.move_cursor(tree.root.children[0])

    async def _entry(self, entry_id: str) -> Entry:
        """An entry with its files (the tree holds headers)."""
        if entry_id not in self._full:
            self._full[entry_id] = await self.call(self.engine.entry, entry_id)
        return self._full[entry_id]

    async def _fill(self, node: TreeNode[Item]) -> None:
        """Add a turn's steps (or files), or a step's files, under it once."""
        item = node.data
        if item is None or item.entry is None or node.children or item.key in self._filling:
            return
        self._filling.add(item.key)
        try:
            entry = await self._entry(item.entry.id)
            rows = outline.children(entry) if item.kind == "turn" else outline.step_files(entry, item.step or 1)
            for child, label in rows:
                if child.kind == "step":
                    node.add(label, data=child, allow_expand=True)
                else:
                    node.add_leaf(label, data=child)
        except TakebackError as exc:
            node.add_leaf(Text(exc.message, style="red"))
        finally:
            self._filling.discard(item.key)

    async def on_tree_node_expanded(self, event: Tree.NodeExpanded[Item]) -> None:
        await self._fill(event.node)

    # ------------------------------------------------------------------ the diff beside

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Item]) -> None:
        item = event.node.data
        if item is not None:
            self._show(item)

    @work(group="detail", exclusive=True)
    async def _show(self, item: Item) -> None:
        try:
            text = await self._detail(item)
        except TakebackError as exc:
            text = Text(exc.message, style="red")
        with self._shown():
            self.query_one("#diff", Static).update(text)
            self.query_one("#detail", VerticalScroll).scroll_home(animate=False)

    async def _detail(self, item: Item) -> Text:
        if item.entry is None:
            return Text("Select a turn, a step or a file to see its diff.  u undo · r redo · v revert · s restore", style="dim")
        entry = await self._entry(item.entry.id)
        out = panes.entry_text(entry)
        if item.kind == "turn":
            out.append("\n")
            out.append_text(panes.diff_text(await self.call(self.engine.diff, entry.id)))
            return out
        paths = [item.path] if item.path else entry.checkpoints[(item.step or 1) - 1].paths
        if item.step is not None:
            out.append(f"\nstep {item.spec}: the turn's change to {'this file' if item.path else 'the files it touched'}"
                       " (over all its steps)\n", style="dim")
        for path in paths:
            out.append("\n")
            out.append_text(panes.diff_text(await self.call(self.engine.diff, entry.id, path)))
        return out

    # ------------------------------------------------------------------ operations

    def action_operate(self, operation: plans.Operation) -> None:
        if self._operating:
            self.notify("Another operation is under way: answer or close its window first.", markup=False)
            return
        node = self.query_one(Tree).cursor_node
        item = node.data if node is not None else None
        spec = None
        if operation in ("revert", "restore"):
            if item is None or item.entry is None:
                self.notify(f"Select a turn{' or a step' if operation == 'restore' else ''} first.", markup=False)
                return
            spec = f"#{item.entry.number}" if operation == "revert" else item.spec
        self._operating = True
        self._operate(plans.Request(operation, spec))

    @work(group="operate")
    async def _operate(self, request: plans.Request) -> None:
        """Plan, ask, carry out (if the plan still holds), tell."""
        try:
            await self._operate_once(request)
        finally:
            self._operating = False

    async def _operate_once(self, request: plans.Request) -> None:
        try:
            result = await self.call(plans.plan, self.engine, request)
            title = request.asked(result)
            while True:
                label = self._label(result.target_number)
                ask = plans.may_carry_out(result)
                yes = await self.push_screen_wait(PlanScreen(title, panes.result_text(result, label, asking=ask), ask))
                if not yes:
                    self.notify(f"{request.title}: left as it was, nothing was written.", markup=False)
                    return
                result, done = await self.call(plans.carry_out, self.engine, request, result)
                if done:
                    break
                title = f"{request.asked(result)} The timeline moved since that plan; this is the plan now"
        except TakebackError as exc:
            self.notify(exc.message, title=request.title, severity="warning", markup=False, timeout=8)
            return
        finally:
            await self.look()
        await self.push_screen_wait(PlanScreen(f"{request.title}: done", panes.result_text(result), ask=False))

    def _label(self, number: int | None) -> str | None:
        """The prompt of the entry numbered ``number`` (what a plan takes back)."""
        return next((e.label for e in self.entries if e.number == number), None)


def _walk(node: TreeNode[Item]) -> list[TreeNode[Item]]:
    """``node``'s descendants, depth first, in the order shown."""
    out: list[TreeNode[Item]] = []
    for child in node.children:
        out.append(child)
        out.extend(_walk(child))
    return out


def run(engine: Engine, mouse: bool = True) -> int:
    """Run the timeline full-screen until the person quits."""
    TimelineApp(engine).run(mouse=mouse)
    return 0
