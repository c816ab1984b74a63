/**
 * Which command starts the Takeback language server, decided in a fixed order and logged step by
 * step: the `takeback.server.command` setting, the `takeback.server.python` setting, `takeback`
 * on PATH, then the copy of Takeback bundled with the extension, run by the first Python 3.11+
 * found (`python3`, then `python` on PATH). A setting that is set but does not work is an error
 * (it is never silently skipped: the person asked for it). In Restricted Mode (a workspace that
 * is not trusted) no program inside the workspace folder is run, whichever way it was found: the
 * repository is not trusted. Pure module: the probes are injected.
 */

export interface ServerSettings {
  command: string;
  python: string;
  logLevel: string;
}

/** The copy of Takeback packaged inside the extension (bundled/, made by scripts/bundle_vscode.py). */
export interface Bundle {
  /** Its entry file (`bundled/libs/takeback/__main__.py`): run as a file, it puts its libraries first on the path. */
  entry: string;
  /** The Python versions whose compiled parts it holds ("3.11", …). */
  pythons: string[];
}

export interface Probes {
  /** The absolute path of an executable file, or undefined (`name` may be a bare name: search PATH). */
  which(name: string): string | undefined;
  /** Can `python` import the `takeback` package? Undefined when it can, else why not. */
  pythonProblem(python: string): string | undefined;
  /** The bundled copy, or undefined when this build of the extension has none. */
  bundle?: Bundle;
  /** Can `python` run the bundled copy (3.11+, its compiled parts load)? Undefined when it can, else why not. */
  bundleProblem(python: string): string | undefined;
  home: string;
  workspaceFolder?: string;
  /** Whether the workspace is trusted (false: Restricted Mode). */
  trusted: boolean;
}

export type ServerSource = "setting:command" | "setting:python" | "path" | "bundled";

export interface ServerCommand {
  source: ServerSource;
  command: string;
  args: string[];
}

export type Resolution =
  | { ok: true; server: ServerCommand; steps: string[] }
  | { ok: false; steps: string[]; problem: string; fix: string };

/** `~` and `${workspaceFolder}` in a setting. */
export function expandPath(value: string, home: string, workspaceFolder?: string): string {
  let out = value.trim();
  if (out === "~" || out.startsWith("~/")) {
    out = home + out.slice(1);
  }
  if (workspaceFolder !== undefined) {
    out = out.split("${workspaceFolder}").join(workspaceFolder);
  }
  return out;
}

export function serveArgs(settings: ServerSettings): string[] {
  const args = ["serve"];
  if (settings.logLevel && settings.logLevel !== "INFO") {
    args.push("--log-level", settings.logLevel);
  }
  return args;
}

/** How a Python runs the bundled copy: isolated (`-I`: no user site, no PYTHON* variables, not
 * the current folder), unbuffered, the entry file as a program. Nothing leaks into the
 * environment of what the server starts (no PYTHONPATH). */
export function bundledArgs(bundle: Bundle, settings: ServerSettings): string[] {
  return ["-I", "-u", bundle.entry, ...serveArgs(settings)];
}

const INSTALL_FIX =
  "Takeback is not published as a package: in a clone of it, `pipx install .` puts `takeback` on PATH; " +
  "or set `takeback.server.command` to a `takeback`, or `takeback.server.python` to a Python that has Takeback.";

const PYTHON_FIX =
  "Install Python 3.11 or newer so that `python3` is on PATH (or set `takeback.server.python` to one): " +
  "this extension brings its own copy of Takeback.";

/** Whether `file` is inside the workspace folder while the workspace is not trusted. */
function restricted(file: string, probes: Probes): boolean {
  const folder = probes.workspaceFolder?.replace(/[\\/]+$/, "");
  return !probes.trusted && folder !== undefined && folder !== "" && (file === folder || file.startsWith(folder + "/") || file.startsWith(folder + "\\"));
}

const RESTRICTED = "is inside the workspace folder, which is not trusted: not run in Restricted Mode";
const RESTRICTED_FIX = "Trust the workspace (Workspaces: Manage Workspace Trust) if you trust its files, or use a Takeback installed outside it.";

function commandSetting(settings: ServerSettings, probes: Probes, steps: string[]): Resolution {
  const wanted = expandPath(settings.command, probes.home, probes.workspaceFolder);
  const found = probes.which(wanted);
  if (found && restricted(found, probes)) {
    steps.push(`takeback.server.command = ${JSON.stringify(settings.command)}: ${found} ${RESTRICTED}`);
    return { ok: false, steps, problem: `The setting takeback.server.command names ${found}, which ${RESTRICTED}.`, fix: RESTRICTED_FIX };
  }
  if (found) {
    steps.push(`takeback.server.command = ${JSON.stringify(settings.command)}: using ${found}`);
    return { ok: true, server: { source: "setting:command", command: found, args: serveArgs(settings) }, steps };
  }
  steps.push(`takeback.server.command = ${JSON.stringify(settings.command)}: ${wanted} is not an executable file`);
  return {
    ok: false,
    steps,
    problem: `The setting takeback.server.command points to ${wanted}, which is not an executable file.`,
    fix: "Fix or clear `takeback.server.command` (it should be the path of the `takeback` executable).",
  };
}

