"""``takeback demo``: a scripted agent session in a throw-away git repository.

It shows the whole loop a person lives through: an agent works in turns (one recorded by a
begin/end bracket around shell-style writes, one as an edit batch), the person edits in
between, then undo, redo, a revert of a middle turn that keeps later work, and a conflict
reported instead of overwriting the person; and the guard asking once, before the agent runs
what Takeback could not take back (a ``git reset --hard``), through the very hook path Claude
Code's ``PreToolUse`` takes, while an ordinary test run goes through unasked. Everything runs against a real git repository
in a temp folder, with its own store beside it; the user's git state is compared at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .config import load_config
from .core import render
from .core.models import BatchChange, OperationResult
from .engine.engine import Engine

APP = '''"""A tiny shop."""


def total(prices):
    return sum(prices)


def tax(amount):
    return amount * 0.2


def main():
    print(total([3, 4, 5]))
'''

UTILS = '''def clamp(value, low, high):
    return max(low, min(high, value))
'''


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Demo Person",
        "GIT_AUTHOR_EMAIL": "person@example.com",
        "GIT_COMMITTER_NAME": "Demo Person",
        "GIT_COMMITTER_EMAIL": "person@example.com",
    }
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def _git_state(repo: Path) -> dict[str, str]:
    return {
        "refs": _git(repo, "for-each-ref"),
        "stash": _git(repo, "stash", "list"),
        "index": (repo / ".git" / "index").read_bytes().hex(),
        "config": (repo / ".git" / "config").read_text(),
    }


class _Show:
    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.events: list[dict] = []
        self.step = 0

    def title(self, text: str) -> None:
        self.step += 1
        if not self.as_json:
            print(f"\n\033[1m{self.step}. {text}\033[0m" if os.isatty(1) else f"\n{self.step}. {text}")

    def say(self, text: str) -> None:
        if not self.as_json:
            print(f"   {text}")

    def result(self, result: OperationResult) -> None:
        self.events.append({"step": self.step, "result": result.model_dump(mode="json")})
        if not self.as_json:
            render.print_result(result)

    def log(self, engine: Engine) -> None:
        entries = engine.entries()
        self.events.append({"step": self.step, "timeline": [e.model_dump(mode="json") for e in entries]})
        if not self.as_json:
            render.print_log(entries)

    def file(self, repo: Path, rel: str) -> None:
        path = repo / rel
        if self.as_json:
            return
        print(f"   --- {rel}")
        for line in path.read_text().splitlines():
            print(f"   | {line}")


def run_demo(keep: bool = False, as_json: bool = False) -> int:
    base = Path(tempfile.mkdtemp(prefix="takeback-demo-"))
    repo = base / "shop"
    show = _Show(as_json)
    try:
        _make_repository(repo)
        git_before = _git_state(repo)
        engine = Engine(repo, load_config(repo, {"store_dir": str(base / "store")}))
        show.title(f"A throw-away repository at {repo}; Takeback's store at {base / 'store'} (outside it)")
        _agent_turns(engine, repo, show)
        _guard_asks(engine, repo, show)
        _take_back(engine, repo, show)
        same = _git_state(repo) == git_before
        show.title("The user's git state (refs, stash, index, config) is byte-identical: " + ("yes" if same else "NO"))
        if as_json:
            print(json.dumps({"repository": str(repo), "git_state_unchanged": same, "events": show.events}, indent=2))
        if keep:
            show.say(f"kept {base}; try: takeback -C {repo} log")
        return 0 if same else 1
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)


def _make_repository(repo: Path) -> None:
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text(APP)
    (repo / "utils.py").write_text(UTILS)
    (repo / "README.md").write_text("# Shop\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial")


def _agent_turns(engine: Engine, repo: Path, show: _Show) -> None:
    """Three agent turns (two brackets, one edit batch) and the person's own edits between."""
    show.title("Agent turn: 'Add a discount helper' (a begin/end bracket; files written like a shell would)")
    engine.begin_turn(label="Add a discount helper", session="demo", agent="demo-agent")
    (repo / "utils.py").write_text(
        UTILS + "\n\ndef discount(price, percent):\n    return price * (100 - clamp(percent, 0, 100)) / 100\n"
    )
    (repo / "tests").mkdir()
    (repo / "tests" / "test_utils.py").write_text(
        "from utils import discount\n\n\ndef test_discount():\n    assert discount(200, 10) == 180\n"
    )
    engine.end_turn(commands=["cat > utils.py", "mkdir tests"])
    engine.record_check(None, "pytest", "passed", command="pytest -q", exit_code=0)
    show.say("recorded with its check: pytest passed")

    show.title("Agent turn: 'Rename total() to order_total()' (an edit batch handed to Takeback)")
    app = (repo / "app.py").read_text()
    renamed = app.replace("def total(", "def order_total(").replace("print(total(", "print(order_total(")
    engine.apply_batch(
        [BatchChange(path="app.py", after=renamed.encode())],
        label="Rename total() to order_total()", session="demo", agent="demo-agent",
    )

    show.title("The person edits app.py and README.md by hand (not through the agent)")
    app = (repo / "app.py").read_text().replace('"""A tiny shop."""', '"""A tiny shop. Edited by the person."""')
    (repo / "app.py").write_text(app)
    (repo / "README.md").write_text("# Shop\n\nRun `python app.py`.\n")

    show.title("Agent turn: 'Add logging' (bracket: an edit plus a generated file)")
    engine.begin_turn(label="Add logging", session="demo", agent="demo-agent")
    app = (repo / "app.py").read_text()
    app = app.replace("    return amount * 0.2\n", "    logging.info('tax on %s', amount)\n    return amount * 0.2\n")
    (repo / "app.py").write_text("import logging\n" + app)
    (repo / "logging.ini").write_text("[loggers]\nkeys=root\n")
    engine.end_turn()
    show.log(engine)


