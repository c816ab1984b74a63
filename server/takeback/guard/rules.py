"""The guard's rules, as data: which programs, subcommands and flags mean which effect.

``classify.py`` reads these tables and nothing else decides what a command means, so a person's
own rules (later: per user and per workspace, a repository only stricter) can be put in front of
``RULES`` per command pattern, and the answer per effect class changed in one place.

A ``Rule`` matches a simple command when its program (and subcommand) are the command's, and
each condition it names holds: one of its flags is present (a short flag also inside a bundle: ``-fdx`` holds
``-x``), the first plain word is one of ``sub``, some plain word matches one of ``any_arg``
(shell patterns). The first matching rule wins; a command no rule names runs a program whose
file effects inside the workspace Takeback records (``undoable``). What paths a command writes
or deletes is in ``WRITERS``; the classifier checks each path against the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass

UNDOABLE = "undoable"
GIT_REFS = "git-refs"  # moves the person's refs, index or stash, or drops what git would keep
OUTSIDE = "outside-workspace"  # writes or deletes outside the workspace
IGNORED = "ignored-files"  # deletes or overwrites files git ignores, which Takeback does not hold
SYSTEM = "system"  # acts outside the machine's files: sudo, global installs, containers, databases
UNKNOWN = "unknown"  # cannot be understood before it runs, and may destroy
EFFECTS = (GIT_REFS, OUTSIDE, IGNORED, SYSTEM, UNKNOWN)


@dataclass(frozen=True)
class Rule:
    command: str  # "git reset", "npm install", "docker": the program, then its subcommand if any
    effect: str  # UNDOABLE or one of EFFECTS
    reason: str  # completes "this …": one line the person reads
    flags: tuple[str, ...] = ()
    sub: tuple[str, ...] = ()  # the first plain word after the command
    any_arg: tuple[str, ...] = ()  # shell patterns, any plain word
    outside_venv: bool = False  # matches only when no virtual environment is active
    unless: tuple[str, ...] = ()  # flags that take the rule back (``git pull --rebase=false``)
    # the reason naming what it moves, when the line says it: {branch} (the current branch), {names} (the plain
    # words after the subcommand), {first} (the first of them), {to} (where `git reset` moves the branch)
    detail: str = ""


def _git(subcommand: str, effect: str, reason: str, flags: tuple[str, ...] = (), sub: tuple[str, ...] = (),
         any_arg: tuple[str, ...] = (), unless: tuple[str, ...] = (), detail: str = "") -> Rule:
    return Rule(f"git {subcommand}", effect, reason, flags, sub, any_arg, unless=unless, detail=detail)


_FORCE_PUSH = ("--force", "-f", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "-d", "--prune")

_DROPS_CHANGES = "discards uncommitted changes git holds"
_NO_REBASE = ("--rebase=false", "--rebase=no", "--no-rebase")

GIT_RULES: tuple[Rule, ...] = (
    _git("reset", GIT_REFS, f"resets the branch and {_DROPS_CHANGES}", flags=("--hard", "--keep", "--merge"),
         detail=f"resets {{branch}}{{to}} and {_DROPS_CHANGES}"),
    _git("checkout", GIT_REFS, "resets a branch or discards local changes by force", flags=("-B",), detail="resets the branch {first}"),
    _git("checkout", GIT_REFS, "discards local changes by force", flags=("-f", "--force")),
    _git("switch", GIT_REFS, "resets a branch or discards local changes by force", flags=("-C", "--force-create"),
         detail="resets the branch {first}"),
    _git("switch", GIT_REFS, "discards local changes by force", flags=("--discard-changes", "-f", "--force")),
    _git("branch", GIT_REFS, "deletes a branch", flags=("-D", "-d", "--delete"), detail="deletes the branch {names}"),
    _git("branch", GIT_REFS, "moves or renames a branch", flags=("-m", "-M", "--move"), detail="moves or renames a branch ({names})"),
    _git("branch", GIT_REFS, "resets a branch", flags=("-f", "--force", "-C"), detail="resets the branch {first}"),
    _git("stash", GIT_REFS, "drops the latest stash entry", sub=("drop",), detail="drops the stash entry {names}"),
    _git("stash", GIT_REFS, "drops every stash entry", sub=("clear",)),
    _git("rebase", GIT_REFS, "rewrites the branch's commits", detail="rewrites the commits of {branch}"),
    _git("commit", GIT_REFS, "rewrites the last commit", flags=("--amend",), detail="rewrites the last commit of {branch}"),
    _git("push", GIT_REFS, "overwrites or deletes branches on the remote", flags=_FORCE_PUSH,
         detail="overwrites or deletes branches on the remote ({names})"),
    _git("push", GIT_REFS, "overwrites or deletes branches on the remote", any_arg=("+*", ":*"),
         detail="overwrites or deletes branches on the remote ({names})"),
    _git("pull", GIT_REFS, "rebases the branch", flags=("--rebase", "-r"), unless=_NO_REBASE,
         detail="rebases {branch} onto what it pulls"),
    _git("pull", GIT_REFS, "force-updates local branches", flags=("--force", "-f")),
    _git("fetch", GIT_REFS, "force-updates local branches", any_arg=("+*:*",), detail="force-updates local branches ({names})"),
    _git("update-ref", GIT_REFS, "moves or deletes a ref directly", detail="moves or deletes the ref {names}"),
    _git("symbolic-ref", GIT_REFS, "deletes a symbolic ref", flags=("-d", "--delete")),
    _git("symbolic-ref", GIT_REFS, "points a symbolic ref elsewhere", any_arg=("refs/*",)),
    _git("tag", GIT_REFS, "deletes or moves a tag", flags=("-d", "--delete"), detail="deletes the tag {names}"),
    _git("tag", GIT_REFS, "deletes or moves a tag", flags=("-f", "--force"), detail="moves the tag {names}"),
    _git("reflog", GIT_REFS, "drops reflog entries, git's record of where refs were", sub=("expire", "delete")),
    _git("gc", GIT_REFS, "prunes unreachable commits now", flags=("--prune",)),
    _git("prune", GIT_REFS, "deletes unreachable objects"),
    _git("filter-branch", GIT_REFS, "rewrites history"),
    _git("filter-repo", GIT_REFS, "rewrites history"),
    _git("replace", GIT_REFS, "replaces objects in history"),
    _git("worktree", GIT_REFS, "deletes a worktree", sub=("remove", "prune")),
    _git("remote", GIT_REFS, "removes a remote and its branches", sub=("remove", "rm", "prune")),
    _git("notes", GIT_REFS, "removes notes", sub=("remove", "prune")),
    _git("submodule", GIT_REFS, "removes a submodule's working tree", sub=("deinit",)),
    _git("clean", IGNORED, "deletes files git ignores, which Takeback does not hold", flags=("-x", "-X"), unless=("-n", "--dry-run")),
    _git("clean", GIT_REFS, "deletes nested git repositories", flags=("-ff",), unless=("-n", "--dry-run")),
    _git("lfs", GIT_REFS, "deletes local LFS objects", sub=("prune",)),
)
# `git config`: reading (``--get``, ``--list``, one plain word, ``git config get``) changes nothing;
# anything else writes the person's git configuration (promise 2 names it among what Takeback never
# changes behind their back).
GIT_CONFIG_WRITES = (GIT_REFS, "changes the person's git configuration")
GIT_CONFIG_READ_FLAGS = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "--list",
                         "-l", "--show-origin", "--show-scope", "--help", "-h")
GIT_CONFIG_WRITE_FLAGS = ("--unset", "--unset-all", "--remove-section", "--rename-section", "--replace-all", "--add", "--edit",
                          "-e")
GIT_CONFIG_READ_SUBS = ("get", "list")  # git 2.46's `git config get|list|set|unset|rename-section|remove-section|edit`
GIT_CONFIG_WRITE_SUBS = ("set", "unset", "rename-section", "remove-section", "edit")
GIT_CONFIG_VALUE_OPTIONS = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value", "--url"})

# Git subcommands that only read, or add without taking anything away (a commit, a branch, a
# merge commit, a stash entry), or change only files in the work tree, which Takeback records.
# A subcommand not here and not in GIT_RULES is one Takeback cannot judge (an alias, a plugin).
GIT_KNOWN = frozenset({
    "status", "log", "diff", "show", "blame", "grep", "ls-files", "ls-tree", "ls-remote", "rev-parse", "rev-list", "describe",
    "shortlog", "cat-file", "show-ref", "for-each-ref", "name-rev", "merge-base", "whatchanged", "count-objects", "fsck",
    "check-ignore", "check-attr", "var", "version", "help", "difftool", "range-diff", "format-patch", "bisect", "archive",
    "add", "commit", "branch", "checkout", "switch", "restore", "rm", "mv", "merge", "cherry-pick", "revert", "am", "apply",
    "stash", "tag", "fetch", "pull", "push", "init", "clone", "remote", "config", "worktree", "submodule", "notes", "reset",
    "clean", "gc", "maintenance", "sparse-checkout", "lfs", "bundle", "request-pull", "send-email", "annotate", "mergetool",
    "reflog", "symbolic-ref", "hash-object", "write-tree", "commit-tree", "mktree", "update-index", "read-tree",
})
# Git subcommands that only read: run on another repository (git -C DIR) they change nothing there.
GIT_READS = frozenset({
    "status", "log", "diff", "show", "blame", "grep", "ls-files", "ls-tree", "ls-remote", "rev-parse", "rev-list", "describe",
    "shortlog", "cat-file", "show-ref", "for-each-ref", "name-rev", "merge-base", "whatchanged", "count-objects", "fsck",
    "check-ignore", "check-attr", "var", "version", "help", "range-diff", "annotate", "format-patch",
})
# A commit (not a path) among `git reset`'s plain words moves the branch (`git reset HEAD~1`).
GIT_RESET_MOVES = (GIT_REFS, "moves {branch} to {to} (its commits stay only in the reflog)")
# Git's own options before the subcommand, and those that take a value.
GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix", "--config-env"})

_SYS_INSTALL = "installs or removes software for the whole machine or user"
_READS = ("search", "show", "list", "info", "policy", "--version", "-v", "version", "help", "--help", "outdated", "doctor")

RULES: tuple[Rule, ...] = (
    *GIT_RULES,
    # package managers: a global install lands outside the workspace
    Rule("npm install", SYSTEM, "installs a package globally", flags=("-g", "--global"), ),
    Rule("npm i", SYSTEM, "installs a package globally", flags=("-g", "--global")),
    Rule("npm add", SYSTEM, "installs a package globally", flags=("-g", "--global")),
    Rule("npm uninstall", SYSTEM, "removes a global package", flags=("-g", "--global")),
    Rule("npm update", SYSTEM, "updates global packages", flags=("-g", "--global")),
    Rule("npm link", SYSTEM, "links a package into the global folder"),
    Rule("pnpm add", SYSTEM, "installs a package globally", flags=("-g", "--global")),
    Rule("pnpm install", SYSTEM, "installs a package globally", flags=("-g", "--global")),
    Rule("pnpm remove", SYSTEM, "removes a global package", flags=("-g", "--global")),
    Rule("yarn global", SYSTEM, "installs a package globally"),
    Rule("bun add", SYSTEM, "installs a package globally", flags=("-g", "--global")),
    Rule("bun install", SYSTEM, "installs a package globally", flags=("-g", "--global")),
    Rule("pip install", SYSTEM, "installs into the user's Python, outside the workspace", flags=("--user",)),
    Rule("pip install", SYSTEM, "installs into the system Python (no virtual environment is active)", outside_venv=True),
    Rule("pip uninstall", SYSTEM, "removes a package from the system Python (no virtual environment is active)", outside_venv=True),
    Rule("uv pip", SYSTEM, "installs into the system Python", flags=("--system",)),
    Rule("uv tool", SYSTEM, "installs a tool for the user", sub=("install", "uninstall", "upgrade")),
    Rule("pipx", SYSTEM, "installs a tool for the user", sub=("install", "uninstall", "upgrade", "reinstall", "inject")),
    Rule("cargo install", SYSTEM, "installs a binary for the user"),
    Rule("cargo uninstall", SYSTEM, "removes a binary of the user's"),
    Rule("go install", SYSTEM, "installs a binary for the user"),
    Rule("gem install", SYSTEM, _SYS_INSTALL),
    Rule("gem uninstall", SYSTEM, _SYS_INSTALL),
    Rule("conda", SYSTEM, _SYS_INSTALL, sub=("install", "remove", "uninstall", "update", "create")),
    Rule("mamba", SYSTEM, _SYS_INSTALL, sub=("install", "remove", "uninstall", "update", "create")),
    *(Rule(p, UNDOABLE, "only reads", sub=_READS) for p in ("apt", "apt-get", "brew", "dnf", "yum", "snap", "flatpak")),
    *(Rule(p, SYSTEM, _SYS_INSTALL) for p in ("apt", "apt-get", "aptitude", "dpkg", "brew", "dnf", "yum", "pacman", "zypper", "apk",
                                               "snap", "flatpak", "port", "nix-env", "choco", "winget", "rpm", "emerge")),
    # privilege, services, the machine
    *(Rule(p, SYSTEM, "runs with another user's rights") for p in ("sudo", "doas", "su", "pkexec", "runas")),
    *(Rule(p, SYSTEM, "changes the machine's services, disks or users") for p in (
        "systemctl", "service", "launchctl", "crontab", "shutdown", "reboot", "halt", "poweroff", "mount", "umount", "mkfs",
        "mkfs.ext4", "fdisk", "parted", "iptables", "ufw", "useradd", "userdel", "usermod", "passwd", "chsh", "sysctl", "diskutil")),
    # containers, clusters, clouds
    *(Rule(p, UNDOABLE, "only reads", sub=("ps", "images", "logs", "inspect", "version", "info", "get", "describe", "top", "stats"))
      for p in ("docker", "podman", "kubectl", "nerdctl")),
    *(Rule(p, SYSTEM, "acts on containers, clusters or cloud resources outside the workspace") for p in (
        "docker", "docker-compose", "podman", "podman-compose", "nerdctl", "kubectl", "helm", "minikube", "kind", "k3d",
        "terraform", "tofu", "pulumi", "aws", "gcloud", "az", "fly", "flyctl", "heroku", "vercel", "netlify")),
    # database clients
    Rule("redis-cli", UNDOABLE, "only reads", sub=("ping", "PING", "info", "INFO", "get", "GET", "keys", "KEYS", "type", "TYPE",
                                                 "ttl", "TTL", "exists", "EXISTS", "scan", "SCAN", "dbsize", "DBSIZE")),
    *(Rule(p, SYSTEM, "changes a database, which Takeback does not record") for p in (
        "psql", "mysql", "mariadb", "mongo", "mongosh", "sqlite3", "sqlite", "redis-cli", "cqlsh", "clickhouse-client",
        "dropdb", "createdb", "pg_restore", "mysqladmin", "duckdb")),
    # Takeback itself: an agent does not switch its own guard off (the person does, in their terminal)
    Rule("takeback guard", UNDOABLE, "only reads", sub=("status", "show", "check", "explain", "list", "help")),
    Rule("takeback guard", SYSTEM, "turns Takeback's guard off", sub=("off", "disable", "pause")),
    Rule("takeback guard", SYSTEM, "changes Takeback's guard, which the person does in their own terminal"),
    Rule("takeback config", UNDOABLE, "only reads", sub=("show", "get", "list", "path", "help")),
    Rule("takeback config", SYSTEM, "changes Takeback's configuration, which the person does in their own terminal"),
    Rule("takeback uninstall", SYSTEM, "removes Takeback's hooks, and the guard with them"),
    Rule("takeback install", SYSTEM, "changes the agents' hook settings, outside the workspace"),
    # other machines
    *(Rule(p, SYSTEM, "acts on another machine") for p in ("ssh", "scp", "sftp", "rsh", "telnet", "ansible", "ansible-playbook")),
    Rule("rsync", SYSTEM, "writes to another machine", any_arg=("*:*",)),
)

# Programs that write or delete paths, for the path checks: each gives what it does to its plain
# words ("delete", "move": the words are taken away; "write": overwritten; "create": made), which
# of them ("all", "last", "after-first": all but a leading mode or script), and its options that
# take a value. Options named in ``dest_options`` name a written path themselves.
@dataclass(frozen=True)
class Writer:
    action: str
    which: str
    value_options: frozenset[str] = frozenset()
    dest_options: frozenset[str] = frozenset()
    recursive_flags: tuple[str, ...] = ()


WRITERS: dict[str, Writer] = {
    "rm": Writer("delete", "all", recursive_flags=("-r", "-R", "--recursive")),
    "rmdir": Writer("delete", "all"),
    "unlink": Writer("delete", "all"),
    "shred": Writer("delete", "all", frozenset({"-n", "-s", "--iterations", "--size"})),
    "rimraf": Writer("delete", "all", recursive_flags=("",)),
    "trash": Writer("delete", "all", recursive_flags=("",)),
    "mv": Writer("move", "all", frozenset({"-S", "--suffix"}), frozenset({"-t", "--target-directory"}), ("",)),
    "cp": Writer("write", "last", frozenset({"-S", "--suffix"}), frozenset({"-t", "--target-directory"})),
    "ln": Writer("write", "last", frozenset({"-S", "--suffix"}), frozenset({"-t", "--target-directory"})),
    "install": Writer("write", "last", frozenset({"-m", "-o", "-g", "--mode", "--owner", "--group", "-S"}),
                      frozenset({"-t", "--target-directory"})),
    "touch": Writer("create", "all", frozenset({"-r", "-t", "-d", "--reference", "--date"})),
    "mkdir": Writer("create", "all", frozenset({"-m", "--mode"})),
    "tee": Writer("write", "all"),
    "truncate": Writer("write", "all", frozenset({"-s", "-r", "--size", "--reference"})),
    "chmod": Writer("write", "after-first", frozenset({"--reference"})),
    "chown": Writer("write", "after-first", frozenset({"--reference"})),
    "chgrp": Writer("write", "after-first", frozenset({"--reference"})),
    "sed": Writer("write", "after-first", frozenset({"-e", "-f", "--expression", "--file", "-l"})),  # only with -i
    "perl": Writer("write", "after-first", frozenset({"-e", "-E", "-M", "-I"})),  # only with -i
    "rsync": Writer("write", "last", frozenset({"-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--files-from"})),
    "curl": Writer("write", "none", frozenset({"-X", "-H", "-d", "--data", "-u", "-A", "-e", "-F", "-T", "-w", "-m",
                                                "--max-time", "--header", "--request"}), frozenset({"-o", "--output"})),
    "wget": Writer("write", "none", frozenset({"-t", "-T", "--tries", "--timeout", "-U"}),
                   frozenset({"-O", "--output-document", "-P", "--directory-prefix"})),
    "tar": Writer("write", "none", frozenset({"-f", "--file", "-T", "--exclude"}), frozenset({"-C", "--directory"})),
    "unzip": Writer("write", "none", frozenset({"-x"}), frozenset({"-d"})),
    "dd": Writer("write", "none"),  # of=PATH
}
# Writers whose plain words are written only with this flag (sed -i, perl -i).
IN_PLACE_ONLY = {"sed": ("-i", "--in-place"), "perl": ("-i", "-pi")}

# Paths a write or delete may touch without asking: scratch folders and devices that hold nothing
# of the person's. (A person's rules may take these away.)
SCRATCH = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/", "/tmp/", "/var/tmp/", "/private/tmp/")
