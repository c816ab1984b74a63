"""One owner for "what would undo act on": whatever ``targets()`` and ``status`` name is exactly
what ``undo`` and ``redo`` then act on.

A property test over random sequences of what happens in a workspace: whole-disk turns begun
(``takeback begin``) with changes on disk and no end yet, agent sessions' turns with their hook
steps (edit and shell), edit batches an editor applies or refuses, ends, and undo, redo and
revert. After every step the targets the engine names (``Engine.targets``, ``status``) are the
ones a preview of undo and redo plans, and an undo or redo carried out acts on the target named
just before it. Real git repositories in temp folders, the in-process engine.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from helpers import make_repo
from takeback.core.models import BatchChange, OperationResult
from takeback.engine.engine import Engine
from takeback.errors import NothingToDo, TakebackError

from .support import open_engine

PATHS = ["a.txt", "b.txt", "sub/c.txt"]
SESSIONS = ["s1", "s2"]
contents = st.one_of(st.none(), st.sampled_from(["one\n", "two\n", "three\n", "x\ny\n"]))


def _acted_on(call: object) -> str | None:
    """The entry an operation acted on (carried out or stopped), or None: nothing to do."""
    try:
        result = call()  # type: ignore[operator]
    except NothingToDo:
        return None
    assert isinstance(result, OperationResult)
    return result.target


class TargetsMachine(RuleBasedStateMachine):
    engine: Engine
    ws: Path

    @initialize()
    def setup(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="takeback-targets-"))
        self.ws = make_repo(self.base / "ws", {"a.txt": "a0\n", "b.txt": "b0\n"})
        self.engine = open_engine(self.ws)
        self.steps = 0

    def teardown(self) -> None:
        engine = getattr(self, "engine", None)
        if engine is not None:
            engine.close()
            shutil.rmtree(self.base, ignore_errors=True)

    def _write(self, path: str, content: str | None) -> None:
        target = self.ws / path
        if content is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)

    # ------------------------------------------------------------------ what happens

    @rule(label=st.sampled_from(["agent turn", None]))
    def begin_bracketed_turn(self, label: str | None) -> None:
        self.engine.begin_turn(label=label)  # whole-disk: ends every open turn first

    @rule(session=st.sampled_from(SESSIONS))
    def begin_session_turn(self, session: str) -> None:
        self.engine.begin_turn(label=f"prompt of {session}", session=session, agent="claude", source="hook", bracket=False)

    @rule(path=st.sampled_from(PATHS), content=contents)
    def disk_change(self, path: str, content: str | None) -> None:
        self._write(path, content)  # the agent's shell, a formatter, or the person

    @rule()
    def end(self) -> None:
        if self.engine.status().open_turns:
            self.engine.end_turn()

    @rule(session=st.sampled_from(SESSIONS), path=st.sampled_from(PATHS), content=contents, shell=st.booleans())
    def hook_step(self, session: str, path: str, content: str | None, shell: bool) -> None:
        self.steps += 1
        key = f"{session}:{self.steps}"
        self.engine.begin_step(key, None if shell else [str(self.ws / path)], session=session, agent="claude")
        self._write(path, content)
        self.engine.end_step(key, "Bash" if shell else "Write")

    @rule(path=st.sampled_from(PATHS), content=contents, applied=st.booleans(), session=st.sampled_from([None, *SESSIONS]))
    def editor_batch(self, path: str, content: str | None, applied: bool, session: str | None) -> None:
        """A batch whose file is open in an editor, which applies it or refuses it."""
        before = self.ws / path
        change = BatchChange(path=str(before), after=None if content is None else content.encode(),
                             before=before.read_bytes() if before.exists() else None)

        def editor(writes: list) -> bool:
            if applied:
                self._write(path, content)
            return applied

        try:
            self.engine.apply_through([change], editor=editor, in_editor=[str(before)], session=session, label="edit")
        except TakebackError:
            pass  # e.g. the file changed meanwhile: nothing recorded

    @rule()
    def undo(self) -> None:
        named = self.engine.targets().undo
        acted = _acted_on(lambda: self.engine.undo())
        assert acted == (named.id if named else None), (named, acted)

    @rule()
    def redo(self) -> None:
        named = self.engine.targets().redo
        acted = _acted_on(lambda: self.engine.redo())
        assert acted == (named.id if named else None), (named, acted)

    @rule(number=st.integers(min_value=1, max_value=12))
    def revert(self, number: int) -> None:
        try:
            self.engine.revert(str(number), on_conflict="skip")
        except TakebackError:
            pass

    # ------------------------------------------------------------------ the property

    @invariant()
    def named_is_acted_on(self) -> None:
        if not hasattr(self, "engine"):
            return
        undo, redo, _settled = self.engine.targets()
        status = self.engine.status()
        assert status.undo_target == (undo.number if undo else None)
        assert status.redo_target == (redo.number if redo else None)
        assert _acted_on(lambda: self.engine.undo(dry_run=True)) == (undo.id if undo else None), undo
        assert _acted_on(lambda: self.engine.redo(dry_run=True)) == (redo.id if redo else None), redo


def test_what_is_named_is_what_undo_and_redo_act_on() -> None:
    run_state_machine_as_test(
        TargetsMachine,
        settings=settings(max_examples=40, stateful_step_count=14, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]),
    )


# ------------------------------------------------------------------ the two cases the issue found


def test_an_open_whole_disk_turn_with_changes_on_disk_is_named_and_undone(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"a.txt": "a0\n"})
    engine = open_engine(ws)
    engine.begin_turn(label="first")
    (ws / "a.txt").write_text("a1\n")
    engine.end_turn()
    second = engine.begin_turn(label="second")
    assert engine.targets().undo.number == 1  # nothing on disk yet: the open turn has no change
    (ws / "b.txt").write_text("new\n")
    undo, _redo, settled = engine.targets()
    assert (undo.number, undo.id, [f.path for f in undo.files]) == (2, second.id, ["b.txt"])
    assert not settled and engine.status().undo_target == 2
    assert engine.undo().target == second.id
    assert not (ws / "b.txt").exists() and (ws / "a.txt").read_text() == "a1\n"


def test_an_open_turn_whose_batches_the_editor_refused_is_not_named(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"a.txt": "a0\n"})
    engine = open_engine(ws)
    engine.begin_turn(label="first")
    (ws / "a.txt").write_text("a1\n")
    first = engine.end_turn()
    engine.begin_turn(label="refused", session="s", source="hook", bracket=False)
    change = BatchChange(path=str(ws / "a.txt"), after=b"a2\n", before=b"a1\n")
    _entry, _cp, applied = engine.apply_through([change], editor=lambda writes: False, in_editor=[str(ws / "a.txt")], session="s")
    assert not applied
    undo, _redo, settled = engine.targets()
    assert (undo.id, settled, engine.status().undo_target) == (first.id, True, 1)
    assert engine.undo().target == first.id and (ws / "a.txt").read_text() == "a0\n"
