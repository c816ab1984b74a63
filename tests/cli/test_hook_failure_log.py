"""The hook failure log (``hook-failures.log`` in the store) as ``takeback status`` reports it,
through the real CLI and real failing hooks: past its bound the older half is dropped when the
next failure is appended (the newest is kept and named); a last line that is not JSON (torn by
a crash, or edited by hand) is shown as it is, not hidden."""

from __future__ import annotations

import json

from .conftest import Takeback
from .test_hooks import failures, hook

OLD = 3000  # lines of about 120 bytes: past the log's 256 KiB bound


def test_a_full_log_drops_its_older_half_and_keeps_the_newest_failure(tb: Takeback) -> None:
    log = tb.store() / "hook-failures.log"
    line = json.dumps({"at": "2026-01-01T00:00:00+00:00", "agent": "codex", "event": "Stop", "message": "old " + "x" * 60})
    log.write_text((line + "\n") * OLD)
    hook(tb, "claude", "{not json")
    count, last = failures(tb)
    assert OLD // 2 - 1 <= count <= OLD // 2 + 1, count
    assert last is not None and last.split(" ", 1)[1].startswith("claude ")
    assert log.stat().st_size < 256 * 1024


def test_a_last_line_that_is_not_json_is_shown_as_it_is(tb: Takeback) -> None:
    hook(tb, "claude", "{not json")
    log = tb.store() / "hook-failures.log"
    with open(log, "a", encoding="utf-8") as out:
        out.write("a line someone typed\n")
    assert failures(tb) == (2, "a line someone typed")
