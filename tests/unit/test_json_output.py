"""``--json`` printing: what a terminal or a JSON reader could take for a line break or a
direction change is escaped inside strings, and a plain ASCII answer (a 5,000-file undo's
4 MB) is printed as encoded, without searching it for such characters."""

from __future__ import annotations

import json
import re

import pytest

from takeback.cli import output


class _Counted:
    """Stands for ``output._JSON_UNSAFE``, counting the searches made with it."""

    def __init__(self) -> None:
        self.searched = 0

    def sub(self, repl, text: str) -> str:  # type: ignore[no-untyped-def]
        self.searched += 1
        return re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]").sub(repl, text)


def test_an_ascii_answer_is_printed_without_being_searched(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    counted = _Counted()
    monkeypatch.setattr(output, "_JSON_UNSAFE", counted)
    value = {"paths": [f"src/f{i}.py" for i in range(1000)], "applied": True}
    output.print_json(value)
    assert counted.searched == 0
    assert json.loads(capsys.readouterr().out) == value


@pytest.mark.parametrize("odd", ["\u2028", "\x7f", "\u202e", "caf\u00e9\x85"])
def test_what_could_break_a_line_or_turn_the_text_is_escaped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], odd: str
) -> None:
    counted = _Counted()
    monkeypatch.setattr(output, "_JSON_UNSAFE", counted)
    value = {"path": f"a{odd}b.py"}
    output.print_json(value)
    out = capsys.readouterr().out
    assert counted.searched == 1
    assert json.loads(out) == value
    assert not any(c in out for c in "\x7f\x85\u2028\u202e")


@pytest.mark.parametrize("odd", [None, "\x1b[31m", "\u202e", "caf\u00e9"])
def test_through_the_terminal_guard_an_ascii_answer_is_not_searched_again(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], odd: str | None
) -> None:
    """The guard on stdout (``TerminalStream``, the CLI's and the resident's) would search the 4 MB
    again: an ASCII answer, which holds nothing a terminal acts on (JSON escapes control
    characters), goes past it; one that is not ASCII goes through it, escaped as before."""
    searched: list[int] = []
    real = output.escape
    monkeypatch.setattr(output, "escape", lambda text: searched.append(len(text)) or real(text))
    value = {"paths": [f"src/f{i}.py" for i in range(1000)], "label": odd}
    guard = output.guard_terminal()
    try:
        output.print_json(value)
    finally:
        import sys

        sys.stdout, sys.stderr = guard
    out = capsys.readouterr().out
    assert json.loads(out) == value and "\x1b" not in out and "\u202e" not in out
    assert (searched == []) == (odd is None or odd.isascii()), searched
