#!/usr/bin/env bash
# Quick start, command 2: set up everything the tests need, then run the whole test suite under
# coverage (the processes it starts included; pyproject.toml, [tool.coverage]) and print the line
# and branch coverage of server/takeback after pytest's closing line. The exit code is pytest's, or
# 1 when pytest passed but a run of the whole suite (no arguments) covered fewer than 97% of the
# lines (docs/architecture.md, "Coverage"); a selection's coverage is only printed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh"
for extra in scripts/setup-*.sh; do
  [ -e "$extra" ] && bash "$extra"
done
rm -f .coverage .coverage.*  # an earlier run's data
status=0
goal=()
[ "$#" -eq 0 ] && goal=(--fail-under 97)
.venv/bin/python -m coverage run -m pytest "$@" || status=$?
.venv/bin/python scripts/coverage_summary.py "${goal[@]}" || { [ "$status" -ne 0 ] || status=1; }
exit "$status"
