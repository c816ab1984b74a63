#!/usr/bin/env bash
# Sets up everything Takeback needs in ./.venv (idempotent). Used by demo.sh, test.sh and .ci/run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
stamp=.venv/.takeback-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
  touch "$stamp"
fi
