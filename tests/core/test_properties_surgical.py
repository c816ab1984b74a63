"""Property-based tests of surgical reverts: one step, some files, one hunk of a past turn.

Agent turns of several steps arrive as an agent's hooks send them (a prompt, ``begin_step`` /
``end_step`` around each tool call's writes, a stop). The files are real text files of several
lines: LF, CRLF, and each without a final newline; their agent lines are changed by the agent,
their person lines by the person, and a separator line sits between any two of them. The agent
also creates, rewrites and deletes a file of its own. Between steps, between turns and after
them the person edits their lines and their own file, and sometimes the agent's lines (then
taking those back must conflict). Then come random reverts of a step (``N.k``), of some files
(``paths`` or ``pathspec``, of a turn or of one step), and of one hunk (``hunk=(path, line)``, a
line of the file as it stands now, inside a hunk or not), with every ``on_conflict``; and the
undo of those reverts (a revert of the revert), at once or later.

The reference model is the one of ``test_properties.py``: units (a line, or a whole file) and,
per entry, the units each step changed (before, after); taking a change back follows
``support.take_back_unit`` per unit. A step's revert takes back that step's units; a files'
revert the units of those files; a hunk's revert the one agent line the named line is on (the
agent's own file is one hunk: its whole content), and a line no hunk covers is refused. With
``abort`` a conflict anywhere writes nothing; ``skip`` leaves each file with a conflict as it is;
``force`` puts the change's before back over the conflicting units; ``markers`` writes markers
(not modelled: such a revert is undone at once).

Checked after every rule: the workspace is byte-for-byte the model's (so no byte the person
wrote is lost, except the units ``force`` was asked to overwrite); an error writes nothing; the
undo of a revert at once gives back the workspace byte for byte; the user's git state never
changes.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test

from helpers import git_state, make_repo, write_files
from takeback.errors import InvalidInput, NotFound, NothingToDo

from .support import CONFLICT, full_state, net_of, nothing_written, open_engine, take_back_unit

SLOTS = 2  # agent and person lines per text file, besides the agent's last line
TEXT = {  # path: (line ending, ends with it)
    "src/app.txt": ("\n", True),
    "src/win.txt": ("\r\n", True),
    "docs/guide.md": ("\n", False),
    "docs/win-open.txt": ("\r\n", False),
}
MADE = "src/made.txt"  # the agent's own file: created, rewritten, deleted (one unit)
PERSON = "notes/person.txt"  # the person's own file (one unit)
FILES = [*TEXT, MADE, PERSON]
AGENT_SLOTS: list[object] = [*range(SLOTS), "Z"]  # "Z": the file's last line
PATTERNS = {  # a pathspec, and the files it names (checked against the engine's reading)
    "src": lambda p: p.startswith("src/"),
    "docs/**": lambda p: p.startswith("docs/"),
    "**/*.md": lambda p: p.endswith(".md"),
    "src/made.txt": lambda p: p == MADE,
    "**/win*": lambda p: p.rsplit("/", 1)[-1].startswith("win"),
}
Unit = tuple[str, str, object]  # ("A", path, slot) an agent line; ("P", path, k) a person line; ("F", path, None) a file
Changes = dict[Unit, tuple[object, object]]


def file_of(unit: Unit) -> str:
    return unit[1]


def line_of(unit: Unit) -> int:
    """The 1-based line of an agent or person line unit in its file (fixed: no line is ever added)."""
    slot = unit[2]
    if slot == "Z":
        return 4 * SLOTS + 2
    return 4 * int(slot) + (2 if unit[0] == "A" else 4)  # type: ignore[call-overload]


@dataclass
class ModelEntry:
    number: int
    steps: list[Changes]  # a turn: one per step; an operation: one
    kind: str = "turn"
    between: set[Unit] = field(default_factory=set)  # the person's lines edited between its steps

    def files(self, step: int | None = None) -> set[str]:
        chosen = self.steps if step is None else [self.steps[step]]
        return {file_of(u) for changes in chosen for u in changes}

    def net(self, step: int | None = None) -> Changes:
        return net_of(self.steps if step is None else [self.steps[step]])


class Model:
    def __init__(self) -> None:
        self.units: dict[Unit, object] = {}
        for path in TEXT:
            for slot in AGENT_SLOTS:
                self.units[("A", path, slot)] = "initial"
            for k in range(SLOTS):
                self.units[("P", path, k)] = "initial"
        self.units[("F", MADE, None)] = None
        self.units[("F", PERSON, None)] = b"the person's notes\n"
        self.entries: dict[int, ModelEntry] = {}
        self.counter = 0

    def fresh(self, unit: Unit) -> object:
        self.counter += 1
        n = self.counter
        if unit[0] != "F":
            return f"v{n:04d}"
        if unit[1] == MADE:  # lines all its own (so any two versions differ in every line), sometimes no final newline
            return f"made {n} one\nmade {n} two\r\nmade {n} three" .encode() + (b"\n" if n % 2 else b"")
        return f"the person's notes {n}\n".encode()

    def render(self, path: str) -> bytes | None:
        if path not in TEXT:
            return self.units[("F", path, None)]  # type: ignore[return-value]
        eol, final = TEXT[path]
        name = path.rsplit("/", 1)[-1]
        lines = []
        for k in range(SLOTS):
            lines += [f"# {name} agent part {k}", f"agent {k}: {self.units[('A', path, k)]}",
                      f"# {name} person part {k}", f"person {k}: {self.units[('P', path, k)]}"]
        lines += [f"# {name} last part", f"agent last: {self.units[('A', path, 'Z')]}"]
        return (eol.join(lines) + (eol if final else "")).encode()

    def files(self) -> dict[str, bytes]:
        out = {}
        for path in FILES:
            content = self.render(path)
            if content is not None:
                out[path] = content
        return out

    def hunk_unit(self, entry: ModelEntry, step: int | None, path: str, line: int) -> Unit | None:
        """The unit whose change a hunk at ``line`` of ``path`` (as it stands now) takes back."""
        net = entry.net(step)
        if path == MADE:
            now = self.units[("F", MADE, None)]
            unit: Unit = ("F", MADE, None)
            if unit in net and net[unit][1] is not None and now is not None and 1 <= line <= len(now.splitlines()):  # type: ignore[union-attr]
                return unit
            return None
        for unit in net:
            if unit[0] == "A" and file_of(unit) == path and line_of(unit) == line:
                return unit
        return None


SEEN: Counter[str] = Counter()


class SurgicalSession(RuleBasedStateMachine):
    base: Path  # set by the test

    @initialize(use_git=st.booleans())
    def setup(self, use_git: bool) -> None:
        self.tmp = Path(tempfile.mkdtemp(dir=self.base))
        self.model = Model()
        self.ws = self.tmp / "ws"
        if use_git:
            make_repo(self.ws, self.model.files())
            self.git_before = git_state(self.ws)
        else:
            self.ws.mkdir()
            write_files(self.ws, self.model.files())
            self.git_before = None
        self.engine = open_engine(self.ws)
        self.turns = 0

    def teardown(self) -> None:
        if getattr(self, "engine", None) is not None:
            self.engine.close()
        if getattr(self, "git_before", None) is not None:
            assert git_state(self.ws) == self.git_before, "the user's git state changed"
        if getattr(self, "tmp", None) is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    # --------------------------------------------------------------- helpers

    def write_disk(self, paths: set[str]) -> None:
        for path in paths:
            content = self.model.render(path)
            target = self.ws / path
            if content is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)

    def person_change(self, data: st.DataObject, own_only: bool, near: set[str] | None = None) -> Unit:
        """The person changes one of their lines (``near``: in those files), their file, or
        (``own_only`` False) an agent's unit."""
        model = self.model
        units = [u for u in model.units if u[0] == "P" and (not near or file_of(u) in near)] + [("F", PERSON, None)]
        if not own_only:
            units += [u for u in model.units if u[0] == "A"] + ([("F", MADE, None)] if model.units[("F", MADE, None)] else [])
        unit = data.draw(st.sampled_from(units), label="person edits")
        model.units[unit] = model.fresh(unit)
        if unit[0] == "A" or unit[1] == MADE:
            SEEN["person edits the agent's work"] += 1
        self.write_disk({file_of(unit)})
        return unit

    def state_of(self, number: int) -> str:
        return next(e.state for e in self.engine.entries() if e.number == number)

    # --------------------------------------------------------------- the agent and the person

    @rule(data=st.data())
    def agent_turn(self, data: st.DataObject) -> None:
        """A turn of one to three steps, each one tool call writing one or two files; the person
        edits their own lines between steps now and then."""
        model = self.model
        self.turns += 1
        session = "s"
        self.engine.begin_turn(label=f"turn {self.turns}", session=session, agent="claude", source="hook", bracket=False)
        steps: list[Changes] = []
        between: set[Unit] = set()
        for k in range(data.draw(st.integers(1, 3), label="steps")):
            targets = data.draw(st.lists(st.sampled_from([*TEXT, MADE]), min_size=1, max_size=2, unique=True), label="step files")
            changes: Changes = {}
            for path in targets:
                if path == MADE:
                    unit: Unit = ("F", MADE, None)
                    gone = model.units[unit] is not None and data.draw(st.booleans(), label="delete it")
                    changes[unit] = (model.units[unit], None if gone else model.fresh(unit))
                else:
                    for slot in data.draw(st.lists(st.sampled_from(AGENT_SLOTS), min_size=1, max_size=2, unique=True), label="lines"):
                        unit = ("A", path, slot)
                        changes[unit] = (model.units[unit], model.fresh(unit))
            key = f"turn {self.turns} step {k}"
            self.engine.begin_step(key, sorted(targets), session=session, agent="claude")
            for unit, (_before, after) in changes.items():
                model.units[unit] = after
            self.write_disk(set(targets))
            assert self.engine.end_step(key, f"Edit {', '.join(targets)}") is not None
            steps.append(changes)
            if data.draw(st.booleans(), label="person between steps"):
                between.add(self.person_change(data, own_only=True, near=set(targets)))  # in files the next steps may write
                SEEN["person edits between steps"] += 1
        turn = self.engine.open_turn_of(session)
        assert turn is not None
        entry = self.engine.end_turn(turn=turn.id, ended_by="stop")
        assert len(self.engine.entry(str(entry.number)).checkpoints) == len(steps)
        model.entries[entry.number] = ModelEntry(entry.number, steps, between=between)
        SEEN[f"turn of {len(steps)} steps"] += 1

    @rule(data=st.data())
    def person_edit(self, data: st.DataObject) -> None:
        self.person_change(data, own_only=data.draw(st.integers(0, 3), label="own") > 0)

    # --------------------------------------------------------------- surgical reverts

    def _turns(self) -> list[ModelEntry]:
        return [e for e in self.model.entries.values() if e.kind == "turn"]

    def _target(self, data: st.DataObject, steps: bool) -> tuple[ModelEntry, int | None, str]:
        """A turn, maybe one step of it (index), and the name ``revert`` takes."""
        entry = data.draw(st.sampled_from(self._turns()), label="turn")
        if steps and data.draw(st.booleans(), label="one step of it"):
            k = data.draw(st.integers(0, len(entry.steps) - 1), label="step")
            return entry, k, f"{entry.number}.{k + 1}"
        return entry, None, f"#{entry.number}"

    def _surgical(self, data: st.DataObject, what: str, entry: ModelEntry, changes: list[Changes] | None, call,
                  error: type[Exception] | tuple[type[Exception], ...] = ()) -> None:
        """Carry out one revert and check it against the model: ``changes`` None means the model
        refuses it (``error``); else the changes it takes back, oldest first (a path's steps are
        taken back one by one, as ``planning.Planner`` does: a file a turn made and deleted
        again, which the person made since, is a conflict, not left alone)."""
        model = self.model
        if self.state_of(entry.number) == "reverted":
            with nothing_written(self.engine, self.ws, objects=False), pytest.raises(NothingToDo):
                call("abort")
            SEEN[f"{what}: already reverted"] += 1
            return
        if changes is None:
            with nothing_written(self.engine, self.ws, objects=False), pytest.raises(error or (NotFound, InvalidInput)):
                call("abort")
            SEEN[f"{what}: refused"] += 1
            return
        on_conflict = data.draw(st.sampled_from(["abort", "abort", "skip", "force", "markers"]), label="on conflict")
        result_units = dict(model.units)
        conflicts: set[str] = set()
        markable: set[str] = set()  # markers need a text on each side: not for a file made or deleted on one
        for step in reversed(changes):  # newest first, each step's change from what the one after it left
            for unit, (before, after) in step.items():
                value = take_back_unit(result_units[unit], before, after)
                if value is CONFLICT:
                    if file_of(unit) not in conflicts and None not in (before, after, result_units[unit]):
                        markable.add(file_of(unit))
                    conflicts.add(file_of(unit))
                    value = before  # what force puts back; the others leave the file as it is (below)
                result_units[unit] = value
        marked = markable if on_conflict == "markers" else set()
        if on_conflict != "force":  # a file with a conflict is left as it is (markers: not modelled)
            for unit in result_units:
                if file_of(unit) in conflicts:
                    result_units[unit] = model.units[unit]
        before_state = full_state(self.ws)
        before_units = dict(model.units)
        if conflicts and (on_conflict == "abort" or result_units == model.units and not marked):
            with nothing_written(self.engine, self.ws, objects=False):
                result = call(on_conflict)
            assert (result.verdict, result.applied) == ("refused", False), result.message
            assert {c.path for c in result.conflicts} == conflicts
            SEEN[f"{what}: conflict, nothing written" + (" (skip)" if on_conflict == "skip" else "")] += 1
            return
        try:
            result = call(on_conflict)
        except NothingToDo:  # it would change nothing
            assert result_units == model.units and not conflicts
            assert full_state(self.ws) == before_state
            SEEN[f"{what}: nothing to change"] += 1
            return
        assert result.applied, (result.verdict, result.message, result.conflicts)
        assert {c.path for c in result.conflicts} == conflicts, (result.conflicts, conflicts)
        expected = "partial" if conflicts else "safe"
        assert result.verdict == expected, (result.verdict, result.message, on_conflict, conflicts)
        number = result.entry.number
        SEEN[f"{what}: done" + (f" ({on_conflict} over a conflict)" if conflicts else "")] += 1
        if marked:
            for path in marked:
                assert b"<<<<<<<" in (self.ws / path).read_bytes()
            outside = {p: c for p, c in full_state(self.ws)[0].items() if p not in marked}
            model.units = result_units
            assert outside == {p: c for p, c in model.files().items() if p not in marked}
            model.units = before_units
            undo_now = True
        else:
            model.units = result_units
            self.workspace_matches_model()
            done = {u: (before_units[u], v) for u, v in result_units.items() if before_units[u] != v}
            model.entries[number] = ModelEntry(number, [done], kind="revert")  # (force's too: it is what was written)
            undo_now = data.draw(st.booleans(), label="undo it at once")
        if undo_now:
            undo = self.engine.revert(f"#{number}")
            assert (undo.verdict, undo.applied) == ("safe", True), (undo.message, undo.conflicts)
            assert full_state(self.ws) == before_state, "the undo of a revert is not the identity"
            model.units = before_units
            model.entries.pop(number, None)
            SEEN[f"undo of a {what} at once"] += 1

    @precondition(lambda self: self._turns())
    @rule(data=st.data())
    def revert_step(self, data: st.DataObject) -> None:
        entry = data.draw(st.sampled_from(self._turns()), label="turn")
        k = data.draw(st.integers(0, len(entry.steps) - 1), label="step")
        self._surgical(data, "step", entry, [entry.steps[k]],
                       lambda on: self.engine.revert(f"{entry.number}.{k + 1}", on_conflict=on))

    @precondition(lambda self: self._turns())
    @rule(data=st.data())
    def revert_paths(self, data: st.DataObject) -> None:
        entry, step, name = self._target(data, steps=True)
        if data.draw(st.booleans(), label="patterns"):
            patterns = data.draw(st.lists(st.sampled_from(sorted(PATTERNS)), min_size=1, max_size=2, unique=True), label="pathspec")
            chosen = {p for p in FILES if any(PATTERNS[pattern](p) for pattern in patterns)}
            kwargs: dict = {"pathspec": patterns}
        else:
            chosen = set(data.draw(st.lists(st.sampled_from(FILES), min_size=1, max_size=3, unique=True), label="paths"))
            kwargs = {"paths": sorted(chosen)}
        files = entry.files(step) & chosen
        steps = entry.steps if step is None else [entry.steps[step]]
        changes = [{u: ba for u, ba in c.items() if file_of(u) in files} for c in steps] if files else None
        self._surgical(data, "files" + (" of a step" if step is not None else ""), entry, changes,
                       lambda on: self.engine.revert(name, on_conflict=on, **kwargs), error=NotFound)

    @precondition(lambda self: self._turns())
    @rule(data=st.data())
    def revert_hunk(self, data: st.DataObject) -> None:
        entry, step, name = self._target(data, steps=True)
        model = self.model
        net = entry.net(step)
        path = data.draw(st.sampled_from(sorted(entry.files(step)) * 3 + [MADE, "src/app.txt"]), label="hunk file")
        ours = [line_of(u) for u in net if u[0] == "A" and file_of(u) == path]
        which = data.draw(st.sampled_from(["in a hunk", "in a hunk", "a person's line", "any"]), label="which line")
        if which == "in a hunk" and ours:
            line = data.draw(st.sampled_from(ours), label="line")
        elif which == "a person's line":  # between the agent's lines; edited between its steps, if any was
            edited = sorted({u[2] for u in entry.between if u[0] == "P" and file_of(u) == path})  # type: ignore[type-var]
            line = line_of(("P", path, data.draw(st.sampled_from(edited or list(range(SLOTS))), label="person line")))
        else:
            line = data.draw(st.integers(0, 4 * SLOTS + 3), label="any line")
        unit = model.hunk_unit(entry, step, path, line)
        changes = None if unit is None else [{unit: net[unit]}]  # one change: before' -> after (core/hunks.py)
        self._surgical(data, "hunk" + (" of a step" if step is not None else ""), entry, changes,
                       lambda on: self.engine.revert(name, on_conflict=on, hunk=(path, line)))

    @precondition(lambda self: any(e.kind == "revert" for e in self.model.entries.values()))
    @rule(data=st.data())
    def undo_a_revert_later(self, data: st.DataObject) -> None:
        """A revert left in place is taken back later, after other work: its own change is taken back."""
        entry = data.draw(st.sampled_from([e for e in self.model.entries.values() if e.kind == "revert"]), label="revert")
        self._surgical(data, "revert", entry, entry.steps, lambda on: self.engine.revert(f"#{entry.number}", on_conflict=on))

    # --------------------------------------------------------------- invariants

    @invariant()
    def workspace_matches_model(self) -> None:
        if not hasattr(self, "ws"):
            return
        actual = full_state(self.ws)[0]
        expected = self.model.files()
        assert actual.get(PERSON) == expected.get(PERSON), "the person's file was lost"
        for path in TEXT:
            for k in range(SLOTS):
                assert f"person {k}: {self.model.units[('P', path, k)]}".encode() in actual.get(path, b""), "a person's line was lost"
        assert actual == expected


