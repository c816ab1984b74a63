"""The bracket's two ways of listing dirty and untracked files give the same answer.

``GitScanner`` asks git (``git diff-files`` + ``git ls-files -o --exclude-standard``) or, on
small trees, libgit2 in-process (``listing.py``). Every test here builds a real repository in
a temp folder and runs both on the same tree: the listings must be equal, and whole brackets
recorded either way must record the same changes. The in-process way must write nothing into
the user's repository, start no process, and decline (the scanner then asks git) wherever
libgit2 would answer differently from git.

Each listing test runs twice: the in-process walk as one walk, and split over two threads
(forced even on these small trees).
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import ConfigLevel

from helpers import git, git_state, make_repo, write_files
from takeback.scanning import listing, scan
from takeback.scanning.scan import GitScanner, ScanCache, make_scanner
from takeback.workspace.files import Workspace

from .support import open_engine

BASE = {
    "README.md": "# demo\n",
    "src/app.py": "def main():\n    return 1\n",
    "src/util.py": "def helper(x):\n    return x * 2\n",
    "src/pkg/mod.py": "X = 1\n",
    "src/pkg/sub/deep.py": "Y = 2\n",
    "docs/guide.md": "guide\n",
    "tools/run.sh": "#!/bin/sh\necho run\n",
}


@pytest.fixture(autouse=True)
def libgit2_reads_this_tests_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """libgit2 fixed its configuration search path (HOME, XDG) when it was loaded; each test
    here has its own HOME and XDG_CONFIG_HOME (conftest), and git reads no system file
    (GIT_CONFIG_NOSYSTEM). Point libgit2 at the same places for the test, then back."""
    levels = (ConfigLevel.SYSTEM, ConfigLevel.GLOBAL, ConfigLevel.XDG)
    saved = {level: pygit2.settings.search_path[level] for level in levels}
    empty = tmp_path / "no-system-config"
    empty.mkdir()
    pygit2.settings.search_path[ConfigLevel.SYSTEM] = str(empty)
    pygit2.settings.search_path[ConfigLevel.GLOBAL] = os.environ["HOME"]
    pygit2.settings.search_path[ConfigLevel.XDG] = os.path.join(os.environ["XDG_CONFIG_HOME"], "git")
    try:
        yield
    finally:
        for level, value in saved.items():
            pygit2.settings.search_path[level] = value


@pytest.fixture(params=["one walk", "two walks"])
def walks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(listing, "SPLIT_MIN_ENTRIES", 10**9 if request.param == "one walk" else 0)
    parallel = listing.Lister._parallel
    calls: list[int] = []

    def counted(self, lists):
        calls.append(len(lists))
        return parallel(self, lists)

    monkeypatch.setattr(listing.Lister, "_parallel", counted)
    yield request.param
    if request.param == "two walks":
        assert calls, "the walk was never split"
    else:
        assert not calls


def scanner_for(ws: Path, skip: Callable[[str], bool] | None = None) -> GitScanner:
    scanner = make_scanner(Workspace(ws), ws.parent / "statcache.json", True, skip, ScanCache())
    assert isinstance(scanner, GitScanner)
    return scanner


def listed(scanner: GitScanner, how: str) -> set[str]:
    """What the scanner lists when made to use git, or libgit2 only ("libgit2" raises where it
    declines), or chooses itself ("auto")."""
    saved = scan.LISTING
    scan.LISTING = how
    try:
        return scanner._list()
    finally:
        scan.LISTING = saved


def both(ws: Path, skip: Callable[[str], bool] | None = None) -> set[str]:
    """git's and libgit2's listing of ``ws`` as it is now, checked equal."""
    scanner = scanner_for(ws, skip)
    by_git = listed(scanner, "git")
    in_process = listed(scanner, "libgit2")
    assert in_process == by_git
    assert listed(scanner, "auto") == by_git
    return by_git


# ---------------------------------------------------------------- listings


def test_ignore_rules_at_every_level(tmp_path: Path, walks: str) -> None:
    ws = make_repo(tmp_path / "ws", {
        **BASE,
        ".gitignore": "*.log\nbuild/\n/anchored.txt\ndocs/**/*.tmp\n# a comment\n\\#hash.txt\ntrailing.txt   \n",
        "src/.gitignore": "*.tmp\ncache/\n",
        "src/pkg/.gitignore": "gen/\n*.cache\n/only-here.py\n",
    })
    (ws / ".git" / "info" / "exclude").write_text("secret-notes.md\n")
    excludes = tmp_path / "excludes"
    excludes.write_text("*.bak\n")
    git(ws, "config", "core.excludesFile", str(excludes))
    write_files(ws, {
        "x.log": "ignored at the root\n",
        "src/pkg/deep.log": "ignored by the root file, two levels down\n",
        "build/out.bin": "ignored folder\n",
        "anchored.txt": "anchored: ignored\n",
        "src/anchored.txt": "not anchored here: listed\n",
        "docs/a/b/x.tmp": "docs/**/*.tmp\n",
        "docs/y.tmp": "docs/**/*.tmp matches no folder too\n",
        "src/a.tmp": "src/.gitignore\n",
        "src/cache/c.py": "ignored folder one level down\n",
        "src/pkg/gen/g.py": "ignored folder two levels down\n",
        "src/pkg/x.cache": "ignored two levels down\n",
        "src/pkg/only-here.py": "anchored in src/pkg/.gitignore\n",
        "src/pkg/sub/only-here.py": "not anchored there: listed\n",
        "#hash.txt": "escaped #\n",
        "trailing.txt": "trailing spaces are not part of the pattern\n",
        "secret-notes.md": "info/exclude\n",
        "old.bak": "core.excludesFile\n",
        "src/pkg/real.py": "listed\n",
        "src/pkg/more/z.py": "listed\n",
        "notes.md": "listed\n",
    })
    (ws / "src" / "app.py").write_text("changed\n")
    assert both(ws) == {
        "src/anchored.txt", "src/pkg/sub/only-here.py", "src/pkg/real.py", "src/pkg/more/z.py", "notes.md", "src/app.py",
    }


def test_global_ignore_file(tmp_path: Path, walks: str) -> None:
    """git's default core.excludesFile ($XDG_CONFIG_HOME/git/ignore), read by both."""
    ws = make_repo(tmp_path / "ws", dict(BASE))
    xdg = Path(os.environ["XDG_CONFIG_HOME"]) / "git"
    xdg.mkdir(parents=True)
    (xdg / "ignore").write_text("*.swp\n")
    write_files(ws, {"a.swp": "x", "src/b.swp": "x", "b.txt": "x"})
    assert both(ws) == {"b.txt"}


