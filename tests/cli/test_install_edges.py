"""`takeback install` / `uninstall` at the edges, through the real command with HOME in a temp
folder: config files that cannot be used (a folder in a file's place, not an object, not UTF-8)
stop everything with one line; a project that is no git work tree (a plain folder, a bare
repository, an index git cannot read) tracks nothing; entries of an older install are brought up
to date and foreign ones left alone (an MCP server named 'takeback' that is not Takeback's is
refused); what uninstall keeps (the person's hooks beside Takeback's in one group, a value it
does not understand, a folder install made that now holds the person's file); the ledger across
two installs; the line written by a Takeback whose script is not beside its Python; a read-only
home (the disk's refusal, named, in one line).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, make_repo
from takeback.install.agents import CLAUDE_EVENTS

from .conftest import Takeback, expect_error, expect_ok
from .test_install import HOME_VARS, homes, persons_config, tree, user_file


@pytest.fixture
def env(tb: Takeback) -> dict[str, str]:
    """``tb``'s environment with no agent home variable: every agent's file is under HOME."""
    for name in HOME_VARS:
        tb.env.pop(name, None)
    return tb.env


def hook_lines(path: Path) -> list[str]:
    doc = json.loads(path.read_text())
    return [h["command"] for groups in doc.get("hooks", {}).values() if isinstance(groups, list)
            for g in groups for h in g.get("hooks", []) if isinstance(h.get("command"), str)]


def ledger(env: dict[str, str]) -> Path:
    return Path(env["TAKEBACK_HOME"]) / "install-ledger.json"


# ---------------------------------------------------------------------- configs that cannot be used


@pytest.mark.parametrize(("agent", "damage", "said"), [
    ("claude", "a-folder", r"cannot be read \(Is a directory\)"),
    ("claude", "comments", r"is not valid JSON \(line 2\): fix it \(comments are not supported here\)"),
    ("qwen", "a-list", r"holds JSON that is not an object"),
    ("codex", "not-utf8", r"is not UTF-8 text"),
    ("gemini", "too-deep", r"nests its JSON too deeply to be read"),
])
def test_a_config_that_cannot_be_used_stops_install_with_one_line(tb: Takeback, env: dict[str, str], agent: str,
                                                                  damage: str, said: str) -> None:
    path = Path(env["HOME"]) / ".codex" / "config.toml" if agent == "codex" else user_file(agent, env)
    path.parent.mkdir(parents=True)
    if damage == "a-folder":
        path.mkdir()
    else:
        path.write_bytes({"comments": b'{\n  // mine\n  "theme": "dark"\n}\n', "a-list": b'[{"hooks": {}}]\n',
                          "not-utf8": b'# caf\xe9\nmodel = "o3"\n', "too-deep": b"[" * 100_000 + b"]" * 100_000}[damage])
    before = homes(env)
    expect_error(tb("install", "all", "--mcp"), 2, rf"{path} {said}.*nothing was written")
    assert homes(env) == before and not ledger(env).exists()


def test_half_a_character_escaped_in_a_config_is_kept_as_its_escape(tb: Takeback, env: dict[str, str]) -> None:
    """``"\\ud800"`` (a lone surrogate: valid JSON, no UTF-8 for it) stays that escape, and the
    rest of the file its own characters."""
    settings = user_file("claude", env)
    settings.parent.mkdir(parents=True)
    original = '{\n  "name": "J\u00f6rg \\ud800"\n}\n'.encode()
    settings.write_bytes(original)
    expect_ok(tb("install", "claude"))
    text = settings.read_text(encoding="utf-8")
    assert '"name": "Jörg \\ud800"' in text and len(hook_lines(settings)) == len(CLAUDE_EVENTS)
    expect_ok(tb("uninstall", "claude"))
    assert settings.read_bytes() == original


# ---------------------------------------------------------------------- --scope project, nothing tracked


def _bare(tmp_path: Path) -> Path:
    folder = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(folder)], check=True)
    return folder


def _broken_index(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "broken-index", {".claude/settings.local.json": "{}\n"})
    (repo / ".git" / "index").write_bytes(b"not an index\n")  # git itself cannot read it either
    return repo


@pytest.mark.parametrize("project", ["a-plain-folder", "a-bare-repository", "an-index-git-cannot-read"])
def test_a_project_git_does_not_track_needs_no_force(tb: Takeback, env: dict[str, str], tmp_path: Path, project: str) -> None:
    """No work tree, or an index no one can read: no file is tracked, so install writes the
    personal file without --force (and without the note about git), and uninstall takes it out."""
    if project == "a-plain-folder":
        folder = tmp_path / "plain" / "sub"
        folder.mkdir(parents=True)
        args, cwd = ("--scope", "project"), folder  # no .git anywhere above: the current folder is the project
    else:
        folder = _bare(tmp_path) if project == "a-bare-repository" else _broken_index(tmp_path)
        args, cwd = ("--scope", "project", "-C", str(folder)), tb.cwd
    before = tree(folder)
    (report,) = tb.json("install", "claude", *args, cwd=cwd)
    local = folder / ".claude" / "settings.local.json"
    assert [(c["path"], c["action"]) for c in report["changes"]] == [
        (str(local), "updated" if project == "an-index-git-cannot-read" else "created")]
    assert not any("tracked by git" in step for step in report["next_steps"])
    assert len(hook_lines(local)) == len(CLAUDE_EVENTS)
    expect_ok(tb("uninstall", "claude", *args, cwd=cwd))
    assert tree(folder) == before


# ---------------------------------------------------------------------- entries: ours, theirs, older


def test_an_older_installs_entries_are_brought_up_to_date_in_place(tb: Takeback, env: dict[str, str]) -> None:
    """Hooks written by a Takeback that has moved (another virtualenv): each is rewritten in
    place, with this Takeback's line, never added a second time; the person's entry beside one
    stays, and so does a line the shell could not even split."""
    settings = user_file("claude", env)
    settings.parent.mkdir(parents=True)
    old = "/old/venv/bin/takeback hook claude"
    mine = {"type": "command", "command": 'echo "unclosed'}
    odd = {"type": "command", "command": ["not", "a", "line"]}
    settings.write_text(json.dumps({"hooks": {
        "UserPromptSubmit": [{"hooks": [mine, {"type": "command", "command": old, "timeout": 5}, odd]}],
        "Stop": [{"hooks": [{"type": "command", "command": old}]}],
    }}, indent=2) + "\n")
    (report,) = tb.json("install", "claude")
    assert report["changes"][0]["action"] == "updated"
    doc = json.loads(settings.read_text())
    from takeback.install.command import hook_argv, shell_line

    this = shell_line(hook_argv("claude"))
    assert doc["hooks"]["UserPromptSubmit"] == [{"hooks": [mine, {"type": "command", "command": this}, odd]}]
    assert doc["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": this}]}]
    assert not any(line == old for line in hook_lines(settings))
    assert sorted(doc["hooks"]) == sorted(["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"])
    # uninstall: the file changed since (an older install's): only Takeback's entries go, the group keeps the person's
    (out,) = tb.json("uninstall", "claude")
    assert out["changes"][0]["action"] == "cleaned"
    assert json.loads(settings.read_text()) == {"hooks": {"UserPromptSubmit": [{"hooks": [mine, odd]}]}}


def test_uninstall_leaves_a_value_it_does_not_understand(tb: Takeback, env: dict[str, str]) -> None:
    settings = user_file("claude", env)
    settings.parent.mkdir(parents=True)
    settings.write_text('{"hooks": {"Notification": "notify-send"}}\n')
    expect_ok(tb("install", "claude"))
    doc = json.loads(settings.read_text())
    doc["theme"] = "dark"  # changed since: uninstall takes out Takeback's entries only
    settings.write_text(json.dumps(doc))
    expect_ok(tb("uninstall", "claude"))
    assert json.loads(settings.read_text()) == {"hooks": {"Notification": "notify-send"}, "theme": "dark"}


@pytest.mark.parametrize("theirs", ["notify-server", {"command": "/opt/tb", "args": [1]}])
def test_an_mcp_server_named_takeback_that_is_not_takebacks_is_refused(tb: Takeback, env: dict[str, str], theirs: object) -> None:
    claude_json = Path(env["HOME"]) / ".claude.json"
    claude_json.write_text(json.dumps({"mcpServers": {"takeback": theirs}}))
    before = homes(env)
    expect_error(tb("install", "claude", "--mcp"), 2,
                 rf"{claude_json} already has an MCP server named 'takeback' that is not Takeback's.*nothing was written")
    assert homes(env) == before


def test_uninstall_keeps_the_persons_other_mcp_servers(tb: Takeback, env: dict[str, str]) -> None:
    claude_json = Path(env["HOME"]) / ".claude.json"
    expect_ok(tb("install", "claude", "--mcp"))
    doc = json.loads(claude_json.read_text())
    doc["mcpServers"]["files"] = {"command": "mcp-files"}  # added since
    claude_json.write_text(json.dumps(doc))
    expect_ok(tb("uninstall", "claude"))
    assert json.loads(claude_json.read_text()) == {"mcpServers": {"files": {"command": "mcp-files"}}}


def test_codex_config_without_a_final_newline_gets_its_block_on_a_line_of_its_own(tb: Takeback, env: dict[str, str]) -> None:
    toml = Path(env["HOME"]) / ".codex" / "config.toml"
    toml.parent.mkdir(parents=True)
    toml.write_bytes(b'model = "o3"')
    expect_ok(tb("install", "codex", "--mcp"))
    assert toml.read_text().startswith('model = "o3"\n\n# >>> takeback')
    expect_ok(tb("uninstall", "codex"))
    assert toml.read_bytes() == b'model = "o3"'


def test_an_opencode_lock_that_is_not_json_means_the_package_is_not_there(tb: Takeback, env: dict[str, str]) -> None:
    folder = user_file("opencode", env).parent
    (folder / "node_modules").mkdir(parents=True)
    (folder / "package-lock.json").write_text("<<<<<<< a merge left in it\n")
    said = tb.json("install", "opencode")[0]["next_steps"]
    assert any("@opencode-ai/plugin" in s and str(folder) in s for s in said), said


# ---------------------------------------------------------------------- the ledger


def test_a_second_install_into_the_same_file_keeps_the_first_original(tb: Takeback, env: dict[str, str]) -> None:
    """Gemini's hooks and MCP server share one file: install, then install --mcp, then
    uninstall gives back the bytes from before the first."""
    settings = user_file("gemini", env)
    settings.parent.mkdir(parents=True)
    original = (json.dumps(persons_config("gemini"), indent=4) + "\n").encode()
    settings.write_bytes(original)
    expect_ok(tb("install", "gemini"))
    (report,) = tb.json("install", "gemini", "--mcp")
    assert report["changes"][0]["action"] == "updated"
    (out,) = tb.json("uninstall", "gemini")
    assert out["changes"][0]["action"] == "restored"
    assert settings.read_bytes() == original


def test_an_install_over_an_edited_install_is_cleaned_not_restored(tb: Takeback, env: dict[str, str]) -> None:
    """The person edited Takeback's file (a setting added, one of Takeback's hooks taken out) and
    installed again: what the ledger holds from before that install has Takeback's entries, so
    uninstall takes them out of the file and keeps the person's edit."""
    settings = user_file("claude", env)
    expect_ok(tb("install", "claude"))
    doc = json.loads(settings.read_text())
    doc["theme"] = "dark"
    del doc["hooks"]["SessionEnd"]
    settings.write_text(json.dumps(doc, indent=2) + "\n")
    (again,) = tb.json("install", "claude")
    assert again["changes"][0]["action"] == "updated"
    (out,) = tb.json("uninstall", "claude")
    assert out["changes"][0]["action"] == "cleaned"
    assert json.loads(settings.read_text()) == {"theme": "dark"}


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "copilot", "opencode"])
def test_an_install_made_before_the_session_start_event_is_upgraded_and_still_restored(
    tb: Takeback, env: dict[str, str], agent: str,
) -> None:
    """An install made by a Takeback that wrote no session-start hook (its file and its ledger
    as that install left them): installing again adds the event, once, beside the others, and
    uninstall still gives the person's file back byte for byte."""
    from .test_install import SESSION_START

    path = user_file(agent, env)
    path.parent.mkdir(parents=True, exist_ok=True)
    original = json.dumps(persons_config(agent), indent=2).encode() + b"\n"
    path.write_bytes(original)
    expect_ok(tb("install", agent))
    plugin = Path(env["XDG_CONFIG_HOME"]) / "opencode" / "takeback-plugin.js"
    doc = json.loads(path.read_text())
    if agent == "opencode":  # the plugin of an older install hands over no session.created
        old = plugin.read_text().replace('event.type === "session.created"', 'event.type === "never"')
        plugin.write_text(old)
    else:  # the older install's file: every hook but the session start's
        del doc["hooks"][SESSION_START[agent]]
        path.write_text(json.dumps(doc, indent=2) + "\n")
    files = json.loads(ledger(env).read_text())
    for written in (path, plugin):
        if str(written) in files:
            files[str(written)]["after"] = hashlib.sha256(written.read_bytes()).hexdigest()
    ledger(env).write_text(json.dumps(files))

    (again,) = tb.json("install", agent)
    assert {c["action"] for c in again["changes"]} >= {"updated"}
    if agent == "opencode":
        assert 'event.type === "session.created"' in plugin.read_text()
    else:
        doc = json.loads(path.read_text())
        assert [len(g["hooks"]) if "hooks" in g else 1 for g in doc["hooks"][SESSION_START[agent]]] == [1]
        assert list(doc["hooks"])[-1] == SESSION_START[agent], "added after the events already there"
    (third,) = tb.json("install", agent)
    assert {c["action"] for c in third["changes"]} == {"unchanged"}
    expect_ok(tb("uninstall", agent))
    assert path.read_bytes() == original and not plugin.exists()


