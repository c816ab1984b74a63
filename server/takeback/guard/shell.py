"""A shell command line read into the simple commands it runs and the files it redirects into.

The parser is tree-sitter with its bash grammar (``tree-sitter``, ``tree-sitter-bash`` on PyPI,
both MIT): a real, well-kept shell grammar in C with wheels for every platform, about 0.1 ms for
a typical agent command and ~20 ms to import, with error recovery that marks what it could not
read. (``bashlex``, the pure-Python alternative, is GPL-3.0, ten times slower per command and
slower to import.) Regular expressions are not used to split commands.

What it looks into: ``&&``, ``||``, ``;``, pipes, subshells, ``{ …; }``, ``if``/``for``/``while``/
``case`` bodies, function bodies, ``$(…)``, backticks and ``<(…)``, ``bash -c '…'``/``sh -c``/
``eval`` (recursively, when the string is known before it runs), a shell reading a heredoc,
``xargs CMD``, ``find … -exec CMD {} ;``, env prefixes (``FOO=1 rm …``), the wrappers
``command``/``exec``/``nohup``/``sudo``/``time``/``env``/``timeout``/``nice``/``npx`` …, ``cd`` (the
folder later commands run in) and redirections (``> file``, ``>> file``: a write to that path).

What it cannot understand is reported in ``Parsed.unclear`` — a line that does not parse, a
command word known only when it runs (``$CMD x``), a script read from a pipe, ``eval "$x"`` —
never dropped. Which command means which effect is not decided here (``classify.py``, ``rules.py``).
"""

from __future__ import annotations

import codecs
import posixpath
import re
from dataclasses import dataclass, replace
from functools import cache

import tree_sitter
import tree_sitter_bash

MAX_DEPTH = 6  # bash -c / eval nesting read before the rest is reported as unclear


@dataclass(frozen=True)
class Word:
    text: str  # quotes removed and escapes resolved; an expansion is kept as written ($HOME, $(…))
    static: bool = True  # False: holds an expansion whose value is known only when it runs


@dataclass(frozen=True)
class Command:
    words: tuple[Word, ...]  # the program first, after the wrappers are peeled off
    text: str  # the source of the whole simple command, wrappers included
    cwd: Word | None = None  # where an earlier ``cd`` on the line moved (None: where the line starts)
    wrappers: tuple[str, ...] = ()  # sudo, env, nohup, xargs … peeled off, outermost first
    via: str = ""  # "", "find -exec": how it was reached, when it matters for its paths

    @property
    def name(self) -> str:
        return posixpath.basename(self.words[0].text) if self.words else ""

    @property
    def args(self) -> tuple[Word, ...]:
        return self.words[1:]


@dataclass(frozen=True)
class Redirect:
    path: Word
    append: bool
    text: str
    cwd: Word | None = None


@dataclass(frozen=True)
class Unclear:
    reason: str
    text: str


@dataclass(frozen=True)
class Parsed:
    commands: tuple[Command, ...]
    writes: tuple[Redirect, ...]
    unclear: tuple[Unclear, ...]


def parse(line: str) -> Parsed:
    walker = _Walker()
    walker.line(line, None, 0)
    return Parsed(tuple(walker.commands), tuple(walker.writes), tuple(walker.unclear))


@cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


