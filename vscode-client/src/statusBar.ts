/**
 * The status bar item: the last agent turn (number, files); a click opens the panel. When
 * agents' hooks logged failures the person has not seen, it warns (tooltip: the last failure),
 * and a click shows them.
 */
import * as vscode from "vscode";
import type { ServerContext } from "./ctx";
import type { HookFailures } from "./hookFailures";
import { failureWarning } from "./model/failures";
import { entryTitle, statusBarText } from "./model/format";
import type { TimelineModel } from "./timelineView";

export class TurnStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("takeback.lastTurn", vscode.StatusBarAlignment.Left, 10);
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly ctx: ServerContext,
    private readonly model: TimelineModel,
    private readonly failures: HookFailures,
  ) {
    this.item.name = "Takeback: last agent turn";
    this.disposables = [
      model.onDidChange(() => this.render()),
      ctx.onDidChangeState(() => this.render()),
      failures.onDidChange(() => this.render()),
    ];
    this.render();
  }

  private render(): void {
    this.item.backgroundColor = undefined;
    if (this.ctx.state === "failed") {
      this.item.text = "$(error) Takeback";
      this.item.tooltip = `Takeback's server is not running: ${this.ctx.problem ?? "see the log"}`;
      this.item.command = "takeback.showLogs";
      this.item.show();
      return;
    }
    const latest = this.model.latest();
    const warning = failureWarning(this.failures.unseen(), this.model.timelines.length > 1);
    if (warning) {
      this.item.text = `$(warning) ${latest ? `${statusBarText(latest.entry)} · ` : "Takeback: "}${warning.text}`;
      this.item.tooltip = warning.tooltip;
      this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
      this.item.command = "takeback.showHookFailures";
      this.item.show();
      return;
    }
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
