"""A tool call classified: undoable (its effects stay inside the workspace, on files Takeback
records) or not undoable, with the effect class and one line of reason.

The call is read in the shape the hooks normalize every agent's payload into
(``hooks/events.py``'s ``Event``: ``tool``, ``command`` for a shell tool, ``paths`` for an edit
tool, ``cwd``); any object with those fields will do, so the guard imports nothing of the hooks.
A shell command is read by ``shell.py``; what each program, subcommand and flag means comes from
``rules.py``; every path a command writes or deletes is placed against the workspace: outside it
(absolute, ``..``, ``~``, through a symlink), inside ``.git``, ignored by git (``is_ignored``), or
a scratch path (``/tmp``, ``/dev/null``). What cannot be understood is ``unknown``, never
undoable. Pure and fast: no subprocess and no tree scan (a path's symlinks are resolved, and
whether an ignored file exists before it is overwritten is asked, through the two callables the
caller may replace).
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from . import rules
from .rules import GIT_REFS, IGNORED, OUTSIDE, RULES, SCRATCH, UNDOABLE, UNKNOWN, Rule
from .shell import Command, Word, parse

WORKSPACE = "workspace"  # the effect class of an undoable call


class ToolCall(Protocol):
    """What the guard reads of a tool call (``hooks.events.Event`` has these fields)."""

    @property
    def tool(self) -> str | None: ...
    @property
    def command(self) -> str | None: ...
    @property
    def paths(self) -> Sequence[str] | None: ...
    @property
    def cwd(self) -> str | None: ...


@dataclass(frozen=True)
class Call:
    """A tool call built by hand (tests, the CLI): the same fields as ``hooks.events.Event``."""

    tool: str | None = None
    command: str | None = None
    paths: Sequence[str] | None = None
    cwd: str | None = None


@dataclass(frozen=True)
class Workspace:
    root: str  # absolute
    is_ignored: Callable[[str], bool]  # a workspace-relative posix path (or pattern; a folder ends in "/") git ignores
    home: str  # the person's home folder (``~``)
    in_venv: bool = False  # a virtual environment is active (pip installs land in it)
    exists: Callable[[str], bool] = os.path.lexists
    realpath: Callable[[str], str] = os.path.realpath
    rules: tuple[Rule, ...] = RULES
    scratch: tuple[str, ...] = SCRATCH  # paths outside the workspace written without asking


@dataclass(frozen=True)
class Finding:
    effect: str
    reason: str
    text: str  # the command (or path) it is about


@dataclass(frozen=True)
class Verdict:
    effect: str  # WORKSPACE, or the first finding's class
    reason: str  # one line
    findings: tuple[Finding, ...] = ()

    @property
    def undoable(self) -> bool:
        return not self.findings

    @property
    def decision(self) -> str:
        return "undoable" if self.undoable else "not-undoable"


def classify(call: ToolCall, ws: Workspace) -> Verdict:
    findings: list[Finding] = []
    if call.command is not None:
        findings += command_findings(call.command, ws, call.cwd)
    for path in call.paths or ():
        findings += _path_findings("write", Word(path), None, call.cwd, ws, recursive=False, text=path)
    return _verdict(findings, call)


def classify_command(line: str, ws: Workspace, cwd: str | None = None) -> Verdict:
    return _verdict(command_findings(line, ws, cwd), Call(command=line, cwd=cwd))


def _verdict(findings: list[Finding], call: ToolCall) -> Verdict:
    if not findings:
        if call.command is None and call.paths is None:
            return Verdict(WORKSPACE, "a tool the guard cannot look into; what it changes in the workspace is recorded")
        return Verdict(WORKSPACE, "its effects stay inside the workspace, on files Takeback records")
    first = findings[0]
    more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
    return Verdict(first.effect, f"{first.text}: {first.reason}{more}", tuple(findings))


def command_findings(line: str, ws: Workspace, cwd: str | None = None) -> list[Finding]:
    parsed = parse(line)
    found = [Finding(UNKNOWN, f"cannot be understood before it runs ({u.reason})", u.text) for u in parsed.unclear]
    for command in parsed.commands:
        found += _command(command, ws, cwd)
    for red in parsed.writes:
        action = "append" if red.append else "write"
        found += _path_findings(action, red.path, red.cwd, cwd, ws, recursive=False, text=red.text)
    return found


def _command(cmd: Command, ws: Workspace, cwd: str | None) -> list[Finding]:
    found: list[Finding] = []
    for wrapper in cmd.wrappers:
        rule = _first_rule(ws.rules, wrapper, [], ws)
        if rule is not None and rule.effect != UNDOABLE:
            found.append(Finding(rule.effect, rule.reason, cmd.text))
    name, args = _program(cmd)
    if name == "git":
        return found + _git(cmd, args, ws, cwd)
    in_venv = ws.in_venv or _venv_program(cmd, ws, cwd)
    if name == "pip" and _flag(args, ("-t", "--target", "--prefix", "--root")):
        in_venv = True
    rule = _first_rule(ws.rules, name, args, ws, in_venv)
    if rule is not None and rule.effect != UNDOABLE:
        found.append(Finding(rule.effect, rule.reason, cmd.text))
    if name == "find" and _flag(args, ("-delete",)):
        found += _find_delete(cmd, args, ws, cwd)
    for action, word, recursive in _written(name, args, cmd):
        found += _path_findings(action, word, cmd.cwd, cwd, ws, recursive, cmd.text, via=cmd.via)
    return found


def _program(cmd: Command) -> tuple[str, list[Word]]:
    """The program and its words, ``python -m pip``/``pip3``/``.venv/bin/pip`` read as ``pip``."""
    name, args = cmd.name, list(cmd.args)
    if re.fullmatch(r"python[0-9.]*", name) and len(args) > 1 and args[0].text == "-m":
        name, args = args[1].text, args[2:]
    if re.fullmatch(r"pip[0-9.]*", name):
        name = "pip"
    return name, args


def _venv_program(cmd: Command, ws: Workspace, cwd: str | None) -> bool:
    """``.venv/bin/pip install``: a program run from a folder inside the workspace installs there."""
    head = cmd.words[0]
    if "/" not in head.text:
        return False
    kind, _ = _place(head, cmd.cwd, cwd, ws, follow=False)
    return kind in ("inside", "ignored")


def _first_rule(table: Sequence[Rule], name: str, args: Sequence[Word], ws: Workspace, in_venv: bool = False) -> Rule | None:
    plain = [w.text for w in args if not w.text.startswith("-")]
    for rule in table:
        program, _, sub = rule.command.partition(" ")
        if program != name:
            continue
        rest = plain
        if sub:
            if not plain or plain[0] != sub:
                continue
            rest = plain[1:]
        if rule.outside_venv and in_venv:
            continue
        if rule.flags and not _flag(args, rule.flags):
            continue
        if rule.sub and not (rest and rest[0] in rule.sub):
            continue
        if rule.any_arg and not any(fnmatch.fnmatchcase(w, p) for w in rest for p in rule.any_arg):
            continue
        return rule
    return None


def _flag(args: Sequence[Word], flags: Sequence[str]) -> bool:
    """Whether one of ``flags`` is given: a long flag as ``--x`` or ``--x=…``, a short one also
    inside a bundle (``-fdx`` holds ``-x``; ``-ff`` needs two ``f``)."""
    words = [w.text for w in args]
    if "--" in words:
        words = words[: words.index("--")]
    shorts = "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))
    for flag in flags:
        if flag.startswith("--") or not flag.startswith("-"):
            if any(w == flag or w.startswith(flag + "=") for w in words):
                return True
        elif flag in words or all(shorts.count(c) >= flag[1:].count(c) for c in set(flag[1:])):
            return True
    return False


def _git(cmd: Command, args: list[Word], ws: Workspace, cwd: str | None) -> list[Finding]:
    i, other = 0, None
    while i < len(args) and args[i].text.startswith("-"):
        option = args[i].text.split("=", 1)[0]
        value = args[i + 1] if "=" not in args[i].text and i + 1 < len(args) else Word(args[i].text.partition("=")[2])
        if option in ("-C", "--git-dir", "--work-tree"):
            kind, where = _place(value, cmd.cwd, cwd, ws, follow=True)
            if kind in ("outside", "above", "unknown"):
                other = where
        i += 2 if option in rules.GIT_VALUE_OPTIONS and "=" not in args[i].text else 1
    if i >= len(args):
        return []
    sub, rest = args[i].text, args[i + 1:]
    if not args[i].static:
        return [Finding(UNKNOWN, "a git subcommand known only when the line runs", cmd.text)]
    rule = _first_rule(ws.rules, "git", args[i:], ws)
    if rule is not None and rule.effect != UNDOABLE:
        return [Finding(rule.effect, rule.reason, cmd.text)]
    if sub not in rules.GIT_KNOWN:
        return [Finding(UNKNOWN, f"git {sub} is not a git command the guard knows (an alias or a plugin?)", cmd.text)]
    if sub == "reset" and _moves_branch(rest):
        return [Finding(*rules.GIT_RESET_MOVES, cmd.text)]
    if other is not None and sub not in rules.GIT_READS:
        return [Finding(OUTSIDE, f"changes another repository, {other}", cmd.text)]
    return []


def _moves_branch(rest: list[Word]) -> bool:
    """``git reset REV``: a revision (not HEAD, not a path) among the words before ``--``."""
    for w in rest:
        if w.text == "--":
            return False
        if w.text.startswith("-") or w.text in ("HEAD", "@"):
            continue
        return bool(re.fullmatch(r"(HEAD|@|ORIG_HEAD|FETCH_HEAD)?([~^][0-9]*)+|[0-9a-f]{7,40}|HEAD@\{.*\}|[\w.-]+/[\w./-]+", w.text)) \
            and not posixpath.splitext(w.text)[1]
    return False


def _written(name: str, args: list[Word], cmd: Command) -> list[tuple[str, Word, bool]]:
    """(action, path, recursive) for each path a command writes, deletes or creates."""
    writer = rules.WRITERS.get(name)
    if writer is None:
        return []
    if name in rules.IN_PLACE_ONLY and not any(w.text.startswith(rules.IN_PLACE_ONLY[name]) for w in args):
        return []
    recursive = any(f == "" for f in writer.recursive_flags) or _flag(args, writer.recursive_flags)
    plain: list[Word] = []
    out: list[tuple[str, Word, bool]] = []
    i, options = 0, True
    scripted = name == "sed" and _flag(args, ("-e", "--expression", "-f", "--file"))
    while i < len(args):
        w = args[i]
        text = w.text
        if options and text == "--":
            options = False
        elif options and text.startswith("-") and len(text) > 1:
            option = text.split("=", 1)[0]
            if option in writer.dest_options or option in writer.value_options:
                value = Word(text.split("=", 1)[1], w.static) if "=" in text else (args[i + 1] if i + 1 < len(args) else None)
                if option in writer.dest_options and value is not None:
                    out.append(("write", value, True))
                i += 0 if "=" in text else 1
        elif name == "dd" and text.startswith("of="):
            out.append(("write", Word(text[3:], w.static), False))
        else:
            plain.append(w)
        i += 1
    if name == "rsync" and _flag(args, ("--delete", "--delete-after", "--delete-before", "--delete-during", "--delete-excluded")):
        out += [("delete", w, True) for w in plain[-1:]]
    which = "all" if scripted else writer.which
    if writer.action == "move":
        dest = bool(out)
        out += [("delete", w, True) for w in (plain if dest else plain[:-1])]
        out += [("write", w, False) for w in ([] if dest else plain[-1:])]
    elif which == "all":
        out += [(writer.action, w, recursive) for w in plain]
    elif which == "last":
        out += [(writer.action, w, recursive) for w in plain[-1:] if len(plain) > 1]
    elif which == "after-first":
        out += [(writer.action, w, recursive) for w in plain[1:]]
    return out


def _find_delete(cmd: Command, args: list[Word], ws: Workspace, cwd: str | None) -> list[Finding]:
    roots = []
    for w in args:
        if w.text.startswith(("-", "(", "!")):
            break
        roots.append(w)
    pattern = next((args[i + 1].text for i, w in enumerate(args[:-1]) if w.text in ("-name", "-iname", "-path")), None)
    found: list[Finding] = []
    for root in roots or [Word(".")]:
        path = Word(posixpath.join(root.text, "**", pattern) if pattern else root.text, root.static)
        found += _path_findings("delete", path, cmd.cwd, cwd, ws, True, cmd.text, via="find -exec")
    return found


# --- paths

_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")


def _expand_braces(text: str) -> list[str]:
    match = _BRACES.search(text)
    if match is None:
        return [text]
    return [out for part in match.group(1).split(",") for out in _expand_braces(text[:match.start()] + part + text[match.end():])]


def _path_findings(action: str, word: Word, line_cwd: Word | None, call_cwd: str | None, ws: Workspace,
                   recursive: bool, text: str, via: str = "") -> list[Finding]:
    found: list[Finding] = []
    for expanded in _expand_braces(word.text):
        finding = _one_path(action, Word(expanded, word.static), line_cwd, call_cwd, ws, recursive, text, via)
        if finding is not None:
            found.append(finding)
    return found


_VERBS = {"delete": "deletes", "move": "moves away", "write": "overwrites", "append": "appends to", "create": "creates"}


def _one_path(action: str, word: Word, line_cwd: Word | None, call_cwd: str | None, ws: Workspace,
              recursive: bool, text: str, via: str) -> Finding | None:
    follow = action != "delete" or word.text.endswith("/")
    kind, where = _place(word, line_cwd, call_cwd, ws, follow)
    verb = _VERBS[action]
    destroys = action in ("delete", "write", "move")
    if kind == "scratch":
        return None
    if kind == "unknown":
        return Finding(UNKNOWN, f"{verb} a path known only when it runs ({word.text})", text) if action != "create" else None
    if kind == "above":
        return Finding(OUTSIDE, f"{verb} {where}, which holds the workspace", text) if action != "create" else None
    if kind == "outside":
        return Finding(OUTSIDE, f"{verb} {where}, outside the workspace", text)
    if kind == "root":
        if action in ("delete", "move"):
            return Finding(GIT_REFS, "deletes the workspace itself, its .git and ignored files included", text)
        return None
    if kind == "git":
        return Finding(GIT_REFS, f"{verb} {where}, inside .git", text) if action != "create" else None
    if not destroys:
        return None
    rel = where
    if kind == "ignored" and (action != "write" or ws.exists(posixpath.join(ws.root, rel))):
        return Finding(IGNORED, f"{verb} {rel}, which git ignores (Takeback does not hold it)", text)
    glob = any(c in rel for c in "*?[")
    if action in ("delete", "move") and via == "find -exec" and kind != "ignored":
        return Finding(UNKNOWN, f"{verb} what find finds under {rel.split('/**')[0] or '.'}, ignored folders included", text)
    if action in ("delete", "move") and glob and recursive and posixpath.basename(rel) in ("*", ".*", "**", "*.*"):
        return Finding(IGNORED, f"{verb} {rel}, which may match ignored files (Takeback does not hold them)", text)
    return None


def _place(word: Word, line_cwd: Word | None, call_cwd: str | None, ws: Workspace, follow: bool) -> tuple[str, str]:
    """Where a path lands: scratch, outside, above (holds the workspace), root, git, ignored,
    inside or unknown; with the absolute path (or, inside, the workspace-relative one)."""
    root = posixpath.normpath(ws.root)
    base = posixpath.normpath(call_cwd) if call_cwd else root
    if line_cwd is not None:
        if not line_cwd.static:
            if not word.text.startswith(("/", "~")):
                return "unknown", word.text
        else:
            base = _absolute(line_cwd.text, base, ws.home)
    text = word.text
    if not word.static:
        text = re.sub(r"\$\{?HOME\}?", ws.home, text)
        text = re.sub(r"\$\{?PWD\}?|\$\(pwd\)|`pwd`", base, text)
        text = re.sub(r"\$\{?TMPDIR\}?", "/tmp", text)
        if "$" in text or "`" in text or "<" in text:
            return "unknown", word.text
    if text.startswith("~") and not text.startswith(("~/",)) and text != "~":
        return "outside", text  # ~user
    path = _absolute(text, base, ws.home)
    if path == root:
        return "root", path
    if root.startswith(path.rstrip("/") + "/") or path == "/":
        return "above", path
    if not path.startswith(root + "/"):
        scratch = path in ws.scratch or any(path.startswith(s) for s in ws.scratch if s.endswith("/"))
        return ("scratch" if scratch else "outside"), path
    real_root = ws.realpath(root)
    real = ws.realpath(path) if follow else posixpath.join(ws.realpath(posixpath.dirname(path)), posixpath.basename(path))
    if real != real_root and not real.startswith(real_root + "/"):
        return "outside", f"{path} (a symlink to {real})"
    rel = posixpath.relpath(path, root)
    if ".git" in rel.split("/"):
        return "git", rel
    if ws.is_ignored(rel) or ws.is_ignored(rel + "/"):
        return "ignored", rel
    return "inside", rel


def _absolute(text: str, base: str, home: str) -> str:
    if text == "~" or text.startswith("~/"):
        text = home + text[1:]
    return posixpath.normpath(posixpath.join(base, text))
