"""A log commit's tree (``storage/commits.py``): ``meta.json`` is found from the tree's tail,
and agrees with reading the whole tree; a tree that does not end in it is read whole."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from helpers import make_repo, write_files
from takeback.engine.engine import Engine
from takeback.storage import commits


def test_meta_json_read_from_the_tail_is_the_one_the_whole_tree_names(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    engine = Engine(ws)
    for turn in range(2):
        engine.begin_turn(label=f"many files {turn}")
        write_files(ws, {f"src/m{i}.py": f"value = {i + turn}\n" for i in range(60)} | {"zzz.txt": f"{turn}\n"})
        engine.end_turn()
    store = engine.store
    chain = store.commit_chain(store.head(), None)
    assert len(chain) >= 2
    for oid in chain:
        tree = store._read(commits.header(store._read(oid)[1], b"tree"))[1]
        assert commits.meta_of(tree) == commits.parse_tree(tree)["meta.json"]
        assert json.loads(store.read_meta(oid))["records"]
    engine.close()


def _entry(name: bytes, data: bytes) -> bytes:
    return b"100644 " + name + b"\x00" + hashlib.sha1(data).digest()


def test_a_tree_not_ending_in_meta_json_is_read_whole() -> None:
    meta = _entry(b"meta.json", b"m")
    after = _entry(b"zz-not-an-id", b"z")
    assert commits.meta_of(meta + after) == hashlib.sha1(b"m").hexdigest()
    with pytest.raises(KeyError):
        commits.meta_of(_entry(b"a" * 40, b"a"))
    with pytest.raises(ValueError):
        commits.meta_of((meta + after)[:-3])  # cut short: neither its tail nor a whole parse
