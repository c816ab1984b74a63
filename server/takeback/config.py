"""Takeback's settings: one pydantic model, and the one place that says who may set what.

The person's sources, later ones winning: built-in defaults, the person's config file
(``$TAKEBACK_CONFIG``, else ``$XDG_CONFIG_HOME/takeback/config.toml``, else
``~/.config/takeback/config.toml``; its ``[workspaces."<folder>"]`` tables apply to that folder
only), ``TAKEBACK_*`` environment variables, then explicit overrides (LSP initialization
options, a program that embeds the engine). They may set every key.

The repository is not trusted (a cloned repository's files are someone else's): its
``[tool.takeback]`` in ``pyproject.toml`` and its ``.takeback.toml`` may only set the keys in
``REPOSITORY_KEYS``, each only in the direction that keeps the person safe (add secrets
patterns, lower the size cap, turn the watch off, turn fsync on, redact more of what is shared). Any other key there is
ignored and reported. A bad value is reported too and its default (or the person's value)
applies. A repository's file that is a symbolic link leading outside the workspace is not read
(reported): it could make another project's, or the person's, file speak for this one. Reports
are in ``Config.problems``; each adapter shows them its own way.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import logging
import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pathspec
from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, StrictBool, TypeAdapter, ValidationError, field_validator

from .core.models import RetentionPolicy

log = logging.getLogger("takeback.config")

DEFAULT_SECRET_PATTERNS = [
    # environment files and private keys
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.ovpn",
    # credential stores of common tools (a pattern with a '/' needs '**/' to match at any depth)
    ".netrc",
    "_netrc",
    ".pgpass",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".git-credentials",
    ".htpasswd",
    "**/.aws/credentials",
    "**/.docker/config.json",
    "**/.kube/config",
    "kubeconfig*",
    "*.kubeconfig",
    # infrastructure state and variables (Terraform keeps secrets in both)
    "*.tfvars",
    "*.tfvars.json",
    "*.tfstate",
    "*.tfstate.*",
    # files named for what they hold
    "*credentials*.json",
    "service-account*.json",
    "*.secret",
    "secrets.*",
]


class SecretsPolicy(BaseModel):
    """Which files count as secrets, and whether their content may be copied into the store."""

    model_config = ConfigDict(extra="forbid")
    patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_SECRET_PATTERNS))
    extra_patterns: list[str] = Field(default_factory=list)
    repository_patterns: list[str] = Field(
        default_factory=list,
        description="Patterns the repository's files added; matched on their own, so none of them "
        "can un-match a file the person's patterns name.",
    )
    store_content: bool = False

    def own_patterns(self) -> list[str]:
        """The person's patterns (gitignore syntax: a later ``!pattern`` of theirs may un-match)."""
        return [*self.patterns, *self.extra_patterns]


GuardAction = Literal["allow", "warn", "ask", "deny"]
GUARD_EFFECTS = ("git-refs", "outside-workspace", "ignored-files", "system", "unknown", "guard")  # guard/rules.py's classes


