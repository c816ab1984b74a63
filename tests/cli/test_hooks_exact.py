"""What the hooks record is proven against the disk: an agent's payload is a hint.

Real ``takeback hook`` processes fed the captured payloads (``hook_payloads/``), in real git
repositories: a payload that cannot be fully decoded still opens and ends its turn and is
counted; relative paths of edit tools start at the agent's folder for that call; an edit tool
whose files cannot be found, or whose files do not account for what changed, is bracketed; and a
before-image rebuilt from an edit reported after it was made is verified, or the file is
"before unknown" and undo skips it, saying so.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import git

from .conftest import Takeback
from .test_hooks import captured, failures, hook, turns


def test_a_prompt_with_half_an_emoji_still_opens_and_ends_its_turn_and_is_counted(tb: Takeback) -> None:
    repo = tb.cwd
    prompt = json.dumps(captured("claude", "UserPromptSubmit", repo)).replace(
        '"prompt": "', '"prompt": "make it nicer \\ud83d ', 1)
    assert "\\ud83d" in prompt
    hook(tb, "claude", prompt)
    for n in (1, 2):
        fields = {"tool_name": "Write", "tool_use_id": f"toolu_{n}",
                  "tool_input": {"file_path": str(repo / f"f{n}.txt"), "content": f"{n}\n"}}
        hook(tb, "claude", captured("claude", "PreToolUse", repo, **fields))
        (repo / f"f{n}.txt").write_text(f"{n}\n")
        hook(tb, "claude", captured("claude", "PostToolUse", repo, **fields))
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    assert turn["label"].startswith("make it nicer \ufffd ") and turn["ended_by"] == "stop"
    assert [cp["label"] for cp in turn["checkpoints"]] == ["Write f1.txt", "Write f2.txt"]
    status = tb.json("status")
    assert (status["hook_failures"], status["payload_problems"]) == (0, 1)
    assert "lone surrogate" in status["last_payload_problem"] and "claude prompt:" in status["last_payload_problem"]
    assert "payloads   1 read only in part (recorded anyway)" in tb.ok("status").text
    tb.ok("undo")
    assert not (repo / "f1.txt").exists() and not (repo / "f2.txt").exists()


def test_a_payload_that_is_not_utf8_still_opens_its_turn_and_is_counted(tb: Takeback) -> None:
    repo = tb.cwd
    text = json.dumps(captured("copilot", "userPromptSubmitted", repo, prompt="fix \u00e9 please"), ensure_ascii=False)
    data = text.encode("utf-8").replace("\u00e9".encode(), b"\xe9")  # latin-1 inside UTF-8
    proc = subprocess.run([sys.executable, "-m", "takeback", "hook", "copilot", "userPromptSubmitted"], input=data,
                          capture_output=True, cwd=repo, env=tb.env, timeout=60)
    assert proc.returncode == 0 and proc.stdout == b""
    [turn] = turns(tb)
    assert turn["label"] == "fix \ufffd please" and turn["state"] == "open"
    assert failures(tb) == (0, None) and tb.json("status")["payload_problems"] == 1


# ---------------------------------------------------------------- relative paths start at the agent's folder


def _patch(path: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"


@pytest.mark.parametrize("hook_in", ["subfolder", "top"])
def test_codex_started_in_a_subfolder_records_its_patch_relative_to_that_folder(tb: Takeback, hook_in: str) -> None:
    """``codex -C src`` (or codex started in src/): the patch names ``app.py``, which is
    src/app.py; a root app.py that is not touched must not be taken for it. The payload's
    ``cwd`` says where the call runs, wherever the hook process itself was started."""
    repo = tb.cwd
    (repo / "app.py").write_text("a root file of the same name\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "root app.py")
    sub = repo / "src"
    where = sub if hook_in == "subfolder" else repo
    fields = {"tool_input": {"command": _patch("app.py", "    return 1", "    return 7")}, "tool_use_id": "call_sub",
              "cwd": str(sub)}
    hook(tb, "codex", captured("codex", "UserPromptSubmit", repo, cwd=str(sub)), cwd=where)
    hook(tb, "codex", captured("codex", "PreToolUse", repo, **fields), cwd=where)
    (sub / "app.py").write_text("def main():\n    return 7\n")
    hook(tb, "codex", captured("codex", "PostToolUse", repo, **fields), cwd=where)
    hook(tb, "codex", captured("codex", "Stop", repo, cwd=str(sub)), cwd=where)
    [turn] = turns(tb)
    assert turn["checkpoints"][0]["label"] == "apply_patch src/app.py"
    assert [f["path"] for f in turn["files"]] == ["src/app.py"]
    tb.ok("undo")
    assert (sub / "app.py").read_text() == "def main():\n    return 1\n"
    assert (repo / "app.py").read_text() == "a root file of the same name\n"
    tb.ok("redo")
    assert (sub / "app.py").read_text() == "def main():\n    return 7\n"


def test_opencode_apply_patch_for_gpt_models_is_recorded(tb: Takeback) -> None:
    """OpenCode gives GPT models ``apply_patch`` (one argument, ``patchText``) instead of
    edit/write; its paths start at OpenCode's directory (the plugin's ``cwd``)."""
    repo = tb.cwd
    patch = ("*** Begin Patch\n*** Add File: notes/todo.md\n+- ship it\n"
             "*** Update File: src/app.py\n@@\n-    return 1\n+    return 2\n*** End Patch")
    call = {"tool_name": "apply_patch", "call_id": "call_gpt", "tool_input": {"patchText": patch}}

    def send(event: str, **fields: object) -> None:
        hook(tb, "opencode", captured("opencode", event, repo, **fields), event)

    send("chat.message")
    send("tool.execute.before", **call)
    (repo / "notes").mkdir()
    (repo / "notes/todo.md").write_text("- ship it\n")
    (repo / "src/app.py").write_text("def main():\n    return 2\n")
    send("tool.execute.after", **call)
    send("session.idle")
    [turn] = turns(tb)
    assert turn["checkpoints"][0]["label"] == "apply_patch notes/todo.md, src/app.py"
    assert {f["path"]: f["kind"] for f in turn["files"]} == {"notes/todo.md": "added", "src/app.py": "modified"}
    assert failures(tb) == (0, None)
    tb.ok("undo")
    assert not (repo / "notes").exists() and (repo / "src/app.py").read_text() == "def main():\n    return 1\n"
    tb.ok("redo")
    assert (repo / "notes/todo.md").read_text() == "- ship it\n"


def test_copilot_apply_patch_whose_arguments_are_the_bare_patch_is_recorded_from_its_files(tb: Takeback) -> None:
    """Copilot CLI gives GPT models a freeform ``apply_patch``: its hook's ``toolArgs`` is the
    patch text itself, not JSON (captured live, 1.0.102). The files the patch names are read from
    it and their before-images captured at the pre-tool hook, not left to a scan."""
    repo = tb.cwd
    patch = ("*** Begin Patch\n*** Add File: new.txt\n+new file\n*** Update File: src/app.py\n@@\n"
             "-    return 1\n+    return 2\n*** End Patch\n")
    call = {"toolName": "apply_patch", "toolArgs": patch}
    hook(tb, "copilot", captured("copilot", "userPromptSubmitted", repo, prompt="patch it"), "userPromptSubmitted")
    hook(tb, "copilot", captured("copilot", "preToolUse", repo, **call), "preToolUse")
    (repo / "new.txt").write_text("new file\n")
    (repo / "src/app.py").write_text("def main():\n    return 2\n")
    hook(tb, "copilot", captured("copilot", "postToolUse", repo, **call), "postToolUse")
    hook(tb, "copilot", captured("copilot", "agentStop", repo), "agentStop")
    [turn] = turns(tb)
    assert [cp["label"] for cp in turn["checkpoints"]] == ["apply_patch new.txt, src/app.py"]
    assert {f["path"]: f["kind"] for f in turn["files"]} == {"new.txt": "added", "src/app.py": "modified"}
    tb.ok("undo")
    assert not (repo / "new.txt").exists() and (repo / "src/app.py").read_text() == "def main():\n    return 1\n"


# ---------------------------------------------------------------- the payload is a hint, the disk the truth


def test_an_edit_tool_whose_files_cannot_be_found_is_bracketed_not_dropped(tb: Takeback) -> None:
    """A patch Takeback cannot read (no file header it knows) and an edit tool with an argument
    it does not know still change files: each is bracketed like a shell command."""
    repo = tb.cwd
    hook(tb, "codex", captured("codex", "UserPromptSubmit", repo))
    odd = {"tool_name": "apply_patch", "tool_use_id": "call_odd", "tool_input": {"command": "*** Begin Patch\n*** Frobnicate: x\n"}}
    hook(tb, "codex", captured("codex", "PreToolUse", repo, **odd))
    (repo / "README.md").write_text("patched in a way Takeback cannot read\n")
    hook(tb, "codex", captured("codex", "PostToolUse", repo, **odd))
    hook(tb, "codex", captured("codex", "Stop", repo))
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo, prompt="second"))
    unnamed = {"tool_name": "Edit", "tool_use_id": "toolu_unnamed", "tool_input": {"target": "src/util.py", "text": "x"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **unnamed))
    (repo / "src/util.py").write_text("by an argument Takeback does not know\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **unnamed))
    hook(tb, "claude", captured("claude", "Stop", repo))
    second, first = turns(tb)
    assert [cp["label"] for cp in first["checkpoints"]] == ["apply_patch"]
    assert [f["path"] for f in first["files"]] == ["README.md"]
    assert [cp["label"] for cp in second["checkpoints"]] == ["Edit"]
    assert [f["path"] for f in second["files"]] == ["src/util.py"]
    original = git(repo, "show", "HEAD:src/util.py")
    tb.ok("undo")
    assert (repo / "src/util.py").read_text() == original


def test_an_edit_step_whose_named_files_do_not_account_for_the_disk_records_what_changed(tb: Takeback) -> None:
    """The tool named src/app.py but wrote src/util.py (and left src/app.py as it was): the step
    records what changed on disk, with a notice; undo takes it back."""
    repo = tb.cwd
    original = (repo / "src/util.py").read_bytes()
    hook(tb, "claude", captured("claude", "UserPromptSubmit", repo))
    edit = {"tool_name": "Edit", "tool_use_id": "toolu_e",
            "tool_input": {"file_path": str(repo / "src/app.py"), "old_string": "x", "new_string": "y"}}
    hook(tb, "claude", captured("claude", "PreToolUse", repo, **edit))
    (repo / "src/util.py").write_text("written by the tool, not named by it\n")
    hook(tb, "claude", captured("claude", "PostToolUse", repo, **edit))
    hook(tb, "claude", captured("claude", "Stop", repo))
    [turn] = turns(tb)
    assert [f["path"] for f in turn["files"]] == ["src/util.py"]
    assert any("the tool named src/app.py but changed src/util.py too" in n for n in turn["notices"]), turn["notices"]
    tb.ok("undo")
    assert (repo / "src/util.py").read_bytes() == original


# ---------------------------------------------------------------- an edit reported after it was made (Cursor)


def _cursor(tb: Takeback, event: str, **fields: object) -> None:
    base = {"conversation_id": "conv-1", "generation_id": "gen-1", "workspace_roots": [str(tb.cwd)]}
    hook(tb, "cursor", {**base, "hook_event_name": event, **fields})


def _cursor_edit_turn(tb: Takeback, prompt: str, rel: str, after: str, old: str, new: str) -> None:
    """A Cursor turn of one edit: the file written, then reported with its replacement."""
    _cursor(tb, "beforeSubmitPrompt", prompt=prompt)
    (tb.cwd / rel).write_text(after)
    _cursor(tb, "afterFileEdit", file_path=str(tb.cwd / rel), edits=[{"old_string": old, "new_string": new}])
    _cursor(tb, "stop", status="completed")


def test_cursor_edit_whose_new_text_occurs_twice_is_verified_against_git(tb: Takeback) -> None:
    """The agent changed the FIRST ``print('b')`` into ``print('a')``, so the new text occurs
    twice: replacing the last occurrence back would rewrite a line the agent never touched.
    HEAD's version, with the edit made on it, gives the file now: that is the before-image."""
    repo = tb.cwd
    (repo / "two.py").write_text("print('b')\nprint('a')\n")
    git(repo, "add", "two.py")
    git(repo, "commit", "-qm", "two")
    _cursor_edit_turn(tb, "make both print a", "two.py", "print('a')\nprint('a')\n", "print('b')", "print('a')")
    tb.ok("undo")
    assert (repo / "two.py").read_text() == "print('b')\nprint('a')\n"
    tb.ok("redo")
    assert (repo / "two.py").read_text() == "print('a')\nprint('a')\n"


