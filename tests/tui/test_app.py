"""``takeback ui`` driven headless (Textual's ``App.run_test`` and its ``Pilot``) over a real
repository and store: the tree, the diff beside it, each key's plan before any write, the
verdict after, a refusal that writes nothing, the refresh when another process records, the
narrow layout, a prompt's markup shown as typed, and an engine call that comes back after the
app closed."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from rich.text import Text
from textual.widgets import Static, Tree
from textual.worker import WorkerState

from helpers import git_state, tree_state
from takeback.engine.engine import Engine
from takeback.tui.app import TimelineApp
from takeback.tui.screens import PlanScreen

from .conftest import PROMPT

DOCS = Path(__file__).resolve().parents[2] / "docs" / "images"


def labels(app: TimelineApp) -> list[str]:
    """Every node's label as shown, depth first."""
    out: list[str] = []

    def walk(node) -> None:
        for child in node.children:
            out.append(str(child.label))
            walk(child)

    walk(app.query_one(Tree).root)
    return out


def node(app: TimelineApp, starts: str):
    """The first node whose label starts with ``starts`` (past its leading column)."""
    stack = list(app.query_one(Tree).root.children)
    while stack:
        found = stack.pop(0)
        if str(found.label).strip().startswith(starts):
            return found
        stack[:0] = list(found.children)
    raise AssertionError(f"no node {starts!r} in {labels(app)}")


def shown(app: TimelineApp, widget: str = "#diff") -> str:
    content = app.screen.query_one(widget, Static).content
    assert isinstance(content, Text), "someone else's text is shown as Text, never as markup"
    return content.plain


async def settle(pilot, app: TimelineApp) -> None:
    """Wait for what the screen is loading (an operation's worker waits for the person: not it)."""
    await pilot.pause()
    await app.workers.wait_for_complete([w for w in app.workers if w.group != "operate"])
    await pilot.pause()


async def until(pilot, check, seconds: float = 10) -> None:
    """Let the app run until ``check()`` holds (an engine call in a worker thread takes a while)."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the screen did not get there"
        await pilot.pause(0.05)


def asking(app: TimelineApp) -> bool:
    return isinstance(app.screen, PlanScreen) and app.screen.ask


def telling(app: TimelineApp) -> bool:
    return isinstance(app.screen, PlanScreen) and not app.screen.ask


async def open_turn(pilot, app: TimelineApp, number: int) -> None:
    """Put the cursor on turn #number and open it (its steps, and their files, are read now)."""
    tree = app.query_one(Tree)
    target = node(app, f"#{number} ")
    tree.move_cursor(target)
    target.expand()
    await settle(pilot, app)


async def test_the_tree_shows_sessions_turns_steps_and_files_and_a_file_shows_its_diff(engine: Engine) -> None:
    app = TimelineApp(engine)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        names = labels(app)
        assert any(PROMPT in n and "(2 turns)" in n for n in names), names  # the session, by its first prompt
        assert any(n.startswith("#2 add a title  1 file +2 -0") for n in names), names
        await open_turn(pilot, app, 1)
        step = node(app, "#1.2")
        assert "Edit src/util.py" in str(step.label)
        step.expand()
        await settle(pilot, app)
        util = node(app, "modified src/util.py")
        app.query_one(Tree).move_cursor(util)
        await settle(pilot, app)
        diff = shown(app)
        assert "-    return x * 2" in diff and "+    return x * 3" in diff, diff
        assert "src/app.py" not in diff.split("step #1.2")[-1]  # only that file's change
        svg = app.export_screenshot(title="takeback ui")
        assert "src/util.py" in svg


async def test_undo_shows_the_plan_writes_nothing_until_yes_then_shows_the_verdict(engine: Engine, repo: Path) -> None:
    app = TimelineApp(engine)
    before, git_before = tree_state(repo), git_state(repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        await pilot.press("u")
        await until(pilot, lambda: asking(app))
        plan = shown(app, "#plan-body")
        assert app.screen.title_text == "Undo #2?"
        assert "SAFE" in plan and "README.md" in plan and "add a title" in plan and "next:" not in plan, plan
        assert tree_state(repo) == before  # the plan wrote nothing
        await pilot.press("y")
        await until(pilot, lambda: telling(app))
        assert (repo / "README.md").read_text() == "# demo\n"  # turn #2 taken back, on disk
        assert shown(app, "#plan-body").startswith("SAFE")
        await pilot.press("enter")
        await settle(pilot, app)
        assert not isinstance(app.screen, PlanScreen)
        assert any(n.startswith("#2 reverted") for n in labels(app)), labels(app)
    assert git_state(repo) == git_before


async def test_saying_no_writes_nothing_and_records_nothing(engine: Engine, repo: Path) -> None:
    app = TimelineApp(engine)
    before = tree_state(repo)
    version = engine.timeline_version()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        await open_turn(pilot, app, 1)
        await pilot.press("v")  # revert the selected turn, #1
        await until(pilot, lambda: asking(app))
        plan = shown(app, "#plan-body")
        assert "src/app.py" in plan and "src/util.py" in plan and "README.md" not in plan, plan
        await pilot.press("n")
        await settle(pilot, app)
        assert not isinstance(app.screen, PlanScreen)
    assert tree_state(repo) == before
    assert engine.timeline_version() == version


async def test_restore_goes_back_to_the_selected_step(engine: Engine, repo: Path) -> None:
    app = TimelineApp(engine)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        await open_turn(pilot, app, 1)
        app.query_one(Tree).move_cursor(node(app, "#1.1"))
        await settle(pilot, app)
        await pilot.press("s")
        await until(pilot, lambda: asking(app))
        assert app.screen.title_text == "Restore #1.1?"
        await pilot.press("enter")
        await until(pilot, lambda: telling(app))
    assert (repo / "src/app.py").read_text() == "def main():\n    return 2\n"  # step 1's change stays
    assert (repo / "src/util.py").read_text() == "def helper(x):\n    return x * 2\n"  # step 2's is gone
    assert (repo / "README.md").read_text() == "# demo\n"  # and turn #2's


async def test_a_turn_recorded_by_another_process_appears(engine: Engine, repo: Path) -> None:
    app = TimelineApp(engine, poll=0.2)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        takeback = [sys.executable, "-m", "takeback"]
        subprocess.run([*takeback, "begin", "--label", "from another process"], cwd=repo, check=True, env=os.environ.copy(),
                       capture_output=True)
        (repo / "NEW.md").write_text("new\n")
        subprocess.run([*takeback, "end"], cwd=repo, check=True, env=os.environ.copy(), capture_output=True)
        deadline = time.monotonic() + 10
        while not any("from another process" in n for n in labels(app)):
            assert time.monotonic() < deadline, labels(app)
            await pilot.pause(0.2)


async def test_a_narrow_terminal_puts_the_diff_below_the_tree(engine: Engine) -> None:
    app = TimelineApp(engine)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot, app)
        tree, detail = app.query_one("#timeline"), app.query_one("#detail")
        assert app.query_one("#body").has_class("narrow")
        assert detail.region.y >= tree.region.bottom and detail.region.width > 50
        await open_turn(pilot, app, 1)
        await pilot.press("down", "down")
        await settle(pilot, app)
        assert "@@" in shown(app)


