/** Which workspace folder a command acts on (each folder has its own timeline on the server). */
import * as vscode from "vscode";

export interface FolderInfo {
  uri: string;
  name: string;
}

export function folders(): FolderInfo[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => ({ uri: f.uri.toString(), name: f.name }));
}

/** The `folder` param for a request: omitted with one folder (the server's default). */
export function folderParam(folder: string | undefined): { folder?: string } {
  if (!folder || (vscode.workspace.workspaceFolders?.length ?? 0) <= 1) {
    return {};
  }
  return { folder };
}

/**
 * The folder a command without an explicit one acts on: the given one, else the active editor's,
 * else the only one, else the person picks. Undefined: no folder open, or the pick was cancelled.
 */
export async function chooseFolder(hint?: string): Promise<string | undefined> {
  if (hint) {
    return hint;
  }
  const all = vscode.workspace.workspaceFolders ?? [];
  const [first, ...others] = all;
  if (!first) {
    void vscode.window.showInformationMessage("Takeback: open a folder first; each workspace folder has its own timeline.");
    return undefined;
  }
  if (others.length === 0) {
    return first.uri.toString();
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  const owner = active ? vscode.workspace.getWorkspaceFolder(active) : undefined;
  if (owner) {
    return owner.uri.toString();
  }
  const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder: "Which folder's timeline?" });
  return picked?.uri.toString();
}
