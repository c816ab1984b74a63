"""``Engine.blame`` and ``takeback blame``: who wrote each line of a file now (``core/blame.py``,
``engine/blame.py``). Real git repositories in temp folders, the real engine through the hooks'
step API, the CLI as a real process; and a property test against a reference model that tracks
each line's author through random turns, steps, person edits, undos, renames (the person's
``git mv``, an agent's ``mv``) and git history (commits, amends, rebases, squash merges and
cherry-picks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import git, make_repo
from takeback.core.models import BatchChange, Blame
from takeback.engine.engine import Engine
from takeback.engine.timeline_cache import TAIL_ENTRIES
from takeback.storage.store import Store

from .support import batch, open_engine

SERVER = str(Path(__file__).resolve().parents[2] / "server")
BASE = "one\ntwo\nthree\nfour\nfive\n"


def _turn(engine: Engine, path: Path, steps: list[str], prompt: str, session: str = "s1") -> int:
    """An agent's turn through its hooks: one step per content in ``steps``; its number."""
    entry = engine.begin_turn(label=prompt, session=session, agent="claude", source="hook", bracket=False)
    for k, content in enumerate(steps):
        key = f"{entry.id}-{k}"
        engine.begin_step(key, [str(path)], session=session, agent="claude")
        path.write_text(content)
        engine.end_step(key, f"Edit {path.name} ({k + 1})")
    engine.end_turn(entry.id)
    return entry.number


def _who(blame: Blame) -> list[tuple]:
    """Each line as (text, kind, number.step or why, edited_from's number.step)."""
    out = []
    for line in blame.lines:
        o = line.origin
        where = f"{o.number}.{o.step}" if o.kind == "turn" else o.why
        was = f"{o.edited_from.number}.{o.edited_from.step}" if o.edited_from else None
        out.append((line.text, o.kind, where, was))
    return out


def test_turns_steps_and_the_person_between_them(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"f.txt": BASE})
    f = ws / "f.txt"
    engine = open_engine(ws)
    first = _turn(engine, f, [BASE.replace("two", "TWO"), BASE.replace("two", "TWO") + "six\n"], "make two loud")
    f.write_text(f.read_text().replace("TWO", "Two").replace("four", "4"))  # the person, between turns
    second = _turn(engine, f, [f.read_text().replace("five", "FIVE")], "and five")
    f.write_text(f.read_text() + "seven\n")  # the person, since

    blame = engine.blame(str(f))
    assert _who(blame) == [
        ("one", "before", None, None),
        ("Two", "person", "between", f"{first}.1"),
        ("three", "before", None, None),
        ("4", "person", "between", None),
        ("FIVE", "turn", f"{second}.1", None),
        ("six", "turn", f"{first}.2", None),
        ("seven", "person", "since", None),
    ]
    six = blame.lines[5].origin
    assert (six.agent, six.session, six.label, six.step_label) == ("claude", "s1", "make two loud", "Edit f.txt (2)")
    assert blame.entries == 2
    head = git(ws, "rev-parse", "HEAD").strip()
    assert {line.origin.commit for line in blame.lines if line.origin.kind == "before"} == {head}
    assert [line.line for line in engine.blame(str(f), 2, 3).lines] == [2, 3]
    assert [line.line for line in engine.blame(str(f), 6, 99).lines] == [6, 7]


def test_the_person_between_steps_of_one_turn_and_in_a_mark(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"f.txt": BASE})
    f = ws / "f.txt"
    engine = open_engine(ws)
    entry = engine.begin_turn(label="p", session="s1", agent="codex", source="hook", bracket=False)
    engine.begin_step("a", [str(f)], session="s1", agent="codex")
    f.write_text(BASE.replace("one", "ONE"))
    engine.end_step("a", "Edit")
    f.write_text(f.read_text().replace("three", "3"))  # the person, while the agent thinks
    engine.begin_step("b", [str(f)], session="s1", agent="codex")
    f.write_text(f.read_text().replace("five", "FIVE"))
    engine.end_step("b", "Edit")
    engine.end_turn(entry.id)
    f.write_text(f.read_text().replace("ONE", "One"))
    mark = engine.mark("mine")
    assert [w[1:] for w in _who(engine.blame(str(f)))] == [
        ("person", "mark", f"{entry.number}.1"), ("before", None, None), ("person", "between", None),
        ("before", None, None), ("turn", f"{entry.number}.2", None),
    ]
    assert engine.blame(str(f)).lines[0].origin.number == mark.number


