"""Takeback's settings: one pydantic model, read from the workspace and the environment.

Sources, later ones winning: built-in defaults, ``[tool.takeback]`` in the workspace's
``pyproject.toml``, a ``.takeback.toml`` file at the workspace root, ``TAKEBACK_*``
environment variables, then explicit overrides (CLI flags, LSP initialization options).
A bad value is reported (``Config.problems``) and its default applies.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .models import RetentionPolicy

log = logging.getLogger("takeback.config")

DEFAULT_SECRET_PATTERNS = [
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
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    "credentials.json",
    "*.secret",
    "secrets.*",
]


class SecretsPolicy(BaseModel):
    """Which files count as secrets, and whether their content may be copied into the store."""

    model_config = ConfigDict(extra="forbid")
    patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_SECRET_PATTERNS))
    extra_patterns: list[str] = Field(default_factory=list)
    store_content: bool = False

    def all_patterns(self) -> list[str]:
        return [*self.patterns, *self.extra_patterns]


class Config(BaseModel):
    """Every setting, with its default."""

    model_config = ConfigDict(extra="forbid")
    store_dir: Path | None = Field(
        default=None, description="Where this workspace's store lives; default under the state home."
    )
    fsync: bool = Field(
        default=False,
        description="fsync objects, refs and the journal (survives power loss; ~4 ms per checkpoint).",
    )
    max_file_bytes: int = Field(default=10 * 1024 * 1024, ge=0, description="Files over this are not copied.")
    retention: RetentionPolicy = Field(default_factory=RetentionPolicy)
    secrets: SecretsPolicy = Field(default_factory=SecretsPolicy)
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


def default_store_dir(workspace: Path) -> Path:
    """One store per workspace folder, named after it and a hash of its real path."""
    real = str(workspace.resolve())
    digest = hashlib.sha256(real.encode()).hexdigest()[:16]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in workspace.resolve().name) or "root"
    return state_home() / "stores" / f"{name}-{digest}"


def _merge(into: dict[str, Any], layer: dict[str, Any]) -> None:
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _file_layers(workspace: Path, problems: list[str]) -> list[dict[str, Any]]:
    layers: list[dict[str, Any]] = []
    pyproject = workspace / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            section = data.get("tool", {}).get("takeback")
            if isinstance(section, dict):
                layers.append(section)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            problems.append(f"pyproject.toml: {exc}")
    own = workspace / ".takeback.toml"
    if own.is_file():
        try:
            layers.append(tomllib.loads(own.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            problems.append(f".takeback.toml: {exc}")
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


def load_config(workspace: Path, overrides: dict[str, Any] | None = None) -> Config:
    """Merge every source into one ``Config``; invalid values fall back to defaults."""
    problems: list[str] = []
    merged: dict[str, Any] = {}
    for layer in [*_file_layers(workspace, problems), _env_layer(), overrides or {}]:
        _merge(merged, layer)
    config = _validate_leniently(merged, problems)
    if config.store_dir is not None and not config.store_dir.is_absolute():
        config.store_dir = (workspace / config.store_dir).resolve()
    config.problems = problems
    for problem in problems:
        log.warning("config: %s", problem)
    return config


def _validate_leniently(data: dict[str, Any], problems: list[str]) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        bad_top = set()
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"])
            problems.append(f"{where}: {error['msg']} (default used)")
            if error["loc"]:
                bad_top.add(error["loc"][0])
        kept = {k: v for k, v in data.items() if k not in bad_top}
        try:
            return Config.model_validate(kept)
        except ValidationError:
            return Config()
