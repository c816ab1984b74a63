"""Where git reads and writes, as Takeback must see it: the environment variables that would
send git somewhere else (kept out), and the shared folder of a linked worktree.

An inherited ``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE`` … (a git hook that calls
``takeback``, say) would make any git Takeback starts read or write the user's repository in
a way Takeback did not choose (promise 2). Two guards, owned here: every git process Takeback
starts gets ``clean(os.environ)`` as its environment, and the ``takeback`` executable scrubs its
own environment first thing (``scrub_process``, called by ``launch.main``), so nothing started
without an explicit environment can inherit them either. libgit2, used in-process, reads none of
them for the repositories Takeback opens by path.
"""

from . import oslite  # not ``os``: a hook's path (``launch.py``) imports this module

TYPE_CHECKING = False  # typing's (and collections') own import costs milliseconds on every command's path
if TYPE_CHECKING:
    from collections.abc import Mapping

REDIRECTING = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
)


def clean(env: "Mapping[str, str] | None" = None) -> dict[str, str]:
    """A copy of ``env`` (default: this process's) without the variables that redirect git."""
    source = oslite.environ() if env is None else env
    return {k: v for k, v in source.items() if k not in REDIRECTING}


def scrub_process() -> None:
    """Remove the redirecting variables from this process's own environment."""
    for name in REDIRECTING:
        oslite.unsetenv(name)


def common_dir(git_dir: str) -> str:
    """The folder holding a repository's configuration, ``info/`` and objects: ``git_dir``
    itself, or for a linked worktree the main repository's git folder its ``commondir`` names."""
    import os  # (not at the top: see above)

    try:
        with open(os.path.join(git_dir, "commondir")) as handle:
            return os.path.realpath(os.path.join(git_dir, handle.read().strip()))
    except OSError:
        return git_dir