/** The `takeback.server.python` setting: its own Takeback if it has one, else the bundled copy run by it. */
function pythonSetting(settings: ServerSettings, probes: Probes, steps: string[]): Resolution {
  const setting = `takeback.server.python = ${JSON.stringify(settings.python)}`;
  const wanted = expandPath(settings.python, probes.home, probes.workspaceFolder);
  const found = probes.which(wanted);
  if (found && restricted(found, probes)) {
    steps.push(`${setting}: ${found} ${RESTRICTED}`);
    return { ok: false, steps, problem: `The setting takeback.server.python names ${found}, which ${RESTRICTED}.`, fix: RESTRICTED_FIX };
  }
  const problem = found ? probes.pythonProblem(found) : `${wanted} is not an executable file`;
  if (found && !problem) {
    steps.push(`${setting}: using ${found} -m takeback`);
    return { ok: true, server: { source: "setting:python", command: found, args: ["-m", "takeback", ...serveArgs(settings)] }, steps };
  }
  steps.push(`${setting}: ${problem}`);
  const bundleProblem = found && probes.bundle ? probes.bundleProblem(found) : undefined;
  if (found && probes.bundle && !bundleProblem) {
    steps.push(`${setting}: using it to run the bundled Takeback`);
    return { ok: true, server: { source: "bundled", command: found, args: bundledArgs(probes.bundle, settings) }, steps };
  }
  if (bundleProblem) {
    steps.push(`${setting}: the bundled Takeback: ${bundleProblem}`);
  }
  return {
    ok: false,
    steps,
    problem: `The setting takeback.server.python (${wanted}) cannot run Takeback: ${bundleProblem ?? problem}.`,
    fix: probes.bundle
      ? "Set `takeback.server.python` to a Python 3.11 or newer, or clear it (the extension then looks for `python3` on PATH)."
      : `Install Takeback into that interpreter from a clone of it (\`${wanted} -m pip install PATH-TO-THE-CLONE\`) or fix \`takeback.server.python\`.`,
  };
}

/** The bundled copy, run by the first of `python3` and `python` on PATH that can run it. */
function bundled(settings: ServerSettings, probes: Probes, steps: string[]): Resolution | undefined {
  if (!probes.bundle) {
    steps.push("bundled Takeback: not in this build of the extension");
    return undefined;
  }
  const tried = new Set<string>();
  for (const name of ["python3", "python"]) {
    const python = probes.which(name);
    if (!python) {
      steps.push(`${name} on PATH: not found`);
    } else if (tried.has(python)) {
      continue;
    } else if (restricted(python, probes)) {
      steps.push(`${name} on PATH: ${python} ${RESTRICTED}`);
    } else {
      tried.add(python);
      const problem = probes.bundleProblem(python);
      if (!problem) {
        steps.push(`bundled Takeback: run by ${python}`);
        return { ok: true, server: { source: "bundled", command: python, args: bundledArgs(probes.bundle, settings) }, steps };
      }
      steps.push(`${name} on PATH: ${python}: ${problem}`);
    }
  }
  return undefined;
}

export function resolveServer(settings: ServerSettings, probes: Probes): Resolution {
  const steps: string[] = [];
  if (settings.command.trim()) {
    return commandSetting(settings, probes, steps);
  }
  steps.push("takeback.server.command: not set");
  if (settings.python.trim()) {
    return pythonSetting(settings, probes, steps);
  }
  steps.push("takeback.server.python: not set");

  const onPath = probes.which("takeback");
  if (onPath && !restricted(onPath, probes)) {
    steps.push(`takeback on PATH: ${onPath}`);
    return { ok: true, server: { source: "path", command: onPath, args: serveArgs(settings) }, steps };
  }
  steps.push(onPath ? `takeback on PATH: ${onPath} ${RESTRICTED}` : "takeback on PATH: not found");

  const fromBundle = bundled(settings, probes, steps);
  if (fromBundle) {
    return fromBundle;
  }
  const fix = probes.bundle ? PYTHON_FIX : INSTALL_FIX;
  return {
    ok: false,
    steps,
    problem: probes.bundle
      ? `The Takeback language server could not start: no setting, no \`takeback\` on PATH, and no Python 3.11 or newer to run the Takeback bundled with this extension (${steps.slice(3).join("; ")}).`
      : "The Takeback language server was not found: no setting, no `takeback` on PATH, and this build of the extension has no bundled copy.",
    fix: steps.some((step) => step.endsWith(RESTRICTED)) ? `${RESTRICTED_FIX} ${fix}` : fix,
  };
}

export type StderrLevel = "drop" | "debug" | "info" | "warn" | "error";

const LOG_LINE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:,\d+)? (DEBUG|INFO|WARNING|ERROR|CRITICAL) ([\w.]+): (.*)$/;

/**
 * How a line the server wrote on stderr goes into the output channel. The server logs each of
 * its own records on stderr AND as window/logMessage: once the client runs, its `takeback.*`
 * records on stderr are duplicates and are dropped. Everything else keeps its level; lines that
 * are not log records (a traceback, a crash before the connection) are errors.
 */
export function classifyStderr(line: string, running: boolean): { level: StderrLevel; text: string } {
  const m = LOG_LINE.exec(line);
  if (!m) {
    return { level: line.trim() ? "error" : "drop", text: line };
  }
  const [, levelName, logger = "", message] = m;
  if (running && (logger === "takeback" || logger.startsWith("takeback."))) {
    return { level: "drop", text: line };
  }
  const level: StderrLevel = levelName === "DEBUG" ? "debug" : levelName === "INFO" ? "info" : levelName === "WARNING" ? "warn" : "error";
  return { level, text: `${logger}: ${message}` };
}
