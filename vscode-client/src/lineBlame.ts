/**
 * Line blame in the editor, GitLens-style: an optional end-of-line annotation on lines an agent
 * wrote (`#12 claude-code · <prompt>`, dimmed; setting `takeback.blame.annotations`: `off` by
 * default, `currentLine` or `allLines`; command "Takeback: Toggle Line Blame"), and the turn of
 * the cursor's line revealed and selected in the timeline panel while the panel is visible.
 * Who wrote a line is asked of the server (`takeback/blame`); the hover is the server's own
 * (`textDocument/hover`). Thin: no rule here, model/blame.ts only words the answer.
 */
import * as vscode from "vscode";
import type { ServerContext } from "./ctx";
import { folderParam } from "./folders";
import { log } from "./logger";
import * as ext from "./lspExt";
import { annotationText, agentOrigin } from "./model/blame";
import type { TreeNode } from "./model/tree";
import type { TimelineTreeProvider } from "./timelineView";

export type AnnotationMode = "off" | "currentLine" | "allLines";
export const TOGGLE_COMMAND = "takeback.toggleLineBlame";
const SETTING = "blame.annotations";

export function annotationMode(): AnnotationMode {
  const value = vscode.workspace.getConfiguration("takeback").get<string>(SETTING, "off");
  return value === "currentLine" || value === "allLines" ? value : "off";
}

export class LineBlame implements vscode.Disposable {
  private readonly decoration = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor("editorCodeLens.foreground"), fontStyle: "italic", margin: "0 0 0 3em" },
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedOpen,
  });
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private generation = 0;
  /** What the last update showed (the extension's tests read it through the command's answer). */
  private shown: { uri: string; lines: Array<{ line: number; text: string }> } | undefined;

  constructor(
    private readonly ctx: ServerContext,
    private readonly view: vscode.TreeView<TreeNode>,
    private readonly tree: TimelineTreeProvider,
  ) {
    this.disposables.push(
      this.decoration,
      vscode.window.onDidChangeTextEditorSelection(() => this.schedule()),
      vscode.window.onDidChangeActiveTextEditor(() => this.schedule(0)),
      vscode.workspace.onDidChangeTextDocument((e) => e.document === vscode.window.activeTextEditor?.document && this.schedule(400)),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration(`takeback.${SETTING}`) && this.schedule(0)),
      ctx.onDidChangeTimeline(() => this.schedule(300)),
      view.onDidChangeVisibility(() => this.schedule(0)),
      vscode.commands.registerCommand(TOGGLE_COMMAND, () => this.toggle()),
    );
  }

  /** Switch the annotation on (the cursor's line) or off; answers what is shown then. */
  async toggle(): Promise<{ mode: AnnotationMode; shown: LineBlame["shown"] }> {
    const mode: AnnotationMode = annotationMode() === "off" ? "currentLine" : "off";
    await vscode.workspace.getConfiguration("takeback").update(SETTING, mode, vscode.ConfigurationTarget.Global);
    if (this.timer) {
      clearTimeout(this.timer); // the settings change scheduled the same update
    }
    let done = this.update(mode);
    await done;
    while (this.latest !== done) {
      done = this.latest; // a later update took over (the cursor moved meanwhile): its answer is what is shown
      await done;
    }
    return { mode, shown: this.shown };
  }

  private schedule(delay = 150): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => void this.update(annotationMode()), delay);
  }

  /** The newest update, as a promise (toggle waits for it). */
  private latest: Promise<void> = Promise.resolve();

  private update(mode: AnnotationMode): Promise<void> {
    this.latest = this.show(mode);
    return this.latest;
  }

  private async show(mode: AnnotationMode): Promise<void> {
    const generation = ++this.generation;
    const editor = vscode.window.activeTextEditor;
    const clear = () => {
      for (const e of vscode.window.visibleTextEditors) {
        e.setDecorations(this.decoration, []);
      }
      this.shown = undefined;
    };
    if (!editor || editor.document.uri.scheme !== "file" || (mode === "off" && !this.view.visible) || this.ctx.state !== "running") {
      clear();
      return;
    }
    const folder = vscode.workspace.getWorkspaceFolder(editor.document.uri);
    if (!folder) {
      clear();
      return;
    }
    const cursor = editor.selection.active.line + 1;
    const whole = mode === "allLines";
    let blame: ext.Blame;
    try {
      blame = await this.ctx.request(ext.blame, {
        uri: editor.document.uri.toString(),
        ...(whole ? {} : { first: cursor, last: cursor }),
        ...folderParam(folder.uri.toString()),
      });
    } catch (error) {
      log().debug(`Line blame: ${error instanceof Error ? error.message : String(error)}`);
      if (generation === this.generation) {
        clear();
      }
      return;
    }
    if (generation !== this.generation || vscode.window.activeTextEditor !== editor) {
      return; // a newer update, or another editor, took over
    }
    const lines = mode === "off" ? [] : blame.lines.flatMap((l) => {
      const text = annotationText(l.origin);
      return text ? [{ line: l.line, text }] : [];
    });
    editor.setDecorations(this.decoration, lines.map(({ line, text }) => {
      const end = editor.document.lineAt(Math.min(line - 1, editor.document.lineCount - 1)).range.end;
      return { range: new vscode.Range(end, end), renderOptions: { after: { contentText: text } } };
    }));
    this.shown = { uri: editor.document.uri.toString(), lines };
    const here = blame.lines.find((l) => l.line === cursor);
    const turn = here ? agentOrigin(here.origin) : undefined;
    if (turn?.entry && this.view.visible) {
      const node = this.tree.turnNode(folder.uri.toString(), turn.entry);
      if (node) {
        await this.view.reveal(node, { select: true, focus: false, expand: false });
      }
    }
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