# Wrappers: programs that run the command after their own options. Each: the options that take a
# value, and how many plain words come before the command (timeout's duration, flock's file).
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "command": (frozenset(), 0), "builtin": (frozenset(), 0), "exec": (frozenset({"-a"}), 0),
    "nohup": (frozenset(), 0), "time": (frozenset({"-f", "-o"}), 0), "nice": (frozenset({"-n"}), 0),
    "sudo": (frozenset({"-u", "-g", "-h", "-p", "-C", "-U", "-r", "-t", "-D", "-R", "-T"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0), "pkexec": (frozenset({"--user"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1), "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p"}), 0), "chronic": (frozenset(), 0), "unbuffer": (frozenset(), 0),
    "caffeinate": (frozenset({"-t", "-w"}), 0), "flock": (frozenset({"-w", "-E", "-c"}), 1),
    "strace": (frozenset({"-o", "-e", "-p", "-s", "-u"}), 0), "ltrace": (frozenset({"-o", "-e", "-p"}), 0),
    "watch": (frozenset({"-n", "-d", "--interval"}), 0), "npx": (frozenset({"-p", "--package", "-c"}), 0),
    "bunx": (frozenset({"-p", "--package"}), 0), "dotenv": (frozenset({"-f", "-e", "-v"}), 0),
    "busybox": (frozenset(), 0), "toybox": (frozenset(), 0),  # `busybox rm -rf x`: the applet runs
    "xargs": (frozenset({"-I", "-i", "-n", "-P", "-d", "-L", "-l", "-a", "-E", "-e", "-s", "--max-args", "--max-procs",
                         "--delimiter", "--replace", "--arg-file", "--max-lines", "--max-chars"}), 0),
}
# Two-word wrappers: "uv run CMD", "poetry run CMD" …
_RUNNERS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("bundle", "exec"), ("pnpm", "exec"), ("pnpm", "dlx"),
            ("yarn", "dlx"), ("hatch", "run"), ("pdm", "run"), ("rye", "run"), ("conda", "run"), ("mise", "exec")}
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh", "ash", "fish"}
_SHELL_VALUE_OPTS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_LOOKUPS = {"command": {"-v", "-V"}, "type": set(), "which": set(), "hash": set()}  # they only look a name up
_WRITE_OPS = {">", ">>", "&>", "&>>", ">|", ">&", "<>"}


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text.replace("\\\n", ""), flags=re.S)


