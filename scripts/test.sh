#!/usr/bin/env bash
# Quick start, command 2: set up everything the tests need, then run the whole test suite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh"
for extra in scripts/setup-*.sh; do
  [ -e "$extra" ] && bash "$extra"
done
exec .venv/bin/python -m pytest "$@"