def test_random_surgical_reverts_against_the_model(tmp_path: Path) -> None:
    SurgicalSession.base = tmp_path
    SEEN.clear()
    run_state_machine_as_test(
        SurgicalSession,
        settings=settings(
            max_examples=100,  # about 20 s on two cores
            stateful_step_count=25,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            print_blob=True,
        ),
    )
    print(sorted(SEEN.items()))
    for needed in ("turn of 3 steps", "person edits between steps", "step: done", "files: done", "files of a step: done",
                   "hunk: done", "hunk of a step: done", "hunk: refused", "files: refused", "step: conflict, nothing written",
                   "hunk: conflict, nothing written", "undo of a step at once", "undo of a hunk at once", "revert: done"):
        assert SEEN[needed] > 0, f"the generated sessions never exercised {needed!r}: {sorted(SEEN.items())}"
    for variant in ("(skip", "(force over a conflict)", "(markers over a conflict)"):
        assert any(variant in k for k in SEEN), f"never {variant}: {sorted(SEEN.items())}"


def test_a_turns_hunk_is_never_the_persons_edit_between_its_steps(tmp_path: Path) -> None:
    """Found by the random sessions above: the person edits a line of a file between two of the
    agent's steps on it. The turn's hunks were the diff of the file before its first step and
    after its last, so the person's line was one of them, and taking it back erased their edit.
    The hunks are now the turn's own (each step's change taken back in turn from its end): the
    person's line is in none, and the agent's hunk beside it is taken back around it."""
    ws = make_repo(tmp_path / "ws", {"f.txt": "agent 1\r\nsep\r\nperson\r\nsep\r\nagent 2"})
    engine = open_engine(ws)
    engine.begin_turn(label="two steps", session="s", agent="claude", source="hook", bracket=False)
    for key, old, new in (("one", "agent 1", "agent 1 by step 1"), ("two", "agent 2", "agent 2 by step 2")):
        engine.begin_step(key, ["f.txt"], session="s", agent="claude")
        (ws / "f.txt").write_bytes((ws / "f.txt").read_bytes().replace(old.encode(), new.encode()))
        engine.end_step(key, f"Edit {key}")
        if key == "one":  # the person types while the agent works
            (ws / "f.txt").write_bytes((ws / "f.txt").read_bytes().replace(b"person", b"person's edit"))
    turn = engine.open_turn_of("s")
    assert turn is not None
    number = engine.end_turn(turn=turn.id, ended_by="stop").number
    with nothing_written(engine, ws, objects=False), pytest.raises(InvalidInput, match="in none of the change's hunks"):
        engine.revert(f"#{number}", hunk=("f.txt", 3))
    result = engine.revert(f"#{number}", hunk=("f.txt", 1))
    assert result.verdict == "safe", result.message
    assert (ws / "f.txt").read_bytes() == b"agent 1\r\nsep\r\nperson's edit\r\nsep\r\nagent 2 by step 2"
    engine.close()
