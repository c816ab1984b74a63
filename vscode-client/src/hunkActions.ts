/**
 * "Revert This Change" on each hunk of a turn's (or a step's) diff view. The right side of that
 * view is a `takeback:` document (content.ts); for each of them shown, the server's hunks of the
 * change (`takeback/hunks`) get a label at the end of their first line, and hovering the hunk
 * offers the action as a link; the editor's context menu runs it on the hunk at the cursor.
 * The action is a revert of that one hunk (model/hunks.ts), through operations.ts like any
 * revert: preview, confirmation, conflicts, outcome.
 *
 * Why not a CodeLens, or VS Code's diff gutter menu: the `diffEditor/gutter/hunk` menu is a
 * proposed API (`contribDiffEditorGutterToolBarMenus`), which an installed extension may not use,
 * and VS Code shows no CodeLens in diff editors unless the person turns `diffEditor.codeLens` on.
 * Decorations and hovers show in every diff editor.
 */
import * as vscode from "vscode";
import type { TakebackContentProvider } from "./content";
import type { ServerContext } from "./ctx";
import { folderParam } from "./folders";
import * as ext from "./lspExt";
import { log } from "./logger";
import { actionDetail, actionLabel, actionLine, hunkRevert, REVERT_HUNK_TITLE } from "./model/hunks";
import { parseContentUri, SCHEME } from "./model/uris";
import { runOperation } from "./operations";

export const REVERT_HUNK_COMMAND = "takeback.revertHunk";

/** The right side's ref, or undefined for any other document. */
function resultRef(uri: vscode.Uri) {
  if (uri.scheme !== SCHEME) {
    return undefined;
  }
  try {
    const ref = parseContentUri(uri.query);
    return ref.side === "after" && ref.uri ? ref : undefined;
  } catch {
    return undefined;
  }
}

export class HunkActions implements vscode.Disposable {
  /** The hunks of each right side shown (a recorded change never changes: kept while open). */
  private readonly hunks = new Map<string, Promise<ext.HunkRange[]>>();
  private readonly decoration = vscode.window.createTextEditorDecorationType({
    after: { margin: "0 0 0 3em", color: new vscode.ThemeColor("editorCodeLens.foreground") },
  });
  private readonly registrations: vscode.Disposable[];

  constructor(
    private readonly ctx: ServerContext,
    private readonly preview: TakebackContentProvider,
  ) {
    this.registrations = [
      this.decoration,
      vscode.window.onDidChangeVisibleTextEditors((editors) => void this.decorate(editors)),
      vscode.workspace.onDidCloseTextDocument((doc) => this.hunks.delete(doc.uri.toString())),
      ctx.onDidChangeState(() => {
        this.hunks.clear();
        void this.decorate(vscode.window.visibleTextEditors);
      }),
      vscode.commands.registerCommand(REVERT_HUNK_COMMAND, (arg?: unknown) => this.revert(arg)),
    ];
    void this.decorate(vscode.window.visibleTextEditors);
  }

  private hunksOf(uri: vscode.Uri): Promise<ext.HunkRange[]> {
    const key = uri.toString();
    let found = this.hunks.get(key);
    const ref = resultRef(uri);
    if (!found && ref?.uri) {
      found = this.ctx
        .request(ext.hunks, { turnId: ref.turnId, uri: ref.uri, ...(ref.step ? { step: ref.step } : {}), ...folderParam(ref.folder) })
        .then((r) => r.hunks);
      found.catch(() => this.hunks.delete(key));
      this.hunks.set(key, found);
    }
    return found ?? Promise.resolve([]);
  }

  private async decorate(editors: readonly vscode.TextEditor[]): Promise<void> {
    for (const editor of editors) {
      const uri = editor.document.uri;
      if (!resultRef(uri)) {
        continue;
      }
      try {
        const hunks = await this.hunksOf(uri);
        editor.setDecorations(this.decoration, hunks.map((h) => this.option(editor.document, h)));
      } catch (error) {
        log().warn(`The hunks of ${uri.path}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private option(doc: vscode.TextDocument, hunk: ext.HunkRange): vscode.DecorationOptions {
    const line = Math.min(actionLine(hunk), Math.max(doc.lineCount - 1, 0));
    const args = encodeURIComponent(JSON.stringify([{ uri: doc.uri.toString(), line: hunk.line }]));
    const ref = resultRef(doc.uri);
    const hover = new vscode.MarkdownString(
      `[$(discard) ${REVERT_HUNK_TITLE}](command:${REVERT_HUNK_COMMAND}?${args})${ref ? `\n\n${actionDetail(ref)}` : ""}`,
      true,
    );
    hover.isTrusted = { enabledCommands: [REVERT_HUNK_COMMAND] };
    return {
      range: doc.lineAt(line).range,
      hoverMessage: hover,
      renderOptions: { after: { contentText: actionLabel(hunk) } },
    };
  }

  /** The action: from a hover's link (`{uri, line}`), or on the hunk at the cursor (the context
   * menu passes the document's URI; the palette nothing). */
  private async revert(arg?: unknown): Promise<ext.OperationResult | undefined> {
    let uri: vscode.Uri | undefined;
    let line: number | undefined;
    if (arg && typeof arg === "object" && typeof (arg as { uri?: unknown }).uri === "string") {
      const given = arg as { uri: string; line?: unknown };
      uri = vscode.Uri.parse(given.uri);
      line = typeof given.line === "number" ? given.line : undefined;
    }
    const editor = vscode.window.activeTextEditor;
    if (!uri || line === undefined) {
      const wanted = arg instanceof vscode.Uri ? arg.toString() : undefined;
      const shown = wanted ? vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === wanted) : editor;
      uri = shown?.document.uri;
      line = shown?.selection.active.line;
    }
    const ref = uri ? resultRef(uri) : undefined;
    const op = ref && line !== undefined ? hunkRevert(ref, line) : undefined;
    if (!op) {
      void vscode.window.showInformationMessage(`Takeback: ${REVERT_HUNK_TITLE} works on the right side of a turn's diff view (open a file of a turn in the Agent Timeline).`);
      return undefined;
    }
    return runOperation(this.ctx, this.preview, op);
  }

  dispose(): void {
    for (const r of this.registrations) {
      r.dispose();
    }
    this.hunks.clear();
  }
}