class _Walker:
    def __init__(self) -> None:
        self.commands: list[Command] = []
        self.writes: list[Redirect] = []
        self.unclear: list[Unclear] = []
        self.depth = 0

    def line(self, line: str, cwd: Word | None, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.unclear.append(Unclear("shell strings nested too deep to read", line))
            return
        tree = _parser().parse(line.encode())
        if tree.root_node.has_error:
            bad = _first_error(tree.root_node)
            self.unclear.append(Unclear("the line does not parse as a shell command (unbalanced quotes or brackets?)",
                                        bad.text.decode(errors="replace") if bad and bad.text else line))
        outer, self.depth = self.depth, depth
        self.walk(tree.root_node, cwd)
        self.depth = outer

    # --- statements: returns the folder the next statement runs in (``cd`` moves it)
    def walk(self, node: tree_sitter.Node, cwd: Word | None) -> Word | None:
        kind = node.type
        if kind == "command":
            return self.command(node, cwd, None, False)
        if kind == "redirected_statement":
            return self.redirected(node, cwd, False)
        if kind in ("subshell", "command_substitution", "process_substitution"):
            self.walk_children(node, cwd)
            return cwd
        if kind == "pipeline":
            for i, child in enumerate(node.named_children):
                if child.type == "command":
                    self.command(child, cwd, None, i > 0)
                elif child.type == "redirected_statement":
                    self.redirected(child, cwd, i > 0)
                else:
                    self.walk(child, cwd)
            return cwd
        if kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            self.redirect(node, cwd)
            return cwd
        if kind == "ERROR":
            self.walk_children(node, cwd)
            return cwd
        return self.walk_children(node, cwd)

    def walk_children(self, node: tree_sitter.Node, cwd: Word | None) -> Word | None:
        for child in node.named_children:
            cwd = self.walk(child, cwd)
        return cwd

    def redirected(self, node: tree_sitter.Node, cwd: Word | None, piped: bool) -> Word | None:
        redirects = node.children_by_field_name("redirect")
        stdin_script = None
        for red in redirects:
            if red.type == "heredoc_redirect":
                body = next((c for c in red.named_children if c.type == "heredoc_body"), None)
                stdin_script = body.text.decode(errors="replace") if body is not None and body.text else ""
        body_node = node.child_by_field_name("body")
        after = cwd
        if body_node is not None and body_node.type == "command":
            after = self.command(body_node, cwd, stdin_script, piped)
        elif body_node is not None:
            after = self.walk(body_node, cwd)
        # tree-sitter-bash binds `a && b > f` as (a && b) > f: the file is where the last command ran
        for red in redirects:
            self.redirect(red, after if body_node is not None and body_node.type == "list" else cwd)
        return after

    def redirect(self, node: tree_sitter.Node, cwd: Word | None) -> None:
        ops = {c.type for c in node.children if not c.is_named}
        dest = node.child_by_field_name("destination")
        for child in node.named_children:  # substitutions inside a heredoc or a target run too
            if child.type in ("heredoc_body", "command_substitution", "process_substitution"):
                self.walk(child, cwd)
            elif child.type == "file_redirect":  # `cat <<EOF > f`: the grammar nests the write in the heredoc
                self.redirect(child, cwd)
        if node.type != "file_redirect" or dest is None or not ops & _WRITE_OPS:
            return
        if dest.type == "number" and ops & {">&", "<&"}:
            return  # 2>&1: a descriptor, not a file
        if dest.type == "process_substitution":
            return
        self.writes.append(Redirect(self.word(dest, cwd), bool(ops & {">>", "&>>"}), _text(node), cwd))

    # --- words
    def word(self, node: tree_sitter.Node, cwd: Word | None) -> Word:
        kind = node.type
        text = _text(node)
        if kind in ("word", "number", "command_name"):
            if kind == "command_name" and node.named_children:
                return self.word(node.named_children[0], cwd)
            return Word(_unescape(text))
        if kind == "raw_string":
            return Word(text[1:-1])
        if kind == "ansi_c_string":
            return Word(codecs.decode(text[2:-1].encode("latin-1", "backslashreplace"), "unicode_escape"))
        if kind in ("string", "translated_string"):
            return self.string(node, cwd)
        if kind == "concatenation":
            parts = [self.word(c, cwd) for c in node.named_children]
            return Word("".join(p.text for p in parts), all(p.static for p in parts))
        self.walk(node, cwd)  # an expansion: substitutions inside it run
        return Word(text, static=False)

    def string(self, node: tree_sitter.Node, cwd: Word | None) -> Word:
        source = node.text or b""
        start = node.start_byte
        inner_start = start + (2 if node.type == "translated_string" else 1)
        pieces: list[str] = []
        static = True
        pos = inner_start
        for child in node.named_children:
            pieces.append(_unescape_dq(source[pos - start:child.start_byte - start].decode(errors="replace")))
            if child.type == "string_content":
                pieces.append(_unescape_dq(_text(child)))
            else:
                self.walk(child, cwd)
                pieces.append(_text(child))
                static = False
            pos = child.end_byte
        pieces.append(_unescape_dq(source[pos - start:node.end_byte - start - 1].decode(errors="replace")))
        return Word("".join(pieces), static)

    # --- simple commands
    def command(self, node: tree_sitter.Node, cwd: Word | None, stdin_script: str | None, piped: bool) -> Word | None:
        words: list[Word] = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.walk(child, cwd)  # FOO=$(…) runs what it substitutes
            elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                self.redirect(child, cwd)
            elif child.type != "comment":
                words.append(self.word(child, cwd))
        if not words:
            return cwd
        return self.simple(words, _text(node), cwd, (), stdin_script, piped)

    def simple(self, words: list[Word], text: str, cwd: Word | None, wrappers: tuple[str, ...],
               stdin_script: str | None, piped: bool) -> Word | None:
        while words:
            head = words[0]
            if not head.static:
                self.unclear.append(Unclear(f"the program {head.text} is known only when the line runs", text))
                return cwd
            name = posixpath.basename(head.text)
            if name in _LOOKUPS and (not _LOOKUPS[name] or any(w.text in _LOOKUPS[name] for w in words[1:2])):
                return cwd
            if name in _WRAPPERS:
                values, plain = _WRAPPERS[name]
                rest = _after_options(words[1:], values, plain)
                wrappers += (name,)
                if name == "xargs":
                    rest = rest or [Word("echo")]
                    rest = [*rest, Word("<arguments read from standard input>", static=False)]
                words = rest
                continue
            if len(words) > 1 and (name, words[1].text) in _RUNNERS:
                wrappers += (f"{name} {words[1].text}",)
                words = _after_options(words[2:], frozenset(), 0)
                continue
            if name == "env":
                words, cwd = self.env(words[1:], cwd, text)
                wrappers += ("env",)
                continue
            break
        if not words:
            return cwd
        name = posixpath.basename(words[0].text)
        if name in ("cd", "pushd"):
            target = next((w for w in words[1:] if not w.text.startswith("-") or w.text == "-"), Word("~"))
            return _join(cwd, target)
        if name == "popd":
            return Word("<the folder popd returns to>", static=False)
        if name in _SHELLS:
            self.shell(words, text, cwd, wrappers, stdin_script, piped)
            return cwd
        if name == "eval":
            if all(w.static for w in words[1:]):
                self.line(" ".join(w.text for w in words[1:]), cwd, self.depth + 1)
            else:
                self.unclear.append(Unclear("eval of a string known only when the line runs", text))
            return cwd
        command = Command(tuple(words), text, cwd, wrappers)
        self.commands.append(command)
        if name == "find":
            self.find_exec(command)
        return cwd

    def env(self, words: list[Word], cwd: Word | None, text: str) -> tuple[list[Word], Word | None]:
        i = 0
        while i < len(words):
            w = words[i].text
            if w in ("-u", "--unset"):
                i += 2
            elif w in ("-C", "--chdir") and i + 1 < len(words):
                cwd = _join(cwd, words[i + 1])
                i += 2
            elif w in ("-S", "--split-string") and i + 1 < len(words):
                split = words[i + 1]
                return [Word(part, split.static) for part in split.text.split()] + words[i + 2:], cwd
            elif w.startswith("-") or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w):
                i += 1
            else:
                break
        return words[i:], cwd

    def shell(self, words: list[Word], text: str, cwd: Word | None, wrappers: tuple[str, ...],
              stdin_script: str | None, piped: bool) -> None:
        i = 1
        while i < len(words):
            w = words[i]
            if w.text in _SHELL_VALUE_OPTS:
                i += 2
                continue
            if w.text.startswith(("-", "+")) and w.text not in ("-", "--"):
                if "c" in w.text.lstrip("-+") and not w.text.startswith("--"):
                    script = words[i + 1] if i + 1 < len(words) else None
                    if script is None or not script.static:
                        self.unclear.append(Unclear("a shell runs a string known only when the line runs", text))
                    else:
                        self.line(script.text, cwd, self.depth + 1)
                    return
                i += 1
                continue
            break
        if i < len(words) and words[i].text not in ("-", "--"):  # bash script.sh: runs a script file
            self.commands.append(Command(tuple(words), text, cwd, wrappers))
        elif stdin_script is not None:
            self.line(stdin_script, cwd, self.depth + 1)
        else:
            where = "a pipe" if piped else "its standard input"
            self.unclear.append(Unclear(f"a shell runs a script read from {where}", text))

    def find_exec(self, find: Command) -> None:
        """``find ROOT… -exec CMD {} ;``: CMD runs on what find finds, named ``ROOT/PATTERN``."""
        args = list(find.args)
        roots = [w for w in _leading_roots(args)] or [Word(".")]
        pattern = next((args[i + 1].text for i, w in enumerate(args[:-1]) if w.text in ("-name", "-iname")), "*")
        i = 0
        while i < len(args):
            if args[i].text in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next((j for j in range(i + 1, len(args)) if args[j].text in (";", "+")), len(args))
                for root in roots:
                    found = Word(posixpath.join(root.text, "**", pattern), root.static)
                    sub = [found if w.text == "{}" else Word(w.text.replace("{}", found.text), w.static) for w in args[i + 1:end]]
                    before = len(self.commands)
                    self.simple(sub, find.text, find.cwd, find.wrappers, None, False)
                    self.commands[before:] = [replace(c, via="find -exec") for c in self.commands[before:]]
                i = end
            i += 1


def _leading_roots(args: list[Word]) -> list[Word]:
    roots = []
    for w in args:
        if w.text.startswith(("-", "(", "!")) or w.text in ("(", ")", "!"):
            break
        roots.append(w)
    return roots


def _after_options(words: list[Word], values: frozenset[str], plain: int) -> list[Word]:
    i = 0
    while i < len(words):
        w = words[i].text
        if w == "--":
            i += 1
            break
        if w.startswith("-") and len(w) > 1:
            i += 2 if w in values else 1
            continue
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w):  # sudo FOO=1 cmd
            i += 1
            continue
        break
    return words[i + plain:]


def _join(cwd: Word | None, target: Word) -> Word:
    if not target.static:
        return target
    if cwd is None or target.text.startswith(("/", "~")):
        return target
    return Word(posixpath.join(cwd.text, target.text), cwd.static)


def _unescape_dq(text: str) -> str:
    return re.sub(r'\\([$`"\\])', r"\1", text.replace("\\\n", ""))


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode(errors="replace")


def _first_error(node: tree_sitter.Node) -> tree_sitter.Node | None:
    if node.type == "ERROR" or node.is_missing:
        return node
    for child in node.children:
        if child.has_error:
            return _first_error(child)
    return None