async def test_markup_in_a_prompt_is_shown_as_typed(engine: Engine) -> None:
    app = TimelineApp(engine)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        await open_turn(pilot, app, 1)
        assert PROMPT in shown(app)  # the diff pane's heading
        assert PROMPT in str(node(app, "#1 ").label)  # the turn's row
        assert str(app.query_one(Tree).root.children[0].label).endswith(f"{PROMPT}  (2 turns)")  # the session's
        tree = app.query_one(Tree)
        rows = ["".join(s.text for s in tree.render_line(y)) for y in range(tree.size.height)]
        assert any(PROMPT in row for row in rows), rows  # on screen, as typed (the session row: the turn row is cut at the tree's width)


class Held:
    """An engine method that, once armed, waits in its worker thread until released: the app's
    panes can then be torn down while the call runs, as closing the app does at any moment."""

    def __init__(self, engine: Engine, name: str) -> None:
        self.real = getattr(engine, name)
        self.armed = False
        self.entered, self.released = threading.Event(), threading.Event()
        setattr(engine, name, self)

    def __call__(self, *args, **kwargs):
        if self.armed:
            self.entered.set()
            assert self.released.wait(10), "the test never released the call"
        return self.real(*args, **kwargs)


async def tear_down_while_held(pilot, app: TimelineApp, held: Held) -> list:
    """Wait until ``held`` runs, remove the panes, let the call answer, and wait for the app to
    have taken the answer (the worker done, or the poll's next look); the workers that were
    running meanwhile."""
    await until(pilot, held.entered.is_set)
    running = list(app.workers)
    await app.query_one("#body").remove()
    app.query_one("#where").remove()
    held.released.set()
    await pilot.pause(0.3)
    await app.workers.wait_for_complete()
    return running


async def test_a_diff_that_comes_back_after_the_panes_are_gone_is_let_go(engine: Engine) -> None:
    held = Held(engine, "diff")
    app = TimelineApp(engine)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        held.armed = True
        app.query_one(Tree).move_cursor(node(app, "#2 "))  # the diff of turn #2, read in a worker
        shows = [w for w in await tear_down_while_held(pilot, app, held) if w.group == "detail"]
        assert shows and all(w.state == WorkerState.SUCCESS for w in shows), [(w.state, w.error) for w in shows]
        assert app.is_running


async def test_a_timeline_read_that_comes_back_after_the_panes_are_gone_is_let_go(engine: Engine, repo: Path) -> None:
    held = Held(engine, "entries")
    app = TimelineApp(engine, poll=0.1)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        held.armed = True
        record = Engine(repo)
        try:
            record.begin_turn(label="meanwhile", session="s2", agent="claude", source="hook", bracket=False)
        finally:
            record.close()  # the version moved: the next look reads the entries, and is held there
        await tear_down_while_held(pilot, app, held)
        assert app.is_running


async def test_the_screenshots_in_the_docs(engine: Engine, tmp_path: Path) -> None:
    """The timeline with a step's file and its diff, and undo's plan, as SVG: written to the
    test's folder, and to docs/images/ when TAKEBACK_DOCS_SCREENSHOTS=1 (how the docs' ones were
    made); docs/cli.md shows both."""
    into = DOCS if os.environ.get("TAKEBACK_DOCS_SCREENSHOTS") == "1" else tmp_path
    app = TimelineApp(engine)
    async with app.run_test(size=(110, 26)) as pilot:
        await settle(pilot, app)
        await open_turn(pilot, app, 1)
        node(app, "#1.1").expand()
        await settle(pilot, app)
        app.query_one(Tree).move_cursor(node(app, "modified src/app.py"))
        await settle(pilot, app)
        app.save_screenshot("tui-timeline.svg", path=str(into))
        await pilot.press("u")
        await until(pilot, lambda: asking(app))
        app.save_screenshot("tui-plan.svg", path=str(into))
        await pilot.press("escape")
    for name in ("tui-timeline.svg", "tui-plan.svg"):
        svg = (into / name).read_text()
        assert "takeback" in svg and svg.startswith("<svg")
        assert (DOCS / name).exists() and f"images/{name}" in (DOCS.parent / "cli.md").read_text()
