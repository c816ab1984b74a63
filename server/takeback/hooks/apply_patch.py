"""The files a Codex ``apply_patch`` patch names (``*** Add/Update/Delete File:`` and ``*** Move to:``)."""

from __future__ import annotations

_HEADERS = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")


def patch_paths(patch: str) -> list[str]:
    """Every path the patch adds, updates, deletes or moves to, in order, each once."""
    found: list[str] = []
    for line in patch.splitlines():
        for header in _HEADERS:
            if line.startswith(header):
                path = line[len(header):].strip()
                if path and path not in found:
                    found.append(path)
    return found