def test_cursor_edit_with_no_before_image_that_fits_is_before_unknown_and_undo_skips_it(tb: Takeback) -> None:
    """The person's own file (never committed, never recorded), and an edit whose new text
    occurs twice: no before-image can be verified. The file is "before unknown": the turn says
    so, and undo takes back the rest and skips it, naming it and the reason — never SAFE."""
    repo = tb.cwd
    (repo / "mine.py").write_text("x = 2\nx = 1\n")  # the person's, untracked
    _cursor(tb, "beforeSubmitPrompt", prompt="set x")
    (repo / "mine.py").write_text("x = 1\nx = 1\n")
    _cursor(tb, "afterFileEdit", file_path=str(repo / "mine.py"), edits=[{"old_string": "x = 2", "new_string": "x = 1"}])
    shell = {"command": "echo generated > gen.txt", "cwd": str(repo)}
    _cursor(tb, "beforeShellExecution", **shell)
    (repo / "gen.txt").write_text("generated\n")
    _cursor(tb, "afterShellExecution", **shell, output="")
    _cursor(tb, "stop", status="completed")
    [turn] = turns(tb)
    assert any(n.startswith("mine.py: before unknown") for n in turn["notices"]), turn["notices"]
    assert "before unknown" in tb.ok("show", "last").text
    answer = tb(*["undo", "--json"])
    result = answer.json()
    assert result["verdict"] != "safe"
    assert [(s["path"], s["reason"].split(":")[0]) for s in result["skipped"]] == [("mine.py", "before unknown")]
    assert (repo / "mine.py").read_text() == "x = 1\nx = 1\n"  # left as it is: no guess written
    assert not (repo / "gen.txt").exists()  # the rest is taken back


def test_cursor_edit_verified_against_the_last_version_takeback_recorded(tb: Takeback) -> None:
    """An untracked file an earlier turn wrote: Takeback's last recorded version is the one
    the edit fits, though its new text occurs twice."""
    repo = tb.cwd
    _cursor(tb, "beforeSubmitPrompt", prompt="first")
    shell = {"command": "make", "cwd": str(repo)}
    _cursor(tb, "beforeShellExecution", **shell)
    (repo / "made.txt").write_text("one\ntwo\none\n")
    _cursor(tb, "afterShellExecution", **shell, output="")
    _cursor(tb, "stop", status="completed")
    _cursor_edit_turn(tb, "second", "made.txt", "one\none\none\n", "two", "one")
    tb.ok("undo")
    assert (repo / "made.txt").read_text() == "one\ntwo\none\n"