class GuardPolicy(BaseModel):
    """The guard's rules (docs/guard.md): what a tool call Takeback could not take back gets."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    effects: dict[str, GuardAction] = Field(
        default_factory=dict, description="Per effect class (git-refs, outside-workspace, ignored-files, system, "
        "unknown, guard): allow, warn, ask or deny; a class not named asks.",
    )
    allow: list[str] = Field(default_factory=list, description="Command patterns the guard lets through.")
    ask: list[str] = Field(default_factory=list, description="Command patterns the guard asks about.")
    deny: list[str] = Field(default_factory=list, description="Command patterns the guard refuses.")
    cannot_ask: Literal["warn", "deny"] = Field(
        default="warn", description="What 'ask' becomes with an agent whose hooks cannot ask.",
    )
    keep_bytes: int = Field(
        default=64 * 1024 * 1024, ge=0,
        description="Before a call the person allowed that may delete or overwrite ignored files, Takeback copies "
        "them into its store, up to this many bytes in all (each file also under max_file_bytes; secrets never), "
        "so the turn can say how to write them back; 0 copies none.",
    )

    @field_validator("effects")
    @classmethod
    def _known_effects(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(value) - set(GUARD_EFFECTS))
        if unknown:
            raise ValueError(f"no such effect class: {', '.join(unknown)} (known: {', '.join(GUARD_EFFECTS)})")
        return value


class SharePolicy(BaseModel):
    """What ``takeback share push`` leaves out of the timeline it sends (docs/sharing.md)."""

    model_config = ConfigDict(extra="forbid")
    no_prompts: bool = Field(
        default=False, description="Send no prompt, label, step label nor command text (as 'share push --no-prompts').",
    )
    redact: list[str] = Field(
        default_factory=list,
        description="Regular expressions (Python syntax); every match in a prompt, label, command, check, notice "
        "or reason sent is replaced by '[redacted]'. A pattern that does not compile stops the push.",
    )


class Config(BaseModel):
    """Every setting, with its default."""

    model_config = ConfigDict(extra="forbid")
    store_dir: Path | None = Field(
        default=None, description="Where this workspace's store lives; default under the state home."
    )
    fsync: bool = Field(
        default=False,
        description="flush every recording too (operations, merges and gc are always flushed): a power cut then loses "
        "nothing answered; ~13-17 ms per recording on the development VM (docs/performance.md).",
    )
    max_file_bytes: int = Field(default=10 * 1024 * 1024, ge=0, description="Files over this are not copied.")
    first_copy_limit: int = Field(
        default=32 * 1024 * 1024, ge=0,
        description="In a folder that is not a git repository, the first whole-folder bracket ('takeback begin') "
        "copies every file into the store: above this many bytes it asks first ('begin --copy-all'); 0 never asks.",
    )
    retention: RetentionPolicy = Field(default_factory=RetentionPolicy)
    secrets: SecretsPolicy = Field(default_factory=SecretsPolicy)
    guard: GuardPolicy = Field(default_factory=GuardPolicy)
    share: SharePolicy = Field(default_factory=SharePolicy)
    git_scanner: bool = Field(
        default=True, description="Use the user's git (read-only) to find changes in a bracket."
    )
    watch_tree: bool = Field(
        default=True,
        description="In the language server, watch the work tree (Linux inotify) so a bracket's begin "
        "reuses the previous listing when nothing changed.",
    )
    lock_timeout: float = Field(default=30.0, gt=0, description="Seconds to wait for the store lock.")
    problems: list[str] = Field(default_factory=list, exclude=True)


def state_home() -> Path:
    """Where stores live by default: ``$TAKEBACK_HOME`` or ``$XDG_STATE_HOME/takeback``."""
    explicit = os.environ.get("TAKEBACK_HOME")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return base / "takeback"


def user_config_file() -> Path:
    """The person's config file: ``$TAKEBACK_CONFIG``, else under ``$XDG_CONFIG_HOME``."""
    explicit = os.environ.get("TAKEBACK_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg else Path.home() / ".config"
    return base / "takeback" / "config.toml"


def default_store_dir(workspace: Path) -> Path:
    """One store per workspace folder, named after it and a hash of its real path."""
    real = str(workspace.resolve())
    digest = hashlib.sha256(real.encode()).hexdigest()[:16]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in workspace.resolve().name) or "root"
    return state_home() / "stores" / f"{name}-{digest}"


# ---------------------------------------------------------------------- what a repository may set

RepositoryRule = Callable[[Config, Any], "str | None"]
"""Applies a repository's value to the person's config, or answers why it is refused."""


_PATTERNS = TypeAdapter(list[str])
_SIZE = TypeAdapter(NonNegativeInt)
_SWITCH = TypeAdapter(StrictBool)


def unreadable_patterns(patterns: list[str]) -> list[str]:
    """The patterns gitignore syntax cannot read (``\\`` alone, ``!`` alone …): pathspec refuses
    them, and one of them would fail every capture."""
    return [pattern for pattern in patterns if not _readable(pattern)]


@functools.lru_cache(maxsize=1024)
def _readable(pattern: str) -> bool:
    """Whether pathspec reads ``pattern`` (remembered: a process that opens many engines, the
    resident one, would compile the same default patterns at every open)."""
    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except ValueError:
        return False
    return True


