"""A tool call classified: undoable (its effects stay inside the workspace, on files Takeback
records) or not undoable, with the effect class and one line of reason.

The call is read in the shape the hooks normalize every agent's payload into
(``hooks/events.py``'s ``Event``: ``tool``, ``command`` for a shell tool, ``paths`` for an edit
tool, ``cwd``); any object with those fields will do, so the guard imports nothing of the hooks.
A shell command is read by ``shell.py``; what each program, subcommand and flag means comes from
``rules.py``; every path a command writes or deletes is placed against the workspace: outside it
(absolute, ``..``, ``~``, through a symlink), inside ``.git``, ignored by git (``is_ignored``), or
a scratch path (``/tmp``, ``/dev/null``). What cannot be understood is ``unknown``, never
undoable. Pure and fast: no subprocess and no tree scan; what it must know of the disk (a path's
symlinks, whether an ignored file is there to be overwritten, the ignored files under a folder a
command deletes, the current branch) it asks through ``Workspace``'s callables, whose defaults
(``walk.py``) are bounded and which the caller may replace. The one line the person reads is
written by ``line.py``.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from . import line, rules, walk
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


def _never(_: str) -> bool:
    return False


@dataclass(frozen=True)
class Workspace:
    """The workspace a call is placed against. The callables take absolute paths unless they say
    workspace-relative (posix, a folder ending in "/"); each default is bounded (``walk.py``)."""

    root: str  # absolute
    is_ignored: Callable[[str], bool]  # a workspace-relative posix path (or pattern; a folder ends in "/") git ignores
    home: str  # the person's home folder (``~``)
    in_venv: bool = False  # a virtual environment is active (pip installs land in it)
    exists: Callable[[str], bool] = os.path.lexists
    realpath: Callable[[str], str] = os.path.realpath
    rules: tuple[Rule, ...] = RULES
    scratch: tuple[str, ...] = SCRATCH  # paths outside the workspace written without asking
    # the ignored files and folders (and withheld files) under a workspace-relative folder, at most
    # ``limit`` entries looked at; None: gave up. Default: ``walk.ignored_under`` over the disk.
    ignored_under: Callable[[str, int], list[str] | None] | None = None
    count_files: Callable[[str, int], int] = walk.count_files  # (absolute path, limit): over limit means "over limit"
    current_branch: Callable[[], str | None] | None = None  # None: read from .git/HEAD (``walk.current_branch``)
    is_withheld: Callable[[str], bool] = _never  # a workspace-relative file Takeback does not copy (a secret)
    max_file_bytes: int | None = None  # files over this are not copied (None: no cap)
    size: Callable[[str], int | None] = walk.size  # a regular file's size, None if not one
    is_dir: Callable[[str], bool] = walk.is_dir

    def under(self, rel_folder: str, limit: int = walk.WALK_LIMIT) -> list[str] | None:
        if self.ignored_under is not None:
            return self.ignored_under(rel_folder, limit)
        return walk.ignored_under(self.root, rel_folder, limit, self.is_ignored, self.is_withheld)

    def branch(self) -> str | None:
        return self.current_branch() if self.current_branch is not None else walk.current_branch(self.root)


@dataclass(frozen=True)
class Finding:
    effect: str
    reason: str  # completes "this …", naming its subject
    text: str  # the command (or path) it is about
    path: str | None = None  # ignored-files: the workspace-relative posix path at risk (a folder ends in "/")
    action: str = ""  # for a path's finding: "delete", "move", "write"
    note: str = ""  # what the one line adds after the path: "a secret Takeback does not copy", "over the size cap"


@dataclass(frozen=True)
class Verdict:
    effect: str  # WORKSPACE, or the first finding's class
    reason: str  # one line, completing "this …" (``line.py``); not quoted, free of control characters
    findings: tuple[Finding, ...] = ()

    @property
    def undoable(self) -> bool:
        return not self.findings

    @property
    def at_risk_paths(self) -> tuple[str, ...]:
        """The ignored (or withheld) files and folders the call may delete or overwrite, each once."""
        return tuple(dict.fromkeys(f.path for f in self.findings if f.path is not None))

    @property
    def moves_git(self) -> bool:
        """The call may move the person's refs, index or stash (or change their git configuration)."""
        return any(f.effect == GIT_REFS for f in self.findings)

    @property
    def decision(self) -> str:
        return "undoable" if self.undoable else "not-undoable"


def classify(call: ToolCall, ws: Workspace) -> Verdict:
    findings: list[Finding] = []
    if call.command is not None:
        findings += command_findings(call.command, ws, call.cwd)
    for path in call.paths or ():
        findings += _path_findings("write", Word(path), None, call.cwd, ws, recursive=False, text=path)
    return _verdict(findings, call, ws)


def classify_command(text: str, ws: Workspace, cwd: str | None = None) -> Verdict:
    return _verdict(command_findings(text, ws, cwd), Call(command=text, cwd=cwd), ws)


