"""What each config file held before Takeback first wrote to it, so that ``uninstall`` puts it
back byte for byte when nothing else changed the file since (its bytes still hash to what
install wrote). Kept in Takeback's state folder (``$TAKEBACK_HOME/install-ledger.json``), keyed
by the file's absolute path, never in the repository.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from ..config import state_home
from ..storage import atomic


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


class Ledger:
    def __init__(self) -> None:
        self.path = state_home() / "install-ledger.json"
        try:
            self.files: dict[str, Any] = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            self.files = {}

    def wrote(self, path: Path, before: bytes | None, after: bytes | None, made_dirs: list[Path]) -> None:
        """Note that ``path`` went from ``before`` to ``after``. The first ``before`` is kept
        while the file is still as Takeback last left it."""
        key = str(path)
        known = self.files.get(key)
        if known is None or known["after"] != _digest(before):
            known = {
                "before": None if before is None else base64.b64encode(before).decode("ascii"),
                "made_dirs": [str(d) for d in made_dirs],
            }
        known["after"] = _digest(after)
        self.files[key] = known

    def original(self, path: Path, current: bytes | None) -> tuple[bool, bytes | None, list[Path]]:
        """(known, bytes before install, folders install made) when ``current`` is what install
        last wrote; (False, None, []) when something else changed the file since."""
        known = self.files.get(str(path))
        if known is None or known["after"] != _digest(current):
            return False, None, []
        before = None if known["before"] is None else base64.b64decode(known["before"])
        return True, before, [Path(d) for d in known.get("made_dirs", [])]

    def forget(self, path: Path) -> None:
        self.files.pop(str(path), None)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write(self.path, json.dumps(self.files, indent=1, sort_keys=True).encode("utf-8"))
