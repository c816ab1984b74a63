"""Work trees laid out the less common ways git allows, and what git hides from a listing.

Each test builds the layout with the real git in a temp folder, runs a turn that edits a
tracked file, adds a file and deletes one (or the case's own steps), and checks what the turn
recorded, that undo gives back the tree exactly as it was at begin and redo the tree as it was
at end, and that the user's git state reads the same throughout.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers import git, make_repo, write_files
from takeback.scanning import scan

from .support import full_state, open_engine

FILES = {"README.md": "# demo\n", "src/app.py": "def main():\n    return 1\n", "src/util.py": "X = 1\n"}


@pytest.fixture(params=["auto", "git"])
def listing_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each layout listed in-process where the scanner chooses to ("auto": these trees are
    small) and by git (as on a large tree)."""
    monkeypatch.setattr(scan, "LISTING", request.param)
    yield request.param


def git_view(ws: Path) -> tuple[str, ...]:
    """What the person's git says about the work tree (status, HEAD, refs), and its
    configuration files' bytes (setting a work tree in memory must never write core.worktree)."""
    configs = [Path(ws, git(ws, "rev-parse", "--git-path", name).strip()) for name in ("config", "config.worktree")]
    return (
        git(ws, "status", "--porcelain", "--untracked-files=all", "--ignored"),
        git(ws, "rev-parse", "HEAD"),
        git(ws, "for-each-ref"),
        *(p.read_text() if p.exists() else "-" for p in configs),
    )


def commit_all(ws: Path, files: dict[str, str | bytes]) -> None:
    write_files(ws, files)
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "initial")


def separate_git_dir(tmp: Path) -> Path:
    git(tmp, "init", "-q", "-b", "main", "--separate-git-dir", str(tmp / "elsewhere.git"), str(tmp / "ws"))
    commit_all(tmp / "ws", FILES)
    return tmp / "ws"


def linked_worktree(tmp: Path) -> Path:
    main = make_repo(tmp / "main", dict(FILES))
    git(main, "worktree", "add", "-q", str(tmp / "ws"))
    return tmp / "ws"


def symlinked_dot_git(tmp: Path) -> Path:
    """Android's ``repo`` layout: ``.git`` is a symlink into a folder beside the work tree."""
    make_repo(tmp / "made", {})
    (tmp / ".repo" / "projects").mkdir(parents=True)
    os.rename(tmp / "made" / ".git", tmp / ".repo" / "projects" / "ws.git")
    (tmp / "ws").mkdir()
    os.symlink("../.repo/projects/ws.git", tmp / "ws" / ".git")
    commit_all(tmp / "ws", FILES)
    return tmp / "ws"


def core_worktree(tmp: Path) -> Path:
    """The git folder sits above the work tree, which ``core.worktree`` names."""
    make_repo(tmp / "repo", {})
    (tmp / "repo" / "tree").mkdir()
    git(tmp / "repo", "config", "core.worktree", str(tmp / "repo" / "tree"))
    commit_all(tmp / "repo" / "tree", FILES)
    return tmp / "repo" / "tree"


def git_file_with_core_worktree(tmp: Path) -> Path:
    """A ``.git`` file naming a git folder whose ``core.worktree`` points back (older submodules)."""
    separate_git_dir(tmp)
    git(tmp / "ws", "config", "core.worktree", str(tmp / "ws"))
    return tmp / "ws"


LAYOUTS: dict[str, Callable[[Path], Path]] = {
    "separate git dir": separate_git_dir,
    "linked worktree": linked_worktree,
    "symlinked .git": symlinked_dot_git,
    "core.worktree": core_worktree,
    ".git file and core.worktree": git_file_with_core_worktree,
}


def edit_add_delete(ws: Path) -> None:
    (ws / "src/app.py").write_text("def main():\n    return 2\n")
    (ws / "new.txt").write_text("new\n")
    (ws / "src/util.py").unlink()


def run_turn(ws: Path, during: Callable[[Path], None], **config) -> tuple:
    """One bracketed turn: (the entry, the tree at begin, the tree at end, the engine)."""
    engine = open_engine(ws, **config)
    start = full_state(ws)
    engine.begin_turn(label="turn")
    during(ws)
    end = full_state(ws)
    return engine.end_turn(), start, end, engine