def test_commit_amend_rebase_and_squash_change_nothing(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"f.txt": BASE, "g.txt": "g\n"})
    f = ws / "f.txt"
    engine = open_engine(ws)
    git(ws, "checkout", "-q", "-b", "work")
    first = _turn(engine, f, [BASE.replace("two", "TWO")], "first")
    git(ws, "commit", "-qam", "agent's first")
    f.write_text(f.read_text().replace("four", "4"))
    second = _turn(engine, f, [f.read_text() + "six\n"], "second")
    git(ws, "commit", "-qam", "agent's second")
    expected = [w[:4] for w in _who(engine.blame(str(f)))]
    assert expected == [("one", "before", None, None), ("TWO", "turn", f"{first}.1", None), ("three", "before", None, None),
                        ("4", "person", "between", None), ("five", "before", None, None), ("six", "turn", f"{second}.1", None)]

    git(ws, "commit", "-q", "--amend", "-m", "amended")
    assert _who(engine.blame(str(f))) == expected
    git(ws, "checkout", "-q", "main")  # main moves on; work is rebased onto it, then squashed into main
    (ws / "g.txt").write_text("g2\n")
    git(ws, "commit", "-qam", "main moves")
    git(ws, "checkout", "-q", "work")
    git(ws, "rebase", "-q", "main")
    assert _who(engine.blame(str(f))) == expected
    git(ws, "checkout", "-q", "main")
    git(ws, "merge", "-q", "--squash", "work")
    git(ws, "commit", "-qm", "squashed")
    git(ws, "branch", "-q", "-D", "work")
    blame = engine.blame(str(f))
    assert _who(blame) == expected
    base = git(ws, "rev-list", "--max-parents=0", "HEAD").strip()
    assert {line.origin.commit for line in blame.lines if line.origin.kind == "before"} == {base}


def test_a_reverted_turns_lines_are_gone_and_come_back_with_its_redo(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"f.txt": BASE})
    f = ws / "f.txt"
    engine = open_engine(ws)
    first = _turn(engine, f, [BASE.replace("two", "TWO")], "first")
    second = _turn(engine, f, [f.read_text().replace("four", "FOUR") + "six\n"], "second")
    engine.revert(str(first))
    assert f.read_text() == BASE.replace("four", "FOUR") + "six\n"
    assert [w[1:3] for w in _who(engine.blame(str(f)))] == [
        ("before", None), ("before", None), ("before", None), ("turn", f"{second}.1"), ("before", None), ("turn", f"{second}.1")]
    engine.redo()  # what the revert took away comes back: turn #first's line, with its turn
    assert f.read_text().startswith("one\nTWO\n")
    assert _who(engine.blame(str(f)))[1][1:3] == ("turn", f"{first}.1")


def test_blame_on_the_command_line(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"src/f.txt": BASE})
    f = ws / "src/f.txt"
    engine = open_engine(ws)
    number = _turn(engine, f, [BASE.replace("two", "TWO\x1b]0;x\x07")], "p")
    f.write_text(f.read_text().replace("three", "3"))
    engine.close()
    env = {**os.environ, "PYTHONPATH": SERVER, "TAKEBACK_RESIDENT": "0"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "takeback", "blame", *args], cwd=ws / "src", env=env,
                              capture_output=True, text=True, check=False)

    out = run("f.txt", "-L", "2,3")
    assert out.returncode == 0, out.stderr
    head = git(ws, "rev-parse", "--short=7", "HEAD").strip()
    assert out.stdout.splitlines() == [f"#{number}.1 claude 2) TWO\\033]0;x\\a", "person      3) 3"]
    whole = run("f.txt").stdout.splitlines()
    assert whole[0] == f"^{head} (git) 1) one"
    data = json.loads(run("f.txt", "--json", "-L", "2").stdout)
    assert [(line["line"], line["origin"]["kind"], line["origin"]["number"]) for line in data["lines"]] == [(2, "turn", number)]
    assert run("f.txt", "-L", "3,2").returncode == 2
    assert run("missing.txt").returncode == 3
    for spec, said in (("x,2", "give lines as A,B"), ("0,2", "counted from 1"), ("2,-1", "counted from 1")):
        refused = run("f.txt", "-L", spec)
        assert refused.returncode == 2 and said in refused.stderr and refused.stderr.count("\n") == 1, (spec, refused)
    to_end = run("f.txt", "-L", "3,").stdout.splitlines()  # (no last line: to the end)
    assert len(to_end) == 3 and to_end[0].split() == ["person", "3)", "3"] and to_end[2].endswith(" 5) five"), to_end


