"""The command line an agent runs to reach Takeback: the absolute path of this very
``takeback`` (the console script beside the running interpreter, else ``sys.argv[0]``, else
``python -m takeback``), quoted for a POSIX shell (an MCP entry in a file the team shares:
the plain ``takeback`` when PATH finds this one); a hook's line is ``PYTHON -S
…/takeback/__main__.py`` (the package's entry run without ``site``: ``hook_argv``). Nothing else is needed at run time: no
``jq``, no pipes, no PATH lookup, so it works from any subfolder or git worktree.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path


def takeback_argv() -> list[str]:
    """The words that start this Takeback (absolute paths)."""
    beside = Path(os.path.abspath(sys.executable)).parent / "takeback"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    launched = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if launched is not None and launched.name == "takeback" and launched.is_file():
        return [os.path.abspath(launched)]
    return [os.path.abspath(sys.executable), "-m", "takeback"]


def shell_line(argv: list[str]) -> str:
    """``argv`` as one line a POSIX shell runs unchanged."""
    return shlex.join(argv)


def hook_argv(agent: str, event: str | None = None) -> list[str]:
    """``takeback hook AGENT [EVENT]``, as ``PYTHON -S …/takeback/__main__.py hook AGENT
    [EVENT]``: this interpreter runs this package's entry file without ``site`` (a third of a
    hook's start; see ``__main__.py``), which loads only when the hook needs more than the
    standard library. A file, not the folder: running a folder imports ``runpy`` and its dozen
    modules."""
    return [os.path.abspath(sys.executable), "-S", entry_file(), "hook", agent, *([event] if event else [])]


def entry_file() -> str:
    """This Takeback's ``…/takeback/__main__.py``, the program a hook line runs."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "__main__.py")


def mcp_argv(agent: str, portable: bool = False) -> list[str]:
    """``takeback mcp --agent AGENT``: the MCP server on stdio, serving the workspace of the
    project folder the agent gives it (else of the folder it is started in). ``portable``: the
    plain word ``takeback`` when that, looked up on PATH, is this very Takeback (``on_path``),
    for a file the team shares; else this Takeback's absolute path."""
    words = ["takeback"] if portable and on_path() else takeback_argv()
    return [*words, "mcp", "--agent", agent]


def on_path() -> bool:
    """Whether ``takeback`` on PATH (an absolute folder of it) is this Takeback's console script."""
    mine = takeback_argv()
    if len(mine) != 1:
        return False  # run as ``python -m takeback``: no console script to find
    search = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(d))
    found = shutil.which("takeback", path=search)
    try:
        return found is not None and os.path.samefile(found, mine[0])
    except OSError:
        return False


def takeback_words(line: str | list[str]) -> list[str] | None:
    """What follows the Takeback executable in a command line (``["hook", "claude"]``), or
    None when the line does not run Takeback. Any Takeback counts (another venv, an older
    install), so uninstall and a re-install find entries an earlier install wrote."""
    try:
        words = shlex.split(line) if isinstance(line, str) else list(line)
    except ValueError:
        return None
    for i, word in enumerate(words):
        if _is_takeback(Path(word)) and (i == 0 or words[i - 1] in ("-m", "-S")):
            return words[i + 1 :]
    return None


def _is_takeback(word: Path) -> bool:
    """``takeback`` (a console script, ``-m takeback``) or ``…/takeback/__main__.py``."""
    return word.name == "takeback" or (word.name == "__main__.py" and word.parent.name == "takeback")


def is_hook_line(line: object, agent: str) -> bool:
    """Whether ``line`` is a ``takeback hook AGENT …`` command."""
    if not isinstance(line, str):
        return False
    rest = takeback_words(line)
    return rest is not None and rest[:2] == ["hook", agent]