def undo_redo_exact(engine, ws: Path, start, end) -> None:
    result = engine.undo()
    assert result.applied and result.verdict == "safe", result
    assert full_state(ws) == start
    result = engine.redo()
    assert result.applied and result.verdict == "safe", result
    assert full_state(ws) == end


def kinds(entry) -> dict[str, str]:
    return {f.path: f.kind for f in entry.files}


def edit_add_delete_undone(ws: Path, git_root: Path) -> None:
    """A turn that edits, adds and deletes (FILES) is recorded as such; undo and redo are exact;
    after the undo, the person's git (at ``git_root``) says what it said before the turn."""
    before_git = git_view(git_root)
    entry, start, end, engine = run_turn(ws, edit_add_delete)
    assert kinds(entry) == {"src/app.py": "modified", "new.txt": "added", "src/util.py": "deleted"}
    undo_redo_exact(engine, ws, start, end)
    engine.undo()
    assert git_view(git_root) == before_git


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_layouts_record_what_git_sees(layout: str, tmp_path: Path, listing_by: str) -> None:
    ws = LAYOUTS[layout](tmp_path)
    edit_add_delete_undone(ws, ws)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_layouts_walked_honour_info_exclude(layout: str, tmp_path: Path) -> None:
    """With git_scanner = false the folder is walked; the repository's info/exclude is found
    through a .git file or symlink too."""
    ws = LAYOUTS[layout](tmp_path)
    exclude = Path(git(ws, "rev-parse", "--git-path", "info/exclude").strip())
    exclude = exclude if exclude.is_absolute() else ws / exclude
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.write_text("*.local\n")

    def during(ws: Path) -> None:
        edit_add_delete(ws)
        (ws / "settings.local").write_text("excluded\n")

    entry, start, end, engine = run_turn(ws, during, git_scanner=False)
    assert kinds(entry) == {"src/app.py": "modified", "new.txt": "added", "src/util.py": "deleted"}
    engine.undo()
    (ws / "settings.local").unlink()  # excluded: not the turn's, left by its undo
    assert full_state(ws) == start


# ---------------------------------------------------------------- filters and line endings


def filtered_repo(tmp: Path, config: dict[str, str], files: dict[str, bytes]) -> Path:
    """A repository with ``config`` set before ``files`` are committed (the index then holds
    their cleaned form; the disk keeps the bytes written)."""
    ws = make_repo(tmp / "ws", {})
    for name, value in config.items():
        git(ws, "config", name, value)
    commit_all(ws, {"plain.md": "no conversion\n", **files})
    assert git(ws, "status", "--porcelain") == ""
    return ws


CRLF = b"line one\r\nline two\r\n"

FILTER_CASES = {
    "core.autocrlf": ({"core.autocrlf": "true"}, {"a.txt": CRLF, "b.txt": CRLF}),
    ".gitattributes eol=crlf": ({}, {".gitattributes": b"*.txt text eol=crlf\n", "a.txt": CRLF, "b.txt": CRLF}),
    "working-tree-encoding": (
        {},
        {".gitattributes": b"*.txt working-tree-encoding=UTF-16LE\n",
         "a.txt": "line one\n".encode("utf-16-le"), "b.txt": "two\n".encode("utf-16-le")},
    ),
    "clean and smudge filter": (
        {"filter.upper.clean": "tr a-z A-Z", "filter.upper.smudge": "tr A-Z a-z"},
        {".gitattributes": b"*.txt filter=upper\n", "a.txt": b"lower case on disk\n", "b.txt": b"also lower\n"},
    ),
}


@pytest.mark.parametrize("case", FILTER_CASES, ids=str)
def test_before_images_are_the_bytes_on_disk(case: str, tmp_path: Path, listing_by: str) -> None:
    """A clean file's before-image comes from the index, which holds its cleaned form: it must
    be converted back as checkout does, so undo writes the bytes the person had."""
    config, files = FILTER_CASES[case]
    ws = filtered_repo(tmp_path, config, files)
    assert git(ws, "cat-file", "-p", ":a.txt").encode() != files["a.txt"]  # the index's form differs

    def during(ws: Path) -> None:
        (ws / "a.txt").write_bytes(b"rewritten\r\n")
        (ws / "b.txt").unlink()

    entry, start, end, engine = run_turn(ws, during)
    assert kinds(entry) == {"a.txt": "modified", "b.txt": "deleted"}
    assert engine.file_at("last", "a.txt", "before") == files["a.txt"]
    assert entry.notices == []
    undo_redo_exact(engine, ws, start, end)


