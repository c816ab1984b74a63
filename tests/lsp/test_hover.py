"""The line blame hover (``textDocument/hover``) and ``takeback/blame``, from the real server:
an agent's line (its turn, step, agent and prompt, and the ways to see its diff and take back
its hunk, as command names or as ``command:`` links that really run), a line the person wrote or
edited, a line from before the timeline with its commit, a file no turn changed, the unsaved
buffer as "now", a hostile prompt shown as text, and the off switch."""

from __future__ import annotations

import json
import subprocess
import urllib.parse
from pathlib import Path

from lsprotocol import types
from markdown_it import MarkdownIt

from .editor import Editor, start
from .test_operations import APP, _range

PROMPT = "Make the answers ten times bigger"


async def hover(editor: Editor, uri: str, line: int) -> str | None:
    """The hover's Markdown on 0-based ``line`` (None: no hover)."""
    answer = await editor.client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=4))
    )
    if answer is None:
        return None
    assert isinstance(answer.contents, types.MarkupContent) and answer.contents.kind == types.MarkupKind.Markdown
    return answer.contents.value


async def agent_turn(editor: Editor, uri: str, label: str = PROMPT, agent: str = "claude-code") -> dict:
    """Turn #1, one step: ``return 1`` → ``return 10`` (line 2 of app.py)."""
    done = await editor.request("takeback/applyEdit", {
        "label": label, "agent": agent, "sessionId": "s1",
        "edit": {"changes": {uri: [{"range": _range(1, 11, 1, 12), "newText": "10"}]}},
    })
    assert done["applied"] is True
    return done


def rendered(markdown: str) -> str:
    """The hover as a client renders it (CommonMark to HTML, raw HTML allowed: the worst case)."""
    return MarkdownIt("commonmark", {"html": True}).render(markdown)


