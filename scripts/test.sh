#!/usr/bin/env bash
# Quick start, command 2: set up everything the tests need, then run the whole test suite under
# coverage (the processes it starts included; pyproject.toml, [tool.coverage]) and print the line
# and branch coverage of server/takeback after pytest's closing line. The exit code is pytest's;
# coverage_summary.py --fail-under is not used yet: the goal (97% of lines) is not reached
# (docs/architecture.md, "Coverage").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh"
for extra in scripts/setup-*.sh; do
  [ -e "$extra" ] && bash "$extra"
done
rm -f .coverage .coverage.*  # an earlier run's data
status=0
.venv/bin/python -m coverage run -m pytest "$@" || status=$?
.venv/bin/python scripts/coverage_summary.py || { [ "$status" -ne 0 ] || status=1; }
exit "$status"