def _add_secret_patterns(config: Config, value: Any) -> str | None:
    """More secrets, never fewer: the patterns are kept apart from the person's (a file is a secret
    when either list matches it), and a negation, which could only un-match, is refused."""
    patterns = _PATTERNS.validate_python(value)
    negations = [p for p in patterns if p.lstrip().startswith("!")]
    unreadable = [p for p in unreadable_patterns(patterns) if p not in negations]
    known = {*config.secrets.own_patterns(), *config.secrets.repository_patterns, *negations, *unreadable}
    added = [p for p in dict.fromkeys(patterns) if p not in known]
    config.secrets.repository_patterns = [*config.secrets.repository_patterns, *added]
    why = []
    if negations:
        listed = ", ".join(repr(p) for p in negations)
        why.append(f"{listed}: a repository may only add secrets, a negation would stop files being treated as secrets")
    if unreadable:
        why.append(f"{', '.join(repr(p) for p in unreadable)}: not a gitignore pattern")
    return "; ".join(why) or None


def _lower_max_file_bytes(config: Config, value: Any) -> str | None:
    size = _SIZE.validate_python(value)
    if size > config.max_file_bytes:
        return f"a repository may only lower it (yours is {config.max_file_bytes})"
    config.max_file_bytes = size
    return None


def _turn_off_watch(config: Config, value: Any) -> str | None:
    if _SWITCH.validate_python(value):
        return None if config.watch_tree else "a repository may only turn it off"
    config.watch_tree = False
    return None


def _turn_on_fsync(config: Config, value: Any) -> str | None:
    if not _SWITCH.validate_python(value):
        return "a repository may only turn it on" if config.fsync else None
    config.fsync = True
    return None


_GUARD_PATTERNS = TypeAdapter(list[str])
_GUARD_ACTIONS = ("allow", "warn", "ask", "deny")


def _add_guard_patterns(kind: str) -> RepositoryRule:
    """More ``ask``/``deny`` patterns, never fewer: added to the person's."""

    def add(config: Config, value: Any) -> str | None:
        patterns = _GUARD_PATTERNS.validate_python(value)
        mine = getattr(config.guard, kind)
        setattr(config.guard, kind, [*mine, *(p for p in dict.fromkeys(patterns) if p not in mine)])
        return None

    return add


def _stricter_effects(config: Config, value: Any) -> str | None:
    """Each class's answer, only where it is stricter than the person's."""
    wanted = GuardPolicy(effects=value).effects  # (validates the classes and actions)
    looser = []
    for name, action in wanted.items():
        mine = config.guard.effects.get(name, "ask")
        if _GUARD_ACTIONS.index(action) < _GUARD_ACTIONS.index(mine):
            looser.append(f"{name} = {action!r} (yours is {mine!r})")
        else:
            config.guard.effects[name] = action
    return f"a repository may only make the guard stricter: {', '.join(looser)}" if looser else None


def _deny_where_cannot_ask(config: Config, value: Any) -> str | None:
    action = GuardPolicy(cannot_ask=value).cannot_ask
    if action == "deny":
        config.guard.cannot_ask = "deny"
        return None
    return None if config.guard.cannot_ask == action else "a repository may only make it 'deny'"


def _keep_guard_on(config: Config, value: Any) -> str | None:
    return None if _SWITCH.validate_python(value) else "a repository may not turn the guard off"


def _lower_keep_bytes(config: Config, value: Any) -> str | None:
    size = _SIZE.validate_python(value)
    if size > config.guard.keep_bytes:
        return f"a repository may only lower it (yours is {config.guard.keep_bytes})"
    config.guard.keep_bytes = size
    return None


def _add_redact_patterns(config: Config, value: Any) -> str | None:
    """More redaction, never less: added after the person's patterns."""
    patterns = _PATTERNS.validate_python(value)
    mine = config.share.redact
    config.share.redact = [*mine, *(p for p in dict.fromkeys(patterns) if p not in mine)]
    return None


def _leave_prompts_out(config: Config, value: Any) -> str | None:
    if _SWITCH.validate_python(value):
        config.share.no_prompts = True
        return None
    return "a repository may only turn it on" if config.share.no_prompts else None