def test_a_filter_that_cannot_be_undone_leaves_the_file_out(tmp_path: Path, listing_by: str) -> None:
    """A clean filter with no smudge that changes the size: the bytes the file had cannot be
    worked out from the index. The file is left out of the turn with a notice, never written
    back in its index form."""
    ws = filtered_repo(
        tmp_path, {"filter.strip.clean": "tr -d x"}, {".gitattributes": b"*.txt filter=strip\n", "a.txt": b"axbx\n"}
    )

    def during(ws: Path) -> None:
        (ws / "a.txt").unlink()
        (ws / "plain.md").write_text("edited\n")

    entry, start, end, engine = run_turn(ws, during)
    assert kinds(entry) == {"plain.md": "modified"}
    assert any(n.startswith("a.txt: not recorded") for n in entry.notices), entry.notices
    result = engine.undo()
    assert result.verdict == "safe"
    assert not (ws / "a.txt").exists()  # never written as "ab\n"
    assert (ws / "plain.md").read_text() == "no conversion\n"


def test_a_symlink_is_never_converted(tmp_path: Path) -> None:
    """Filters and line-ending rules never apply to a link's target (checkout writes it as it
    is): a link deleted by the turn comes back pointing where it did."""
    ws = filtered_repo(
        tmp_path,
        {"core.autocrlf": "true", "filter.shout.clean": "tr A-Z a-z", "filter.shout.smudge": "tr a-z A-Z"},
        {".gitattributes": b"link filter=shout\n"},
    )
    os.symlink("target.txt", ws / "link")
    git(ws, "add", "link")
    git(ws, "commit", "-q", "-m", "link")
    entry, start, end, engine = run_turn(ws, lambda ws: (ws / "link").unlink())
    assert kinds(entry) == {"link": "deleted"}
    assert engine.file_at("last", "link", "before") == b"target.txt"
    undo_redo_exact(engine, ws, start, end)


# ---------------------------------------------------------------- sparse checkout


def test_sparse_checkout_files_outside_the_set_stay_absent(tmp_path: Path, listing_by: str) -> None:
    """Entries outside a sparse checkout's set are not on disk: a turn that moves them in the
    index (here a branch switch) records nothing for them, and undo never creates them."""
    ws = make_repo(tmp_path / "ws", {"in/a.txt": "a1\n", "out/b.txt": "b1\n"})
    git(ws, "checkout", "-q", "-b", "other")
    commit_all(ws, {"in/a.txt": "a2\n", "out/b.txt": "b2\n"})
    git(ws, "checkout", "-q", "main")
    git(ws, "sparse-checkout", "set", "in")
    assert not (ws / "out").exists()

    entry, start, end, engine = run_turn(ws, lambda ws: git(ws, "checkout", "-q", "other"))
    assert kinds(entry) == {"in/a.txt": "modified"}
    undo_redo_exact(engine, ws, start, end)
    assert not (ws / "out").exists()


# ---------------------------------------------------------------- ignore rules that change


@pytest.fixture(params=["git", "git-walk", "plain"])
def scanner_kind(request: pytest.FixtureRequest) -> str:
    """git: the git scanner; git-walk: a repository walked (git_scanner=False); plain: no repository."""
    return request.param


def ignoring_ws(tmp: Path, kind: str, rules: dict[str, str], present: dict[str, str]) -> Path:
    """A workspace with ignore ``rules`` (committed in a repository) and ``present`` files
    (untracked, most of them ignored) on disk before the turn."""
    files = {**FILES, **rules}
    if kind == "plain":
        ws = tmp / "ws"
        write_files(ws, files)
    else:
        ws = make_repo(tmp / "ws", files)
    write_files(ws, present)
    return ws


