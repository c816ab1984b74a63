/**
 * Failures agents' hooks logged, in the editor: a warning notification when a new one arrives
 * (the server announces it with `takeback/timelineChanged`, reason `hook-failure`, and the panel's
 * refresh reads each folder's status), "Takeback: Show Hook Failures" (every folder's log as a
 * read-only document), and which failures the person has seen (kept in the workspace state, so
 * the status bar's warning stays until they look). The wording is model/failures.ts.
 */
import * as path from "path";
import * as vscode from "vscode";
import type { TakebackContentProvider } from "./content";
import { log } from "./logger";
import { FAILURE_LOG, failureReport, FolderFailures, formatFailureLog, unseenFailures } from "./model/failures";
import type { TimelineModel } from "./timelineView";

const SEEN_KEY = "takeback.seenHookFailures";
const SHOW = "Show Hook Failures";

export class HookFailures implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[];
  /** The status bar re-renders when the person has seen the failures. */
  readonly onDidChange = this.emitter.event;

  constructor(
    private readonly state: vscode.Memento,
    private readonly model: TimelineModel,
    private readonly content: TakebackContentProvider,
  ) {
    this.disposables = [
      model.onDidLogHookFailures((fresh) => void this.notify(fresh)),
      vscode.commands.registerCommand("takeback.showHookFailures", () => this.show()),
    ];
  }

  /** Folders with failures the person has not looked at yet. */
  unseen(): FolderFailures[] {
    return unseenFailures(this.model.timelines, this.state.get<Record<string, string>>(SEEN_KEY, {}));
  }

  private async notify(fresh: FolderFailures[]): Promise<void> {
    const multiRoot = this.model.timelines.length > 1;
    const where = (f: FolderFailures) => (multiRoot ? ` in ${f.name}` : "");
    const text = fresh.map((f) => `an agent's hook failed to record${where(f)} (${f.last})`).join("; ");
    log().warn(`Hook failure: ${text}`);
    const choice = await vscode.window.showWarningMessage(`Takeback: ${text}. Turns or steps may be missing from the timeline.`, SHOW);
    if (choice === SHOW) {
      await this.show();
    }
  }

  /** Every folder's failure log in one read-only document; they count as seen. */
  async show(): Promise<void> {
    const folders = this.model.timelines.filter((t) => (t.hookFailures ?? 0) > 0 && t.store);
    if (!folders.length) {
      void vscode.window.showInformationMessage("Takeback: agents' hooks have logged no failure.");
      return;
    }
    const sections = await Promise.all(
      folders.map(async (t) => {
        const file = path.join(t.store as string, FAILURE_LOG);
        try {
          const bytes = await vscode.workspace.fs.readFile(vscode.Uri.file(file));
          return { name: t.name, path: file, lines: formatFailureLog(Buffer.from(bytes).toString("utf8")) };
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          return { name: t.name, path: file, lines: t.lastHookFailure ? [t.lastHookFailure] : [], error: message };
        }
      }),
    );
    const doc = await vscode.workspace.openTextDocument(this.content.preview("hook-failures.md", failureReport(sections)));
    await vscode.window.showTextDocument(doc, { preview: true });
    const seen = { ...this.state.get<Record<string, string>>(SEEN_KEY, {}) };
    for (const t of folders) {
      seen[t.folder] = t.lastHookFailure ?? "";
    }
    await this.state.update(SEEN_KEY, seen);
    this.emitter.fire();
  }

  dispose(): void {
    this.emitter.dispose();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
