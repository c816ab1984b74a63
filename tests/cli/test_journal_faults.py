"""What the person sees of a journal Takeback cannot use, through the real CLI: a torn journal
that cannot even be moved aside (``chattr +i``) is named by ``takeback status`` (human and
``--json``), and an undo then stops before writing anything, with an error line saying which
file and why (after the warning each command gives while the journal stays); once it can be moved, the next command sets it aside and the undo goes through.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from .conftest import Snapshot, Takeback
from .test_operations import turn

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("chattr") is None, reason="needs root and chattr to make the journal immutable"
)

TORN = b'{"entry": "01J", "operation": "undo", "sta'


def test_a_journal_that_cannot_be_set_aside_is_reported_and_stops_the_undo(tb: Takeback) -> None:
    turn(tb, {"src/app.py": "def main():\n    return 2\n"}, "agent")
    store = tb.store()
    journal = store / "journal.json"
    journal.write_bytes(TORN)
    subprocess.run(["chattr", "+i", str(journal)], check=True)
    try:
        status = tb("--json", "status")
        assert status.code == 0 and f"could not set the journal {journal} aside: operation not permitted\n" in status.err
        report = status.json()["last_recovery"]
        assert report["action"] == "set-aside" and report["journal_kept"] is None and report["paths"] == []
        assert [p.split(" could not be used (")[0] for p in report["problems"]] == [f"the journal {journal}"]
        assert "; it was left in place and nothing was rolled" in report["problems"][0]
        human = tb("status")
        assert human.code == 0 and f"the journal {journal} could not be used" in human.text
        snap = Snapshot(tb)
        failed = tb("undo")
        snap.assert_unchanged()
        warned, error = failed.err.splitlines()[:-1], failed.err.splitlines()[-1]
        assert failed.code == 7 and failed.out == b"" and "Traceback" not in failed.err  # 7: the store failed
        assert error == f"takeback: error: cannot write the journal {journal}: operation not permitted; nothing was written"
        assert warned[0] == f"could not set the journal {journal} aside: operation not permitted"
        assert warned[1].startswith(f"the journal {journal} could not be used (") and "; it was left in place" in warned[1]
        assert len(warned) == 2 and journal.read_bytes() == TORN
    finally:
        subprocess.run(["chattr", "-i", str(journal)], check=True)
    moved = tb("--json", "status")  # movable now: set aside, and said so once
    report = moved.json()["last_recovery"]
    assert report["action"] == "set-aside" and (store / report["journal_kept"]).read_bytes() == TORN
    assert moved.err == f"{report['problems'][0]}\n" and f"it was moved aside to {store / report['journal_kept']}" in moved.err
    tb.ok("undo")
    assert (tb.cwd / "src/app.py").read_text() == "def main():\n    return 1\n"