def test_blame_reads_only_the_files_own_entries(tmp_path: Path, monkeypatch) -> None:
    """A file one of 300 entries touched: its blame reads that entry's contents and file list
    only (counted, not timed), from an engine that opened the timeline cache's pages."""
    ws = make_repo(tmp_path / "ws", {"f.txt": BASE, "g.txt": "g\n"})
    engine = open_engine(ws)
    target = 0
    for n in range(300):
        if n == 150:
            target = batch(engine, ws, {"f.txt": BASE.replace("three", "THREE")}, label="the one")[0].number
        else:
            batch(engine, ws, {"g.txt": f"g {n}\n", f"other/{n % 7}.txt": f"{n}\n"}, label=f"other {n}")
    open_engine(ws).close()  # (opening folds the log and writes the cache)
    reads: list[str] = []
    metas: list[str] = []
    original_blob, original_meta = Store.read_blob, Store.read_meta
    monkeypatch.setattr(Store, "read_blob", lambda self, oid: reads.append(oid) or original_blob(self, oid))
    monkeypatch.setattr(Store, "read_meta", lambda self, oid: metas.append(oid) or original_meta(self, oid))
    again = open_engine(ws)
    assert again.history.pages_read == 0 and metas == []  # opening read the cache's index only
    blame = again.blame(str(ws / "f.txt"))
    assert [(line.text, line.origin.number) for line in blame.lines if line.origin.kind == "turn"] == [("THREE", target)]
    assert blame.entries == 1
    one = again.timeline.resolve(str(target)).checkpoints[0].changes[0]
    assert sorted(reads) == sorted({one.before.oid, one.after.oid})  # the one entry's contents, each once
    # file lists read from the log: the one entry's, and the cache's tail (its newest entries, kept without paths)
    assert again.history.pages_read >= 1 and again.history.lists_read <= 1 + TAIL_ENTRIES

    newest = again.blame(str(ws / "g.txt"))  # (touched by the cache's tail too: entries kept without their paths)
    assert [(line.text, line.origin.number) for line in newest.lines] == [("g 299", 300)] and newest.entries == 299

    reads.clear()
    lists = again.history.lists_read
    batch(again, ws, {"f.txt": (ws / "f.txt").read_text() + "six\n"}, label="later")
    blame = again.blame(str(ws / "f.txt"))  # a long-lived process's next blame carries on from its last one
    latest = again.timeline.last_entry().checkpoints[0].changes[0]
    assert blame.lines[-1].origin.number == again.timeline.last_entry().begun.number and blame.entries == 2
    assert reads == [latest.after.oid] and again.history.lists_read == lists  # only the new version is read


def test_a_renamed_files_lines_keep_their_authors(tmp_path: Path) -> None:
    """An editor's rename (``renamed_from``), an agent's ``mv`` in a step, and the person's
    ``git mv`` between turns: the file's history starts with its old path's."""
    ws = make_repo(tmp_path / "ws", {"a.txt": BASE})
    engine = open_engine(ws)
    first = _turn(engine, ws / "a.txt", [BASE.replace("two", "TWO")], "first")
    entry = engine.begin_turn(label="move it", session="s1", agent="claude", source="hook", bracket=False)
    engine.begin_step("mv", [str(ws / "a.txt"), str(ws / "b.txt")], session="s1", agent="claude")
    (ws / "a.txt").rename(ws / "b.txt")
    engine.end_step("mv", "Bash mv a.txt b.txt")
    engine.end_turn(entry.id)
    expected = [("one", "before", None, None), ("TWO", "turn", f"{first}.1", None), ("three", "before", None, None),
                ("four", "before", None, None), ("five", "before", None, None)]
    assert _who(engine.blame(str(ws / "b.txt"))) == expected

    git(ws, "add", "-A")
    git(ws, "mv", "b.txt", "c.txt")  # the person, between turns: no record of it until the next turn
    assert _who(engine.blame(str(ws / "c.txt"))) == expected
    second = _turn(engine, ws / "c.txt", [(ws / "c.txt").read_text().replace("four", "FOUR")], "second")
    expected[3] = ("FOUR", "turn", f"{second}.1", None)
    assert _who(engine.blame(str(ws / "c.txt"))) == expected

    text = (ws / "c.txt").read_text()
    engine.record_batch([BatchChange(path=str(ws / "d.txt"), after=text.encode(), renamed_from=str(ws / "c.txt")),
                                   BatchChange(path=str(ws / "c.txt"), after=None)], label="rename")
    (ws / "c.txt").rename(ws / "d.txt")
    blame = engine.blame(str(ws / "d.txt"))
    assert _who(blame) == expected and blame.entries == 4


# --------------------------------------------------------------------------- the property


