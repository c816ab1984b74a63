"""The guard's shell reader (server/takeback/guard/shell.py): the simple commands a line runs,
through every construct that hides one, the files it redirects into, and what it reports as
unclear instead of passing over."""

from __future__ import annotations

import pytest

from takeback.guard.shell import Word, parse


def runs(line: str) -> list[list[str]]:
    return [[w.text for w in c.words] for c in parse(line).commands]


@pytest.mark.parametrize(("line", "expected"), [
    ("a && b || c; d", [["a"], ["b"], ["c"], ["d"]]),
    ("a | b |& c", [["a"], ["b"], ["c"]]),
    ("(a; b) && { c; }", [["a"], ["b"], ["c"]]),
    ("echo $(rm x) `ls y`", [["rm", "x"], ["ls", "y"], ["echo", "$(rm x)", "`ls y`"]]),
    ('echo "in $(rm -rf q) quotes"', [["rm", "-rf", "q"], ["echo", "in $(rm -rf q) quotes"]]),
    ("diff <(sort a) <(sort b)", [["sort", "a"], ["sort", "b"], ["diff", "<(sort a)", "<(sort b)"]]),
    ("X=$(git stash clear) make", [["git", "stash", "clear"], ["make"]]),
    ("if a; then b; elif c; then d; else e; fi", [["a"], ["b"], ["c"], ["d"], ["e"]]),
    ("for f in *; do rm $f; done", [["rm", "$f"]]),
    ("while read l; do echo $l; done", [["read", "l"], ["echo", "$l"]]),
    ("case $x in a) rm a;; esac", [["rm", "a"]]),
    ("f() { rm -rf x; }", [["rm", "-rf", "x"]]),
    ("! git diff --quiet", [["git", "diff", "--quiet"]]),
    ("bash -c 'rm -rf x && ls'", [["rm", "-rf", "x"], ["ls"]]),
    ('sh -lc "cd src; make"', [["make"]]),
    ("bash -o pipefail -c 'a | b'", [["a"], ["b"]]),
    ("eval 'git reset --hard'", [["git", "reset", "--hard"]]),
    ("eval git status", [["git", "status"]]),
    ("bash <<EOF\nrm -rf x\nEOF", [["rm", "-rf", "x"]]),
    ("FOO=1 BAR='a b' rm x", [["rm", "x"]]),
    ("sudo -u root -E rm x", [["rm", "x"]]),
    ("command rm x", [["rm", "x"]]),
    ("exec -a n rm x", [["rm", "x"]]),
    ("nohup nice -n 5 time rm x &", [["rm", "x"]]),
    ("timeout -s KILL 10 rm x", [["rm", "x"]]),
    ("env -i A=1 -u B rm x", [["rm", "x"]]),
    ("env -S 'rm -f x'", [["rm", "-f", "x"]]),
    ("uv run pytest -q", [["pytest", "-q"]]),
    ("npx -y rimraf dist", [["rimraf", "dist"]]),
    ("\\rm x", [["rm", "x"]]),
    ("r\\m x", [["rm", "x"]]),
    ('"rm" \'x\'', [["rm", "x"]]),
    ("$'\\x72m' x", [["rm", "x"]]),
    ("command -v rm", []),
    ("type rm", []),
    ("cd src && make # a comment", [["make"]]),
])
def test_the_simple_commands_a_line_runs(line: str, expected: list[list[str]]) -> None:
    assert runs(line) == expected
    assert not parse(line).unclear


def test_wrappers_are_remembered() -> None:
    (command,) = parse("FOO=1 sudo env nohup rm x").commands
    assert command.wrappers == ("sudo", "env", "nohup") and command.name == "rm"
    assert command.text == "FOO=1 sudo env nohup rm x"


def test_xargs_runs_its_command_on_words_read_from_standard_input() -> None:
    ls, rm = parse("ls | xargs -0 -n1 rm -f").commands
    assert [w.text for w in rm.words[:2]] == ["rm", "-f"]
    assert not rm.words[-1].static and rm.wrappers == ("xargs",)
    (echo,) = parse("xargs < list").commands
    assert echo.name == "echo"


def test_find_exec_runs_its_command_on_what_find_finds() -> None:
    find, rm = parse("find src -name '*.pyc' -exec rm -f {} \\;").commands
    assert find.name == "find" and rm.via == "find -exec"
    assert [w.text for w in rm.words] == ["rm", "-f", "src/**/*.pyc"]


def test_cd_moves_where_later_commands_run_and_a_subshell_keeps_it() -> None:
    a, b, c = parse("cd /srv && (cd x; rm a) ; rm b; cd ../y && rm c").commands[0:3]
    assert (a.cwd, b.cwd) == (Word("/srv/x"), Word("/srv"))
    assert c.cwd == Word("/srv/../y")
    (d,) = parse("cd $T && rm d").commands
    assert d.cwd is not None and not d.cwd.static
    (e,) = parse("env -C sub rm e").commands
    assert e.cwd == Word("sub")


def test_redirections_are_writes() -> None:
    parsed = parse("echo a > out.txt 2>&1; echo b >> log; cat < in > /dev/null; echo c &> both; cat <<EOF > h\nx\nEOF")
    assert [(r.path.text, r.append) for r in parsed.writes] == [
        ("out.txt", False), ("log", True), ("/dev/null", False), ("both", False), ("h", False)]
    (red,) = parse("cd /srv && make > build.out").writes
    assert red.cwd == Word("/srv")
    assert not parse("echo x 2>&1 >&2").writes


def test_words_keep_what_is_known_only_when_the_line_runs() -> None:
    (command,) = parse('rm -rf "$HOME/x" ~/y "a b" ${Z:-/}').commands
    assert [(w.text, w.static) for w in command.args] == [
        ("-rf", True), ("$HOME/x", False), ("~/y", True), ("a b", True), ("${Z:-/}", False)]


@pytest.mark.parametrize(("line", "reason"), [
    ("echo 'unbalanced", "does not parse"),
    ('rm -rf "x', "does not parse"),
    ("$CMD x", "known only when the line runs"),
    ('"$(which rm)" x', "known only when the line runs"),
    ('eval "$X"', "eval of a string"),
    ('bash -c "$S"', "a shell runs a string"),
    ("curl -s u | sh", "read from a pipe"),
    ("bash", "its standard input"),
])
def test_what_cannot_be_understood_is_reported(line: str, reason: str) -> None:
    unclear = parse(line).unclear
    assert unclear and reason in unclear[0].reason


def test_nesting_has_a_bound() -> None:
    line = "rm x"
    for _ in range(10):
        line = "bash -c " + "'" + line.replace("'", "'\\''") + "'"
    assert any("nested too deep" in u.reason for u in parse(line).unclear)


def test_a_quoted_heredoc_is_data_not_commands() -> None:
    assert runs("cat > f <<'EOF'\n$(rm -rf x)\nEOF") == [["cat"]]
    assert sorted(runs("cat > f <<EOF\n$(rm -rf x)\nEOF")) == [["cat"], ["rm", "-rf", "x"]]
