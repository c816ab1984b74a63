"""Property-based tests: random agent sessions against a simple reference model.

An agent makes turns — line edits in a shared text file, creates, edits, deletes, renames and
binary files — recorded as edit batches, brackets, or both. Between turns a person edits
OTHER lines of the shared file and files of their own, and sometimes what the agent wrote
(then taking that back must stop with a conflict). Then come random undo, redo, revert and
restore operations.

The reference model knows nothing of git, merges or journals: the workspace is a set of
units (a line of the shared file, or a whole file) and every entry is the set of units it
changed (before, after). Reverting a list of entries takes their changes back newest first;
per unit, a value equal to the change's after goes back to its before, one equal to its before
stays, anything else is a conflict, and a conflict anywhere means nothing is written. Which
entry undo and redo target, and each entry's state, follow the timeline rules.

Properties checked after every step: the workspace is byte-for-byte the model's (so a
person's edit is never lost); undo followed by redo is the identity; the user's git state
never changes.
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
from takeback.core.models import BatchChange
from takeback.errors import NothingToDo

from .support import CONFLICT, full_state, net_of, open_engine, take_back_unit

LINES = 3
AGENT_PATHS = ["agent/a.txt", "agent/b.txt", "agent/sub/c.txt", "agent/d.bin", "agent/e.bin"]
PERSON_PATHS = ["person/n0.txt", "person/n1.txt"]
SHARED = "shared.txt"
Unit = tuple[str, object]  # ("A", k) agent line, ("P", k) person line, ("F", path) whole file


@dataclass
class ModelEntry:
    number: int
    kind: str
    state: str
    changes: list[dict[Unit, tuple]]  # one dict per checkpoint
    previous: dict[int, str] = field(default_factory=dict)

    @property
    def net(self) -> dict[Unit, tuple]:
        return net_of(self.changes)


class Model:
    def __init__(self) -> None:
        self.units: dict[Unit, object] = {}
        for k in range(LINES):
            self.units[("A", k)] = "init"
            self.units[("P", k)] = "init"
        for path in AGENT_PATHS + PERSON_PATHS:
            self.units[("F", path)] = None
        self.units[("F", "agent/a.txt")] = b"agent a initial\n"
        self.units[("F", "agent/d.bin")] = b"\x00\x01initial binary\xff"
        self.units[("F", "person/n0.txt")] = b"person's notes\n"
        self.entries: list[ModelEntry] = []
        self.counter = 0

    def fresh(self, unit: Unit) -> object:
        self.counter += 1
        n = self.counter
        if unit[0] in ("A", "P"):
            return f"v{n:05d}"
        path = str(unit[1])
        if path.endswith(".bin"):
            return b"\x00BIN" + n.to_bytes(4, "big") + bytes(range(0, 256, 5)) + b"\r\n\xff"
        return f"{path} content {n:05d}\n".encode()

    def render(self) -> dict[str, bytes]:
        lines = []
        for k in range(LINES):
            lines += [f"---- sep {k} a ----\n", f"A{k}: {self.units[('A', k)]}\n", f"---- sep {k} b ----\n", f"P{k}: {self.units[('P', k)]}\n"]
        lines.append("---- end ----\n")
        files = {SHARED: "".join(lines).encode()}
        for (kind, path), value in self.units.items():
            if kind == "F" and value is not None:
                files[str(path)] = value  # type: ignore[assignment]
        return files

    # --------------------------------------------------------------- timeline rules

    def by_number(self, number: int) -> ModelEntry:
        return self.entries[number - 1]

    def undo_target(self) -> ModelEntry | None:
        return next((e for e in reversed(self.entries) if e.kind == "turn" and e.state == "applied"), None)

    def redo_target(self) -> ModelEntry | None:
        return next((e for e in reversed(self.entries) if e.kind in ("undo", "revert", "restore") and e.state == "applied"), None)

    def take_back(self, entries: list[ModelEntry]) -> dict[Unit, object] | None:
        """The units after taking back every checkpoint of ``entries`` newest first; None on conflict."""
        current = dict(self.units)
        for entry in reversed(entries):
            for unit, (before, after) in entry.net.items():
                current[unit] = take_back_unit(current[unit], before, after)
                if current[unit] is CONFLICT:
                    return None
        return current

    def operate(self, kind: str, result: dict[Unit, object], effects: dict[int, str], previous: dict[int, str]) -> ModelEntry:
        changes = {u: (self.units[u], v) for u, v in result.items() if self.units[u] != v}
        entry = ModelEntry(len(self.entries) + 1, kind, "applied", [changes], previous)
        for number, state in effects.items():
            self.by_number(number).state = state
        self.entries.append(entry)
        self.units = result
        return entry

    def revert_plan(self, target: ModelEntry) -> tuple[dict[int, str], dict[int, str]]:
        previous = {target.number: target.state}
        effects = {target.number: "reverted"}
        if target.kind != "turn":
            for number, old in target.previous.items():
                if number != target.number:
                    previous[number] = self.by_number(number).state
                    effects[number] = old
        return effects, previous

    def restore_plan(self, owner: ModelEntry) -> tuple[dict[int, str], dict[int, str]]:
        previous, effects = {}, {}
        for entry in self.entries[owner.number:]:
            if entry.state in ("applied", "partial"):
                previous[entry.number] = entry.state
                effects[entry.number] = "reverted"
        return effects, previous


SEEN: Counter[str] = Counter()


def event(name: str) -> None:
    """Count what the runs exercised (checked at the end so the generator cannot go blind)."""
    SEEN[name] += 1


class AgentSession(RuleBasedStateMachine):
    base: Path  # set by the test

    @initialize(use_git=st.booleans(), long_lived=st.booleans())
    def setup(self, use_git: bool, long_lived: bool) -> None:
        """``long_lived``: the engine as the language server opens it, watching the tree."""
        self.tmp = Path(tempfile.mkdtemp(dir=self.base))
        self.model = Model()
        files = self.model.render()
        if use_git:
            self.ws = make_repo(self.tmp / "ws", files)
            self.git_before = git_state(self.ws)
        else:
            self.ws = self.tmp / "ws"
            self.ws.mkdir()
            write_files(self.ws, files)
            self.git_before = None
        self.engine = open_engine(self.ws, long_lived=long_lived)

    def teardown(self) -> None:
        if getattr(self, "engine", None) is not None:
            self.engine.close()
        if getattr(self, "ws", None) is not None and self.git_before is not None:
            assert git_state(self.ws) == self.git_before, "the user's git state changed"
        if getattr(self, "tmp", None) is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    # --------------------------------------------------------------- helpers

    def write_disk(self, changed_paths: set[str]) -> None:
        files = self.model.render()
        for path in changed_paths:
            target = self.ws / path
            if path in files:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(files[path])
            elif target.exists():
                target.unlink()

    def check_result(self, result, expected_number: int | None, expect_entry: ModelEntry | None) -> None:
        if expect_entry is None:
            assert (result.verdict, result.applied) == ("refused", False), result.message
            assert result.conflicts and result.restored == []
        else:
            assert (result.verdict, result.applied) == ("safe", True), (result.message, result.conflicts)
            assert result.entry.number == expect_entry.number and result.entry.kind == expect_entry.kind
            assert result.target_number == expected_number
        assert result.next_action

    # --------------------------------------------------------------- agent and person

    @rule(data=st.data(), style=st.sampled_from(["batch", "apply", "bracket", "mixed"]))
    def agent_turn(self, data: st.DataObject, style: str) -> None:
        model = self.model
        before = dict(model.units)
        touched: set[Unit] = set()
        renames: dict[str, str] = {}
        for _ in range(data.draw(st.integers(1, 3), label="actions")):
            free_files = [p for p in AGENT_PATHS if ("F", p) not in touched]
            action = data.draw(st.sampled_from(["line", "write", "delete", "rename"]), label="action")
            if action == "line":
                free = [k for k in range(LINES) if ("A", k) not in touched]
                if not free:
                    continue
                unit: Unit = ("A", data.draw(st.sampled_from(free), label="line"))
                model.units[unit] = model.fresh(unit)
                touched.add(unit)
            elif action == "write" and free_files:
                unit = ("F", data.draw(st.sampled_from(free_files), label="write"))
                model.units[unit] = model.fresh(unit)
                touched.add(unit)
            elif action == "delete":
                present = [p for p in free_files if model.units[("F", p)] is not None]
                if present:
                    unit = ("F", data.draw(st.sampled_from(present), label="delete"))
                    model.units[unit] = None
                    touched.add(unit)
            elif action == "rename":
                present = [p for p in free_files if model.units[("F", p)] is not None]
                absent = [p for p in free_files if model.units[("F", p)] is None and p.endswith(".bin") == False]
                if present and absent:
                    src = data.draw(st.sampled_from(present), label="rename from")
                    dst = data.draw(st.sampled_from([p for p in absent if p.rsplit(".", 1)[1] == src.rsplit(".", 1)[1]] or absent), label="rename to")
                    model.units[("F", dst)] = model.units[("F", src)]
                    model.units[("F", src)] = None
                    touched |= {("F", src), ("F", dst)}
                    renames[dst] = src
        if not touched:
            return
        event(f"agent turn {style}" + (" with rename" if renames else ""))
        changes = {u: (before[u], model.units[u]) for u in touched}
        paths = {SHARED if u[0] == "A" else str(u[1]) for u in touched}
        files = model.render()

        def batch_of(selected: set[str]) -> list[BatchChange]:
            return [
                BatchChange(path=p, after=files.get(p), renamed_from=renames.get(p)) for p in sorted(selected)
            ]

        if style == "batch":
            entry, _ = self.engine.record_batch(batch_of(paths), label="agent batch")
            self.write_disk(paths)
        elif style == "apply":
            entry, _ = self.engine.apply_batch(batch_of(paths), label="agent apply")
        else:
            self.engine.begin_turn(label=f"agent {style}")
            if style == "mixed":
                first = set(sorted(paths)[: max(1, len(paths) // 2)])
                # a rename's two halves go together through the batch
                first |= {renames[p] for p in first if p in renames} | {d for d, s in renames.items() if s in first}
                self.engine.record_batch(batch_of(first))
                self.write_disk(first)
                self.write_disk(paths - first)
            else:
                self.write_disk(paths)
            entry = self.engine.end_turn()
        model.entries.append(ModelEntry(len(model.entries) + 1, "turn", "applied", [changes]))
        assert entry.number == len(model.entries) and entry.state == "applied"
        kinds = {f.path: f.kind for f in entry.files}
        for dst, src in renames.items():
            assert kinds.get(dst) == "renamed", (kinds, renames)

    @rule(data=st.data(), style=st.sampled_from(["batch", "apply", "bracket", "mixed"]))
    def another_agent_turn(self, data: st.DataObject, style: str) -> None:
        """Turns are drawn twice as often as any single operation."""
        self.agent_turn(data, style)

    @rule(data=st.data())
    def person_edit(self, data: st.DataObject) -> None:
        model = self.model
        choice = data.draw(st.sampled_from(["line", "write", "delete"]), label="person")
        if choice == "line":
            unit: Unit = ("P", data.draw(st.integers(0, LINES - 1), label="person line"))
            model.units[unit] = model.fresh(unit)
            self.write_disk({SHARED})
            return
        unit = ("F", data.draw(st.sampled_from(PERSON_PATHS), label="person file"))
        model.units[unit] = None if choice == "delete" else model.fresh(unit)
        self.write_disk({str(unit[1])})

    @rule(data=st.data())
    def person_edits_agent_work(self, data: st.DataObject) -> None:
        """The person changes what the agent wrote: taking that turn back must now stop with a
        conflict (nothing written) rather than overwrite them."""
        model = self.model
        units: list[Unit] = [("A", k) for k in range(LINES)] + [("F", p) for p in AGENT_PATHS if model.units[("F", p)] is not None]
        unit = data.draw(st.sampled_from(units), label="person edits agent unit")
        if unit[0] == "F" and data.draw(st.booleans(), label="delete it"):
            model.units[unit] = None
        else:
            model.units[unit] = model.fresh(unit)
        self.write_disk({SHARED if unit[0] == "A" else str(unit[1])})

    # --------------------------------------------------------------- operations

    def _revert(self, kind: str, target: ModelEntry | None, call) -> ModelEntry | None:
        model = self.model
        if target is None or target.state == "reverted":
            before = full_state(self.ws)
            with pytest.raises(NothingToDo):
                call()
            assert full_state(self.ws) == before
            event(f"{kind}: nothing to do")
            return None
        effects, previous = model.revert_plan(target)
        result_units = model.take_back([target])
        result = call()
        entry = None if result_units is None else model.operate(kind, result_units, effects, previous)
        self.check_result(result, target.number, entry)
        event(f"{kind} of a {target.kind}: {'conflict' if entry is None else 'done'}")
        return entry

    @precondition(lambda self: self.model.undo_target() is not None)
    @rule()
    def undo(self) -> None:
        self._revert("undo", self.model.undo_target(), lambda: self.engine.undo())

    @precondition(lambda self: self.model.redo_target() is not None)
    @rule()
    def redo(self) -> None:
        self._revert("redo", self.model.redo_target(), lambda: self.engine.redo())

    @precondition(lambda self: self.model.undo_target() is None or self.model.redo_target() is None)
    @rule()
    def nothing_to_do(self) -> None:
        if self.model.undo_target() is None:
            self._revert("undo", None, lambda: self.engine.undo())
        if self.model.redo_target() is None:
            self._revert("redo", None, lambda: self.engine.redo())

    @precondition(lambda self: self.model.entries)
    @rule(data=st.data())
    def revert(self, data: st.DataObject) -> None:
        number = data.draw(st.integers(1, len(self.model.entries)), label="revert #")
        self._revert("revert", self.model.by_number(number), lambda: self.engine.revert(f"#{number}"))

    @precondition(lambda self: self.model.entries)
    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        model = self.model
        number = data.draw(st.integers(1, len(model.entries)), label="restore #")
        owner = model.by_number(number)
        later = model.entries[number:]
        if not later:
            with pytest.raises(NothingToDo):
                self.engine.restore(f"#{number}")
            return
        effects, previous = model.restore_plan(owner)
        result_units = model.take_back(later)
        result = self.engine.restore(f"#{number}")
        entry = None if result_units is None else model.operate("restore", result_units, effects, previous)
        self.check_result(result, number, entry)
        event(f"restore over {len(later)} entries: {'conflict' if entry is None else 'done'}")

    @precondition(lambda self: self.model.undo_target() is not None)
    @rule()
    def undo_then_redo(self) -> None:
        before = full_state(self.ws)
        entry = self._revert("undo", self.model.undo_target(), lambda: self.engine.undo())
        if entry is None:
            return
        self._revert("redo", self.model.redo_target(), lambda: self.engine.redo())
        assert full_state(self.ws) == before, "undo then redo is not the identity"

    # --------------------------------------------------------------- invariants

    @invariant()
    def workspace_matches_model(self) -> None:
        if not hasattr(self, "ws"):
            return
        expected = self.model.render()
        actual = full_state(self.ws)[0]
        person = [p for p in PERSON_PATHS if p in expected or p in actual]
        assert {p: actual.get(p) for p in person} == {p: expected.get(p) for p in person}, "a person's file was lost"
        shared = actual.get(SHARED, b"").decode(errors="replace").splitlines()
        for k in range(LINES):
            assert f"P{k}: {self.model.units[('P', k)]}" in shared, "a person's line was lost"
        assert actual == expected

    @invariant()
    def states_match_model(self) -> None:
        if not hasattr(self, "ws"):
            return
        got = [(e.number, e.kind, e.state) for e in reversed(self.engine.entries())]
        assert got == [(e.number, e.kind, e.state) for e in self.model.entries]


def test_random_sessions_against_the_model(tmp_path: Path) -> None:
    AgentSession.base = tmp_path
    SEEN.clear()
    run_state_machine_as_test(
        AgentSession,
        settings=settings(
            max_examples=40,
            stateful_step_count=25,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            print_blob=True,
        ),
    )
    print(sorted(SEEN.items()))
    for needed in ("undo of a turn: done", "undo of a turn: conflict", "redo of a undo: done", "revert of a turn: done",
                   "revert of a turn: conflict", "undo: nothing to do", "agent turn mixed with rename", "agent turn bracket with rename"):
        assert SEEN[needed] > 0, f"the generated sessions never exercised {needed!r}: {sorted(SEEN.items())}"
    assert sum(v for k, v in SEEN.items() if k.startswith("restore") and k.endswith("done")) > 0
    assert sum(v for k, v in SEEN.items() if k.startswith("revert of a re") or k.startswith("revert of a undo")) > 0
