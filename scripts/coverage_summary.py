"""The closing lines of scripts/test.sh: combine the coverage data the test run and every process
it started wrote, print the line and branch coverage of ``server/takeback`` in one line, and (with
``--fail-under PERCENT``) fail when the lines covered fall below it.

coverage.py's own total mixes lines and branches into one number; the project's goal is stated in
lines (docs/architecture.md, "Coverage"), so this reads both from coverage's JSON report.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import coverage

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "takeback"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fail-under", type=float, default=None, help="fail when fewer lines than this percentage are covered")
    args = parser.parse_args()
    cov = coverage.Coverage()
    cov.combine(keep=False, strict=False)
    cov.save()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "coverage.json"
        try:
            # This checkout's package only: a test may run another copy of takeback (the VS Code
            # test's stale server, built from git history), whose files would count too.
            cov.json_report(outfile=str(out), ignore_errors=True, include=[str(PACKAGE / "*")])
        except coverage.exceptions.NoDataError:
            print("coverage: no data was collected", file=sys.stderr)
            return 1
        totals = json.loads(out.read_text())["totals"]
    lines = 100.0 * totals["covered_lines"] / max(totals["num_statements"], 1)
    branches = 100.0 * totals["covered_branches"] / max(totals["num_branches"], 1)
    print(
        f"coverage of server/takeback: {lines:.1f}% of lines ({totals['missing_lines']} of {totals['num_statements']} not run), "
        f"{branches:.1f}% of branches ({totals['missing_branches']} of {totals['num_branches']} not taken); "
        "per file: .venv/bin/python -m coverage report -m --skip-covered"
    )
    if args.fail_under is not None and lines < args.fail_under:
        print(f"coverage: {lines:.1f}% of lines is below the required {args.fail_under:g}%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
