/**
 * Which command starts the Takeback language server, decided in a fixed order and logged step by
 * step: the `takeback.server.command` setting, the `takeback.server.python` setting, `takeback`
 * on PATH, then `python3 -m takeback`. A setting that is set but does not work is an error (it
 * is never silently skipped: the person asked for it). In Restricted Mode (a workspace that is
 * not trusted) no program inside the workspace folder is run, whichever way it was found: the
 * repository is not trusted. Pure module: the probes are injected.
 */

export interface ServerSettings {
  command: string;
  python: string;
  logLevel: string;
}

export interface Probes {
  /** The absolute path of an executable file, or undefined (`name` may be a bare name: search PATH). */
  which(name: string): string | undefined;
  /** Can `python` import the `takeback` package? Undefined when it can, else why not. */
  pythonProblem(python: string): string | undefined;
  home: string;
  workspaceFolder?: string;
  /** Whether the workspace is trusted (false: Restricted Mode). */
  trusted: boolean;
}

export type ServerSource = "setting:command" | "setting:python" | "path" | "python3";

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

const INSTALL_FIX =
  "Takeback is not published as a package: in a clone of it, `./scripts/setup.sh` makes `.venv/bin/takeback`; " +
  "put that on PATH, or set `takeback.server.command` to it, or `takeback.server.python` to a Python that has Takeback.";

/** Whether `file` is inside the workspace folder while the workspace is not trusted. */
function restricted(file: string, probes: Probes): boolean {
  const folder = probes.workspaceFolder?.replace(/[\\/]+$/, "");
  return !probes.trusted && folder !== undefined && folder !== "" && (file === folder || file.startsWith(folder + "/") || file.startsWith(folder + "\\"));
}

const RESTRICTED = "is inside the workspace folder, which is not trusted: not run in Restricted Mode";
const RESTRICTED_FIX = "Trust the workspace (Workspaces: Manage Workspace Trust) if you trust its files, or use a Takeback installed outside it.";

export function resolveServer(settings: ServerSettings, probes: Probes): Resolution {
  const steps: string[] = [];
  const serve = serveArgs(settings);

  if (settings.command.trim()) {
    const wanted = expandPath(settings.command, probes.home, probes.workspaceFolder);
    const found = probes.which(wanted);
    if (found && restricted(found, probes)) {
      steps.push(`takeback.server.command = ${JSON.stringify(settings.command)}: ${found} ${RESTRICTED}`);
      return { ok: false, steps, problem: `The setting takeback.server.command names ${found}, which ${RESTRICTED}.`, fix: RESTRICTED_FIX };
    }
    if (found) {
      steps.push(`takeback.server.command = ${JSON.stringify(settings.command)}: using ${found}`);
      return { ok: true, server: { source: "setting:command", command: found, args: serve }, steps };
    }
    steps.push(`takeback.server.command = ${JSON.stringify(settings.command)}: ${wanted} is not an executable file`);
    return {
      ok: false,
      steps,
      problem: `The setting takeback.server.command points to ${wanted}, which is not an executable file.`,
      fix: "Fix or clear `takeback.server.command` (it should be the path of the `takeback` executable).",
    };
  }
  steps.push("takeback.server.command: not set");

  if (settings.python.trim()) {
    const wanted = expandPath(settings.python, probes.home, probes.workspaceFolder);
    const found = probes.which(wanted);
    if (found && restricted(found, probes)) {
      steps.push(`takeback.server.python = ${JSON.stringify(settings.python)}: ${found} ${RESTRICTED}`);
      return { ok: false, steps, problem: `The setting takeback.server.python names ${found}, which ${RESTRICTED}.`, fix: RESTRICTED_FIX };
    }
    const problem = found ? probes.pythonProblem(found) : `${wanted} is not an executable file`;
    if (found && !problem) {
      steps.push(`takeback.server.python = ${JSON.stringify(settings.python)}: using ${found} -m takeback`);
      return { ok: true, server: { source: "setting:python", command: found, args: ["-m", "takeback", ...serve] }, steps };
    }
    steps.push(`takeback.server.python = ${JSON.stringify(settings.python)}: ${problem}`);
    return {
      ok: false,
      steps,
      problem: `The setting takeback.server.python (${wanted}) cannot run Takeback: ${problem}.`,
      fix: `Install Takeback into that interpreter from a clone of it (\`${wanted} -m pip install PATH-TO-THE-CLONE\`) or fix \`takeback.server.python\`.`,
    };
  }
  steps.push("takeback.server.python: not set");

  const onPath = probes.which("takeback");
  if (onPath && !restricted(onPath, probes)) {
    steps.push(`takeback on PATH: ${onPath}`);
    return { ok: true, server: { source: "path", command: onPath, args: serve }, steps };
  }
  steps.push(onPath ? `takeback on PATH: ${onPath} ${RESTRICTED}` : "takeback on PATH: not found");

  const python3 = probes.which("python3");
  if (python3 && restricted(python3, probes)) {
    steps.push(`python3 on PATH: ${python3} ${RESTRICTED}`);
  } else if (python3) {
    const problem = probes.pythonProblem(python3);
    if (!problem) {
      steps.push(`python3 -m takeback: ${python3} has the takeback package`);
      return { ok: true, server: { source: "python3", command: python3, args: ["-m", "takeback", ...serve] }, steps };
    }
    steps.push(`python3 -m takeback: ${problem}`);
  } else {
    steps.push("python3 on PATH: not found");
  }
  return {
    ok: false,
    steps,
    problem: "The Takeback language server was not found: no setting, no `takeback` on PATH, and python3 has no takeback package.",
    fix: steps.some((step) => step.endsWith(RESTRICTED)) ? `${RESTRICTED_FIX} ${INSTALL_FIX}` : INSTALL_FIX,
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