def test_untracked_files_are_listed_one_by_one(tmp_path: Path, walks: str) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    write_files(ws, {"a/b/c/d.txt": "d", "a/e.txt": "e", "src/pkg/sub/new/x.py": "x", "top.txt": "t"})
    (ws / "empty" / "folders").mkdir(parents=True)
    assert both(ws) == {"a/b/c/d.txt", "a/e.txt", "src/pkg/sub/new/x.py", "top.txt"}


def test_nested_repository_and_submodule(tmp_path: Path, walks: str) -> None:
    origin = make_repo(tmp_path / "origin", {"lib.py": "L = 1\n"})
    ws = make_repo(tmp_path / "ws", dict(BASE))
    git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(origin), "src/sub")
    git(ws, "commit", "-q", "-m", "submodule")
    (ws / "src" / "sub" / "lib.py").write_text("changed inside the submodule\n")
    write_files(ws / "src" / "sub", {"new-in-submodule.txt": "n"})
    nested = make_repo(ws / "vendor" / "nested", {"n.py": "N = 1\n"})
    write_files(nested, {"untracked-in-nested.txt": "u", "n.py": "changed\n"})
    write_files(ws, {"vendor/own.txt": "listed"})
    # the nested repository is one folder (its scanner of its own lists it); the submodule is not listed
    assert both(ws) == {"vendor/own.txt", "vendor/nested/"}


def test_workspace_in_a_subfolder_of_the_repository(tmp_path: Path, walks: str) -> None:
    repo = make_repo(tmp_path / "repo", {**BASE, "app/main.py": "m\n", "app/lib/l.py": "l\n", "app/.gitignore": "*.out\n"})
    write_files(repo, {
        "src/app.py": "changed outside the workspace\n",
        "outside.txt": "untracked outside",
        "app/main.py": "changed inside\n",
        "app/lib/new.py": "untracked inside",
        "app/x.out": "ignored inside",
        "app/lib/deeper/y.py": "untracked, deeper",
    })
    (repo / "app" / "lib" / "l.py").unlink()
    assert both(repo / "app") == {"main.py", "lib/new.py", "lib/l.py", "lib/deeper/y.py"}


