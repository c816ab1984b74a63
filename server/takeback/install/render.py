"""What ``takeback install`` / ``uninstall`` print: per agent, each file and what happened to
it, then what the person still has to do. ``--json`` prints the same reports as data."""

from __future__ import annotations

from dataclasses import asdict

from .plan import Report


def as_json(reports: list[Report]) -> list[dict]:
    return [asdict(r) for r in reports]


def print_reports(reports: list[Report], verb: str) -> None:
    for report in reports:
        if report.skipped is not None:
            print(f"{report.title} ({report.agent}): skipped, {report.skipped}")
            continue
        print(f"{report.title} ({report.agent}, {report.scope} scope): {verb}")
        for change in report.changes:
            what = f" — {change.what}" if change.what and verb == "installed" else ""
            print(f"  {change.action:<9} {change.path}{what}")
        for step in report.next_steps:
            print(f"  next: {step}")
