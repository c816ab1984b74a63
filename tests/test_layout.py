"""The shape docs/architecture.md describes, checked on the source of server/takeback/: which
layer may import which, no private name taken from another module, no function longer than 60
lines and no class longer than 400. Reads the files with ``ast``; imports nothing of them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "takeback"

# What each part of the package may import of the others (a part: a subpackage, or a module at
# the top). The same table is drawn in docs/architecture.md.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "oslite": set(),  # ``os`` for the hook's client, from ``posix`` (imports nothing of Takeback)
    "gitenv": {"oslite"},
    "core": {"errors"},
    "config": {"core", "errors"},
    "storage": {"errors", "gitenv"},
    "workspace": {"core", "storage", "errors", "config"},
    "scanning": {"core", "storage", "workspace", "errors", "gitenv"},
    "engine": {"core", "storage", "workspace", "scanning", "errors", "config"},
    # adapters: the engine, the core's records and the errors; what else each needs is named
    "lsp": {"engine", "core", "errors", "config", "__version__"},
    "mcp": {"engine", "core", "errors", "workspace", "__version__"},
    "hooks": {"engine", "core", "errors", "install", "resident", "workspace", "guard", "oslite"},
    # (scanning: its tree watch, which also watches the process's own code, ``resident/staleness.py``)
    "resident": {"engine", "hooks", "storage", "config", "cli", "pager", "scanning", "oslite", "__version__"},
    "install": {"config", "errors", "storage"},
    "tui": {"engine", "core", "errors"},
    "demo": {"engine", "core", "config", "hooks"},
    "cli": {"engine", "core", "errors", "workspace", "demo", "hooks", "install", "launch", "lsp", "mcp", "resident", "pager", "tui", "guard",
            "__version__"},
    "launch": {"cli", "hooks", "gitenv", "pager", "resident"},
    "pager": set(),
    "guard": set(),  # the guard's classifier: pure, standard library and its shell parser only
    "__main__": {"launch"},
    "__init__": set(),
}


ADAPTERS_MAY_ASK = {"workspace.locate"}  # which workspace a folder belongs to: the one module of a
# lower layer (besides the core's records) that adapters use


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _part(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> list[tuple[str, list[str], int]]:
    """(module imported, names imported, line) for every ``from`` import of Takeback."""
    package = ["takeback", *path.relative_to(PACKAGE).parts[:-1]]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module == "takeback" or module.startswith("takeback."):
                found.append((module, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("takeback."):
                    found.append((alias.name, [], node.lineno))
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_each_layer_imports_only_what_it_may(path: Path) -> None:
    part = _part(path)
    assert part in ALLOWED, f"{part} is not in the layer table (tests/test_layout.py, docs/architecture.md)"
    for module, names, line in _imports(path):
        pieces = module.split(".")
        targets = names if len(pieces) == 1 else [pieces[1]]
        for target in targets:
            assert target == part or target in ALLOWED[part], f"{path.name}:{line}: {part} may not import {target}"
            if target == "workspace" and part in ("cli", "mcp", "hooks", "tui"):
                assert ".".join(pieces[1:3]) in ADAPTERS_MAY_ASK, f"{path.name}:{line}: {part} may not import {module}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_name_is_taken_from_another_module(path: Path) -> None:
    for module, names, line in _imports(path):
        private = [n for n in names if n.startswith("_") and not n.startswith("__")]
        assert not private, f"{path.name}:{line}: imports {private} from {module}"


def test_no_function_over_60_lines_and_no_class_over_400() -> None:
    too_long = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > 60:
                too_long.append(f"{path.relative_to(PACKAGE)}: function {node.name}, {node.end_lineno - node.lineno + 1} lines")
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 400:
                too_long.append(f"{path.relative_to(PACKAGE)}: class {node.name}, {node.end_lineno - node.lineno + 1} lines")
    assert not too_long, "\n".join(too_long)


def test_every_module_says_what_it_owns() -> None:
    missing = [str(p.relative_to(PACKAGE)) for p in _modules() if p.stat().st_size and not ast.get_docstring(ast.parse(p.read_text()))]
    assert not missing, f"modules without a docstring: {missing}"


_WRITES = {"write_bytes", "write_text", "unlink", "rmdir", "rename", "replace", "remove", "rmtree", "mkdir", "makedirs",
           "open", "save_screenshot", "symlink_to", "chmod", "truncate"}


def test_the_terminal_ui_writes_nothing_itself() -> None:
    """``tui/`` writes the person's files only through the engine's operations: no call in it
    opens, writes, moves or deletes a file (the engine's ``Operations`` do, with their journal)."""
    found = []
    for path in sorted((PACKAGE / "tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if name in _WRITES:
                    found.append(f"{path.name}:{node.lineno}: {name}()")
    assert not found, "\n".join(found)
