"""Workspace folders as a client changes them: a server started with only ``rootPath``, folders
added and removed at runtime (``workspace/didChangeWorkspaceFolders``) — one that is not a git
repository, one that is not a folder at all, URIs that are not files —, requests naming a turn
found in the right folder past a broken one, initialization options that are ignored with a
warning, a store kept busy by another process while the server polls it, and a hook failure log
that grows then goes away."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pygls.uris import from_fs_path

from helpers import make_repo

from .raw import RawServer


def wait_for(raw: RawServer, found: Callable[[dict], bool], count: int = 1, timeout: float = 20.0) -> list[dict]:
    """The server's notifications that ``found`` accepts, once there are ``count`` of them."""
    deadline = time.monotonic() + timeout
    while True:
        hits = [m for m in list(raw.messages) if "method" in m and "id" not in m and found(m)]
        if len(hits) >= count:
            return hits
        if time.monotonic() > deadline:
            raise AssertionError(f"expected {count} such notification(s); got {[m.get('method') for m in raw.messages]}")
        time.sleep(0.05)


def logged(text: str) -> Callable[[dict], bool]:
    return lambda m: m["method"] == "window/logMessage" and text in m["params"]["message"]


def changed(reason: str) -> Callable[[dict], bool]:
    return lambda m: m["method"] == "takeback/timelineChanged" and m["params"]["reason"] == reason


def folders_changed(raw: RawServer, added: tuple = (), removed: tuple = ()) -> None:
    def folder(f: Path | str) -> dict:
        return {"uri": f if isinstance(f, str) else from_fs_path(str(f)), "name": "x"}

    event = {"added": [folder(f) for f in added], "removed": [folder(f) for f in removed]}
    raw.notify("workspace/didChangeWorkspaceFolders", {"event": event})


@pytest.fixture
def server(repo: Path, isolated_environment: Path, tmp_path: Path):
    """A server started the old way, with ``rootPath`` only, and options it must ignore."""
    raw = RawServer(repo, tmp_path / "server.log")
    answer = raw.request("initialize", {
        "processId": None, "rootUri": None, "rootPath": str(repo), "capabilities": {},
        "initializationOptions": {"pollInterval": 0.2, "applyEditTimeout": "soon", "hookFailureMessages": "yes"},
    })
    assert "result" in answer, answer
    raw.notify("initialized", {})
    yield raw
    raw.close()


def test_a_root_path_is_the_workspace_and_bad_options_are_said(server: RawServer, repo: Path) -> None:
    assert server.request("takeback/status", {})["result"]["workspace"] == str(repo)
    wait_for(server, logged("ignoring the initialization option 'soon': not a number of seconds between 0 and 86400"))
    wait_for(server, logged("ignoring the initialization option hookFailureMessages='yes': not true or false"))


def test_a_server_started_without_any_folder_says_so(repo: Path, isolated_environment: Path, tmp_path: Path) -> None:
    raw = RawServer(repo, tmp_path / "server.log")
    try:
        assert "result" in raw.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        error = raw.request("takeback/status", {})["error"]
        assert (error["code"], error["message"]) == (
            -32005, "no workspace folder is open: start the server with a root folder or workspace folders"
        )
    finally:
        raw.close()


