"""Where a config file's new bytes go when its path is a symbolic link: through the link.

People keep their agents' config in a dotfiles repository and link it into place (GNU stow,
yadm, home-manager, chezmoi's symlink mode). Replacing such a link by a plain file would cut it
from that repository for good; so install and uninstall write the file the link leads to
(atomically, beside it, so its own folder must be writable) and the link stays as it is. A
link that leads nowhere, to something that is not a file, to a file that cannot be written
(home-manager's read-only ``/nix/store``) or to the same file as another config path of the
same run is refused, naming the link, before anything is written.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidInput


class LinkRefused(InvalidInput):
    """A config path that is a symbolic link Takeback will not write through."""

    code = "config-link"


def destinations(paths: list[Path]) -> dict[Path, Path]:
    """Each path → the file to write: itself, or where its links lead. Raises ``LinkRefused``
    (nothing written yet) for the first link that cannot be written through."""
    out: dict[Path, Path] = {}
    seen: dict[Path, Path] = {}
    for path in paths:
        target = destination(path)
        other = seen.setdefault(target, path)
        if other != path:
            raise LinkRefused(
                f"{other} and {path} lead to the same file ({target}): Takeback would write it twice; "
                "install the agents one at a time; nothing was written"
            )
        out[path] = target
    return out


def destination(path: Path) -> Path:
    """``path`` itself when it is not a symbolic link; else the file its link leads to, checked."""
    if not path.is_symlink():
        return path
    target = Path(os.path.realpath(path))
    said = f"{path} is a symbolic link to {target}"
    if not target.exists():
        raise LinkRefused(f"{said}, which does not exist: create that file or remove the link, then run again; nothing was written")
    if not target.is_file():
        raise LinkRefused(f"{said}, which is not a file: remove the link and run again; nothing was written")
    if not (os.access(target, os.W_OK) and os.access(target.parent, os.W_OK | os.X_OK)):
        raise LinkRefused(
            f"{said}, which cannot be written (its folder is read-only or not yours, as home-manager's store is): "
            "add Takeback's entries where that file is generated, or replace the link by a file; nothing was written"
        )
    return target