def test_names_with_spaces_unicode_newlines_and_raw_bytes(tmp_path: Path, walks: str) -> None:
    odd = {
        "dir with space/na\u00efve caf\u00e9.txt": "u\n",
        "\u65e5\u672c/\u30d5\u30a1\u30a4\u30eb.md": "j\n",
        "odd\nname.txt": "n\n",
        "-leading-dash.txt": "d\n",
        "glob*chars?[ab].txt": "taken literally, not as a pattern\n",
        os.fsdecode(b"raw-\xe9-byte.txt"): "latin-1 name\n",
    }
    ws = make_repo(tmp_path / "ws", {**BASE, **odd})
    write_files(ws, {name: "changed\n" for name in odd})
    untracked = {f"new {name}" if "/" not in name else name.replace("/", "/new ") for name in odd}
    write_files(ws, {name: "new\n" for name in untracked})
    assert both(ws) == set(odd) | untracked


def test_store_folder_is_skipped(tmp_path: Path, walks: str) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    write_files(ws, {".takeback-store/objects/pack-1.pack": "p", ".takeback-store/log": "l", "kept.txt": "k"})

    def skip(rel: str) -> bool:
        return rel == ".takeback-store" or rel.startswith(".takeback-store/")

    assert both(ws, skip) == {"kept.txt"}


def test_deleted_files_mode_changes_symlinks_and_type_changes(tmp_path: Path, walks: str) -> None:
    ws = make_repo(tmp_path / "ws", {**BASE, "link-target.txt": "t\n", "becomes-folder": "f\n", "becomes-link.txt": "l\n"})
    os.symlink("link-target.txt", ws / "a-link")
    git(ws, "add", "a-link")
    git(ws, "commit", "-q", "-m", "link")
    (ws / "src" / "util.py").unlink()
    (ws / "src" / "pkg" / "sub" / "deep.py").unlink()
    os.chmod(ws / "README.md", 0o755)  # executable bit only
    os.chmod(ws / "tools" / "run.sh", 0o755)
    (ws / "a-link").unlink()
    os.symlink("README.md", ws / "a-link")  # a symlink pointing elsewhere
    (ws / "becomes-folder").unlink()
    write_files(ws, {"becomes-folder/inside.txt": "i"})
    (ws / "becomes-link.txt").unlink()
    os.symlink("link-target.txt", ws / "becomes-link.txt")
    assert both(ws) == {
        "src/util.py", "src/pkg/sub/deep.py", "README.md", "tools/run.sh", "a-link",
        "becomes-folder", "becomes-folder/inside.txt", "becomes-link.txt",
    }


def test_a_change_in_the_same_timestamp_as_the_index_is_seen(tmp_path: Path, walks: str) -> None:
    """Racily clean entries: the file's recorded time is not older than the index file, so an
    unchanged size and time prove nothing; both look at the content."""
    ws = make_repo(tmp_path / "ws", dict(BASE))
    git(ws, "config", "core.trustctime", "false")  # only time, size and the racy rule remain
    target = ws / "src" / "app.py"
    later = time.time_ns() + 60 * 10**9
    os.utime(target, ns=(later, later))  # recorded at add with a time not older than the index
    git(ws, "add", "src/app.py")
    target.write_text("def main():\n    return 7\n")  # same size, other content
    os.utime(target, ns=(later, later))  # the same time as recorded
    st = target.stat()
    assert _index_stat(ws, b"src/app.py") == (st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9, st.st_ino, st.st_size)
    assert _index_stat(ws, b"src/app.py")[0] >= int((ws / ".git" / "index").stat().st_mtime)  # racy
    assert both(ws) == {"src/app.py"}