def recorded_paths(entry) -> set[str]:
    return {f.path for f in entry.files}


@pytest.mark.parametrize(
    "rule_file",
    [".gitignore", "src/.gitignore", ".git/info/exclude"],
)
def test_files_shown_by_new_ignore_rules_are_not_added(rule_file: str, tmp_path: Path, scanner_kind: str) -> None:
    """The agent drops the rule that ignored the person's build output and database: those
    files existed before the turn, so the turn did not add them, and its undo keeps them. A
    file the agent created in the same turn is still the turn's."""
    if rule_file.startswith(".git/") and scanner_kind == "plain":
        pytest.skip("needs a git repository")
    folder = os.path.dirname(rule_file).replace(".git/info", "")
    rules = {} if rule_file.startswith(".git/") else {rule_file: "*.db\nbuild/\n"}
    ws = ignoring_ws(tmp_path, scanner_kind, rules, {f"{folder}/local.db".lstrip("/"): "the person's data\n",
                                                      f"{folder}/build/out.bin".lstrip("/"): "build output\n"})
    if rule_file.startswith(".git/"):
        (ws / rule_file).write_text("*.db\nbuild/\n")

    def during(ws: Path) -> None:
        (ws / rule_file).write_text("# nothing ignored\n")
        (ws / "created.txt").write_text("the agent's\n")

    entry, start, end, engine = run_turn(ws, during, git_scanner=scanner_kind == "git")
    prefix = f"{folder}/".lstrip("/")
    expected = {"created.txt"} | (set() if rule_file.startswith(".git/") else {rule_file})
    assert recorded_paths(entry) == expected
    for name in ("local.db", "build/out.bin"):
        assert any(n.startswith(f"{prefix}{name}: existed before the turn") for n in entry.notices), entry.notices
    engine.undo()
    assert (ws / prefix / "local.db").read_text() == "the person's data\n"
    assert (ws / prefix / "build/out.bin").read_text() == "build output\n"
    assert not (ws / "created.txt").exists()
    engine.redo()
    assert full_state(ws) == end


def test_a_file_created_while_the_rules_changed_is_the_turns(tmp_path: Path, scanner_kind: str) -> None:
    """A file born during the turn under a rule the agent dropped is recorded as added."""
    ws = ignoring_ws(tmp_path, scanner_kind, {".gitignore": "*.db\n"}, {})

    def during(ws: Path) -> None:
        (ws / ".gitignore").write_text("")
        (ws / "made.db").write_text("made by the agent\n")

    entry, start, end, engine = run_turn(ws, during, git_scanner=scanner_kind == "git")
    assert kinds(entry) == {".gitignore": "modified", "made.db": "added"}
    assert entry.notices == []
    undo_redo_exact(engine, ws, start, end)


def test_a_file_that_becomes_ignored_is_still_recorded(tmp_path: Path, scanner_kind: str) -> None:
    """The agent ignores a file the person had (untracked, visible) and changes it, and ignores
    another without changing it: the change is recorded and undone; the other is not touched."""
    ws = ignoring_ws(tmp_path, scanner_kind, {".gitignore": "*.log\n"}, {"notes.txt": "v1\n", "todo.txt": "keep\n"})

    def during(ws: Path) -> None:
        (ws / ".gitignore").write_text("*.log\nnotes.txt\ntodo.txt\n")
        (ws / "notes.txt").write_text("v2 by the agent\n")

    entry, start, end, engine = run_turn(ws, during, git_scanner=scanner_kind == "git")
    assert kinds(entry) == {".gitignore": "modified", "notes.txt": "modified"}
    undo_redo_exact(engine, ws, start, end)


def test_a_force_added_ignored_file_is_not_added_by_the_turn(repo: Path) -> None:
    """An ignored file the person had, `git add -f`-ed by the agent: in the index now, but not
    created by the turn."""
    write_files(repo, {".gitignore": "*.db\n"})
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore")
    (repo / "local.db").write_text("the person's\n")
    entry, start, end, engine = run_turn(repo, lambda ws: git(ws, "add", "-f", "local.db"))
    assert entry.files == []
    assert any(n.startswith("local.db: existed before the turn") for n in entry.notices)


