/**
 * Owns the language client's life: find the server, start it, restart it when its settings
 * change, stop it on deactivate. Exactly one client per window (vscode-languageclient registers
 * the server's `takeback.*` commands, and a second client would clash with them).
 *
 * Everything else talks to the server through `request`, which waits for a starting server. A
 * server that speaks another protocol version (model/version.ts) is stopped at once, with one
 * error, and gets no request until the person restarts it (Restart Server, a settings change).
 */
import * as readline from "readline";
import type { Readable } from "stream";
import * as vscode from "vscode";
import type * as lsp from "vscode-languageclient";
import {
  LanguageClient,
  LanguageClientOptions,
  RequestType,
  ResponseError,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import { blameHover, saveEditedFiles } from "./config";
import * as ext from "./lspExt";
import { log, showLogs } from "./logger";
import { touchedUris } from "./model/edits";
import { classifyStderr } from "./model/resolve";
import { versionProblem } from "./model/version";
import { findServer, SAFE_PYTHON_ENV } from "./serverResolve";

/** The commands the server's line blame hover links to (server/takeback/lsp/blame.py). */
export const HOVER_COMMANDS = ["takeback.showTurnDiff", "takeback.revertTurn"] as const;

export type ServerState = "stopped" | "starting" | "running" | "failed";

export class ServerContext implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<boolean> | undefined;
  private _state: ServerState = "stopped";
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly timelineEmitter = new vscode.EventEmitter<ext.TimelineChangedParams | undefined>();
  private readonly disposables: vscode.Disposable[] = [];
  private lastProblem: string | undefined;
  /** Set when the server spoke another protocol version: no start (and no request) until restart(). */
  private refused = false;

  /** Takes over a server command (answer a promise), or leaves it to the server (undefined). */
  commandInterceptor: ((command: string, args: unknown[]) => Promise<unknown> | undefined) | undefined;

  /** Fires on every state change of the server. */
  readonly onDidChangeState = this.stateEmitter.event;
  /** Fires when the server says the timeline changed (and after this client's own operations). */
  readonly onDidChangeTimeline = this.timelineEmitter.event;

  constructor(private readonly extensionContext: vscode.ExtensionContext) {}

  get state(): ServerState {
    return this._state;
  }

  /** Why the server is not running, when it failed. */
  get problem(): string | undefined {
    return this.lastProblem;
  }

  private setState(state: ServerState): void {
    if (state !== this._state) {
      this._state = state;
      void vscode.commands.executeCommand("setContext", "takeback.serverState", state);
      this.stateEmitter.fire(state);
    }
  }

  /** Start the server once; concurrent callers share the same attempt. */
  start(): Promise<boolean> {
    if (this.client && this._state === "running") {
      return Promise.resolve(true);
    }
    if (this.refused) {
      return Promise.resolve(false);
    }
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<boolean> {
    this.setState("starting");
    const resolution = findServer();
    if (!resolution.ok) {
      this.lastProblem = `${resolution.problem} ${resolution.fix}`;
      this.setState("failed");
      void this.offerFix(resolution.problem, resolution.fix);
      return false;
    }
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = {
      command: resolution.server.command,
      // No `transport`: with TransportKind.stdio the client would append `--stdio` to the args.
      args: resolution.server.args,
      options: { cwd: folder, env: { ...process.env, ...SAFE_PYTHON_ENV, PYTHONUNBUFFERED: "1" } },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file document: the server needs what the editor shows (unsaved edits included)
      // for any file an agent or a revert may touch.
      documentSelector: [{ scheme: "file" }],
      // Hook failures get this extension's own warning (hookFailures.ts), with a button. The
      // line blame hover links to commands (VS Code runs `command:` links), trusted below.
      initializationOptions: { hookFailureMessages: false, hover: blameHover(), hoverCommandLinks: true },
      // Only the two commands the hover links to may run from the server's Markdown.
      markdown: { isTrusted: { enabledCommands: [...HOVER_COMMANDS] } },
      outputChannel: log(),
      traceOutputChannel: log(),
      stdioOptions: {
        stdout: (input) => lines(input, (line) => log().info(line)),
        stderr: (input) => lines(input, (line) => this.stderrLine(line)),
      },
      middleware: {
        // The server's commands (its code actions use them) go through the same preview,
        // confirmation and outcome as the palette's, when the extension says how.
        executeCommand: async (command, args, next) => {
          const result: unknown = await (this.commandInterceptor?.(command, args) ?? next(command, args));
          return result;
        },
        workspace: {
          handleApplyEdit: async (params, next) => {
            // Documents without unsaved changes before a Takeback edit are saved after it, so the
            // disk holds what the timeline says; the person's unsaved documents stay unsaved.
            const dirtyBefore = new Set(vscode.workspace.textDocuments.filter((d) => d.isDirty).map((d) => d.uri.toString()));
            const result = await next(params, new vscode.CancellationTokenSource().token);
            if (result && !(result instanceof ResponseError) && result.applied && saveEditedFiles()) {
              await saveTouched(params.edit, dirtyBefore);
            }
            return result;
          },
        },
      },
    };
    const client = new LanguageClient("takeback", "Takeback", serverOptions, clientOptions);
    this.client = client;
    this.disposables.push(
      client.onDidChangeState((e) => {
        if (this.client !== client) {
          return;
        }
        if (e.newState === State.Running) {
          // While starting, doStart says "running" itself, once the protocol version is checked.
          if (this._state !== "starting") {
            this.setState("running");
          }
        } else if (e.newState === State.Stopped) {
          this.setState(this._state === "starting" ? "failed" : "stopped");
          this.timelineEmitter.fire(undefined);
        }
      }),
      client.onNotification(ext.timelineChanged, (params) => this.timelineEmitter.fire(params)),
    );
    try {
      await client.start();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.lastProblem = `The Takeback server (${resolution.server.command}) did not start: ${message}`;
      log().error(this.lastProblem);
      this.setState("failed");
      void this.offerFix(this.lastProblem, "See the Takeback log for the server's output.");
      return false;
    }
    const mismatch = versionProblem(client.initializeResult, resolution.server.command);
    if (mismatch) {
      await this.refuse(client, mismatch);
      return false;
    }
    this.lastProblem = undefined;
    this.setState("running");
    log().info(`Server running (${client.initializeResult?.serverInfo?.name ?? "takeback"} ${client.initializeResult?.serverInfo?.version ?? ""})`.trim());
    this.timelineEmitter.fire(undefined);
    return true;
  }

  /** The server speaks another protocol: stop it before any request, and say so once. */
  private async refuse(client: LanguageClient, mismatch: { problem: string; fix: string }): Promise<void> {
    this.refused = true;
    this.lastProblem = `${mismatch.problem} ${mismatch.fix}`;
    log().error(this.lastProblem);
    this.client = undefined;
    try {
      await client.stop(5000);
    } catch (error) {
      log().warn(`Stopping the server: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.setState("failed");
    void this.offerFix(mismatch.problem, mismatch.fix);
  }

  private stderrLine(line: string): void {
    const { level, text } = classifyStderr(line, this._state === "running");
    if (level !== "drop") {
      log()[level](`[server] ${text}`);
    }
  }

  private async offerFix(problem: string, fix: string): Promise<void> {
    // Notifications show no Markdown: `code` becomes 'code'.
    const text = `Takeback: ${problem} ${fix}`.replace(/`([^`]*)`/g, "'$1'");
    const choice = await vscode.window.showErrorMessage(text, "Show Logs", "Open Settings", "Restart Server");
    if (choice === "Show Logs") {
      showLogs();
    } else if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "takeback.server");
    } else if (choice === "Restart Server") {
      await this.restart();
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        log().warn(`Stopping the server: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.setState("stopped");
    this.timelineEmitter.fire(undefined);
  }

  async restart(): Promise<boolean> {
    log().info("Restarting the Takeback server");
    this.refused = false;
    await this.stop();
    return this.start();
  }

  /** Send a Takeback request (starting the server if needed). */
  async request<P, R>(type: RequestType<P, R, void>, params: P, token?: vscode.CancellationToken): Promise<R> {
    if (!(await this.start()) || !this.client) {
      throw new TakebackUnavailable(this.lastProblem ?? "the Takeback server is not running");
    }
    // Pass the token only when there is one: vscode-jsonrpc counts an `undefined` argument as a
    // second parameter and would send the params by position, as an array.
    return token ? await this.client.sendRequest<R>(type.method, params, token) : await this.client.sendRequest<R>(type.method, params);
  }

  /** Ask the views to refetch (after an operation this client ran). */
  notifyChanged(): void {
    this.timelineEmitter.fire(undefined);
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) {
      d.dispose();
    }
    this.stateEmitter.dispose();
    this.timelineEmitter.dispose();
  }

  get extensionUri(): vscode.Uri {
    return this.extensionContext.extensionUri;
  }
}

export class TakebackUnavailable extends Error {}

function lines(input: Readable, onLine: (line: string) => void): void {
  readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on("line", onLine);
}

async function saveTouched(edit: { changes?: Record<string, unknown>; documentChanges?: unknown[] }, dirtyBefore: Set<string>): Promise<void> {
  const uris = new Set<string>(touchedUris(edit as lsp.WorkspaceEdit).map((u) => vscode.Uri.parse(u).toString()));
  for (const doc of vscode.workspace.textDocuments) {
    const key = doc.uri.toString();
    if (uris.has(key) && doc.isDirty && !dirtyBefore.has(key)) {
      try {
        await doc.save();
      } catch (error) {
        log().warn(`Could not save ${doc.uri.fsPath}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