REPOSITORY_KEYS: dict[str, RepositoryRule] = {
    "guard.ask": _add_guard_patterns("ask"),  # asks about more, never less
    "guard.deny": _add_guard_patterns("deny"),  # refuses more, never less
    "guard.effects": _stricter_effects,  # each class only stricter
    "guard.cannot_ask": _deny_where_cannot_ask,  # only "deny"
    "guard.enabled": _keep_guard_on,  # never off
    "guard.keep_bytes": _lower_keep_bytes,  # copies less, never more

    "share.redact": _add_redact_patterns,  # redacts more of what is sent, never less
    "share.no_prompts": _leave_prompts_out,  # only on: sends less, never more

    "secrets.extra_patterns": _add_secret_patterns,  # adds secrets to the person's
    "max_file_bytes": _lower_max_file_bytes,  # stores less, never more
    "watch_tree": _turn_off_watch,  # lists the tree every time: slower, never less exact
    "fsync": _turn_on_fsync,  # flushes more: slower, never less durable
}
"""Every key a repository's own files may set (dotted), and how it is applied."""

_WHY_NOT = {
    "store_dir": "it decides where Takeback writes",
    "secrets.patterns": "it could stop files being treated as secrets",
    "secrets.store_content": "it would copy secrets into the store",
    "retention": "it decides when your undo history is dropped",
    "git_scanner": "it decides how changes are found (and which program runs)",
    "lock_timeout": "it decides how long your commands wait",
    "guard.allow": "it would let commands through that the guard asks about",
}


def _flatten(layer: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A TOML table as dotted keys, tables opened down to the keys ``REPOSITORY_KEYS`` names."""
    out: list[tuple[str, Any]] = []
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and dotted not in REPOSITORY_KEYS:
            out += _flatten(value, dotted + ".") if value else [(dotted, value)]
        else:
            out.append((dotted, value))
    return out


def _apply_repository(config: Config, source: str, layer: dict[str, Any], problems: list[str]) -> None:
    for key, value in _flatten(layer):
        rule = REPOSITORY_KEYS.get(key)
        if rule is None:
            why = next((w for k, w in _WHY_NOT.items() if key == k or key.startswith(k + ".")), None)
            if why is None and key.split(".")[0] not in Config.model_fields:
                problems.append(f"{source}: {key} ignored: no such setting")
                continue
            problems.append(
                f"{source}: {key} ignored: a repository may not set it ({why or 'it is yours to choose'}); "
                f"only your own settings can ({user_config_file()}, TAKEBACK_* variables)"
            )
            continue
        try:
            refused = rule(config, value)
        except ValidationError as exc:
            refused = f"bad value: {exc.errors()[0]['msg']}"
        if refused:
            problems.append(f"{source}: {key} ignored: {refused}")


def _read_toml(path: Path, name: str, problems: list[str], within: Path | None = None) -> dict[str, Any] | None:
    """``path``'s TOML; with ``within`` (a repository's file), only if it stays inside that folder:
    a symbolic link that leads out is not read (reported), one that stays inside is read through
    its target."""
    try:
        if within is not None and path.is_symlink():
            target = Path(os.path.realpath(path))
            if not target.is_relative_to(within):
                problems.append(f"{name} ignored: it is a symbolic link that leads outside the workspace ({target})")
                return None
            path = target
        if not path.is_file():  # never opened: a FIFO would hang the reader
            if path.is_symlink() and not path.exists():
                problems.append(f"{name} ignored: it is a symbolic link to {os.readlink(path)}, which does not exist")
            elif path.exists():
                problems.append(f"{name} ignored: it is not a file")
            return None
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:  # e.g. a file this user may not read
        problems.append(f"{name}: {exc}")
        return None
    except RecursionError:  # arrays or tables nested deeper than tomllib reads: one such file must not stop every command
        problems.append(f"{name} ignored: it nests too deeply to be read")
        return None


REPOSITORY_FILES = ("pyproject.toml", ".takeback.toml")


def config_files(workspace: Path) -> list[Path]:
    """Every file ``load_config`` reads for ``workspace`` (a process that keeps a config for
    long compares them to know when to read it again)."""
    return [user_config_file(), *(workspace / name for name in REPOSITORY_FILES)]


def _repository_layers(workspace: Path, problems: list[str]) -> list[tuple[str, dict[str, Any]]]:
    layers: list[tuple[str, dict[str, Any]]] = []
    pyproject = _read_toml(workspace / REPOSITORY_FILES[0], "pyproject.toml", problems, within=workspace)
    section = (pyproject or {}).get("tool", {}).get("takeback")
    if isinstance(section, dict):
        layers.append(("pyproject.toml [tool.takeback]", section))
    own = _read_toml(workspace / REPOSITORY_FILES[1], ".takeback.toml", problems, within=workspace)
    if own is not None:
        layers.append((".takeback.toml", own))
    return layers


# ---------------------------------------------------------------------- the person's settings


def _merge(into: dict[str, Any], layer: dict[str, Any]) -> None:
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _user_layers(workspace: Path, problems: list[str]) -> list[dict[str, Any]]:
    """The person's file: its top level, then the table for this workspace folder."""
    path = user_config_file()
    data = _read_toml(path, str(path), problems)
    if data is None:
        return []
    folders = data.pop("workspaces", {})
    layers = [data]
    if "store_dir" in data:
        problems.append(
            f"{path}: a store_dir at the top level would put every workspace in one store; "
            f'set it in a [workspaces."<folder>"] table (ignored)'
        )
        data.pop("store_dir")
    if not isinstance(folders, dict):
        problems.append(f'{path}: workspaces ignored: not a table of [workspaces."<folder>"] tables')
        folders = {}
    for folder, layer in folders.items():
        if isinstance(layer, dict) and os.path.realpath(os.path.expanduser(folder)) == str(workspace):
            layers.append(layer)
    return layers