def _verdict(findings: list[Finding], call: ToolCall, ws: Workspace) -> Verdict:
    if not findings:
        if call.command is None and call.paths is None:
            return Verdict(WORKSPACE, "a tool the guard cannot look into; what it changes in the workspace is recorded")
        return Verdict(WORKSPACE, "its effects stay inside the workspace, on files Takeback records")
    unique = list(dict.fromkeys(findings))
    return Verdict(unique[0].effect, line.one_line(unique, call.command, ws.root, ws.count_files), tuple(unique))


def command_findings(text: str, ws: Workspace, cwd: str | None = None) -> list[Finding]:
    parsed = parse(text)
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
        if rule.unless and _flag(args, rule.unless):
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
        if rule.command == "git clean" and rule.effect == IGNORED and other is None:
            return _git_clean(cmd, rest, ws, cwd, rule)
        return [Finding(rule.effect, _detail(rule, rest, ws), cmd.text)]
    if rule is not None:
        return []
    if sub not in rules.GIT_KNOWN:
        return [Finding(UNKNOWN, f"git {sub} is not a git command the guard knows (an alias or a plugin?)", cmd.text)]
    if sub == "reset" and _reset_target(rest):
        effect, reason = rules.GIT_RESET_MOVES
        return [Finding(effect, reason.format(branch=_branch(ws), to=_reset_target(rest)), cmd.text)]
    if sub == "config" and _config_writes(rest):
        return [Finding(*rules.GIT_CONFIG_WRITES, cmd.text)]
    if other is not None and sub not in rules.GIT_READS:
        return [Finding(OUTSIDE, f"changes another repository, {other}", cmd.text)]
    return []


def _branch(ws: Workspace) -> str:
    name = ws.branch()
    return f"the branch {line.clean(name)}" if name else "the current branch"


def _detail(rule: Rule, rest: list[Word], ws: Workspace) -> str:
    """The rule's reason, naming the branch, refs or revision it moves where its ``detail`` says them."""
    if not rule.detail:
        return rule.reason
    names = [w.text for w in _plain(rest)]
    if rule.sub and names:
        names = names[1:]
    if ("{names}" in rule.detail or "{first}" in rule.detail) and not names:
        return rule.reason
    target = _reset_target(rest) if rule.command == "git reset" else None
    fields = {"branch": _branch(ws) if "{branch}" in rule.detail else "", "names": line.listed(names), "first": names[0] if names else "",
              "to": f" to {target} (its commits stay only in the reflog)" if target else ""}
    return rule.detail.format_map(fields)


def _plain(words: list[Word]) -> list[Word]:
    """The words that are not options (a word after ``--`` always is one)."""
    out, options = [], True
    for w in words:
        if options and w.text == "--":
            options = False
        elif not (options and w.text.startswith("-") and len(w.text) > 1):
            out.append(w)
    return out


def _reset_target(rest: list[Word]) -> str | None:
    """``git reset REV``: a revision (not HEAD, not a path) among the words before ``--``."""
    for w in rest:
        if w.text == "--":
            return None
        if w.text.startswith("-") or w.text in ("HEAD", "@"):
            continue
        moves = re.fullmatch(r"(HEAD|@|ORIG_HEAD|FETCH_HEAD)?([~^][0-9]*)+|[0-9a-f]{7,40}|HEAD@\{.*\}|[\w.-]+/[\w./-]+", w.text)
        return w.text if moves and not posixpath.splitext(w.text)[1] else None
    return None


def _config_writes(rest: list[Word]) -> bool:
    """``git config`` changes the configuration unless it only reads (``--get``, ``--list``, one key)."""
    if _flag(rest, rules.GIT_CONFIG_WRITE_FLAGS):
        return True
    if _flag(rest, rules.GIT_CONFIG_READ_FLAGS):
        return False
    plain, i = [], 0
    while i < len(rest):
        text = rest[i].text
        if text.startswith("-") and len(text) > 1:
            i += 2 if text in rules.GIT_CONFIG_VALUE_OPTIONS else 1
            continue
        plain.append(text)
        i += 1
    if plain and plain[0] in rules.GIT_CONFIG_READ_SUBS:
        return False
    return bool(plain and plain[0] in rules.GIT_CONFIG_WRITE_SUBS) or len(plain) >= 2


def _git_clean(cmd: Command, rest: list[Word], ws: Workspace, cwd: str | None, rule: Rule) -> list[Finding]:
    """``git clean -x``: the ignored files under each folder it cleans (the call's folder when none is named)."""
    found: list[Finding] = []
    words = [w for i, w in enumerate(rest) if w.text not in ("-e", "--exclude") and (i == 0 or rest[i - 1].text not in ("-e", "--exclude"))]
    for word in _plain(words) or [Word(".")]:
        kind, rel = _place(word, cmd.cwd, cwd, ws, follow=False)
        if kind not in ("inside", "ignored", "root"):
            return [Finding(rule.effect, rule.reason, cmd.text)]
        entries = ws.under("" if kind == "root" else rel)
        if entries is None:
            return [Finding(IGNORED, "may delete ignored files (too many files to look through before it runs)", cmd.text)]
        found += [_at_risk("delete", e, cmd.text) for e in entries]
    return found or [Finding(rule.effect, rule.reason, cmd.text)]


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
        out += [("move", w, True) for w in (plain if dest else plain[:-1])]
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
        found += _one_path(action, Word(expanded, word.static), line_cwd, call_cwd, ws, recursive, text, via)
    return found


