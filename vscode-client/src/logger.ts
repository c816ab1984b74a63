/**
 * The "Takeback" output channel (a LogOutputChannel: levels, timestamps). The language client
 * writes the server's window/logMessage records and traces into the same channel.
 */
import * as vscode from "vscode";

let channel: vscode.LogOutputChannel | undefined;

export function createLogger(): vscode.LogOutputChannel {
  channel ??= vscode.window.createOutputChannel("Takeback", { log: true });
  return channel;
}

export function log(): vscode.LogOutputChannel {
  return createLogger();
}

export function showLogs(): void {
  createLogger().show(true);
}
