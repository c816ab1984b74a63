/**
 * Read-only documents on the `takeback:` scheme: a file as a turn (or one step of it) found it
 * or left it (from `takeback/fileAt`), a turn's patch (`takeback/diff`), or a preview's patch
 * kept in memory.
 * Opening a file of the panel shows VS Code's diff editor over two of these.
 */
import * as vscode from "vscode";
import type { ServerContext } from "./ctx";
import type { Entry, FileChange } from "./lspExt";
import * as ext from "./lspExt";
import { folderParam } from "./folders";
import { ContentRef, contentUri, diffTitle, joinFolderUri, parseContentUri, SCHEME } from "./model/uris";

const PREVIEW_SCHEME = "takeback-preview";

export class TakebackContentProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly previews = new Map<string, string>();
  private previewCounter = 0;
  private readonly registrations: vscode.Disposable[];

  constructor(private readonly ctx: ServerContext) {
    this.registrations = [
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, this),
      vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, {
        provideTextDocumentContent: (uri) => this.previews.get(uri.path) ?? "",
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (doc.uri.scheme === PREVIEW_SCHEME) {
          this.previews.delete(doc.uri.path);
        }
      }),
    ];
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const ref = parseContentUri(uri.query);
    if (ref.side === "patch") {
      const result = await this.ctx.request(ext.diff, { turnId: ref.turnId, ...(ref.uri ? { uri: ref.uri } : {}), ...folderParam(ref.folder) }, token);
      return result.diff || `# turn #${ref.number} changed no text\n`;
    }
    if (!ref.uri) {
      throw new Error("takeback: URI without a file");
    }
    const step = ref.step ? { step: ref.step } : {};
    const result = await this.ctx.request(ext.fileAt, { turnId: ref.turnId, uri: ref.uri, side: ref.side, ...step, ...folderParam(ref.folder) }, token);
    if (!result.exists || result.content == null) {
      return "";
    }
    if (result.encoding === "base64") {
      return `(binary content, ${Buffer.from(result.content, "base64").length} bytes)\n`;
    }
    return result.content;
  }

  /** A read-only document holding `text` (a dry run's patch), named `name`. */
  preview(name: string, text: string): vscode.Uri {
    const path = `/${++this.previewCounter}/${name}`;
    this.previews.set(path, text);
    return vscode.Uri.from({ scheme: PREVIEW_SCHEME, path });
  }

  dispose(): void {
    for (const r of this.registrations) {
      r.dispose();
    }
    this.previews.clear();
  }
}

export function toUri(ref: ContentRef): vscode.Uri {
  return vscode.Uri.from(contentUri(ref));
}

/** The current file in the workspace for a path a turn changed. */
export function workspaceFileUri(folder: string, path: string): vscode.Uri {
  return vscode.Uri.parse(joinFolderUri(folder, path));
}

/** VS Code's diff editor: the file before the turn vs after it. */
export async function openFileDiff(folder: string, entry: Entry, file: FileChange): Promise<void> {
  const fileUri = workspaceFileUri(folder, file.path).toString();
  const beforePath = file.kind === "renamed" && file.oldPath ? file.oldPath : file.path;
  const beforeUri = file.kind === "renamed" && file.oldPath ? workspaceFileUri(folder, file.oldPath).toString() : fileUri;
  const left = toUri({ folder, turnId: entry.id, number: entry.number, side: "before", path: beforePath, uri: beforeUri });
  const right = toUri({ folder, turnId: entry.id, number: entry.number, side: "after", path: file.path, uri: fileUri });
  await vscode.commands.executeCommand("vscode.diff", left, right, diffTitle(entry.number, file.path, file.kind), { preview: true });
}

/** VS Code's diff editor: a file just before step `step` of a turn vs just after it. */
export async function openStepFileDiff(folder: string, entry: Entry, step: number, path: string): Promise<void> {
  const uri = workspaceFileUri(folder, path).toString();
  const side = (s: "before" | "after") => toUri({ folder, turnId: entry.id, number: entry.number, side: s, path, uri, step });
  await vscode.commands.executeCommand("vscode.diff", side("before"), side("after"), diffTitle(entry.number, path, undefined, step), { preview: true });
}

/** A turn's whole patch (or one file's) as a read-only diff document. */
export async function openTurnPatch(folder: string, entry: Entry, path?: string): Promise<void> {
  const uri = toUri({ folder, turnId: entry.id, number: entry.number, side: "patch", path, uri: path ? workspaceFileUri(folder, path).toString() : undefined });
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.languages.setTextDocumentLanguage(doc, "diff");
  await vscode.window.showTextDocument(doc, { preview: true });
}