_VERBS = {"delete": "deletes", "move": "moves away", "write": "overwrites", "append": "appends to", "create": "creates"}
_SECRET = "a secret Takeback does not copy"
_TOO_BIG = "over the size cap"


def _one_path(action: str, word: Word, line_cwd: Word | None, call_cwd: str | None, ws: Workspace,
              recursive: bool, text: str, via: str) -> list[Finding]:
    follow = action != "delete" or word.text.endswith("/")
    kind, where = _place(word, line_cwd, call_cwd, ws, follow)
    verb = _VERBS[action]
    if kind == "scratch" or (action == "create" and kind in ("unknown", "above", "git")):
        return []
    if kind == "unknown":
        return [Finding(UNKNOWN, f"{verb} a path known only when it runs ({word.text})", text)]
    if kind == "above":
        return [Finding(OUTSIDE, f"{verb} {where}, which holds the workspace", text)]
    if kind == "outside":
        return [Finding(OUTSIDE, f"{verb} {where}, outside the workspace", text)]
    if kind == "root":
        if action in ("delete", "move"):
            return [Finding(GIT_REFS, "deletes the workspace itself, its .git and ignored files included", text)]
        return []
    if kind == "git":
        return [Finding(GIT_REFS, f"{verb} {where}, inside .git", text)]
    if action not in ("delete", "write", "move"):
        return []
    return _inside(action, where, kind == "ignored", ws, recursive, text, via, word.text.endswith("/"))


def _inside(action: str, rel: str, ignored: bool, ws: Workspace, recursive: bool, text: str, via: str,
            slash: bool) -> list[Finding]:
    """A delete, move or overwrite of a workspace path: what of it Takeback does not hold."""
    verb = _VERBS[action]
    glob = any(c in rel for c in "*?[")
    if via == "find -exec" or "**" in rel:
        if ignored:
            return [Finding(IGNORED, f"{verb} {rel}, which git ignores (Takeback does not hold it)", text)]
        if action in ("delete", "move") and via == "find -exec":
            return [Finding(UNKNOWN, f"{verb} what find finds under {rel.split('/**')[0] or '.'}, ignored folders included", text)]
        return []
    if glob:
        return _glob(action, rel, ignored, ws, recursive, text)
    full = posixpath.join(ws.root, rel)
    if ignored:
        if not ws.exists(full):
            return []  # nothing there to lose (made later on the same line, it was never the person's)
        folder = slash or ws.is_dir(full)
        return [_at_risk(action, rel + "/" if folder and not rel.endswith("/") else rel, text)]
    if action == "delete" and recursive:
        entries = ws.under(rel)
        if entries is None:
            return [Finding(IGNORED, f"may delete ignored files under {rel}/ (too many files to look through before it runs)", text)]
        if entries:
            return [_at_risk(action, e, text) for e in entries]
    if action == "write" and not ws.exists(full):
        return []
    if ws.is_withheld(rel):
        return [_at_risk(action, rel, text, _SECRET)]
    size = ws.size(full) if ws.max_file_bytes is not None else None
    if size is not None and ws.max_file_bytes is not None and size > ws.max_file_bytes:
        return [_at_risk(action, rel, text, _TOO_BIG)]
    return []


def _glob(action: str, rel: str, ignored: bool, ws: Workspace, recursive: bool, text: str) -> list[Finding]:
    """``rm -rf *``, ``rm *.log``, ``rm -rf tmp/*``: the ignored entries the pattern reaches."""
    verb = _VERBS[action]
    folder, pattern = posixpath.split(rel)
    if action == "write" or any(c in folder for c in "*?["):
        if ignored:
            return [Finding(IGNORED, f"{verb} {rel}, which git ignores (Takeback does not hold it)", text)]
        return []
    entries = ws.under(folder)
    if entries is None:
        return [Finding(IGNORED, f"may {verb.split()[0][:-1]} ignored files matching {rel} (too many files to look through)", text)]
    hits = []
    for entry in entries:
        below = entry[len(folder) + 1:] if folder else entry
        first, _, deeper = below.partition("/")
        if not fnmatch.fnmatchcase(first, pattern) or (first.startswith(".") and not pattern.startswith(".")):
            continue
        if recursive or not deeper:
            hits.append(entry if recursive or not entry.endswith("/") else None)
    return [_at_risk(action, h, text) for h in hits if h is not None]


def _at_risk(action: str, path: str, text: str, note: str = "") -> Finding:
    why = note or ("an ignored folder" if path.endswith("/") else "an ignored file")
    return Finding(IGNORED, f"{_VERBS[action]} {path}, {why} Takeback does not hold", text, path=path, action=action, note=note)


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
