"""The VS Code client's static checks, part of the README's test command: the TypeScript compiler
in strict mode (vscode-client/tsconfig.json) and ESLint with typescript-eslint's type-checked
rules (vscode-client/eslint.config.mjs), each run with the client's own node_modules (installed
by scripts/setup-vscode.sh with `npm ci`)."""

from __future__ import annotations

import os
import subprocess

import pytest

from .harness import CLIENT, NODE_BIN

TSC = CLIENT / "node_modules" / "typescript" / "bin" / "tsc"
ESLINT = CLIENT / "node_modules" / "eslint" / "bin" / "eslint.js"

pytestmark = pytest.mark.skipif(
    not (TSC.exists() and ESLINT.exists()), reason="vscode-client dependencies not installed (run scripts/setup-vscode.sh)"
)


def node(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Runs one of the client's node tools in vscode-client/, with setup-vscode.sh's Node 24 first on PATH."""
    env = dict(os.environ)
    if (NODE_BIN / "node").exists():
        env["PATH"] = os.pathsep.join([str(NODE_BIN), env.get("PATH", "")])
    return subprocess.run(["node", *args], cwd=CLIENT, env=env, input=stdin, capture_output=True, text=True, timeout=300)


def test_typescript_compiles_strict_without_errors():
    run = node(str(TSC), "--noEmit", "-p", ".")
    assert run.returncode == 0, run.stdout + run.stderr


def test_eslint_reports_nothing():
    run = node(str(ESLINT), "--max-warnings", "0", ".")
    assert run.returncode == 0, run.stdout + run.stderr


def test_eslint_applies_the_type_checked_rules_to_the_client():
    # A floating promise and an `any` in a file of the client: only the type-aware rules see them,
    # so a configuration that lints nothing, or without types, fails here.
    probe = (CLIENT / "src" / "logger.ts").read_text() + "\nPromise.resolve(1);\nexport const probe: any = 1;\n"
    run = node(str(ESLINT), "--stdin", "--stdin-filename", "src/logger.ts", stdin=probe)
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "@typescript-eslint/no-floating-promises" in output and "@typescript-eslint/no-explicit-any" in output, output
