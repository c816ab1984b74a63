"""The pager (``pager.py``; issue 19, §2): a long answer at a terminal goes through ``less`` as
git's does, a short one prints as it is, and nothing else is ever paged.

The terminal is a real pseudo-terminal with a terminal emulator reading it (``agents/terminal``),
the pager is the real ``less``; a command twice, so that the second may be the resident
process's answer (the first, typed at a terminal, starts one)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from agents.terminal import Terminal
from helpers import write_files

from .conftest import Takeback

LONG = "".join(f"line {i}\n" for i in range(200))


def _turn(tb: Takeback, files: dict[str, str], label: str) -> None:
    tb.ok("begin", "--label", label)
    write_files(tb.cwd, files)
    tb.ok("end")


def _at_terminal(tb: Takeback, *args: str, env: dict[str, str] | None = None) -> Terminal:
    return Terminal([sys.executable, "-m", "takeback", *args], {**tb.env, "TERM": "xterm", **(env or {})},
                    str(tb.cwd), rows=24, cols=100)


def _ended(term: Terminal, timeout: float = 30) -> int:
    """Wait for the program to end, taking in what it writes; its exit status."""
    deadline = time.monotonic() + timeout
    while not term._exited():
        if time.monotonic() > deadline:
            raise AssertionError(f"takeback did not end; the screen shows:\n{term.screen()}")
        if not term._read(0.2):
            time.sleep(0.05)  # the terminal closed: the process is being reaped
    assert term.status is not None
    return term.status


def _pager_env(tb: Takeback) -> dict[str, str]:
    env = {k: v for k, v in tb.env.items() if k not in ("PAGER", "TAKEBACK_PAGER", "LESS")}
    return {**env, "TERM": "xterm"}


@pytest.fixture
def paged(tb: Takeback) -> Takeback:
    _turn(tb, {"long.txt": LONG}, "a long file")
    tb.env = _pager_env(tb)
    return tb


def test_a_long_answer_waits_in_less_and_a_short_one_prints_at_once(paged: Takeback) -> None:
    for _ in range(2):  # in-process, then (most likely) the resident process's answer
        term = _at_terminal(paged, "diff", "1")
        term.wait_for(r"\+line 0\b", 30)
        term.wait_for(r"(?m)^:\s*$", 30)  # less's prompt: the answer is longer than the screen
        assert "+line 199" not in term.screen()
        term.type("G")  # to the end, as a person reads on
        term.wait_for(r"\+line 199", 15)
        term.type("q")
        assert _ended(term) == 0

        short = _at_terminal(paged, "log")  # one line: less -F shows it and leaves at once
        assert _ended(short) == 0 and "#1" in short.screen() and "a long file" in short.screen()


def test_the_pager_is_the_persons_and_never_runs_for_scripts(paged: Takeback, tmp_path: Path) -> None:
    seen = tmp_path / "paged.txt"
    pager = f"cat > {seen}"
    env = {"TAKEBACK_PAGER": pager}
    for args in (("--json", "diff", "1"), ("diff", "1", "--no-pager"), ("--no-pager", "log"), ("status",), ("cat", "1", "long.txt")):
        term = _at_terminal(paged, *args, env=env)
        assert _ended(term) == 0 and not seen.exists(), args

    dumb = _at_terminal(paged, "diff", "1", env={**env, "TERM": "dumb"})
    assert _ended(dumb) == 0 and not seen.exists()

    piped = paged("diff", "1", env={**paged.env, **env})  # stdout is a pipe: never paged
    assert piped.code == 0 and b"+line 199" in piped.out and not seen.exists()

    term = _at_terminal(paged, "diff", "1", env=env)  # the person's own pager takes the answer
    assert _ended(term) == 0 and "+line 199" in seen.read_text()


def test_what_reaches_the_pager_is_escaped_as_for_a_terminal(paged: Takeback, tmp_path: Path) -> None:
    _turn(paged, {"trap.txt": "title \x1b]0;owned\x07 here\n"}, "a file with an escape")
    seen = tmp_path / "paged.txt"
    for args in (("diff", "2"), ("show", "2", "--patch")):
        term = _at_terminal(paged, *args, env={"TAKEBACK_PAGER": f"cat > {seen}"})
        assert _ended(term) == 0
        text = seen.read_bytes()
        assert b"\x1b" not in text and b"\x07" not in text, text
        assert b"owned" in text
        os.unlink(seen)
