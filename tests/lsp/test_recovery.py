"""A server started after a crash: the journal of a revert that was interrupted half-way (one
file written, the person's edit to another made since) is found when the folder opens; the
written file goes back, the person's edit stays, and the client is told as a warning and in
the status."""

from __future__ import annotations

from pathlib import Path

from helpers import make_repo
from takeback.config import load_config
from takeback.engine.engine import Engine
from takeback.workspace.journal import JournalFile

from .raw import RawServer


def test_an_interrupted_revert_is_rolled_back_when_the_folder_opens(isolated_environment: Path, tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws", {"a.txt": "a0\n", "b.txt": "b0\n"})
    engine = Engine(ws, load_config(ws))
    version = engine.capture.version
    items = [
        JournalFile(path=p, before=version(p, f"{p[0]}0\n".encode(), 0o100644), after=version(p, f"{p[0]}1\n".encode(), 0o100644))
        for p in ("a.txt", "b.txt")
    ]
    engine.journal.start("never-published", "revert", items, {})
    engine.journal.write_side(items[0], "after")  # a.txt written, then the process died
    engine.close()
    (ws / "b.txt").write_text("the person's\n")

    raw = RawServer(ws, tmp_path / "server.log")
    try:
        raw.initialize()
        recovery = raw.request("takeback/status", {})["result"]["lastRecovery"]
        assert (recovery["operation"], recovery["action"], recovery["left"]) == ("revert", "rolled-back", ["b.txt"])
        warnings = [m["params"]["message"] for m in raw.messages
                    if m.get("method") == "window/logMessage" and m["params"]["type"] == 2]
        assert f"WARNING takeback.lsp.folders: {ws}: recovered an interrupted revert (rolled-back)" in warnings
        assert (ws / "a.txt").read_text() == "a0\n" and (ws / "b.txt").read_text() == "the person's\n"
    finally:
        raw.close()
