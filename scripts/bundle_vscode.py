"""Puts Takeback and every library it needs into the VS Code extension (vscode-client/bundled/libs),
so the extension runs its own copy of the server with any Python of a supported version, as
Microsoft's Python tools extension template bundles its server's libraries (``pip install -t
bundled/libs``). Run by scripts/setup-vscode.sh before ``vsce package --target``.

Some libraries have compiled parts (pygit2, pydantic-core, isal, cffi, rpds): their wheels are
per platform and per Python version. The bundle is for one VS Code target (``linux-x64`` …) and
holds the compiled parts for each Python version in ``--pythons``: pip installs everything for
the first version, then, for each other version, the same versions of the libraries whose
wheels are built for one Python version, and the folders are merged (a compiled module's file
name carries its Python version, ``_pygit2.cpython-312-….so``, so they sit side by side; the
rest of such a wheel is the same file for each version). pip's cache makes a second
run take seconds, and a bundle made from the same sources for the same target and versions is
kept as it is. ``bundled/manifest.json`` says what is inside; the extension reads it.

Usage: bundle_vscode.py [--target linux-x64] [--pythons 3.11,3.12,3.13,3.14]
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import json
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "vscode-client" / "bundled"

# VS Code's target names and the wheel platform tags pip may pick for them (oldest C library first).
PLATFORMS = {
    "linux-x64": ["manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64"],
    "linux-arm64": ["manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_28_aarch64"],
    "darwin-x64": ["macosx_10_13_x86_64", "macosx_11_0_x86_64"],
    "darwin-arm64": ["macosx_11_0_arm64"],
    "win32-x64": ["win_amd64"],
}
DEFAULT_PYTHONS = "3.11,3.12,3.13,3.14"


def sources_digest(target: str, versions: list[str]) -> str:
    """What the bundle is made from: this checkout's package and pyproject.toml, this script, the target, the versions."""
    digest = hashlib.sha256(f"{target} {' '.join(versions)}\n".encode())
    package = sorted(p for p in (ROOT / "server").rglob("*") if p.is_file() and "__pycache__" not in p.parts and ".egg-info" not in str(p))
    files = [ROOT / "pyproject.toml", Path(__file__).resolve(), *package]
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def up_to_date(digest: str) -> bool:
    try:
        manifest = json.loads((BUNDLED / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    return manifest.get("sources") == digest and (BUNDLED / "libs" / "takeback" / "__main__.py").is_file()


def this_target() -> str:
    """The VS Code target of the machine running this script."""
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}.get(platform.system(), platform.system().lower())
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower(), platform.machine())
    return f"{system}-{machine}"


def pip_install(target: str, version: str, into: Path, requirements: list[str] | None = None) -> None:
    """Wheels for ``target`` and Python ``version``: Takeback (this checkout) and everything it
    requires, or only ``requirements`` (pinned, without their dependencies)."""
    tag = "cp" + version.replace(".", "")
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
        "--target", str(into), "--only-binary=:all:", "--implementation", "cp", "--python-version", version,
        "--abi", tag, "--abi", "abi3", "--abi", "none",
    ]
    for tag_name in PLATFORMS[target]:
        command += ["--platform", tag_name]
    command += ["--no-deps", *requirements] if requirements is not None else [str(ROOT)]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"bundle_vscode: pip could not install Takeback for Python {version} on {target}:\n{run.stdout}{run.stderr}")


def installed(folder: Path) -> dict[str, str]:
    """The distributions pip put in ``folder``: name -> version (from the .dist-info folders)."""
    found = {}
    for info in folder.glob("*.dist-info"):
        name, _, version = info.name[: -len(".dist-info")].partition("-")
        found[name] = version
    return found


def per_python(folder: Path) -> list[str]:
    """The distributions in ``folder`` whose wheel is built for one Python version (its tag is
    neither ``none-any`` nor the stable ABI), pinned: those another Python version needs its own of."""
    pinned = []
    for info in sorted(folder.glob("*.dist-info")):
        tags = [line.split(":", 1)[1].strip() for line in (info / "WHEEL").read_text().splitlines() if line.startswith("Tag:")]
        if any(tag.split("-")[1] not in ("none", "abi3") for tag in tags):
            name, _, version = info.name[: -len(".dist-info")].partition("-")
            pinned.append(f"{name}=={version}")
    return pinned


def merge(source: Path, into: Path) -> list[str]:
    """Copy ``source`` into ``into``, keeping files already there; answers the files that differ
    where both have them (only package metadata and abi3 modules may: the first one is kept)."""
    differing = []
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        dest = into / rel
        if path.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
        elif not dest.exists():
            shutil.copy2(path, dest)
        elif not filecmp.cmp(path, dest, shallow=False):
            differing.append(str(rel))
    return differing


def allowed_difference(rel: str) -> bool:
    """A file two Python versions' wheels may hold differently: metadata, or a stable-ABI module
    (built once per wheel, usable by every later Python: the oldest one's is kept)."""
    return ".dist-info/" in rel or rel.endswith(".abi3.so") or rel.endswith(".abi3.pyd")


def bundle(target: str, versions: list[str], digest: str) -> dict[str, Any]:
    shutil.rmtree(BUNDLED, ignore_errors=True)
    libs = BUNDLED / "libs"
    libs.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="takeback-bundle-") as tmp:
        first = Path(tmp) / versions[0]
        pip_install(target, versions[0], first)  # the first version resolves; the others get the same versions
        dists = installed(first)
        compiled = per_python(first)
        shutil.rmtree(first / "bin", ignore_errors=True)  # console scripts for the build's Python: no use here
        merge(first, libs)
        for version in versions[1:]:
            folder = Path(tmp) / version
            pip_install(target, version, folder, compiled)
            shutil.rmtree(folder / "bin", ignore_errors=True)
            odd = [rel for rel in merge(folder, libs) if not allowed_difference(rel)]
            if odd:
                sys.exit(f"bundle_vscode: Python {version}'s wheels differ from {versions[0]}'s in: {', '.join(odd)}")
    manifest = {
        "target": target,
        "pythons": versions,
        "sources": digest,
        "takeback": dists.get("takeback"),
        "libraries": {n: v for n, v in sorted(dists.items()) if n != "takeback"},
    }
    (BUNDLED / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default=this_target(), choices=sorted(PLATFORMS), help="VS Code target (default: this machine's)")
    parser.add_argument("--pythons", default=DEFAULT_PYTHONS, help=f"Python versions with compiled parts (default {DEFAULT_PYTHONS})")
    args = parser.parse_args()
    versions = [v.strip() for v in args.pythons.split(",") if v.strip()]
    if not versions or not all(re.fullmatch(r"3\.\d+", v) for v in versions):
        parser.error(f"--pythons wants versions like 3.11,3.12, not {args.pythons!r}")
    digest = sources_digest(args.target, versions)
    if up_to_date(digest):
        print(f"bundle_vscode: {BUNDLED.relative_to(ROOT)} is up to date")
        return 0
    manifest = bundle(args.target, versions, digest)
    size = sum(p.stat().st_size for p in BUNDLED.rglob("*") if p.is_file())
    print(f"bundle_vscode: Takeback {manifest['takeback']} and {len(manifest['libraries'])} libraries for {args.target}, "
          f"Python {', '.join(versions)}: {size / 1e6:.0f} MB in {BUNDLED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
