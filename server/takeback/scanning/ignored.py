"""Whether a path of the workspace is one git ignores and Takeback does not hold: the guard's
question (``hooks/guarding.py``, ``guard/classify.py``'s ``Workspace.is_ignored``) before a
command deletes or overwrites it. One path at a time, never a tree scan.

A workspace in a git work tree (``scan.GitScanner``): the path is asked of libgit2, on the
repository the scanner's listing keeps open (``listing.Lister.ignore_check``: the settings
checked once per hook call, then 15-30 µs a path not ignored, 35-100 µs one ignored with its
index look-up; the ignore files read again only when they change), unless libgit2 may answer
otherwise than git: a negated pattern (``!keep.log``) in an ignore file that counts for the
path, or settings git and libgit2 read differently (``listing.py`` says which). Then git
answers (``git check-ignore --no-index``: a process, 2-5 ms, the index not read). A path git ignores but whose file
the person's index tracks is held (its before-image is the index's blob): not ignored; that
look-up is made only for a path the rules ignore that is not a folder on disk
(``Lister.indexed``: a bisection over the index file's table of entries). A folder ends with
"/" (as ``classify.py`` asks); a pattern (``*.log``) is asked as a path, which the rule
``*.log`` matches. When neither libgit2 nor git can answer, the path counts as ignored: the
guard then asks the person rather than let something Takeback does not hold go silently.

Any other folder (``scan.WalkScanner``): the ``.gitignore`` rules the walk honours
(``scan.IgnoreRules``), read afresh for each check (only the ``.gitignore`` files above the
paths asked), a path under an ignored folder ignored too, as the walk never enters one.

Build one check per hook call (``check_for``) and use it where the engine's calls take turns
(the resident process's per-workspace lock, or a hook's own process): it shares the scanner's
repository.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pygit2

from .. import gitenv
from .scan import GitScanner, IgnoreRules, WalkScanner

try:
    from . import listing
except ImportError:  # a pygit2 without its cffi layer (as scan.py): git answers
    listing = None  # type: ignore[assignment]

log = logging.getLogger("takeback.scanning.ignored")

IgnoreCheck = Callable[[str], bool]


def check_for(scanner: GitScanner | WalkScanner) -> IgnoreCheck:
    """The ignore check of the workspace ``scanner`` scans (see the module's docstring)."""
    if isinstance(scanner, GitScanner):
        return _GitIgnores(scanner)
    return _WalkIgnores(str(scanner.workspace.root))


class _GitIgnores:
    def __init__(self, scanner: GitScanner) -> None:
        self.scanner = scanner
        self.asked_git = 0  # how many answers came from a git process (tests, the benchmark)
        self._libgit2: Callable[[str], bool] | None | bool = False  # False: not built yet; None: git answers

    def _matcher(self) -> Callable[[str], bool] | None:
        if self._libgit2 is False:
            self._libgit2 = None
            if self.scanner.lister is not None:
                try:
                    self._libgit2 = self.scanner.lister.ignore_check()
                except (listing.Unsupported, pygit2.GitError, OSError, ValueError) as exc:
                    log.debug("git answers what is ignored: %s", exc)
        return self._libgit2 if callable(self._libgit2) else None

    def __call__(self, rel: str) -> bool:
        bare = rel.strip("/")
        if not bare or bare == ".":
            return False  # the workspace itself: classify.py says what deleting it means
        scanner = self.scanner
        path = f"{scanner.prefix}/{bare}" if scanner.prefix else bare
        asked = path + "/" if rel.endswith("/") else path
        matcher = self._matcher()
        found: bool | None = None
        if matcher is not None:
            try:
                found = matcher(asked)
            except (listing.Unsupported, pygit2.GitError, OSError, ValueError) as exc:
                log.debug("asking git whether %s is ignored: %s", asked, exc)
        if found is None:
            found = self._git_says(asked)
        if not found or os.path.isdir(os.path.join(scanner.workdir, path)):
            return found
        return not self._tracked(path)

    def _tracked(self, path: str) -> bool:
        lister = self.scanner.lister
        try:
            if lister is not None:
                return lister.indexed(path)
            return path in self.scanner.repo.index
        except (pygit2.GitError, OSError, ValueError):
            return False

    def _git_says(self, path: str) -> bool:
        self.asked_git += 1
        try:
            proc = subprocess.run(
                [self.scanner.git, "check-ignore", "-q", "--no-index", "--", path],
                cwd=self.scanner.workdir, env=gitenv.clean(), capture_output=True, timeout=10,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("git check-ignore failed for %s: %s", path, exc)
            return True
        if proc.returncode not in (0, 1):
            log.warning("git check-ignore %s: %s", path, proc.stderr.decode(errors="replace").strip())
        return proc.returncode != 1


class _WalkIgnores:
    def __init__(self, root: str) -> None:
        self.root = root
        self.rules = IgnoreRules(Path(root))

    def __call__(self, rel: str) -> bool:
        bare = rel.strip("/")
        if not bare or bare == ".":
            return False
        parts = bare.split("/")
        parents = [""]
        for i in range(1, len(parts)):
            folder = "/".join(parts[:i])
            if self.rules.ignored(folder, True, parents):
                return True  # the walk never enters an ignored folder
            parents.append(folder)
        is_dir = rel.endswith("/") or os.path.isdir(os.path.join(self.root, bare))
        return self.rules.ignored(bare, is_dir, parents)