def _index_stat(ws: Path, path: bytes) -> tuple[int, int, int, int]:
    """(mtime seconds, mtime nanoseconds, inode, size) the version-2 index records for ``path``."""
    data = (ws / ".git" / "index").read_bytes()
    pos = 12
    for _ in range(int.from_bytes(data[8:12], "big")):
        length = int.from_bytes(data[pos + 60 : pos + 62], "big") & 0xFFF
        name = data[pos + 62 : pos + 62 + length]
        if name == path:
            field = [int.from_bytes(data[pos + i : pos + i + 4], "big") for i in range(0, 40, 4)]
            return field[2], field[3], field[5], field[9]
        pos += (62 + length + 8) & ~7
    raise KeyError(path)


def test_quick_rewrite_right_after_a_commit_is_seen(tmp_path: Path, walks: str) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    (ws / "src" / "util.py").write_text("def helper(x):\n    return x * 3\n")  # same size
    git(ws, "commit", "-q", "-am", "quick")
    (ws / "src" / "util.py").write_text("def helper(x):\n    return x * 4\n")
    assert both(ws) == {"src/util.py"}


def test_conflicted_paths(tmp_path: Path, walks: str) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    git(ws, "checkout", "-q", "-b", "other")
    (ws / "src" / "app.py").write_text("other side\n")
    git(ws, "commit", "-q", "-am", "other")
    git(ws, "checkout", "-q", "main")
    (ws / "src" / "app.py").write_text("main side\n")
    git(ws, "commit", "-q", "-am", "main")
    git(ws, "merge", "-q", "other", check=False)
    assert b"<<<<<<<" in (ws / "src" / "app.py").read_bytes()
    assert both(ws) == {"src/app.py"}


def test_assume_unchanged_entries(tmp_path: Path, walks: str) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    git(ws, "update-index", "--assume-unchanged", "src/app.py")
    write_files(ws, {"src/app.py": "changed but assumed unchanged\n", "docs/guide.md": "changed\n"})
    assert both(ws) == {"docs/guide.md"}


def test_a_workspace_without_commits_or_index(tmp_path: Path) -> None:
    """No index file: nothing to split by, one walk."""
    ws = make_repo(tmp_path / "ws", {}, commit=False)
    write_files(ws, {"a.txt": "a", "d/b.txt": "b"})
    assert not (ws / ".git" / "index").exists()
    assert both(ws) == {"a.txt", "d/b.txt"}


def test_split_covers_every_name_once(tmp_path: Path) -> None:
    files = {f"pkg{i}/mod{j}/f{k}.py": "x" for i in range(3) for j in range(4) for k in range(5)}
    ws = make_repo(tmp_path / "ws", {**files, "top.txt": "t"})
    write_files(ws, {"pkg1/mod2/untracked.py": "u", "pkg1/new/u.py": "u", "zzz.txt": "z"})
    paths = listing.index_paths((ws / ".git" / "index").read_bytes())
    assert len(paths) == len(files) + 1 and paths == sorted(paths)
    plan = listing.split_plan(paths, b"", 0)
    assert plan is not None
    first, second = listing.split_paths(os.fsencode(ws), plan)
    covered = [p for p in first + second]
    assert len(covered) == len(set(covered))
    for a in first:
        for b in second:  # neither holds the other's subtree
            assert not b.startswith(a + b"/") and not a.startswith(b + b"/")
    everything = {os.fsencode(p) for p in git(ws, "ls-files", "-co", "--exclude-standard").splitlines()}
    for path in everything:
        owners = [p for p in covered if path == p or path.startswith(p + b"/")]
        assert len(owners) == 1, (path, owners)
    assert 0.3 < sum(1 for p in paths if any(p == a or p.startswith(a + b"/") for a in first)) / len(paths) < 0.7


# ---------------------------------------------------------------- where it declines


def _negation_in_a_nested_file(ws: Path) -> None:
    write_files(ws, {".gitignore": "*.log\n", "src/.gitignore": "!keep.log\n"})
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "ignores")
    write_files(ws, {"src/keep.log": "git lists it, libgit2 1.9 does not\n", "x.log": "ignored"})


def _negation_in_an_ignored_gitignore(ws: Path) -> None:
    write_files(ws, {"gen/.gitignore": "*\n!keep.txt\n", "gen/keep.txt": "k", "gen/drop.txt": "d"})


