/**
 * Finds the command that starts the language server: the decision is model/resolve.ts (pure);
 * this file gives it real probes (PATH lookup, "can this Python import takeback?", the copy of
 * Takeback bundled in the extension's `bundled/` folder and "can this Python run it?", whether
 * the workspace is trusted) and logs each step to the output channel. Neither probe lets the
 * workspace choose the program: relative PATH entries are skipped, and Python is asked from the
 * home folder with PYTHONSAFEPATH (the current folder is not put on its import path).
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";
import { serverSettings } from "./config";
import { log } from "./logger";
import { Bundle, Probes, Resolution, resolveServer } from "./model/resolve";

function isExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) {
      return false;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Python 3.11+ then puts neither the current folder nor a script's folder on the import path,
 * so `python -m takeback` run in a repository cannot import a `takeback` the repository holds. */
export const SAFE_PYTHON_ENV = { PYTHONSAFEPATH: "1" };

export function which(name: string): string | undefined {
  if (name.includes("/") || name.includes(path.sep)) {
    const abs = path.resolve(name);
    return isExecutable(abs) ? abs : undefined;
  }
  const exts = process.platform === "win32" ? (process.env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";") : [""];
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) {
      continue; // a relative entry ("." …) would find programs in whatever folder is current
    }
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

function pythonProblem(python: string): string | undefined {
  const result = spawnSync(python, ["-c", "import takeback.cli"], {
    timeout: 15000,
    encoding: "utf8",
    cwd: os.homedir(),
    env: { ...process.env, ...SAFE_PYTHON_ENV },
  });
  if (result.error) {
    return `${python} could not be run (${result.error.message})`;
  }
  if (result.status !== 0) {
    const last = (result.stderr || "").trim().split("\n").pop() ?? "";
    return `${python} cannot import takeback${last ? ` (${last})` : ""}`;
  }
  return undefined;
}

/** The extension's own folder: dist/extension.js is one level below it. */
const EXTENSION_ROOT = path.resolve(__dirname, "..");

/** The bundled copy of Takeback (scripts/bundle_vscode.py writes bundled/manifest.json beside it). */
export function findBundle(root: string = EXTENSION_ROOT): Bundle | undefined {
  const entry = path.join(root, "bundled", "libs", "takeback", "__main__.py");
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, "bundled", "manifest.json"), "utf8")) as { pythons?: unknown };
    const pythons = Array.isArray(manifest.pythons) ? manifest.pythons.filter((v): v is string => typeof v === "string") : [];
    return fs.existsSync(entry) ? { entry, pythons } : undefined;
  } catch {
    return undefined;
  }
}

/** Asked of a candidate Python, isolated from the folder it runs in: its version (too old: exit
 * 3), then whether the bundled libraries, compiled parts included, load in it. */
const BUNDLE_PROBE = [
  "import sys",
  'print("%d.%d" % sys.version_info[:2])',
  "if sys.version_info < (3, 11): sys.exit(3)",
  "sys.path.insert(0, sys.argv[1])",
  "import takeback.cli, pygit2, pydantic_core",
].join("\n");

function bundleProblem(bundle: Bundle, python: string): string | undefined {
  const libs = path.dirname(path.dirname(bundle.entry));
  const result = spawnSync(python, ["-I", "-c", BUNDLE_PROBE, libs], { timeout: 20000, encoding: "utf8", cwd: os.homedir() });
  if (result.error) {
    return `could not be run (${result.error.message})`;
  }
  const version = (result.stdout || "").trim().split("\n")[0] ?? "";
  if (result.status === 3) {
    return `Python ${version} is older than 3.11`;
  }
  if (result.status !== 0) {
    const last = (result.stderr || "").trim().split("\n").pop() ?? "";
    const held = bundle.pythons.length ? ` (the bundle holds compiled parts for Python ${bundle.pythons.join(", ")})` : "";
    return `Python ${version || "?"} cannot load the bundled libraries${held}${last ? `: ${last}` : ""}`;
  }
  return undefined;
}

export function findServer(): Resolution {
  const bundle = findBundle();
  const probes: Probes = {
    which,
    pythonProblem,
    bundle,
    bundleProblem: (python) => (bundle ? bundleProblem(bundle, python) : "no bundled Takeback"),
    home: os.homedir(),
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
    trusted: vscode.workspace.isTrusted,
  };
  const resolution = resolveServer(serverSettings(), probes);
  const logger = log();
  for (const step of resolution.steps) {
    logger.info(`Server lookup: ${step}`);
  }
  if (resolution.ok) {
    logger.info(`Server command: ${[resolution.server.command, ...resolution.server.args].join(" ")}`);
  } else {
    logger.error(`Server lookup failed: ${resolution.problem} ${resolution.fix}`);
  }
  return resolution;
}
