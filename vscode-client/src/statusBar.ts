/** The status bar item: the last agent turn (number, files); a click opens the panel. */
import * as vscode from "vscode";
import type { ServerContext } from "./ctx";
import { entryTitle, statusBarText } from "./model/format";
import type { TimelineModel } from "./timelineView";

export class TurnStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("takeback.lastTurn", vscode.StatusBarAlignment.Left, 10);
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly ctx: ServerContext,
    private readonly model: TimelineModel,
  ) {
    this.item.name = "Takeback: last agent turn";
    this.disposables = [model.onDidChange(() => this.render()), ctx.onDidChangeState(() => this.render())];
    this.render();
  }

  private render(): void {
    if (this.ctx.state === "failed") {
      this.item.text = "$(error) Takeback";
      this.item.tooltip = `Takeback's server is not running: ${this.ctx.problem ?? "see the log"}`;
      this.item.command = "takeback.showLogs";
      this.item.show();
      return;
    }
    const latest = this.model.latest();
    if (!latest) {
      this.item.hide();
      return;
    }
    const { entry } = latest;
    this.item.text = `$(history) ${statusBarText(entry)}`;
    this.item.tooltip = `Last agent turn ${entryTitle(entry)} — click to open the Takeback timeline`;
    this.item.command = "takeback.showTimeline";
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