# ---------------------------------------------------------------- where git hides the workspace


@pytest.mark.parametrize("rules", ["*\n", "*\n!*/\n"], ids=["everything", "every file"])
def test_a_workspace_its_enclosing_repository_ignores_is_walked(rules: str, tmp_path: Path, listing_by: str) -> None:
    """A dotfiles repository at $HOME whose .gitignore is `*` (or `*` but not folders): git
    lists nothing new in a project folder under it, so the folder is walked and every change
    is recorded."""
    home = make_repo(tmp_path / "home", {".gitignore": rules, ".bashrc": "alias ll='ls -l'\n"}, commit=False)
    git(home, "add", "-f", ".gitignore", ".bashrc")
    git(home, "commit", "-q", "-m", "dotfiles")
    ws = tmp_path / "home" / "project"
    write_files(ws, FILES)
    edit_add_delete_undone(ws, home)


def nested_repo(path: Path) -> Path:
    return make_repo(path, {"x.txt": "x1\n", "y.txt": "y1\n"})


def nested_edits(sub: str) -> Callable[[Path], None]:
    def run(ws: Path) -> None:
        (ws / sub / "x.txt").write_text("x2\n")
        (ws / sub / "new.txt").write_text("new\n")
        (ws / sub / "y.txt").unlink()
        (ws / "README.md").write_text("# edited\n")

    return run


NESTED_KINDS = {"x.txt": "modified", "new.txt": "added", "y.txt": "deleted"}


@pytest.mark.parametrize("kind", ["git", "git-walk", "plain"])
def test_nested_repository_changes_are_recorded(kind: str, tmp_path: Path, listing_by: str) -> None:
    """A repository inside the workspace (untracked by the outer one, or in a plain folder):
    what the agent changes in it is the turn's, and undo restores it without touching its git."""
    if kind == "plain":
        ws = tmp_path / "ws"
        write_files(ws, FILES)
    else:
        ws = make_repo(tmp_path / "ws", dict(FILES))
    inner = nested_repo(ws / "vendor" / "lib")
    before_inner = git_view(inner)
    entry, start, end, engine = run_turn(ws, nested_edits("vendor/lib"), git_scanner=kind == "git")
    assert kinds(entry) == {"README.md": "modified", **{f"vendor/lib/{p}": k for p, k in NESTED_KINDS.items()}}
    assert entry.notices == []
    undo_redo_exact(engine, ws, start, end)
    engine.undo()
    assert git_view(inner) == before_inner


def test_submodule_changes_are_recorded(tmp_path: Path, listing_by: str) -> None:
    origin = nested_repo(tmp_path / "origin")
    ws = make_repo(tmp_path / "ws", dict(FILES))
    git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(origin), "mods/sub")
    git(ws, "commit", "-q", "-m", "submodule")
    before = (git_view(ws), git_view(ws / "mods" / "sub"))
    entry, start, end, engine = run_turn(ws, nested_edits("mods/sub"))
    assert kinds(entry) == {"README.md": "modified", **{f"mods/sub/{p}": k for p, k in NESTED_KINDS.items()}}
    assert entry.notices == []
    undo_redo_exact(engine, ws, start, end)
    engine.undo()
    assert (git_view(ws), git_view(ws / "mods" / "sub")) == before


@pytest.mark.parametrize("index_version", ["2", "3", "4"])
def test_an_embedded_repository_without_gitmodules_is_recorded(tmp_path: Path, listing_by: str, index_version: str) -> None:
    """A repository added to the outer one with `git add` (a gitlink with no .gitmodules entry,
    which git warns about but allows): git's listing says nothing of what changes inside it, so
    it is found in the index, in every index format (version 4 compresses the names)."""
    ws = make_repo(tmp_path / "ws", dict(FILES))
    inner = nested_repo(ws / "embedded" / "lib")
    git(ws, "add", "embedded/lib")
    git(ws, "commit", "-q", "-m", "embed a repository")
    git(ws, "update-index", "--index-version", index_version)
    assert not (ws / ".gitmodules").exists()
    assert git(ws, "ls-files", "--stage", "embedded/lib").startswith("160000 ")
    before = (git_view(ws), git_view(inner))
    entry, start, end, engine = run_turn(ws, nested_edits("embedded/lib"))
    assert kinds(entry) == {"README.md": "modified", **{f"embedded/lib/{p}": k for p, k in NESTED_KINDS.items()}}
    assert entry.notices == []
    undo_redo_exact(engine, ws, start, end)
    engine.undo()
    assert (git_view(ws), git_view(inner)) == before


