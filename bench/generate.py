"""Generated workspaces for the benchmark: a git repository of small source files in nested folders.

The layout looks like a real multi-package project: ``packages/<pkg>/src/<area>/<module>.py``,
``packages/<pkg>/tests/...``, a TypeScript front end under ``web/``, docs, a ``.gitignore`` at
the root and a few nested ones, plus some ignored build output and a ``node_modules`` folder
that git (and Takeback) must skip. Files are 0.3-4 KB of plausible code assembled from a pool
of generated functions; three "hot" modules of ~10 KB are the ones the benchmark edits.

Everything is deterministic for a given size. Each file is written with plain ``open`` and
streamed at the same time into ``git fast-import``, which commits them all into one pack (no
loose object per file: file creation is the slow part on a busy disk). The index is then
built with ``git read-tree`` and ``git update-index --refresh`` after the racy-git window has
passed, so it is clean and newer than every file, as in a repository someone works in
(otherwise git would re-hash "racily clean" files on every status).
"""

from __future__ import annotations

import os
import random
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HOT_FILES = (
    "packages/core/src/engine/session.py",
    "packages/api/src/routes/handlers.py",
    "web/src/components/Editor.tsx",
)
HOT_SIZE = 10 * 1024

_WORDS = (
    "user account session token cache index entry record batch turn change file path node tree "
    "item value result error config option event handler request response client server store "
    "queue worker task job state status report summary metric timer buffer stream reader writer "
    "parser lexer scope symbol module package route view model schema field column table query"
).split()


