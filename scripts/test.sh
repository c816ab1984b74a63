#!/usr/bin/env bash
# Quick start, command 2: set up everything the tests need, then run the whole test suite under
# coverage (the processes it starts included; pyproject.toml, [tool.coverage]) and print the line
# and branch coverage of server/takeback after pytest's closing line. The exit code is pytest's, or
# 1 when pytest passed but a run of the whole suite (no arguments) covered fewer than 97% of the
# lines (docs/architecture.md, "Coverage"); a selection's coverage is only printed. The whole suite
# runs in 2 pytest-xdist workers (TAKEBACK_TEST_WORKERS, 0 for one process); the tests that start
# a live editor or agent stay together on one worker (tests/conftest.py,
# pytest_xdist_make_scheduler). Each
# worker is a process coverage measures, so the 97% holds over every worker's data combined.
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
workers=()
if [ "$#" -eq 0 ]; then
  goal=(--fail-under 97)
  [ "${TAKEBACK_TEST_WORKERS:-2}" != 0 ] && workers=(-n "${TAKEBACK_TEST_WORKERS:-2}")
fi
.venv/bin/python -m coverage run -m pytest "${workers[@]}" "$@" || status=$?
.venv/bin/python scripts/coverage_summary.py "${goal[@]}" || { [ "$status" -ne 0 ] || status=1; }
exit "$status"