def _env_layer() -> dict[str, Any]:
    layer: dict[str, Any] = {}
    if os.environ.get("TAKEBACK_STORE_DIR"):
        layer["store_dir"] = os.environ["TAKEBACK_STORE_DIR"]
    if os.environ.get("TAKEBACK_FSYNC"):
        layer["fsync"] = os.environ["TAKEBACK_FSYNC"].lower() in ("1", "true", "yes", "on")
    if os.environ.get("TAKEBACK_MAX_FILE_BYTES"):
        layer["max_file_bytes"] = os.environ["TAKEBACK_MAX_FILE_BYTES"]
    return layer


def load_config(workspace: str | os.PathLike[str], overrides: dict[str, Any] | None = None) -> Config:
    """The person's settings for ``workspace``, then what its repository may add (see the
    module's docstring); invalid values fall back to defaults, every refusal is in ``problems``."""
    root = Path(os.path.realpath(workspace))
    problems: list[str] = []
    merged: dict[str, Any] = {}
    for layer in [*_user_layers(root, problems), _env_layer(), overrides or {}]:
        _merge(merged, layer)
    config = _validate_leniently(merged, problems)
    _drop_unreadable_patterns(config.secrets, problems)
    if config.store_dir is not None:
        store_dir = config.store_dir.expanduser()
        config.store_dir = store_dir if store_dir.is_absolute() else (root / store_dir).resolve()
    for source, layer in _repository_layers(root, problems):
        _apply_repository(config, source, layer, problems)
    config.problems = problems
    for problem in problems:
        log.debug("config: %s", problem)
    return config


def _drop_unreadable_patterns(secrets: SecretsPolicy, problems: list[str]) -> None:
    """A pattern of the person's that gitignore syntax cannot read matches nothing: reported and
    left out, so that it cannot fail every capture."""
    for key in ("patterns", "extra_patterns", "repository_patterns"):
        patterns: list[str] = getattr(secrets, key)
        bad = unreadable_patterns(patterns)
        if bad:
            setattr(secrets, key, [p for p in patterns if p not in bad])
            problems.append(f"secrets.{key}: {', '.join(repr(p) for p in bad)} ignored: not a gitignore pattern")


def _validate_leniently(data: dict[str, Any], problems: list[str]) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
    kept = copy.deepcopy(data)  # its tables may be the caller's (overrides)
    for error in errors:
        where = ".".join(str(p) for p in error["loc"])
        problems.append(f"{where}: no such setting (ignored)" if error["type"] == "extra_forbidden"
                        else f"{where}: {error['msg']} (default used)")
        _drop(kept, error["loc"])
    return Config.model_validate(kept)


def _drop(data: dict[Any, Any], loc: tuple[int | str, ...]) -> None:
    """Take out the setting at ``loc`` (the key of its innermost table: a list goes whole), so that
    its default applies and the keys beside it stay. Every error is under a key: the model checks
    keys only."""
    table: dict[Any, Any] = data
    key = loc[0]
    for part in loc[1:]:
        inner = table.get(key)
        if not isinstance(inner, dict) or part not in inner:
            break
        table, key = inner, part
    table.pop(key, None)
