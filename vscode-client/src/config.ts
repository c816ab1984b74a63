/** Typed access to the `takeback.*` settings (package.json documents each). */
import * as vscode from "vscode";
import type { ServerSettings } from "./model/resolve";

const SECTION = "takeback";

export function serverSettings(): ServerSettings {
  const c = vscode.workspace.getConfiguration(SECTION);
  return {
    command: c.get<string>("server.command", "") ?? "",
    python: c.get<string>("server.python", "") ?? "",
    logLevel: c.get<string>("server.logLevel", "INFO") ?? "INFO",
  };
}

/** Whether the server's hover says who wrote a line (passed at start: `initializationOptions.hover`). */
export function blameHover(): boolean {
  return vscode.workspace.getConfiguration(SECTION).get<boolean>("blame.hover", true);
}

export function confirmDestructive(): boolean {
  return vscode.workspace.getConfiguration(SECTION).get<boolean>("confirmDestructive", true);
}

export function saveEditedFiles(): boolean {
  return vscode.workspace.getConfiguration(SECTION).get<boolean>("saveEditedFiles", true);
}

export function pageSize(): number {
  const n = vscode.workspace.getConfiguration(SECTION).get<number>("timeline.pageSize", 100);
  return Math.min(1000, Math.max(5, Math.floor(n || 100)));
}

/** Did a configuration change touch the settings that decide how the server starts? */
export function affectsServer(event: vscode.ConfigurationChangeEvent): boolean {
  return event.affectsConfiguration(`${SECTION}.server`) || event.affectsConfiguration(`${SECTION}.blame.hover`);
}

/** Whether the panel lists empty turns (prompts that changed no file); default: counted in one row. */
export function showEmptyTurns(): boolean {
  return vscode.workspace.getConfiguration(SECTION).get<boolean>("timeline.showEmptyTurns", false);
}

export async function setShowEmptyTurns(show: boolean): Promise<void> {
  await vscode.workspace.getConfiguration(SECTION).update("timeline.showEmptyTurns", show, vscode.ConfigurationTarget.Global);
}