class _Model:
    """The reference: the file as (text, author) lines, each author what wrote the line —
    ("turn", N, k), ("person", edited_from) or ("before",) — edited by hand, never by a diff.
    What the person wrote before the timeline first recorded the file is ``before`` it."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, tuple]] = [(f"base {i}", ("before",)) for i in range(4)]
        self.counter = 0

    def text(self) -> str:
        return "".join(t + "\n" for t, _ in self.lines)

    def edit(self, ops: list[str], author: tuple) -> None:
        """``ops[i]`` for line i (``keep``, ``modify``, ``delete``, ``insert``: a new line after
        it), and ``ops[-1]`` (one more) for a new line at the top; edited lines never touch."""
        out: list[tuple[str, tuple]] = []
        if ops[-1] == "insert":
            out.append(self._new(author, None))
        for (text, who), op in zip(self.lines, ops, strict=False):
            if op == "modify":
                out.append(self._new(author, who))
            elif op != "delete":
                out.append((text, who))
            if op == "insert":
                out.append(self._new(author, None))
        self.lines = out

    def _new(self, author: tuple, replaced: tuple | None) -> tuple[str, tuple]:
        self.counter += 1
        if author[0] == "person" and replaced is not None:
            agent = replaced if replaced[0] == "turn" else replaced[1] if replaced[0] == "person" else None
            author = ("person", agent)
        return f"{author[0]} {self.counter}", author


@st.composite
def _ops(draw: st.DrawFn, size: int) -> list[str]:
    """An edit of a ``size``-line file: a few lines changed, none next to another changed one."""
    ops = ["keep"] * (size + 1)
    top = draw(st.booleans()) if size == 0 else draw(st.sampled_from([False] * 4 + [True]))
    i = 1 if top else 0
    ops[-1] = "insert" if top else "keep"
    while i < size:
        op = draw(st.sampled_from(["keep", "keep", "modify", "delete", "insert"]))
        ops[i] = op
        i += 2 if op != "keep" else 1
    if size and all(op == "keep" for op in ops):
        ops[draw(st.integers(0, size - 1))] = "modify"
    return ops


def _commit(ws: Path, message: str, *extra: str) -> None:
    """Everything in the work tree committed on the current branch (nothing to commit is fine)."""
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", message, *extra, check=False)


def _git_history(ws: Path, action: str, round_: int) -> None:
    """What the person does with git that moves no line of the work tree: commit, amend, rebase
    the work branch onto a main that moved, squash-merge it into main (and branch again from
    there), cherry-pick its last commit onto its parent (and take that as the branch)."""
    if action in ("commit", "amend"):
        _commit(ws, action, *(["--amend"] if action == "amend" else []))
    elif action == "rebase":
        _commit(ws, "before the rebase")
        git(ws, "checkout", "-q", "main")
        (ws / "g.txt").write_text(f"g {round_}\n")
        _commit(ws, "main moves")
        git(ws, "checkout", "-q", "work")
        git(ws, "rebase", "-q", "main")
    elif action == "squash":
        _commit(ws, "before the squash")
        git(ws, "checkout", "-q", "main")
        git(ws, "merge", "-q", "--squash", "work")
        _commit(ws, "squashed")
        git(ws, "branch", "-q", "-D", "work")
        git(ws, "checkout", "-q", "-b", "work")
        git(ws, "commit", "-q", "--allow-empty", "-m", "work starts again")
    elif action == "cherry-pick":
        _commit(ws, "to pick", "--allow-empty")
        picked = git(ws, "rev-parse", "HEAD").strip()
        git(ws, "checkout", "-q", "-b", "pick", "HEAD~1")
        git(ws, "cherry-pick", "--allow-empty", picked)
        git(ws, "branch", "-q", "-D", "work")
        git(ws, "branch", "-q", "-m", "work")


GIT_ACTIONS = ("commit", "amend", "rebase", "squash", "cherry-pick")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_line_agrees_with_the_reference_model(tmp_path_factory, data: st.DataObject) -> None:
    ws = make_repo(tmp_path_factory.mktemp("prop") / "ws", {"f.txt": _Model().text(), "g.txt": "g\n"})
    git(ws, "checkout", "-q", "-b", "work")
    git(ws, "commit", "-q", "--allow-empty", "-m", "work starts")  # (an amend never rewrites main's)
    f = ws / "f.txt"
    engine = open_engine(ws)
    model = _Model()
    last_turn: tuple[int, list] | None = None  # a turn undo may take back cleanly, and the lines before it
    recorded = False  # whether a turn recorded the file yet
    typed = False  # whether the person changed it (its lines, its name) since the last recorded version
    for round_ in range(data.draw(st.integers(2, 6))):
        action = data.draw(st.sampled_from(["turn", "turn", "person", "undo", "git mv", "agent mv", *GIT_ACTIONS]))
        if action == "turn":
            entry = engine.begin_turn(label=f"prompt {round_}", session="s", agent="claude", source="hook", bracket=False)
            before, clean = list(model.lines), True
            for k in range(data.draw(st.integers(1, 2))):
                if k and data.draw(st.booleans()):  # the person, between two steps
                    model.edit(data.draw(_ops(len(model.lines))), ("person", None))
                    f.write_text(model.text())
                    clean = False
                engine.begin_step(f"{entry.id}.{k}", [str(f)], session="s", agent="claude")
                model.edit(data.draw(_ops(len(model.lines))), ("turn", entry.number, k + 1))
                f.write_text(model.text())
                engine.end_step(f"{entry.id}.{k}", "Edit")
            engine.end_turn(entry.id)
            last_turn, recorded, typed = (entry.number, before) if clean else None, True, False
        elif action == "person" and not typed:  # (two edits with no record between are one to any reader)
            typed = True
            model.edit(data.draw(_ops(len(model.lines))), ("person", None) if recorded else ("before",))
            f.write_text(model.text())
            last_turn = None
        elif action == "git mv" and not typed:  # the person renames it between turns: its lines keep their authors
            moved = ws / f"f{round_}.txt"
            git(ws, "add", "-A")
            git(ws, "mv", f.name, moved.name)
            f, typed, last_turn = moved, True, None
        elif action == "agent mv":  # an agent's step renames it (a shell's mv): its lines keep their authors
            entry = engine.begin_turn(label=f"rename {round_}", session="s", agent="claude", source="hook", bracket=False)
            moved = ws / f"f{round_}.txt"
            engine.begin_step(f"{entry.id}.mv", [str(f), str(moved)], session="s", agent="claude")
            f.rename(moved)
            engine.end_step(f"{entry.id}.mv", "Bash mv")
            engine.end_turn(entry.id)
            f, recorded, typed, last_turn = moved, True, False, None
        elif action == "undo" and last_turn is not None:
            engine.undo()
            model.lines, last_turn, typed = last_turn[1], None, False
        elif action in GIT_ACTIONS:
            _git_history(ws, action, round_)
        assert f.read_text() == model.text()

    got = [(line.text, _author(line.origin)) for line in engine.blame(str(f)).lines]
    assert got == model.lines


def _author(origin) -> tuple:
    if origin.kind == "turn":
        return ("turn", origin.number, origin.step)
    if origin.kind == "person":
        return ("person", _author(origin.edited_from) if origin.edited_from else None)
    return (origin.kind,)


def test_lines_after_a_version_that_is_not_text_are_unknown(tmp_path: Path) -> None:
    """A turn wrote binary content into the file, the next one text again: which lines the
    second wrote cannot be told from a version that has no lines, so they are "unknown", never
    someone's."""
    ws = make_repo(tmp_path / "ws", {"f.txt": BASE})
    f = ws / "f.txt"
    engine = open_engine(ws)
    _turn(engine, f, ["one\x00binary\n"], "make it binary")
    _turn(engine, f, ["alpha\nbeta\n"], "text again")
    assert {line.origin.kind for line in engine.blame(str(f)).lines} == {"unknown"}
    engine.close()


