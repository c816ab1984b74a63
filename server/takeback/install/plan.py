"""Install and uninstall, all or nothing across files: every config file involved is read and
checked first (a file that is not valid JSON or TOML stops everything, nothing written), then
the new contents are written atomically, one file at a time, and the ledger is updated. A config
path that is a symbolic link is written through (``links``); a project file git tracks is
changed only with ``--force`` (``tracked``).
"""

from __future__ import annotations

import copy
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, NothingToDo, OutsideWorkspace
from ..storage import atomic
from . import hookentries, jsonconfig, links, mcpentries, opencode, tomlblock, tracked
from .agents import AGENTS, SHARED_FILE_NOTE, Agent, not_found, seed_for
from .command import mcp_argv, takeback_argv
from .ledger import Ledger


@dataclass
class Change:
    path: str
    action: str
    """created, updated, unchanged, removed (the file deleted), restored (put back as it was
    before install), cleaned (only Takeback's entries taken out)."""
    what: str


@dataclass
class Report:
    agent: str
    title: str
    scope: str
    changes: list[Change] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    skipped: str | None = None
    """``install all``: why this agent was passed over (``agents.not_found``); nothing written for it."""


class Pending:
    """The config files of one run: what each holds on disk and what it will hold."""

    def __init__(self, preset: dict[Path, bytes | None] | None = None, confine: Path | None = None) -> None:
        self.before: dict[Path, bytes | None] = dict(preset or {})
        self.after: dict[Path, bytes | None] = {}
        self.confine = confine
        """With ``--scope project``: the repository, which its files may not lead out of
        (a file outside it, such as Copilot's per-person MCP list, is the person's own)."""

    def read(self, path: Path) -> bytes | None:
        if path in self.after:
            return self.after[path]
        if path not in self.before:
            if self.confine is not None and path.is_relative_to(self.confine):
                _check_inside(self.confine, path)
            self.before[path] = _read(path)
        return self.before[path]

    def json(self, path: Path, seed: dict | None = None) -> tuple[dict[str, Any], jsonconfig.JsonLayout]:
        data = self.read(path)
        doc, layout = jsonconfig.parse(path, data)
        if data is None and seed:
            doc = copy.deepcopy(seed)
        return doc, layout

    def text(self, path: Path) -> str | None:
        data = self.read(path)
        try:
            return None if data is None else data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise jsonconfig.BadConfig(f"{path} is not UTF-8 text; nothing was written") from exc

    def put_json(self, path: Path, doc: dict, layout: jsonconfig.JsonLayout) -> None:
        self.after[path] = layout.dump(doc).encode()

    def put(self, path: Path, data: bytes | None) -> None:
        self.after[path] = data

    def changed(self) -> dict[Path, bytes | None]:
        return {p: d for p, d in self.after.items() if d != self.before.get(p)}


def _read(path: Path) -> bytes | None:
    """The bytes of ``path`` (through its link), None when it does not exist; a link that
    leads nowhere or to no file is refused here, naming it."""
    try:
        return path.read_bytes()
    except OSError as exc:
        if path.is_symlink():
            links.destination(path)  # raises, saying what is wrong with the link
        if isinstance(exc, FileNotFoundError):
            return None
        raise jsonconfig.BadConfig(f"{path} cannot be read ({exc.strerror}); nothing was written") from exc


def _check_inside(root: Path, path: Path) -> None:
    """The repository's own files must not lead Takeback out of it (a symbolic link at a
    config path, or a config folder that is one, pointing elsewhere): refuse before reading."""
    folder = path.parent
    while not folder.exists() and folder != root:
        folder = folder.parent
    if not folder.resolve().is_relative_to(root.resolve()) or not path.resolve().is_relative_to(root.resolve()):
        raise OutsideWorkspace(
            f"{path.relative_to(root)} leads out of the repository (a symbolic link): remove the link and run again; nothing was written"
        )
    if path.is_symlink():
        raise OutsideWorkspace(
            f"{path.relative_to(root)} is a symbolic link within the repository: a repository's config file is never "
            "written through a link (it could lead to a file of the team's); replace it by a file; nothing was written"
        )


