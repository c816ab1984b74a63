"""Property: whatever agents' hooks send — real payloads, garbled ones — the turn they record is
exact against the disk.

Random turns in a real git repository: a prompt (sometimes holding half an emoji, or bytes that
are not UTF-8), then tool calls of several agents' real payloads (``tests/cli/hook_payloads``:
Claude Code's Write, Edit and Bash, Codex's ``apply_patch`` from a subfolder, OpenCode's
``apply_patch`` for GPT models, Gemini CLI's ``replace``, Copilot CLI's ``edit``, and Cursor's
``afterFileEdit``, reported after the write), each writing the disk as the agent would; files
hold the same line several times, so an edit's new text often occurs more than once. Between
tool calls the person edits files of their own; before the prompt, sometimes the agent's files
too (uncommitted). The payloads go through ``hooks.handle`` in this process, recorded by one
long-lived engine, as the resident process does.

Checked: the prompt opened one turn that holds every step; no turn claims a file the agent did
not write; undo brings back every byte the turn started from, except files it skips as "before
unknown" (left exactly as they were, and named so in the answer); the person's files stay.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from helpers import make_repo
from takeback.hooks.handle import handle
from takeback.hooks.record import record_logged

from .support import open_engine

PAYLOADS = Path(__file__).resolve().parents[1] / "cli" / "hook_payloads"
LINES = ["x = 1\n", "x = 2\n", "y = 1\n", "pass\n"]
AGENT_FILES = ["a.py", "src/b.py", "src/c.py"]
PERSON_FILES = ["person/notes.txt", "person/todo.txt"]
# Each agent: its prompt, tool start, tool end and stop events (None: from the payload), whether the
# event goes on the command line, and its file-writing tools (Cursor's: reported after the write).
AGENTS = {
    "claude": (("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"), False, ["claude-write", "claude-edit", "claude-bash"]),
    "codex": (("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"), False, ["codex-patch", "codex-bash"]),
    "opencode": (("chat.message", "tool.execute.before", "tool.execute.after", "session.idle"), True,
                 ["opencode-patch", "opencode-edit"]),
    "gemini": (("BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"), False, ["gemini-replace", "gemini-write"]),
    "copilot": (("userPromptSubmitted", "preToolUse", "postToolUse", "agentStop"), True, ["copilot-edit", "copilot-create"]),
    "cursor": (("beforeSubmitPrompt", "", "", "stop"), False, ["cursor-edit", "cursor-shell"]),
}
_ENV = {"CLAUDECODE": "1", "PATH": "/usr/bin:/bin"}


def _template(agent: str, event: str, repo: Path) -> dict:
    data = json.loads((PAYLOADS / f"{agent}.json").read_text())["payloads"][event]
    return json.loads(json.dumps(data).replace("<OUT>/repo", str(repo)).replace("<OUT>", str(repo.parent)))


def _content(lines: list[int]) -> bytes:
    return "".join(LINES[i] for i in lines).encode()


contents = st.lists(st.integers(0, len(LINES) - 1), min_size=1, max_size=6)
step = st.tuples(st.integers(0, 2), st.sampled_from(AGENT_FILES), contents, st.integers(0, 5),
                 st.one_of(st.none(), st.tuples(st.sampled_from(PERSON_FILES), contents)))
garble = st.sampled_from([None, "surrogate", "bytes"])


class Turn:
    """One agent turn sent through the hooks, and what the test knows happened on disk."""

    def __init__(self, repo: Path, agent: str) -> None:
        self.repo = repo
        self.agent = agent
        (self.events, self.on_line, self.tools) = AGENTS[agent]
        self.engine = open_engine(repo, long_lived=True)
        self.written: set[str] = set()
        self.calls = 0

    def event(self, which: int, garbled: str | None = None, **fields: Any) -> None:
        """Send the agent's prompt (0) or stop (3) event, from its captured payload."""
        name = self.events[which]
        if self.agent == "cursor":
            self._cursor(name, **({"prompt": "edit the files"} if which == 0 else {"status": "completed"}), garbled=garbled)
        else:
            self.send(self.agent, name, {**_template(self.agent, name, self.repo), **fields}, self.on_line, garbled)

    def send(self, agent: str, event: str, payload: dict, on_line: bool, garbled: str | None = None) -> None:
        text = json.dumps(payload)
        if garbled == "surrogate":
            text = text.replace('"prompt": "', '"prompt": "\\ud83d ', 1).replace('"content": "', '"content": "\\udc00', 1)
        data = text.encode()
        if garbled == "bytes":
            data = data.replace(b'"prompt": "', b'"prompt": "\xe9\xff ', 1)
        reply = handle(agent, event if on_line else None, str(self.repo), data, _ENV,
                       lambda ws, ev, name: record_logged(ws, ev, name, self.engine))
        assert reply.unlogged == "", reply.unlogged

    def write(self, rel: str, content: bytes) -> None:
        path = self.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)

    def tool(self, tool: str, rel: str, new: bytes, which: int, garbled: str | None) -> None:
        """One tool call of ``tool`` writing ``rel`` (an edit replaces one occurrence of a line)."""
        self.calls += 1
        if tool.endswith(("bash", "shell")):
            self.shell(tool, rel, new, garbled)
            return
        path = self.repo / rel
        old = path.read_bytes() if path.exists() else b""
        old_lines = old.decode().splitlines(keepends=True)
        if tool.endswith(("edit", "replace", "patch")) and old_lines:
            at = which % len(old_lines)
            replaced, by = old_lines[at], LINES[(LINES.index(old_lines[at]) + 1 + which) % len(LINES)]
            twice = [line for line in old_lines if line != replaced]
            if which % 2 == 0 and twice:  # the new text is in the file already: it will occur twice
                by = twice[which % len(twice)]
            new = "".join(old_lines[:at] + [by] + old_lines[at + 1:]).encode()
        else:
            replaced, by = "", new.decode()
        if tool == "cursor-edit":
            self.write(rel, new)
            self.written.add(rel)
            self._cursor("afterFileEdit", file_path=str(path), edits=[{"old_string": replaced, "new_string": by}])
            return
        self._around(self._call(tool, rel, replaced, by, new), garbled, lambda: self.write(rel, new))
        self.written.add(rel)

    def shell(self, tool: str, rel: str, new: bytes, garbled: str | None) -> None:
        """A shell command that writes ``rel``."""
        command = f"gen > {rel}"
        if tool == "cursor-shell":
            self._cursor("beforeShellExecution", command=command, cwd=str(self.repo))
            self.write(rel, new)
            self._cursor("afterShellExecution", command=command, cwd=str(self.repo), output="")
        else:
            name = {"claude": "Bash", "codex": "Bash"}.get(self.agent, "bash")
            call = f"call_{self.calls}"
            fields = ({"toolName": name, "toolArgs": {"command": command}} if self.agent == "copilot" else
                      {"tool_name": name, "tool_input": {"command": command}, "tool_use_id": call, "call_id": call})
            self._around(fields, garbled, lambda: self.write(rel, new))
        self.written.add(rel)

    def _around(self, fields: dict, garbled: str | None, act: Any) -> None:
        pre, post = self.events[1], self.events[2]
        self.send(self.agent, pre, {**_template(self.agent, pre, self.repo), **fields}, self.on_line, garbled)
        act()
        self.send(self.agent, post, {**_template(self.agent, post, self.repo), **fields}, self.on_line, garbled)

    def _call(self, tool: str, rel: str, old: str, new: str, content: bytes) -> dict:
        """The fields of the agent's payload for one call of its edit tool ``tool``."""
        call = f"call_{self.calls}"
        path = str(self.repo / rel)
        if tool == "claude-write":
            return {"tool_name": "Write", "tool_use_id": call, "tool_input": {"file_path": path, "content": content.decode()}}
        if tool == "claude-edit":
            return {"tool_name": "Edit", "tool_use_id": call, "tool_input": {"file_path": path, "old_string": old, "new_string": new}}
        if tool == "codex-patch":  # Codex started in src/: its patch's paths start there
            inner = rel[len("src/"):] if rel.startswith("src/") else f"../{rel}"
            patch = f"*** Begin Patch\n*** Update File: {inner}\n@@\n-{old}+{new}*** End Patch\n"
            return {"tool_name": "apply_patch", "tool_use_id": call, "cwd": str(self.repo / "src"), "tool_input": {"command": patch}}
        if tool == "opencode-patch":
            patch = f"*** Begin Patch\n*** Update File: {rel}\n@@\n-{old}+{new}*** End Patch"
            return {"tool_name": "apply_patch", "call_id": call, "tool_input": {"patchText": patch}}
        if tool == "opencode-edit":
            return {"tool_name": "edit", "call_id": call, "tool_input": {"filePath": path, "oldString": old, "newString": new}}
        if tool == "gemini-replace":
            return {"tool_name": "replace", "tool_input": {"file_path": path, "old_string": old, "new_string": new}}
        if tool == "gemini-write":
            return {"tool_name": "write_file", "tool_input": {"file_path": path, "content": content.decode()}}
        if tool == "copilot-create":
            return {"toolName": "create", "toolArgs": {"path": path, "file_text": content.decode()}}
        return {"toolName": "edit", "toolArgs": {"path": path, "old_str": old, "new_str": new}}

    def _cursor(self, event: str, garbled: str | None = None, **fields: Any) -> None:
        base = {"conversation_id": "conv-p", "generation_id": "gen-p", "workspace_roots": [str(self.repo)]}
        self.send("cursor", event, {**base, "hook_event_name": event, **fields}, False, garbled)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    agent=st.sampled_from([*sorted(AGENTS), "cursor", "cursor"]),  # the edit reported after the write, more often
    start=st.dictionaries(st.sampled_from(AGENT_FILES), contents, min_size=1),
    dirty=st.dictionaries(st.sampled_from(AGENT_FILES), contents, max_size=2),
    garbled=garble,
    steps=st.lists(step, min_size=1, max_size=4),
)
def test_hooks_record_exactly_what_the_agent_wrote_and_undo_takes_back_every_byte(
    agent: str, start: dict[str, list[int]], dirty: dict[str, list[int]], garbled: str | None, steps: list[tuple],
) -> None:
    root = Path(tempfile.mkdtemp(prefix="takeback-hook-prop-"))
    try:
        repo = make_repo(root / "repo", {rel: _content(lines) for rel, lines in start.items()})
        turn = Turn(repo, agent)
        for rel, lines in dirty.items():  # the person's uncommitted work on the agent's files
            turn.write(rel, _content(lines))
        began = {rel: (repo / rel).read_bytes() if (repo / rel).exists() else None for rel in AGENT_FILES}
        person: dict[str, bytes] = {}
        reported_after: set[str] = set()
        turn.event(0, garbled)
        for choice, rel, lines, which, by_person in steps:
            tool = turn.tools[choice % len(turn.tools)]
            if tool == "cursor-edit":
                reported_after.add(rel)
            turn.tool(tool, rel, _content(lines), which, garbled)
            if by_person is not None:  # the person, between two tool calls
                turn.write(by_person[0], _content(by_person[1]))
                person[by_person[0]] = _content(by_person[1])
        turn.event(3)

        entries = [e for e in turn.engine.entries() if e.kind == "turn"]
        assert len(entries) == 1, [(e.label, e.agent) for e in entries]  # one turn, whatever the prompt held
        [entry] = entries
        assert entry.agent == agent and len(entry.checkpoints) <= len(steps)
        claimed = {f.path for f in entry.files}
        assert claimed <= turn.written, claimed - turn.written  # no file the agent did not write
        changed = {rel for rel in AGENT_FILES if ((repo / rel).read_bytes() if (repo / rel).exists() else None) != began[rel]}
        assert changed <= claimed, changed - claimed  # every file the turn changed is in it
        if not claimed:
            return
        before_undo = {rel: (repo / rel).read_bytes() for rel in turn.written}
        result = turn.engine.undo(on_conflict="skip")
        skipped = {s.path: s.reason for s in result.skipped}
        event(f"{agent}: {'before unknown' if skipped else 'all taken back'}{', garbled' if garbled else ''}")
        assert all(reason.startswith("before unknown") for reason in skipped.values()), skipped
        assert set(skipped) <= reported_after  # only edits reported after the write can be unknown
        for rel in AGENT_FILES:
            now = (repo / rel).read_bytes() if (repo / rel).exists() else None
            expected = before_undo[rel] if rel in skipped else began[rel]
            assert now == expected, (rel, skipped, now, expected)
        assert result.verdict == ("safe" if not skipped else result.verdict) and (result.verdict != "safe") == bool(skipped)
        for rel, content in person.items():
            assert (repo / rel).read_bytes() == content  # the person's files stay
    finally:
        if "turn" in locals():
            turn.engine.close()
        shutil.rmtree(root, ignore_errors=True)
