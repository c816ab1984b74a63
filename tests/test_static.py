"""Static checks of the Python package: ruff (lint) and mypy (types) on server/, as configured
in pyproject.toml; each runs from this venv and must report nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["ruff", "check", "server/"], id="ruff"),
        pytest.param(["mypy"], id="mypy"),  # files and options: [tool.mypy] in pyproject.toml
    ],
)
def test_static_check_passes(command: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"{' '.join(command)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