def test_a_gitignore_that_hides_itself_is_named(tmp_path: Path, listing_by: str) -> None:
    """An agent writes a top .gitignore of '*': git then lists neither it nor what it hides, so
    the turn cannot record them; it says so instead of staying silent, and its undo says the
    turn has notes (the person's files stay as they are)."""
    ws = make_repo(tmp_path / "ws", dict(FILES))

    def hide_everything(ws: Path) -> None:
        (ws / ".gitignore").write_text("*\n")
        (ws / "hidden.txt").write_text("made while hidden\n")
        (ws / "README.md").write_text("# edited\n")  # tracked: still listed

    entry, _start, _end, engine = run_turn(ws, hide_everything)
    assert kinds(entry) == {"README.md": "modified"}
    assert any(n.startswith(".gitignore: changed during the turn and ignores itself") for n in entry.notices), entry.notices
    result = engine.undo()
    assert result.verdict == "safe" and "note" in result.message, result.message
    assert (ws / "README.md").read_text() == "# demo\n" and (ws / ".gitignore").exists()


def test_a_gitignore_the_person_had_that_hides_itself_is_not_named_again(tmp_path: Path, listing_by: str) -> None:
    ws = make_repo(tmp_path / "ws", dict(FILES))
    (ws / ".gitignore").write_text(".gitignore\n*.log\n")  # the person's own, there before the turn
    entry, start, end, engine = run_turn(ws, lambda ws: (ws / "README.md").write_text("# edited\n"))
    assert kinds(entry) == {"README.md": "modified"} and entry.notices == []
    undo_redo_exact(engine, ws, start, end)


def test_a_commit_inside_a_nested_repository_is_recorded(repo: Path) -> None:
    """The nested repository's index is copied at begin as the outer one's is: a file the agent
    changes and commits inside it still has its before-image, and undo brings it back."""
    inner = nested_repo(repo / "lib")
    before_inner = git_view(inner)

    def during(ws: Path) -> None:
        (inner / "x.txt").write_text("committed by the agent\n")
        git(inner, "commit", "-q", "-am", "agent")
        (inner / "y.txt").write_text("y2\n")

    entry, start, end, engine = run_turn(repo, during)
    assert kinds(entry) == {"lib/x.txt": "modified", "lib/y.txt": "modified"}
    assert entry.notices == []
    undo_redo_exact(engine, repo, start, end)
    assert git_view(inner) != before_inner  # the agent's commit stays: Takeback never touches git state


def test_a_repository_cloned_during_the_turn_is_named(repo: Path) -> None:
    def during(ws: Path) -> None:
        nested_repo(ws / "cloned")
        (ws / "README.md").write_text("# edited\n")

    entry, start, end, engine = run_turn(repo, during)
    assert kinds(entry) == {"README.md": "modified"}
    assert any(n.startswith("cloned: a git repository not scanned when the turn began") for n in entry.notices)
    result = engine.undo()
    assert f"#{entry.number} has 1 note(s)" in result.message
    assert (repo / "README.md").read_text() == "# demo\n"
    assert (repo / "cloned" / "x.txt").read_text() == "x1\n"  # not the turn's to remove


def test_gc_during_a_turn_keeps_what_a_nested_snapshot_names(repo: Path) -> None:
    """A nested repository's file that was modified at begin has its content only in the open
    turn's snapshot: gc while the turn is open keeps it, so undo can bring it back."""
    inner = nested_repo(repo / "lib")
    (inner / "x.txt").write_text("the person's unsaved work\n")
    engine = open_engine(repo)
    engine.begin_turn(label="turn")
    (inner / "x.txt").write_text("the agent's\n")
    engine.gc()
    engine.end_turn()
    result = engine.undo()
    assert result.verdict == "safe", result
    assert (inner / "x.txt").read_text() == "the person's unsaved work\n"