def _attributes(kind: str) -> Callable[[Path], None]:
    def run(ws: Path) -> None:
        write_files(ws, {".gitattributes": "*.txt text eol=crlf\n", "a.txt": "a\n"})
        if kind == "tracked":
            git(ws, "add", ".gitattributes")
            git(ws, "commit", "-q", "-m", "attributes")
        elif kind == "ignored":
            (ws / ".git" / "info" / "exclude").write_text(".gitattributes\n")
        elif kind == "info":
            (ws / ".gitattributes").unlink()
            (ws / ".git" / "info" / "attributes").write_text("*.txt text\n")

    return run


def _config(*pairs: str) -> Callable[[Path], None]:
    def run(ws: Path) -> None:
        for i in range(0, len(pairs), 2):
            git(ws, "config", pairs[i], pairs[i + 1])
        write_files(ws, {"src/app.py": "changed\n"})

    return run


def _index_version(version: str) -> Callable[[Path], None]:
    def run(ws: Path) -> None:
        git(ws, "update-index", "--index-version", version)
        write_files(ws, {"src/app.py": "changed\n", "new.txt": "n"})

    return run


def _split_index(ws: Path) -> None:
    git(ws, "update-index", "--split-index")
    write_files(ws, {"src/app.py": "changed\n", "new.txt": "n"})


def _skip_worktree(ws: Path) -> None:
    git(ws, "update-index", "--skip-worktree", "docs/guide.md")
    (ws / "docs" / "guide.md").unlink()


def _global_config_only_git_reads(ws: Path) -> None:
    config = ws.parent / "global-config"
    excludes = ws.parent / "global-excludes"
    excludes.write_text("*.secret\n")
    config.write_text(f"[core]\n\texcludesFile = {excludes}\n")
    os.environ["GIT_CONFIG_GLOBAL"] = str(config)  # restored by the test's monkeypatch
    write_files(ws, {"a.secret": "s", "b.txt": "b"})


def _git_c_option(ws: Path) -> None:
    os.environ["GIT_CONFIG_PARAMETERS"] = "'core.excludesfile'='/nonexistent'"
    write_files(ws, {"b.txt": "b"})


def _libgit2_home_differs(ws: Path) -> None:
    other = ws.parent / "other-home"
    (other / ".config" / "git").mkdir(parents=True)
    (other / ".config" / "git" / "ignore").write_text("*.txt\n")
    pygit2.settings.search_path[ConfigLevel.XDG] = str(other / ".config" / "git")  # restored by the fixture
    write_files(ws, {"b.txt": "b"})


def _too_many_entries(ws: Path) -> None:
    listing.MAX_ENTRIES = 3  # restored by the test's monkeypatch
    write_files(ws, {"src/app.py": "changed\n"})


DECLINED = {  # name: (setup, why it declines)
    "negated pattern in a nested .gitignore": (_negation_in_a_nested_file, "negated pattern"),
    "negated pattern in an ignored .gitignore": (_negation_in_an_ignored_gitignore, "negated pattern"),
    "tracked .gitattributes": (_attributes("tracked"), "gitattributes file is tracked"),
    "untracked .gitattributes": (_attributes("untracked"), "untracked or ignored .gitattributes"),
    "ignored .gitattributes": (_attributes("ignored"), "untracked or ignored .gitattributes"),
    "info/attributes": (_attributes("info"), "info/attributes"),
    "core.autocrlf": (_config("core.autocrlf", "true"), "core.autocrlf"),
    "core.fileMode false": (_config("core.fileMode", "false"), "core.fileMode"),
    "core.ignoreCase": (_config("core.ignoreCase", "true"), "core.ignoreCase"),
    "core.attributesFile": (_config("core.attributesFile", "/nonexistent"), "core.attributesFile"),
    "sparse checkout": (_config("core.sparseCheckout", "true"), "core.sparseCheckout"),
    "index version 3 (skip-worktree)": (_skip_worktree, "index version 3"),
    "index version 4": (_index_version("4"), "index version 4"),
    "split index": (_split_index, "mandatory extension"),
    "global config only git reads": (_global_config_only_git_reads, "read by only one of git and libgit2"),
    "git -c": (_git_c_option, "configuration given in the environment"),
    "libgit2 reads another HOME": (_libgit2_home_differs, "different global ignore files"),
    "index over the size limit": (_too_many_entries, "index entries"),
}