def test_folders_added_and_removed_at_runtime(server: RawServer, repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"  # not a git repository: it works too
    plain.mkdir()
    (plain / "notes.txt").write_text("one\n")
    folders_changed(server, added=(plain, "untitled:Untitled-1", repo))
    wait_for(server, logged(f"workspace folder {plain}: store "))
    wait_for(server, logged("ignoring workspace folder untitled:Untitled-1: 'untitled:Untitled-1' is not a file: URI"))
    uri = from_fs_path(str(plain))
    status = server.request("takeback/status", {"folder": uri})["result"]
    assert (status["workspace"], status["gitRepository"]) == (str(plain), False)
    begun = server.request("takeback/beginTurn", {"folder": uri, "label": "in plain"})["result"]
    (plain / "notes.txt").write_text("two\n")
    ended = server.request("takeback/endTurn", {"folder": uri})["result"]
    assert ended["number"] == begun["number"] == 1 and [f["path"] for f in ended["files"]] == ["notes.txt"]
    assert server.request("takeback/status", {})["result"]["entries"] == 0  # the first folder's timeline is its own

    folders_changed(server, removed=(plain, "untitled:Untitled-1"))
    error = server.request("takeback/status", {"folder": uri})["error"]
    assert (error["code"], error["message"]) == (-32002, f"{uri} is not one of the workspace folders")
    assert server.request("takeback/status", {})["result"]["workspace"] == str(repo)


def test_a_folder_that_cannot_be_opened_is_refused_and_skipped(server: RawServer, repo: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    other = make_repo(tmp_path / "other", {"b.txt": "b\n"})
    folders_changed(server, added=(missing, other))
    wait_for(server, logged(f"workspace folder {missing} cannot be used: workspace {missing} is not a folder"))
    wait_for(server, logged(f"workspace folder {other}: store "))
    error = server.request("takeback/status", {"folder": from_fs_path(str(missing))})["error"]
    assert error["code"] == -32005 and error["message"] == (
        f"the workspace folder {missing} has no Takeback store: workspace {missing} is not a folder"
    )
    # A turn id only the third folder knows is found there, past the folder without a store.
    other_uri = from_fs_path(str(other))
    turn = server.request("takeback/beginTurn", {"folder": other_uri, "label": "elsewhere"})["result"]
    server.request("takeback/endTurn", {"folder": other_uri})
    found = server.request("takeback/turn", {"turnId": turn["id"]})["result"]
    assert (found["id"], found["label"]) == (turn["id"], "elsewhere")
    # One no folder knows is looked for in the first folder, which says so.
    unknown = server.request("takeback/turn", {"turnId": "01ARZ3NDEKTSV4RRFFQ69G5FAV"})["error"]
    assert unknown["code"] == -32002 and "01ARZ3NDEKTSV4RRFFQ69G5FAV" in unknown["message"]
    # The poller goes on past the broken folder: another process's change is still announced.
    subprocess.run([sys.executable, "-m", "takeback", "begin", "--label", "from the CLI"], cwd=other, check=True,
                   capture_output=True, env=dict(os.environ), timeout=60)
    (hit,) = wait_for(server, lambda m: changed("external")(m) and m["params"]["folder"] == other_uri)
    assert hit["params"]["head"]


def test_a_store_kept_busy_is_polled_again_later(repo: Path, isolated_environment: Path, tmp_path: Path) -> None:
    """Another process holds the store's lock for longer than the server waits for it
    (``lock_timeout``): the poll that could not read the timeline is skipped, not fatal."""
    raw = RawServer(repo, tmp_path / "server.log")
    try:
        raw.initialize({"settings": {"lock_timeout": 0.2}})
        store = Path(raw.request("takeback/status", {})["result"]["store"])
        fd = os.open(store / "lock", os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            time.sleep(1.0)  # several polls meet the lock
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        subprocess.run([sys.executable, "-m", "takeback", "begin", "--label", "after the wait"], cwd=repo, check=True,
                       capture_output=True, env=dict(os.environ), timeout=60)
        wait_for(raw, changed("external"))
        assert "background task" not in raw.log_text()
    finally:
        raw.close()


def test_a_hook_failure_log_that_goes_away_is_announced_without_a_second_warning(server: RawServer, repo: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "takeback", "hook", "claude"], input="{not json", capture_output=True,
                          text=True, cwd=repo, env={**os.environ, "CLAUDECODE": "1"}, timeout=60)
    assert proc.returncode == 0
    wait_for(server, changed("hook-failure"))
    (warning,) = wait_for(server, lambda m: m["method"] == "window/showMessage")
    assert warning["params"]["message"].startswith("Takeback: an agent's hook failed to record in repo (1 failure logged")
    assert server.request("takeback/status", {})["result"]["hookFailures"] == 1
    store = Path(server.request("takeback/status", {})["result"]["store"])
    (store / "hook-failures.log").unlink()  # the person cleared it
    wait_for(server, changed("hook-failure"), count=2)
    assert server.request("takeback/status", {})["result"]["hookFailures"] == 0
    time.sleep(0.5)
    assert len([m for m in server.messages if m.get("method") == "window/showMessage"]) == 1


def test_another_process_s_records_are_folded_once_the_poller_sees_them(raw: RawServer, repo: Path) -> None:
    """When the poller finds another process's records, the folder's engine folds them in its
    upkeep, after the announcement: the person's next request does not pay for them (the
    server says so in its log, which the client gets as ``window/logMessage``)."""
    raw.request("takeback/status", {})  # the folder's engine is open
    env = dict(os.environ)
    for args in (["begin", "--label", "from the CLI"], ["end"]):
        subprocess.run([sys.executable, "-m", "takeback", *args], cwd=repo, check=True, capture_output=True, env=env, timeout=60)
        (repo / "from_the_cli.txt").write_text("a shell command wrote this\n")
    wait_for(raw, changed("external"))
    (said,) = wait_for(raw, lambda m: m["method"] == "window/logMessage" and "another process published" in m["params"]["message"])
    assert "folded 1 log commit(s)" in said["params"]["message"]  # the begin and end, published as one
    timeline = raw.request("takeback/timeline", {})["result"]
    assert timeline["entries"][0]["label"] == "from the CLI"