def test_a_folder_install_made_is_kept_when_it_holds_the_persons_file(tb: Takeback, env: dict[str, str]) -> None:
    folder = Path(env["HOME"]) / ".qwen"
    expect_ok(tb("install", "qwen"))
    (folder / "notes.md").write_text("mine\n")
    (out,) = tb.json("uninstall", "qwen")
    assert out["changes"][0]["action"] == "removed"
    assert tree(folder) == {"notes.md": b"mine\n"}


# ---------------------------------------------------------------------- the line written, the disk


def test_a_script_apart_from_its_python_writes_its_own_path(tb: Takeback, env: dict[str, str], tmp_path: Path) -> None:
    """``pip install --user`` puts ``takeback`` in ~/.local/bin, its Python elsewhere: the line
    written is the Python that ran the script, ``-S`` and its Takeback's entry file (the hook line
    ``install/command.py`` writes), and it runs (it records the prompt)."""
    from takeback.install.command import entry_file

    python = tmp_path / "python-alone" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(os.path.realpath(sys.executable))  # no takeback beside it
    (python.parent.parent / "pyvenv.cfg").write_text(f"home = {Path(os.path.realpath(sys.executable)).parent}\n")
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    packages = python.parent.parent / site.relative_to(sys.prefix)
    packages.parent.mkdir(parents=True)
    packages.symlink_to(site)
    script = Path(env["HOME"]) / ".local" / "bin" / "takeback"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!{python}\nimport sys\nfrom takeback.launch import main\nsys.exit(main())\n")
    script.chmod(0o755)
    proc = subprocess.run([str(script), "install", "claude"], cwd=tb.cwd, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc
    settings = user_file("claude", env)
    assert set(hook_lines(settings)) == {f"{python} -S {entry_file()} hook claude"}
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "from the pip --user script", "cwd": str(tb.cwd)}
    ran = subprocess.run(["sh", "-c", f"{python} -S {entry_file()} hook claude"], input=json.dumps(prompt), cwd=tb.cwd,
                         env={**env, "CLAUDECODE": "1"}, capture_output=True, text=True, timeout=60)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")
    assert [e["label"] for e in tb.json("log")] == ["from the pip --user script"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a read-only file system needs root")
def test_a_read_only_home_is_the_disks_refusal_named_in_one_line(tb: Takeback, env: dict[str, str], tmp_path: Path) -> None:
    home = Path(env["HOME"])
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(home)], check=True)
    try:
        (home / ".claude").mkdir()
        (home / ".claude" / "settings.json").write_text('{"theme": "dark"}\n')
        subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
        result = expect_error(tb("install", "claude"), 7, r"the disk refused: read-only file system \(.*\.claude.*\); "
                                                          r"run it again once that is fixed")
        assert str(home) in result.err
        assert (home / ".claude" / "settings.json").read_text() == '{"theme": "dark"}\n'
        assert not ledger(env).exists()
    finally:
        subprocess.run(["umount", str(home)], check=True)
    assert git(tb.cwd, "status", "--porcelain") == ""