@pytest.mark.parametrize("case", list(DECLINED), ids=list(DECLINED))
def test_declines_where_libgit2_could_answer_otherwise(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setup, reason = DECLINED[case]
    monkeypatch.setattr(listing, "MAX_ENTRIES", listing.MAX_ENTRIES)  # the setups may change these:
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_PARAMETERS"):  # put back after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    ws = make_repo(tmp_path / "ws", dict(BASE))
    setup(ws)
    scanner = scanner_for(ws)
    with pytest.raises((listing.Unsupported, pygit2.GitError), match=reason):
        listed(scanner, "libgit2")
    assert listed(scanner, "auto") == listed(scanner, "git")  # the scanner asked git


def test_negations_decline_without_walking_the_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tracked ignore file with a negated pattern is known before any walk."""
    ws = make_repo(tmp_path / "ws", dict(BASE))
    _negation_in_a_nested_file(ws)
    walked: list[object] = []
    monkeypatch.setattr(listing, "_diff", lambda *a: walked.append(a) or [])
    with pytest.raises(listing.Unsupported, match="negated"):
        listed(scanner_for(ws), "libgit2")
    assert walked == []


# ---------------------------------------------------------------- whole brackets


def _touch(rel: str) -> Callable[[Path], None]:
    def run(ws: Path) -> None:
        st = (ws / rel).stat()
        os.utime(ws / rel, ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10**9))

    return run


def _write(files: dict[str, str]) -> Callable[[Path], None]:
    return lambda ws: write_files(ws, files)


def _steps(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def run(ws: Path) -> None:
        for step in steps:
            step(ws)

    return run


def _git(*args: str) -> Callable[[Path], None]:
    return lambda ws: git(ws, *args) and None


def _racy_rewrite(ws: Path) -> None:
    target = ws / "src" / "app.py"
    st = target.stat()
    target.write_text("def main():\n    return 9\n")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))


def _racy_setup(ws: Path) -> None:
    git(ws, "config", "core.trustctime", "false")
    later = time.time_ns() + 60 * 10**9
    os.utime(ws / "src" / "app.py", ns=(later, later))
    git(ws, "add", "src/app.py")


SCENARIOS: dict[str, tuple[Callable[[Path], None], Callable[[Path], None]]] = {
    # name: (before begin, between begin and end)
    "edit, create, delete, chmod": (
        lambda ws: None,
        _steps(
            _write({"src/app.py": "changed\n", "new/dir/n.txt": "n\n"}),
            lambda ws: (ws / "src" / "util.py").unlink(),
            lambda ws: os.chmod(ws / "README.md", 0o755),
        ),
    ),
    "rename": (lambda ws: None, lambda ws: os.rename(ws / "src" / "util.py", ws / "src" / "pkg" / "helpers.py")),
    "touched only": (lambda ws: None, _steps(_touch("src/app.py"), _touch("docs/guide.md"))),
    "touched before begin, edited during": (_touch("src/app.py"), _write({"src/app.py": "edited\n"})),
    "touched before begin, left alone": (_touch("src/app.py"), _write({"docs/guide.md": "other\n"})),
    "dirty before begin, edited during": (_write({"src/app.py": "person\n"}), _write({"src/app.py": "agent\n"})),
    "dirty before begin, put back during": (
        _write({"src/app.py": "person\n"}), _write({"src/app.py": BASE["src/app.py"]})
    ),
    "untracked before begin, edited and deleted during": (
        _write({"notes.txt": "v1\n", "scratch.txt": "s\n"}),
        _steps(_write({"notes.txt": "v2\n"}), lambda ws: (ws / "scratch.txt").unlink()),
    ),
    "staged and committed during": (
        lambda ws: None,
        _steps(_write({"src/app.py": "committed\n", "added.txt": "a\n"}), _git("add", "-A"), _git("commit", "-q", "-m", "agent")),
    ),
    "ignored files during": (
        _write({".gitignore": "*.log\nbuild/\n"}),
        _write({"x.log": "l", "build/o": "o", "src/real.py": "r\n"}),
    ),
    "same timestamp as the index": (_racy_setup, _racy_rewrite),
    "a file becomes a folder and a link": (
        lambda ws: None,
        _steps(
            lambda ws: (ws / "docs" / "guide.md").unlink(),
            _write({"docs/guide.md/inside.md": "i\n"}),
            lambda ws: (ws / "src" / "util.py").unlink(),
            lambda ws: os.symlink("app.py", ws / "src" / "util.py"),
        ),
    ),
}


def _record(ws: Path, how: str, before: Callable[[Path], None], during: Callable[[Path], None]) -> list[tuple]:
    before(ws)
    engine = open_engine(ws)
    scan.LISTING = how
    try:
        engine.begin_turn(label="parity")
        during(ws)
        entry = engine.end_turn()
    finally:
        scan.LISTING = "auto"

    def version(v) -> tuple | None:
        return None if v is None else (v.oid, v.mode, v.size, v.withheld)

    return sorted((f.path, f.kind, f.old_path, version(f.before), version(f.after)) for f in entry.files)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_brackets_record_the_same_either_way(name: str, tmp_path: Path, walks: str) -> None:
    before, during = SCENARIOS[name]
    by_git = _record(make_repo(tmp_path / "a", dict(BASE)), "git", before, during)
    in_process = _record(make_repo(tmp_path / "b", dict(BASE)), "libgit2", before, during)
    assert in_process == by_git
    if name not in ("touched only", "touched before begin, left alone", "dirty before begin, put back during"):
        assert by_git  # the scenario does record something


def _dot_git_files(ws: Path) -> dict[str, tuple]:
    out = {}
    for folder, _dirs, files in os.walk(ws / ".git"):
        for name in files:
            p = Path(folder) / name
            st = p.lstat()
            out[str(p.relative_to(ws))] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def test_in_process_bracket_leaves_the_repository_byte_identical(tmp_path: Path, walks: str) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    write_files(ws, {"src/app.py": "dirty before begin\n", "untracked.txt": "u\n"})
    (ws / "docs" / "guide.md").write_text("guide\n")  # stat-dirty, same content: git would refresh it
    engine = open_engine(ws)
    state, files = git_state(ws), _dot_git_files(ws)
    index_stat = os.stat(ws / ".git" / "index")
    scan.LISTING = "libgit2"
    try:
        engine.begin_turn(label="read-only")
        write_files(ws, {"src/app.py": "agent\n", "new.txt": "n\n"})
        (ws / "src" / "util.py").unlink()
        entry = engine.end_turn()
    finally:
        scan.LISTING = "auto"
    assert {f.path for f in entry.files} == {"src/app.py", "new.txt", "src/util.py"}
    assert git_state(ws) == state
    assert _dot_git_files(ws) == files  # index, config, refs, logs, objects: same bytes, same times
    after = os.stat(ws / ".git" / "index")
    assert (after.st_mtime_ns, after.st_ino, after.st_size) == (index_stat.st_mtime_ns, index_stat.st_ino, index_stat.st_size)
    assert not (ws / ".git" / "index.lock").exists()


def test_in_process_bracket_starts_no_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, walks: str) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    engine = open_engine(ws)

    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was started: {args[:1]}")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    engine.begin_turn(label="no process")
    write_files(ws, {"src/app.py": "changed\n", "n.txt": "n\n"})
    entry = engine.end_turn()
    assert {f.path for f in entry.files} == {"src/app.py", "n.txt"}


def test_declined_bracket_still_records_through_git(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", dict(BASE))
    _negation_in_a_nested_file(ws)
    engine = open_engine(ws)
    engine.begin_turn(label="negations")
    write_files(ws, {"src/other.log": "ignored\n", "src/keep.log": "edited\n"})
    entry = engine.end_turn()
    assert {f.path: f.kind for f in entry.files} == {"src/keep.log": "modified"}


def test_executable_bit_recorded_the_same(tmp_path: Path) -> None:
    results = []
    for how, folder in (("git", "a"), ("libgit2", "b")):
        ws = make_repo(tmp_path / folder, dict(BASE))
        results.append(_record(ws, how, lambda ws: None, lambda ws: os.chmod(ws / "tools" / "run.sh", 0o755)))
    assert results[0] == results[1]
    [(path, kind, _old, before, after)] = results[0]
    assert (path, kind) == ("tools/run.sh", "modified")
    assert stat.S_IMODE(before[1]) == 0o644 and stat.S_IMODE(after[1]) == 0o755
