"""takeback/applyEdit end to end: every WorkspaceEdit form, open buffers and files on disk,
folders moved and deleted with what they hold, each file operation that cannot be played,
position encodings with astral characters, and a client that refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from helpers import tree_state

from .editor import Editor


def _range(l1: int, c1: int, l2: int, c2: int) -> dict:
    return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}


async def test_apply_edit_open_buffer_and_closed_file(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    util = editor.uri("src/util.py")
    result = await editor.request(
        "takeback/applyEdit",
        {
            "label": "double the return",
            "sessionId": "s1",
            "edit": {
                "changes": {
                    app: [{"range": _range(1, 11, 1, 12), "newText": "10"}],
                    util: [{"range": _range(1, 15, 1, 16), "newText": "3"}],
                }
            },
        },
    )
    assert result["applied"] is True
    entry = result["entry"]
    assert entry["number"] == 1 and entry["label"] == "double the return" and entry["session"] == "s1"
    assert sorted(f["path"] for f in entry["files"]) == ["src/app.py", "src/util.py"]
    # the open buffer changed through workspace/applyEdit, as a versioned edit
    assert editor.text(app) == "def main():\n    return 10\n\n\ndef other():\n    return 2\n"
    sent = editor.apply_requests[-1].edit
    if editor.client_name == "visual_studio_code" or sent.document_changes:
        assert sent.document_changes and sent.document_changes[0].text_document.version == 1
    # the closed file changed on disk
    assert (repo / "src/util.py").read_text() == "def helper(x):\n    return x * 3\n"
    # the open file's disk copy is the editor's business until it saves
    assert (repo / "src/app.py").read_text() == "def main():\n    return 1\n\n\ndef other():\n    return 2\n"
    timeline = await editor.request("takeback/timeline", {})
    assert [e["number"] for e in timeline["entries"]] == [1]
    assert timeline["nextBefore"] is None


async def test_document_changes_with_file_operations_and_undo(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    new = editor.uri("src/new.py")
    moved = editor.uri("lib/helpers.py")
    result = await editor.request(
        "takeback/applyEdit",
        {
            "label": "restructure",
            "edit": {
                "documentChanges": [
                    {"textDocument": {"uri": app, "version": 1}, "edits": [{"range": _range(0, 4, 0, 8), "newText": "run"}]},
                    {"kind": "create", "uri": new},
                    {"textDocument": {"uri": new, "version": None}, "edits": [{"range": _range(0, 0, 0, 0), "newText": "NEW = 1\n"}]},
                    {"kind": "rename", "oldUri": editor.uri("src/util.py"), "newUri": moved},
                    {"kind": "delete", "uri": editor.uri("README.md")},
                ]
            },
        },
    )
    assert result["applied"] is True
    kinds = {f["path"]: f["kind"] for f in result["entry"]["files"]}
    assert kinds == {"src/app.py": "modified", "src/new.py": "added", "lib/helpers.py": "renamed", "README.md": "deleted"}
    assert editor.text(app).startswith("def run():")
    assert (repo / "src/new.py").read_text() == "NEW = 1\n"
    assert (repo / "lib/helpers.py").read_text() == "def helper(x):\n    return x * 2\n"
    assert not (repo / "src/util.py").exists() and not (repo / "README.md").exists()

    undo = await editor.request("takeback/undo", {})
    assert undo["verdict"] == "safe" and undo["applied"] is True
    assert editor.text(app).startswith("def main():")
    assert not (repo / "src/new.py").exists() and not (repo / "lib/helpers.py").exists()
    assert (repo / "src/util.py").read_text() == "def helper(x):\n    return x * 2\n"
    assert (repo / "README.md").read_text() == "# demo\n"


@pytest.mark.parametrize("line", ["s = '😀é😀'  # x\n", "s = 'ab'  # x\n"])
async def test_positions_in_negotiated_encoding_with_astral_characters(editor: Editor, repo: Path, line: str) -> None:
    (repo / "emoji.py").write_text(line + "t = 1\n", encoding="utf-8")
    uri = editor.open("emoji.py")
    # the person types after the emoji (incremental change, positions in the encoding)
    editor.type(uri, "# x", "# person")
    # the agent replaces what follows the closing quote on line 0, in the same encoding
    text = editor.text(uri)
    start = text.index("  # person")
    from .editor import to_position

    pos = to_position(text, start, editor.encoding)
    end = to_position(text, start + len("  # person"), editor.encoding)
    result = await editor.request(
        "takeback/applyEdit",
        {"edit": {"changes": {uri: [{"range": {"start": vars_(pos), "end": vars_(end)}, "newText": "  # agent"}]}}},
    )
    assert result["applied"] is True
    expected = line.replace("# x", "# agent") + "t = 1\n"
    assert editor.text(uri) == expected
    before = await editor.request("takeback/fileAt", {"turnId": "1", "uri": uri, "side": "before"})
    assert before["content"] == line.replace("# x", "# person") + "t = 1\n"  # the buffer, unsaved edit included
    after = await editor.request("takeback/fileAt", {"turnId": "1", "uri": uri, "side": "after"})
    assert after["content"] == expected


def vars_(pos: types.Position) -> dict:
    return {"line": pos.line, "character": pos.character}


async def test_client_refuses_the_edit(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    editor.refuse = True
    before_util = (repo / "src/util.py").read_text()
    result = await editor.request(
        "takeback/applyEdit",
        {
            "label": "refused",
            "edit": {
                "changes": {
                    app: [{"range": _range(1, 11, 1, 12), "newText": "10"}],
                    editor.uri("src/util.py"): [{"range": _range(1, 15, 1, 16), "newText": "3"}],
                }
            },
        },
    )
    assert result["applied"] is False
    assert "refused" in result["failureReason"]
    assert result["entry"]["state"] == "not-applied"
    assert result["entry"]["checkpoints"][0]["applied"] is False
    # the disk write of the closed file was rolled back, the buffer untouched
    assert (repo / "src/util.py").read_text() == before_util
    assert editor.text(app).startswith("def main():\n    return 1\n")
    with pytest.raises(Exception) as info:
        await editor.request("takeback/undo", {})
    assert getattr(info.value, "code", None) == -32003


async def test_folder_operations_move_and_delete_every_file_inside(editor: Editor, repo: Path) -> None:
    (repo / "data").mkdir()
    (repo / "data/a.txt").write_text("a\n")
    (repo / "data/deep").mkdir()
    (repo / "data/deep/b.txt").write_text("b\n")
    (repo / "old").mkdir()
    (repo / "old/c.txt").write_text("c\n")
    result = await editor.request("takeback/applyEdit", {"label": "move data, drop old", "edit": {"documentChanges": [
        {"kind": "rename", "oldUri": editor.uri("data"), "newUri": editor.uri("moved")},
        {"kind": "delete", "uri": editor.uri("old"), "options": {"recursive": True}},
        {"kind": "create", "uri": editor.uri("src/app.py"), "options": {"ignoreIfExists": True}},
        {"kind": "delete", "uri": editor.uri("no-such.txt"), "options": {"ignoreIfNotExists": True}},
        {"kind": "create", "uri": editor.uri("README.md"), "options": {"overwrite": True}},
    ]}})
    assert result["applied"] is True
    kinds = {f["path"]: f["kind"] for f in result["entry"]["files"]}
    assert kinds == {"moved/a.txt": "renamed", "moved/deep/b.txt": "renamed", "old/c.txt": "deleted", "README.md": "modified"}
    assert (repo / "moved/deep/b.txt").read_text() == "b\n" and not (repo / "data/a.txt").exists()
    assert not (repo / "old/c.txt").exists() and (repo / "README.md").read_bytes() == b""
    undo = await editor.request("takeback/undo", {})
    assert undo["applied"] is True
    assert (repo / "data/deep/b.txt").read_text() == "b\n" and (repo / "old/c.txt").read_text() == "c\n"
    assert not (repo / "moved").exists() or not any((repo / "moved").rglob("*.txt"))


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"kind": "create", "uri": "src"}, "a folder is in the way"),
        ({"kind": "create", "uri": "README.md"}, "it exists (set overwrite or ignoreIfExists)"),
        ({"kind": "delete", "uri": "src"}, "it is not empty (set recursive)"),
        ({"kind": "delete", "uri": "gone.txt"}, "it does not exist (set ignoreIfNotExists)"),
        ({"kind": "rename", "oldUri": "gone.txt", "newUri": "new.txt"}, "it does not exist"),
        ({"kind": "rename", "oldUri": "README.md", "newUri": "src"}, "a folder is in the way"),
        ({"kind": "rename", "oldUri": "README.md", "newUri": "src/app.py"}, "the target exists (set overwrite or ignoreIfExists)"),
        ({"textDocument": {"uri": "gone.txt", "version": None}, "edits": [{"range": _range(0, 0, 0, 0), "newText": "x"}]},
         "does not exist (create it first)"),
        ({"textDocument": {"uri": "logo.bin", "version": None}, "edits": [{"range": _range(0, 0, 0, 0), "newText": "x"}]},
         "it is not UTF-8 text"),
        ({"kind": "rename", "oldUri": "README.md", "newUri": "src/app.py", "options": {"ignoreIfExists": True}},
         "the edit changes nothing"),
    ],
)
async def test_a_file_operation_that_cannot_be_played_is_refused_and_writes_nothing(
    editor: Editor, repo: Path, change: dict, says: str
) -> None:
    (repo / "logo.bin").write_bytes(b"\xff\xfe\x00")
    before = tree_state(repo)
    for key in ("uri", "oldUri", "newUri"):
        if key in change:
            change = {**change, key: editor.uri(change[key])}
    if "textDocument" in change:
        change = {**change, "textDocument": {**change["textDocument"], "uri": editor.uri(change["textDocument"]["uri"])}}
    with pytest.raises(Exception) as info:
        await editor.request("takeback/applyEdit", {"edit": {"documentChanges": [change]}})
    assert getattr(info.value, "code", None) == -32602 and says in str(info.value), repr(info.value)
    assert tree_state(repo) == before
    assert (await editor.request("takeback/timeline", {}))["entries"] == []