def git_env() -> dict[str, str]:
    """A predictable git: no system or global config, no inherited GIT_* redirection."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@localhost",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@localhost",
        LC_ALL="C",
    )
    return env


def git(args: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, env=git_env(), check=True, stdout=subprocess.DEVNULL, **kwargs)


class _Text:
    """Plausible source text from a pool of generated functions."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.py = [self._py_function(i) for i in range(1500)]
        self.ts = [self._ts_function(i) for i in range(800)]

    def _name(self, n: int = 2) -> str:
        return "_".join(self.rng.choice(_WORDS) for _ in range(n))

    def _camel(self, n: int = 2) -> str:
        parts = [self.rng.choice(_WORDS) for _ in range(n)]
        return parts[0] + "".join(p.title() for p in parts[1:])

    def _py_function(self, i: int) -> str:
        r = self.rng
        args = ", ".join(self._name(1) for _ in range(r.randint(1, 4)))
        lines = [f"def {self._name()}_{i}({args}):", f'    """{r.choice(_WORDS).title()} the {r.choice(_WORDS)} of a {r.choice(_WORDS)}."""']
        for _ in range(r.randint(2, 12)):
            kind = r.random()
            if kind < 0.4:
                lines.append(f"    {self._name(1)} = {self._name(1)}.{self._name(1)}({r.randint(0, 99)})")
            elif kind < 0.7:
                lines.append(f"    if {self._name(1)} is None:")
                lines.append(f"        raise ValueError(\"missing {self._name(1)}\")")
            else:
                lines.append(f"    for {self._name(1)} in {self._name(1)}s:")
                lines.append(f"        {self._name(1)}.append({self._name(1)})")
        lines.append(f"    return {self._name(1)}")
        return "\n".join(lines) + "\n"

    def _ts_function(self, i: int) -> str:
        r = self.rng
        args = ", ".join(f"{self._camel(1)}: {r.choice(['string', 'number', 'boolean'])}" for _ in range(r.randint(1, 3)))
        lines = [f"export function {self._camel()}{i}({args}) {{"]
        for _ in range(r.randint(2, 10)):
            lines.append(f"  const {self._camel()} = {self._camel(1)}.{self._camel(1)}({r.randint(0, 99)});")
        lines.append(f"  return {self._camel(1)};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def python(self, rel: str, target: int) -> str:
        parts = [f'"""{rel}: {self.rng.choice(_WORDS)} {self.rng.choice(_WORDS)} helpers."""\n\nfrom __future__ import annotations\n\n']
        size = len(parts[0])
        while size < target:
            chunk = self.rng.choice(self.py)
            parts.append("\n\n" + chunk)
            size += len(chunk) + 2
        return "".join(parts)

    def typescript(self, rel: str, target: int) -> str:
        parts = [f"// {rel}\nimport {{ {self._camel()} }} from './{self.rng.choice(_WORDS)}';\n"]
        size = len(parts[0])
        while size < target:
            chunk = self.rng.choice(self.ts)
            parts.append("\n" + chunk)
            size += len(chunk) + 1
        return "".join(parts)

    def markdown(self, rel: str, target: int) -> str:
        out = [f"# {rel}\n"]
        size = len(out[0])
        while size < target:
            line = " ".join(self.rng.choice(_WORDS) for _ in range(self.rng.randint(6, 16))).capitalize() + ".\n"
            out.append(line)
            size += len(line)
        return "".join(out)


def _file_size(rng: random.Random) -> int:
    # Mostly small files with a long tail, median about 1.2 KB.
    return int(min(4096, max(300, rng.lognormvariate(7.1, 0.6))))


def _layout(n: int, rng: random.Random) -> list[str]:
    """``n`` tracked paths (the hot files included), in nested folders of 5-40 files."""
    paths: list[str] = list(HOT_FILES)
    seen = set(paths)
    packages = max(3, n // 2500)
    pkg_names = ["core", "api", *(f"pkg{i:03d}" for i in range(packages))]
    web_share = 0.25
    doc_share = 0.03
    dir_counter = 0
    while len(paths) < n:
        dir_counter += 1
        r = rng.random()
        if r < web_share:
            depth = rng.randint(1, 3)
            folder = "web/src/" + "/".join(f"{rng.choice(_WORDS)}{rng.randint(0, 40)}" for _ in range(depth))
            ext = ".tsx" if rng.random() < 0.4 else ".ts"
        elif r < web_share + doc_share:
            folder = f"docs/{rng.choice(_WORDS)}{rng.randint(0, 20)}"
            ext = ".md"
        else:
            pkg = rng.choice(pkg_names)
            top = "tests" if rng.random() < 0.25 else "src"
            depth = rng.randint(1, 3)
            folder = f"packages/{pkg}/{top}/" + "/".join(f"{rng.choice(_WORDS)}{rng.randint(0, 30)}" for _ in range(depth))
            ext = ".py"
        for _ in range(rng.randint(5, 40)):
            if len(paths) >= n:
                break
            stem = f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}{rng.randint(0, 999)}"
            if ext == ".py" and "/tests/" in folder:
                stem = "test_" + stem
            path = f"{folder}/{stem}{ext}"
            if path not in seen:
                seen.add(path)
                paths.append(path)
    return paths


ROOT_GITIGNORE = """# generated benchmark workspace
__pycache__/
*.pyc
.venv/
node_modules/
build/
dist/
*.log
.coverage
"""


def generate(root: Path, n: int, seed: int = 20240601) -> dict:
    """Write a workspace of ``n`` tracked files at ``root`` and commit it; answer a summary.

    The files are written once and streamed, as they are written, into ``git fast-import``,
    which packs them into one commit (no loose object per file). ``git read-tree`` and
    ``git update-index --refresh`` then build the index with every file's stat data.
    """
    started = time.perf_counter()
    rng = random.Random(seed + n)
    text = _Text(rng)
    root.mkdir(parents=True, exist_ok=False)
    git(["init", "-q", "-b", "main"], root)
    git(["config", "gc.auto", "0"], root)  # no background auto-gc while timing
    importer = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done"], cwd=root, env=git_env(), stdin=subprocess.PIPE
    )
    stream = importer.stdin
    assert stream is not None
    message = b"initial import"
    stream.write(b"commit refs/heads/main\ncommitter bench <bench@localhost> 1700000000 +0000\n")
    stream.write(b"data %d\n%s\n" % (len(message), message))

    def write_folder(folder: str, files: list[tuple[str, bytes]]) -> None:
        os.makedirs(root / folder, exist_ok=True)
        for rel, data in files:
            with open(root / rel, "wb") as handle:
                handle.write(data)

    paths = _layout(n - 3, rng)  # the three .gitignore files below are tracked too
    by_folder: dict[str, list[str]] = {}
    for rel in paths:
        by_folder.setdefault(rel.rpartition("/")[0], []).append(rel)
    total = 0
    # Creating files is latency-bound on a busy virtual disk (new folders land in block groups
    # whose bitmaps are not cached); a pool of writer threads overlaps those waits.
    with ThreadPoolExecutor(16) as pool:
        jobs = []
        for folder, rels in by_folder.items():
            files = []
            for rel in rels:
                target = HOT_SIZE if rel in HOT_FILES else _file_size(rng)
                if rel.endswith(".py"):
                    body = text.python(rel, target)
                elif rel.endswith((".ts", ".tsx")):
                    body = text.typescript(rel, target)
                else:
                    body = text.markdown(rel, target)
                data = body.encode()
                files.append((rel, data))
                stream.write(b"M 100644 inline %s\ndata %d\n%s\n" % (rel.encode(), len(data), data))
                total += len(data)
            jobs.append(pool.submit(write_folder, folder, files))
        for job in jobs:
            job.result()
    made = set(by_folder)
    for rel, content in (
        (".gitignore", ROOT_GITIGNORE.encode()),
        ("web/.gitignore", b"coverage/\n.cache/\n*.tsbuildinfo\n"),
        ("packages/core/.gitignore", b"generated/\n*.so\n"),
    ):
        write_folder(rel.rpartition("/")[0], [(rel, content)])
        stream.write(b"M 100644 inline %s\ndata %d\n%s\n" % (rel.encode(), len(content), content))
    stream.write(b"done\n")
    stream.close()
    # Ignored content both scanners must skip: build output, dependencies, caches.
    ignored = 0
    for folder in ("build/lib/app", "web/node_modules/left-pad/lib", "packages/core/generated", "web/coverage"):
        os.makedirs(root / folder, exist_ok=True)
        for i in range(max(10, n // 400)):
            (root / folder / f"out{i}.js").write_text(f"// generated {i}\n" * 20)
            ignored += 1
    for folder in sorted(made)[:: max(1, len(made) // 50)]:
        if folder.startswith("packages/"):
            os.makedirs(root / folder / "__pycache__", exist_ok=True)
            (root / folder / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\x00" * 512)
            ignored += 1
    last_write = time.time()
    if importer.wait() != 0:
        raise RuntimeError("git fast-import failed")
    written = time.perf_counter()
    # Leave the racy-git window (an index written in the same second as a file cannot trust
    # that file's stat data), then build the index: read-tree, and a refresh that hashes every
    # file once and stores its stat data.
    time.sleep(max(0.0, last_write + 1.1 - time.time()))
    git(["read-tree", "HEAD"], root)
    git(["update-index", "-q", "--refresh"], root)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, env=git_env(), check=True, capture_output=True).stdout
    if status.strip():
        raise RuntimeError(f"generated workspace is not clean: {status[:300]!r}")
    tracked = subprocess.run(["git", "ls-files"], cwd=root, env=git_env(), check=True, capture_output=True).stdout.count(b"\n")
    return {
        "files": tracked,
        "folders": len(made),
        "ignored_files": ignored,
        "bytes": total,
        "write_seconds": round(written - started, 2),
        "git_seconds": round(time.perf_counter() - written, 2),
    }