def test_head_blame_answers_none_where_head_holds_no_text_of_the_file(tmp_path: Path) -> None:
    """``head_blame`` (git's commit for lines before the timeline): None for a bare repository,
    a path outside the work tree, a repository with no commit yet, a symlink and a binary file
    at HEAD; each line's commit otherwise."""
    import pygit2

    from takeback.engine.blame import head_blame

    ws = make_repo(tmp_path / "ws", {"f.txt": BASE, "bin.dat": "x\x00y"})
    (ws / "link").symlink_to("f.txt")
    git(ws, "add", "link")
    git(ws, "commit", "-qm", "link")
    repo = pygit2.Repository(str(ws))
    content, commits = head_blame(repo, ws / "f.txt") or (b"", [])
    assert content == BASE.encode() and len(commits) == 5 and all(len(c) == 40 for c in commits)
    assert head_blame(repo, ws / "link") is None and head_blame(repo, ws / "bin.dat") is None
    assert head_blame(repo, tmp_path / "elsewhere.txt") is None and head_blame(repo, ws / "untracked.txt") is None
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    assert head_blame(pygit2.Repository(str(tmp_path / "bare.git")), ws / "f.txt") is None
    git(tmp_path, "init", "-q", "fresh")
    assert head_blame(pygit2.Repository(str(tmp_path / "fresh")), tmp_path / "fresh" / "f.txt") is None