def _guard_asks(engine: Engine, repo: Path, show: _Show) -> None:
    """Two tool calls through Claude Code's PreToolUse hook (``hooks/handle.py``, as ``takeback
    hook claude`` runs it): the guard lets the test run through and asks about the reset."""
    from .hooks.handle import handle
    from .hooks.record import record_logged

    show.title("The agent wants to run 'pytest -q', then 'git reset --hard HEAD~1' (Claude Code's PreToolUse hook)")
    env = {"CLAUDECODE": "1", "HOME": os.environ.get("HOME", "/")}
    for number, command in enumerate(("pytest -q", "git reset --hard HEAD~1"), 1):
        payload = {"session_id": "demo", "hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": str(repo),
                   "tool_input": {"command": command}, "tool_use_id": f"call-{number}"}
        reply = handle("claude", "PreToolUse", str(repo), json.dumps(payload).encode(), env,
                       lambda _ws, event, name: record_logged(str(repo), event, name, engine))
        answer = json.loads(reply.stdout)["hookSpecificOutput"] if reply.stdout else None
        show.events.append({"step": show.step, "guard": {"command": command, "answer": answer}})
        if answer is None:
            show.say(f"{command}: let through without a question (what it changes is recorded)")
        else:
            show.say(f"{command}: Claude Code asks the person ({answer['permissionDecision']}):")
            show.say(f"  {render.quote_text(answer['permissionDecisionReason'])}")
    engine.discard_steps("demo")  # the person said no: neither call ran
    show.say("the person says no; had they said yes, the step would list what was lost ('takeback show')")


def _take_back(engine: Engine, repo: Path, show: _Show) -> None:
    """Undo, redo, a revert of the middle turn, a refused revert, a partial one."""
    show.title("Undo the last agent turn ('takeback undo')")
    show.result(engine.undo())
    show.file(repo, "app.py")
    show.say("the person's edit to the docstring is still there; logging.ini is gone")

    show.title("Redo it ('takeback redo')")
    show.result(engine.redo())

    show.title("Revert the MIDDLE turn (#2, the rename) while keeping #3 and the person's edits")
    show.result(engine.revert("2"))
    show.file(repo, "app.py")

    show.title("The person changes the discount line; reverting turn #1 now would overwrite it")
    utils = (repo / "utils.py").read_text().replace("(100 - clamp(percent, 0, 100))", "(100 - clamp(percent, 0, 90))")
    (repo / "utils.py").write_text(utils)
    show.result(engine.revert("1", dry_run=False))
    show.say("nothing was written; the answer lists the conflict and the ways out")

    show.title("Revert only the clean files of turn #1 ('--on-conflict skip')")
    show.result(engine.revert("1", on_conflict="skip"))

    show.title("The whole timeline: every operation is itself an entry, so it can be undone too")
    show.log(engine)