async def test_a_turns_line_says_the_turn_the_agent_and_the_prompt(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    await agent_turn(editor, app)
    text = await hover(editor, app, 1)
    assert text is not None
    assert "**Agent turn #1, step 1** (claude\\-code)" in text
    assert f"```text\n{PROMPT}\n```" in text
    assert "UTC" in text
    # not a link-following client: the commands are named
    assert "`` takeback show 1 ``" in text or "` takeback show 1 `" in text
    assert "` takeback revert 1 --hunk src/app.py:2 `" in text and "takeback.revertTurn" in text
    assert "command:" not in text


async def test_the_line_before_the_timeline_names_its_commit_and_a_file_no_turn_changed_has_no_hover(
    editor: Editor, repo: Path,
) -> None:
    app = editor.open("src/app.py")
    await agent_turn(editor, app)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()
    text = await hover(editor, app, 0)
    assert text is not None and "**Before the timeline**" in text and head[:12] in text
    assert "takeback revert" not in text  # nothing of a turn to take back there
    assert await hover(editor, editor.open("README.md"), 0) is None  # no timeline entry changed it
    assert await hover(editor, app, 40) is None  # past the end
    assert await hover(editor, editor.uri("../elsewhere.py"), 0) is None  # outside the workspace


async def test_the_unsaved_buffer_is_now_and_the_persons_lines_are_theirs(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    await agent_turn(editor, app)
    editor.type(app, "def main():", "# the person's note\n\ndef main():")  # unsaved: two lines above
    note = await hover(editor, app, 0)
    assert note is not None and "**Written by you**" in note and "Agent turn" not in note
    moved = await hover(editor, app, 3)  # turn #1's line, two lines lower in the buffer
    assert moved is not None and "Agent turn #1" in moved and "src/app.py:4" in moved
    assert (repo / "src/app.py").read_text() == APP  # the disk holds neither the turn (applied in the buffer) nor the note

    editor.type(app, "return 10", "return 11")  # the person edits the agent's line
    edited = await hover(editor, app, 3)
    assert edited is not None and "Agent turn #1" in edited and "*Edited by you since*" in edited
    assert PROMPT in edited


async def test_a_hostile_prompt_is_shown_as_text(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    hostile = ("<img src=x onerror=alert(1)> [run me](command:takeback.undoTurn) ````\n"
               "```\n# Heading\n<script>alert(2)</script>\n[x]: command:takeback.undoTurn")
    await agent_turn(editor, app, label=hostile, agent="<b>[a](command:takeback.undoTurn)</b>")
    text = await hover(editor, app, 1)
    assert text is not None
    html = rendered(text)
    assert "<img" not in html and "<script" not in html and "<h1" not in html and "<b>" not in html
    assert 'href="command:takeback.undoTurn' not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # the prompt is there, as text
    assert "<pre><code" in html and html.count("<pre>") == 1  # one block: the prompt did not close it


async def test_links_run_the_commands_they_name(repo: Path, isolated_environment: Path) -> None:
    editor, result = await start("visual_studio_code", [repo], {"hoverCommandLinks": True})
    try:
        assert result.capabilities.hover_provider
        app = editor.open("src/app.py")
        await agent_turn(editor, app)
        text = await hover(editor, app, 1)
        assert text is not None
        links = dict((title, target) for title, target in _links(text))
        assert set(links) == {"Show turn #1's diff", "Take back this line's hunk from turn #1"}
        command, argument = _command(links["Show turn #1's diff"])
        assert command == "takeback.showTurnDiff" and argument["turnId"] and argument["folder"].endswith("/repo")
        command, argument = _command(links["Take back this line's hunk from turn #1"])
        assert command == "takeback.revertTurn"
        done = await editor.command(command, argument)
        assert done["operation"] == "revert" and done["applied"] is True
        assert editor.text(app) == APP
        assert "takeback revert" not in text
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()


async def test_the_hover_can_be_switched_off(repo: Path, isolated_environment: Path) -> None:
    editor, result = await start("neovim", [repo], {"hover": False})
    try:
        app = editor.open("src/app.py")
        await agent_turn(editor, app)
        assert await hover(editor, app, 1) is None
        blame = await editor.request("takeback/blame", {"uri": app, "first": 2, "last": 2})
        assert blame["lines"][0]["origin"]["number"] == 1  # the request still answers
    finally:
        await editor.client.shutdown_session()
        await editor.client.stop()


async def test_the_blame_request_answers_the_clis_model_for_the_buffer(editor: Editor, repo: Path) -> None:
    app = editor.open("src/app.py")
    await agent_turn(editor, app)
    editor.type(app, "def other():", "def other():  # mine")
    whole = await editor.request("takeback/blame", {"uri": app})
    assert whole["path"] == "src/app.py" and whole["entries"] == 1
    assert [line["line"] for line in whole["lines"]] == [1, 2, 3, 4, 5, 6]
    assert whole["lines"][4]["text"] == "def other():  # mine"  # the buffer, not the disk
    kinds = [(line["origin"]["kind"], line["origin"].get("why")) for line in whole["lines"]]
    assert kinds == [("before", None), ("turn", None), ("before", None), ("before", None), ("person", "since"), ("before", None)]
    origin = whole["lines"][1]["origin"]
    assert origin["label"] == PROMPT and origin["agent"] == "claude-code" and origin["step"] == 1
    assert "editedFrom" in origin and "stepLabel" in origin  # camelCase on the wire
    some = await editor.request("takeback/blame", {"uri": app, "first": 2, "last": 3})
    assert [line["line"] for line in some["lines"]] == [2, 3]
    none = await editor.request("takeback/blame", {"uri": editor.open("README.md")})
    assert none["entries"] == 0 and none["lines"][0]["origin"]["kind"] == "before"


def _links(markdown: str) -> list[tuple[str, str]]:
    tokens = MarkdownIt("commonmark").parseInline(markdown)
    found = []
    for token in tokens:
        children = token.children or []
        for i, child in enumerate(children):
            if child.type == "link_open":
                found.append((children[i + 1].content, str(child.attrs["href"])))
    return found


def _command(target: str) -> tuple[str, dict]:
    scheme, _, rest = target.partition(":")
    assert scheme == "command"
    command, _, query = rest.partition("?")
    arguments = json.loads(urllib.parse.unquote(query))
    assert isinstance(arguments, list) and len(arguments) == 1
    return command, arguments[0]


def test_a_teammates_line_names_their_timeline_and_the_commands_that_take_it_back() -> None:
    """A line ``engine/blame_remote.py`` gave to a teammate's turn (fetched with ``share fetch``):
    their timeline and number, their prompt quoted, and the CLI's commands for a teammate's turn
    (this clone has no entry of it to link to)."""
    from types import SimpleNamespace

    from takeback.core.models import BlameLine, BlameOrigin
    from takeback.lsp.blame import LineFacts, hover_markdown

    origin = BlameOrigin(kind="turn", entry="01JTEAMMATE", number=12, step=1, agent="claude", label="round the *tax*",
                         remote="origin", who="alice@laptop")
    facts = LineFacts(rel="src/app.py", line=BlameLine(line=6, text="    return round(x)", origin=origin), hunk=None)
    for links in (False, True):
        text = hover_markdown(facts, "file:///w/src/app.py", SimpleNamespace(uri="file:///w"), links)  # type: ignore[arg-type]
        assert "**origin\\/alice\\@laptop's agent turn #12, step 1**" in text, text  # (escaped as Markdown)
        assert "```text\nround the *tax*\n```" in text
        assert "takeback revert 'origin/alice@laptop#12'" in text and "takeback show 'origin/alice@laptop#12' --patch" in text
        assert "command:" not in text


def test_a_line_whose_version_was_not_stored_and_a_long_step_label() -> None:
    """The words of the origins the live tests rarely meet: content not stored (withheld,
    binary, a symlink) and a step label longer than a hover line, cut and escaped."""
    from types import SimpleNamespace

    from takeback.core.models import BlameLine, BlameOrigin
    from takeback.lsp.blame import LineFacts, hover_markdown

    folder = SimpleNamespace(uri="file:///w")
    unknown = LineFacts(rel="a.txt", line=BlameLine(line=1, text="x", origin=BlameOrigin(kind="unknown")), hunk=None)
    assert "**Not known**" in hover_markdown(unknown, "file:///w/a.txt", folder, False)  # type: ignore[arg-type]
    turn = BlameOrigin(kind="turn", entry="01J", number=3, step=2, agent="claude", label="p", step_label="[x](y) " * 80)
    text = hover_markdown(LineFacts(rel="a.txt", line=BlameLine(line=1, text="x", origin=turn), hunk=None),
                          "file:///w/a.txt", folder, False)  # type: ignore[arg-type]
    [step_line] = [line for line in text.splitlines() if line.startswith("Step: ")]
    assert step_line.endswith("…") and len(step_line) < 500, step_line  # (cut at 200 characters, then escaped)
    assert "<a" not in MarkdownIt().render(step_line), step_line  # (every bracket escaped: no link)