def _root(workspace: str | None) -> Path:
    """The project of ``--scope project``: the folder ``-C`` names, exactly (an agent reads its
    project config from the folder it is started in); else the git work tree around the
    current folder, else the current folder."""
    if workspace is not None:
        folder = Path(workspace).resolve()
        if not folder.is_dir():
            raise InvalidInput(f"{workspace} is not a folder: give the folder the agent is started in")
        return folder
    start = Path(os.getcwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


# ---- one agent ----------------------------------------------------------------------------


def _switched_off(hooks_off: tuple[tuple[str, ...], object], doc: dict[str, Any]) -> bool:
    """Whether ``doc`` holds the agent's setting that turns every hook off (``Agent.hooks_off``)."""
    keys, off = hooks_off
    value: Any = doc
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value is off


def _plugin_enabled(doc: dict[str, Any]) -> bool:
    """Whether Claude Code settings ``doc`` enable Takeback's plugin (``takeback@<marketplace>``)."""
    enabled = doc.get("enabledPlugins")
    return isinstance(enabled, dict) and any(str(k).startswith("takeback@") and v is True for k, v in enabled.items())


def _add(agent: Agent, scope: str, root: Path, with_mcp: bool, files: Pending) -> tuple[dict[Path, str], list[str]]:
    """Takeback's entries for ``agent`` added to ``files``; returns what each file got, and
    warnings about the person's settings."""
    what: dict[Path, list[str]] = {}
    warnings = []
    hooks_path = agent.hooks_file(scope, root)
    doc, layout = files.json(hooks_path, seed_for(agent, scope))
    if agent.hooks_off is not None and _switched_off(agent.hooks_off, doc):
        keys, off = agent.hooks_off
        warnings.append(
            f"{hooks_path} switches every hook off ({'.'.join(keys)} = {str(off).lower()}): "
            f"{agent.title} will not run Takeback's until you change that."
        )
    if agent.name == "claude" and _plugin_enabled(doc):
        warnings.append(
            "Takeback's Claude Code plugin is enabled in these settings too: its hooks step aside for these, "
            "so each event is recorded once. One of the two is enough (/plugin to remove the plugin, or "
            "'takeback uninstall claude')."
        )
    if agent.hooks is not None:
        hookentries.add(doc, agent.name, agent.hooks, hooks_path)
        what.setdefault(hooks_path, []).append("hooks: " + ", ".join(agent.hooks.events))
    if agent.plugin_file is not None:
        plugin = agent.plugin_file(scope, root)
        if files.read(plugin) is not None and not opencode.is_ours(files.read(plugin)):
            raise jsonconfig.BadConfig(f"{plugin} exists and is not Takeback's plugin: move it away, then run again; nothing was written")
        files.put(plugin, opencode.plugin_source(takeback_argv()).encode())
        what.setdefault(plugin, []).append("the plugin (session.created, chat.message, tool.execute.before/after, session.idle)")
        if not opencode.has_package(plugin.parent, files.read(plugin.parent / "package-lock.json")):
            warnings.append(opencode.package_note(plugin.parent))
        plugins = jsonconfig.member(doc, "plugin", list, hooks_path, [])
        if plugin.as_uri() not in plugins:
            plugins.append(plugin.as_uri())
        what.setdefault(hooks_path, []).append("the plugin in \"plugin\"")
    files.put_json(hooks_path, doc, layout)
    if with_mcp:
        mcp_path, described, note = _add_mcp(agent, scope, root, files)
        what.setdefault(mcp_path, []).append(described)
        warnings += [note] if note else []
    return {p: "; ".join(w) for p, w in what.items()}, warnings


def _add_mcp(agent: Agent, scope: str, root: Path, files: Pending) -> tuple[Path, str, str | None]:
    """The ``takeback`` MCP server added to the agent's MCP file; returns the file, what it got,
    and what to tell the person when it is a file the team shares (``--scope project``): the
    entry then runs a plain ``takeback`` when PATH finds this one, which works for every teammate
    who has Takeback; else it holds this person's own path, and the note says so and offers the
    personal file (``--scope user``)."""
    mcp_path = agent.mcp_file(scope, root)
    shared = scope == "project" and mcp_path.is_relative_to(root)
    argv = mcp_argv(agent.name, portable=shared)
    if agent.mcp is None:
        files.put(mcp_path, tomlblock.with_block(mcp_path, files.text(mcp_path) or "", argv).encode())
    else:
        mdoc, mlayout = files.json(mcp_path)
        mcpentries.add(mdoc, agent.mcp, mcp_path, argv)
        files.put_json(mcp_path, mdoc, mlayout)
    described = f"the MCP server 'takeback' ({shlex.join(argv)})"
    if not shared:
        return mcp_path, described, None
    name = mcp_path.relative_to(root)
    if argv[0] == "takeback":
        return mcp_path, described, (
            f"{name} is a file your team shares: it starts the MCP server as 'takeback', found on PATH, "
            "so it works for everyone who has Takeback on their PATH."
        )
    return mcp_path, described, (
        f"{name} is a file your team shares, and its MCP server now runs a path of yours ({argv[0]}) that your "
        f"teammates do not have. For yourself only, use 'takeback install {agent.name} --mcp' (--scope user: "
        f"{agent.mcp_file('user', root)}) instead; or put Takeback on your PATH and install again, which writes "
        "a plain 'takeback' that works for everyone who has it."
    )


def _strip(agent: Agent, scope: str, root: Path, files: Pending) -> list[Path]:
    """Every Takeback entry for ``agent`` taken out of ``files``; returns the files looked at."""
    hooks_path = agent.hooks_file(scope, root)
    mcp_path = agent.mcp_file(scope, root)
    paths = [hooks_path]
    doc, layout = files.json(hooks_path)
    if agent.hooks is not None:
        hookentries.remove(doc, agent.name, agent.hooks)
    if agent.plugin_file is not None:
        plugin = agent.plugin_file(scope, root)
        paths.append(plugin)
        if opencode.is_ours(files.read(plugin)):
            files.put(plugin, None)
        plugins = doc.get("plugin")
        if isinstance(plugins, list) and plugin.as_uri() in plugins:
            plugins.remove(plugin.as_uri())
            if not plugins:
                del doc["plugin"]
    if files.read(hooks_path) is not None:
        _put_stripped(files, hooks_path, doc, layout)
    if mcp_path != hooks_path:
        paths.append(mcp_path)
    if agent.mcp is None:
        text = files.text(mcp_path)
        if text is not None:
            files.put(mcp_path, tomlblock.without_block(text).encode())
    elif files.read(mcp_path) is not None:
        mdoc, mlayout = files.json(mcp_path)
        if mcpentries.remove(mdoc, agent.mcp):
            _put_stripped(files, mcp_path, mdoc, mlayout)
    return paths


def _put_stripped(files: Pending, path: Path, doc: dict, layout: jsonconfig.JsonLayout) -> None:
    """Keep ``doc`` when stripping changed it. A file is never deleted here, even when left
    empty: only the ledger knows that Takeback created it (uninstall then restores that)."""
    original, _ = jsonconfig.parse(path, files.read(path))
    if doc != original:
        files.put_json(path, doc, layout)


# ---- writing ------------------------------------------------------------------------------


def _write(path: Path, data: bytes | None) -> list[Path]:
    """Write (or delete) ``path`` atomically (a symbolic link: the file it leads to, checked by
    ``links.destinations`` before the first write); returns the folders made for it. Deleting
    a link deletes the link, never the file it leads to."""
    if data is None:
        path.unlink(missing_ok=True)
        return []
    path = links.destination(path)
    made = []
    folder = path.parent
    while not folder.exists():
        made.append(folder)
        folder = folder.parent
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    atomic.write(path, data, mode=mode)  # the agent's file keeps its mode; a new one is 0600
    return made


def _action(before: bytes | None, after: bytes | None) -> str:
    if before == after:
        return "unchanged"
    if before is None:
        return "created"
    return "removed" if after is None else "updated"


def _notes(agent: Agent, scope: str, root: Path, paths: list[Path], shared: list[Path]) -> list[str]:
    notes = list(agent.next_steps) + [tracked.note(p, root) for p in paths if p in shared]
    if scope == "project":
        inside = [p for p in paths if p.is_relative_to(root) and not p.name.startswith("settings.local") and p not in shared]
        for note in agent.project_notes:
            if note == SHARED_FILE_NOTE:
                notes += [note.format(path=p.relative_to(root)) for p in inside]
            else:
                notes.append(note)
    return notes


def _expand(names: list[str]) -> list[Agent]:
    chosen = list(AGENTS) if "all" in names else list(dict.fromkeys(names))
    return [AGENTS[n] for n in chosen]


def _present(names: list[str], scope: str) -> tuple[list[Agent], list[Report]]:
    """The agents to install into: those named, and for ``all`` the ones on this machine; and a
    report for each agent ``all`` passed over, saying why. None found: nothing to do."""
    named = set(names) - {"all"}
    agents, skipped = [], []
    for agent in _expand(names):
        why = None if agent.name in named else not_found(agent)
        if why is None:
            agents.append(agent)
        else:
            skipped.append(Report(agent.name, agent.title, scope, skipped=why))
    if not agents:
        raise NothingToDo(
            "install all found no agent on this machine (no agent's program on PATH, no agent's config folder): "
            "name the agent to install into it anyway (takeback install claude); nothing was written"
        )
    return agents, skipped


def install(
    names: list[str], scope: str = "user", with_mcp: bool = False, workspace: str | None = None, force: bool = False
) -> list[Report]:
    root = _root(workspace)
    agents, skipped = _present(names, scope)
    files = Pending(confine=root if scope == "project" else None)
    planned = [(agent, _add(agent, scope, root, with_mcp, files)) for agent in agents]
    changed = files.changed()
    links.destinations(list(changed))
    shared = tracked.tracked([p for p in changed if p.is_relative_to(root)], root) if scope == "project" else []
    if not force:
        tracked.refuse(shared, root)
    ledger = Ledger()
    for path, data in changed.items():
        made = _write(path, data)
        ledger.wrote(path, files.before[path], data, made)
        ledger.save()  # per file: a later failure still leaves what was written restorable
    reports = []
    for agent, (what, warnings) in planned:
        report = Report(agent.name, agent.title, scope)
        for path, described in what.items():
            if path.is_symlink():
                described += f" (written through the symbolic link, to {links.destination(path)})"
            report.changes.append(Change(str(path), _action(files.before[path], files.after.get(path)), described))
        report.next_steps = warnings + _notes(agent, scope, root, list(what), shared)
        reports.append(report)
    return reports + skipped


def uninstall(names: list[str], scope: str = "user", workspace: str | None = None) -> list[Report]:
    root = _root(workspace)
    agents = _expand(names)
    ledger = Ledger()
    files = Pending(confine=root if scope == "project" else None)
    looked = [(agent, _strip(agent, scope, root, files)) for agent in agents]
    outcome: dict[Path, tuple[bytes | None, str, list[Path]]] = {}
    for path in dict.fromkeys(p for _, paths in looked for p in paths):
        before = files.before[path]
        after = files.after.get(path, before)
        outcome[path] = (after, "cleaned", [])
        known, original, made = ledger.original(path, before)
        if known:
            # The file is as install left it: its bytes before install come back, provided they
            # hold no Takeback entry themselves (an install over an edited earlier install).
            again = Pending({path: original})
            for agent in agents:
                _strip(agent, scope, root, again)
            if again.after.get(path, original) == original and (original is not None or not path.is_symlink()):
                outcome[path] = (original, "restored", made)  # a link is never deleted for a file install made
    links.destinations([p for p, (data, _, _) in outcome.items() if data is not None and data != files.before[p]])
    for path, (data, _, _) in outcome.items():
        if data != files.before[path]:
            _write(path, data)
            ledger.forget(path)
    made_folders = {folder for _, _, folders in outcome.values() for folder in folders}
    for folder in sorted(made_folders, key=lambda f: len(f.parts), reverse=True):
        try:
            folder.rmdir()  # only when empty: what install made, now holding nothing
        except OSError:
            pass
    ledger.save()
    reports = []
    for agent, paths in looked:
        report = Report(agent.name, agent.title, scope)
        for path in paths:
            data, action, _ = outcome[path]
            before = files.before[path]
            if data == before:
                action = "unchanged"
            elif data is None:
                action = "removed"
            report.changes.append(Change(str(path), action, "Takeback's entries"))
        reports.append(report)
    return reports
