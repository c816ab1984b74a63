/**
 * Takeback for VS Code: wiring only. The server's life is ctx.ts, the panel timelineView.ts,
 * commands commands.ts (destructive ones via operations.ts), diff documents content.ts, "Revert This
 * Change" on a diff view's hunks hunkActions.ts, the line blame annotation lineBlame.ts, hook failures hookFailures.ts, the agent API api.ts, and the protocol mirror lspExt.ts. Everything shown comes from the server.
 */
import * as vscode from "vscode";
import { createApi, TakebackApi } from "./api";
import { registerCommands } from "./commands";
import { affectsServer } from "./config";
import { TakebackContentProvider } from "./content";
import { ServerContext } from "./ctx";
import { HookFailures } from "./hookFailures";
import { HunkActions } from "./hunkActions";
import { LineBlame } from "./lineBlame";
import { createLogger, log } from "./logger";
import { operationFromServerCommand } from "./model/args";
import { runOperation } from "./operations";
import { TurnStatusBar } from "./statusBar";
import { TimelineModel, TimelineTreeProvider } from "./timelineView";

let server: ServerContext | undefined;

export type { TakebackApi } from "./api";

export function activate(context: vscode.ExtensionContext): TakebackApi {
  context.subscriptions.push(createLogger());
  log().info(`Takeback ${(context.extension.packageJSON as { version?: string }).version ?? ""} activating`);
  void vscode.commands.executeCommand("setContext", "takeback.serverState", "starting");

  const ctx = new ServerContext(context);
  server = ctx;
  const model = new TimelineModel(ctx);
  const tree = new TimelineTreeProvider(model);
  const view = vscode.window.createTreeView("takeback.timeline", { treeDataProvider: tree, showCollapseAll: true });
  const content = new TakebackContentProvider(ctx);
  const failures = new HookFailures(context.workspaceState, model, content);
  const changed = new vscode.EventEmitter<void>();
  const api = createApi(ctx, changed.event);

  context.subscriptions.push(
    ctx,
    model,
    tree,
    view,
    content,
    changed,
    model.onDidChange(() => changed.fire()),
    failures,
    new TurnStatusBar(ctx, model, failures),
    new HunkActions(ctx, content),
    new LineBlame(ctx, view, tree),
    ...registerCommands({ ctx, model, content, api }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsServer(e)) {
        void ctx.restart();
      } else if (e.affectsConfiguration("takeback.timeline")) {
        model.scheduleRefresh();
      }
    }),
    // Trusting the workspace lets its own takeback.server.* settings (and programs inside it) count.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void ctx.restart()),
    view.onDidChangeVisibility((e) => e.visible && model.scheduleRefresh()),
    vscode.window.onDidChangeWindowState((e) => e.focused && model.scheduleRefresh(300)),
  );

  ctx.commandInterceptor = (command, args) => {
    const spec = operationFromServerCommand(command, args);
    if (!spec) {
      return undefined;
    }
    const folder = spec.folder ?? vscode.workspace.workspaceFolders?.[0]?.uri.toString() ?? "";
    return runOperation(ctx, content, { ...spec, folder });
  };

  // Start in the background: activation (and the API) must not wait for the server.
  void ctx.start();
  return api;
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
