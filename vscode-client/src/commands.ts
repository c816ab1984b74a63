/**
 * The palette and panel commands, each a small factory over the server's requests. They accept
 * a tree node, an Entry, a turn number / id or nothing (then they ask); model/args.ts reads
 * those. Destructive ones go through operations.ts (dry run, confirmation, conflicts).
 */
import * as vscode from "vscode";
import type { TakebackApi } from "./api";
import { setShowEmptyTurns } from "./config";
import { openFileDiff, openStepFileDiff, openTurnPatch, TakebackContentProvider, workspaceFileUri } from "./content";
import type { ServerContext } from "./ctx";
import { chooseFolder, folderParam } from "./folders";
import * as ext from "./lspExt";
import { showLogs } from "./logger";
import { turnRefFrom } from "./model/args";
import { entryDescription, entryTitle, plural } from "./model/format";
import type { FileNode, MoreNode, StepFileNode, StepNode, TurnNode } from "./model/tree";
import { reportError, runOperation } from "./operations";
import type { TimelineModel } from "./timelineView";

export interface CommandDeps {
  ctx: ServerContext;
  model: TimelineModel;
  content: TakebackContentProvider;
  api: TakebackApi;
}

// A command's handler: VS Code passes whatever the caller gave (a panel node, a palette's
// nothing, another extension's options); each handler declares what it accepts.
type Handler = (...args: never[]) => unknown;

function isTurnNode(arg: unknown): arg is TurnNode {
  return !!arg && typeof arg === "object" && (arg as TurnNode).kind === "turn";
}

function isFileNode(arg: unknown): arg is FileNode {
  return !!arg && typeof arg === "object" && (arg as FileNode).kind === "file";
}

function isStepNode(arg: unknown): arg is StepNode {
  return !!arg && typeof arg === "object" && (arg as StepNode).kind === "step";
}

function isStepFileNode(arg: unknown): arg is StepFileNode {
  return !!arg && typeof arg === "object" && (arg as StepFileNode).kind === "stepFile";
}

/** Entries of a folder for a quick pick: from the panel's data, else fetched. */
async function entriesOf(deps: CommandDeps, folder: string): Promise<ext.Entry[]> {
  const known = deps.model.entries(folder);
  if (known.length) {
    return known;
  }
  const page = await deps.ctx.request(ext.timeline, { limit: 100, ...folderParam(folder) });
  return page.entries;
}

async function pickEntry(
  deps: CommandDeps,
  folder: string,
  title: string,
  filter: (e: ext.Entry) => boolean,
): Promise<ext.Entry | undefined> {
  const entries = (await entriesOf(deps, folder)).filter(filter);
  if (!entries.length) {
    void vscode.window.showInformationMessage("Takeback: no agent turn to choose from yet.");
    return undefined;
  }
  const items = entries.map((entry) => ({
    label: entryTitle(entry),
    description: entryDescription(entry),
    detail: (entry.files ?? []).map((f) => f.path).join(", ") || undefined,
    entry,
  }));
  // The newest agent turn is the likeliest choice: it starts selected (entries come newest first).
  const newest = items.find((i) => i.entry.kind === "turn");
  const pick = vscode.window.createQuickPick<(typeof items)[number]>();
  pick.title = title;
  pick.placeholder = "Type a number, label or file name";
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  pick.items = items;
  if (newest) {
    pick.activeItems = [newest];
  }
  const picked = await new Promise<(typeof items)[number] | undefined>((resolve) => {
    pick.onDidAccept(() => resolve(pick.selectedItems[0] ?? pick.activeItems[0]));
    pick.onDidHide(() => resolve(undefined));
    pick.show();
  });
  pick.dispose();
  return picked?.entry;
}

/** A turn for a command: from its argument, else picked. */
async function resolveEntry(
  deps: CommandDeps,
  arg: unknown,
  title: string,
  filter: (e: ext.Entry) => boolean,
): Promise<{ folder: string; entry: ext.Entry } | undefined> {
  if (isTurnNode(arg) || isFileNode(arg)) {
    return { folder: arg.folder, entry: arg.entry };
  }
  const ref = turnRefFrom(arg);
  const folder = await chooseFolder(ref?.folder);
  if (!folder) {
    return undefined;
  }
  if (ref) {
    const entry = await deps.ctx.request(ext.turn, { turnId: ref.turnId, ...folderParam(folder) });
    return { folder, entry };
  }
  const entry = await pickEntry(deps, folder, title, filter);
  return entry ? { folder, entry } : undefined;
}

const revertable = (e: ext.Entry) => (e.state === "applied" || e.state === "partial" || e.state === "open") && (e.files?.length ?? 0) > 0;

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { ctx, model, content, api } = deps;
  const guard =
    (name: string, handler: Handler): Handler =>
    async (...args: never[]) => {
      try {
        return await handler(...args);
      } catch (error) {
        reportError(name, error);
        return undefined;
      }
    };
  const commands: Record<string, Handler> = {
    "takeback.undoAgentTurn": async (arg?: unknown) => {
      const folder = await chooseFolder(isTurnNode(arg) ? arg.folder : turnRefFrom(arg)?.folder);
      if (!folder) {
        return undefined;
      }
      return runOperation(ctx, content, { kind: "undo", folder, expectTurnId: isTurnNode(arg) ? arg.entry.id : undefined });
    },
    "takeback.redoAgentTurn": async (arg?: unknown) => {
      if (isTurnNode(arg) && arg.actions.redo?.method === "revertTurn") {
        const by = arg.actions.redo.turnId;
        return runOperation(ctx, content, { kind: "revert", folder: arg.folder, turnId: by, what: `#${arg.entry.number} back` });
      }
      const folder = await chooseFolder(isTurnNode(arg) ? arg.folder : undefined);
      if (!folder) {
        return undefined;
      }
      // From the panel: redo only if it would re-apply what that row shows (the operation
      // itself, or the one that undid the turn).
      const expectTurnId = isTurnNode(arg) ? (arg.entry.kind === "turn" ? arg.entry.revertedBy ?? undefined : arg.entry.id) : undefined;
      return runOperation(ctx, content, { kind: "redo", folder, expectTurnId });
    },
    "takeback.revertAgentTurn": async (arg?: unknown) => {
      const target = await resolveEntry(deps, arg, "Revert which agent turn? (later edits are kept)", revertable);
      if (!target) {
        return undefined;
      }
      return runOperation(ctx, content, {
        kind: "revert",
        folder: target.folder,
        turnId: target.entry.id,
        what: entryTitle(target.entry),
      });
    },
    "takeback.restoreCheckpoint": async (arg?: unknown) => {
      let folder: string | undefined;
      let checkpointId: string | undefined;
      let what: string | undefined;
      if (isTurnNode(arg)) {
        folder = arg.folder;
        checkpointId = `#${arg.entry.number}`;
        what = `the end of ${entryTitle(arg.entry)}`;
      } else if (typeof arg === "string" && arg.trim()) {
        folder = await chooseFolder();
        checkpointId = arg.trim();
      } else {
        folder = await chooseFolder();
        if (!folder) {
          return undefined;
        }
        const entries = (await entriesOf(deps, folder)).filter((e) => e.kind === "turn" && (e.checkpoints?.length ?? 0) > 0);
        const items: Array<vscode.QuickPickItem & { id?: string }> = [
          { label: "$(pass) Last green turn", description: "the newest turn whose checks passed", id: "last-green" },
        ];
        for (const entry of entries) {
          items.push({ label: entryTitle(entry), kind: vscode.QuickPickItemKind.Separator });
          const checkpoints = entry.checkpoints ?? [];
          checkpoints.forEach((cp, i) => {
            const last = i === checkpoints.length - 1;
            items.push({
              label: `${last ? "$(debug-stackframe-dot)" : "$(circle-small)"} #${entry.number}.${i + 1}${cp.label ? ` ${cp.label}` : ""}`,
              description: `${plural(cp.paths.length, "file")}${last ? " · end of the turn" : ""}`,
              detail: cp.paths.join(", "),
              id: last ? `#${entry.number}` : `#${entry.number}.${i + 1}`,
            });
          });
        }
        const picked = await vscode.window.showQuickPick(items, {
          title: "Restore which checkpoint? Files touched since then go back to their state at that point.",
          matchOnDescription: true,
          matchOnDetail: true,
        });
        checkpointId = picked?.id;
        what = picked?.id === "last-green" ? "the last green turn" : `checkpoint ${picked?.label.replace(/^\$\([^)]*\)\s*/, "")}`;
      }
      if (!folder || !checkpointId) {
        return undefined;
      }
      return runOperation(ctx, content, { kind: "restore", folder, checkpointId, what });
    },
    // A step of the panel: the server names and resolves `#N.k` (just after step k) and
    // `#N.(k-1)` (just before it; `#N.0` is where the turn started).
    "takeback.restoreToStep": async (node: StepNode) => {
      if (!isStepNode(node)) {
        return undefined;
      }
      return runOperation(ctx, content, { kind: "restore", folder: node.folder, checkpointId: node.checkpointId, what: `just after step ${node.label}` });
    },
    "takeback.restoreBeforeStep": async (node: StepNode) => {
      if (!isStepNode(node)) {
        return undefined;
      }
      return runOperation(ctx, content, { kind: "restore", folder: node.folder, checkpointId: node.beforeId, what: `just before step ${node.label}` });
    },
    "takeback.showTimeline": async () => {
      await vscode.commands.executeCommand("workbench.view.extension.takeback");
      model.scheduleRefresh(0);
    },
    "takeback.refreshTimeline": () => model.refresh(),
    "takeback.loadMore": (node: MoreNode) => model.loadMore(node.folder, node.before),
    "takeback.showTurnDiff": async (arg?: unknown) => {
      const target = await resolveEntry(deps, arg, "Show the diff of which turn?", (e) => (e.files?.length ?? 0) > 0);
      if (!target) {
        return;
      }
      await openTurnPatch(target.folder, target.entry, isFileNode(arg) ? arg.file.path : undefined);
    },
    "takeback.openFileDiff": async (node: FileNode) => {
      if (!isFileNode(node)) {
        return;
      }
      if (node.file.binary || node.file.withheld) {
        await openTurnPatch(node.folder, node.entry, node.file.path);
        return;
      }
      await openFileDiff(node.folder, node.entry, node.file);
    },
    "takeback.openStepFileDiff": async (node: StepFileNode) => {
      if (isStepFileNode(node)) {
        await openStepFileDiff(node.folder, node.entry, node.step, node.path);
      }
    },
    "takeback.showEmptyTurns": () => setShowEmptyTurns(true),
    "takeback.hideEmptyTurns": () => setShowEmptyTurns(false),
    "takeback.openFile": async (node: FileNode) => {
      if (isFileNode(node)) {
        await vscode.window.showTextDocument(workspaceFileUri(node.folder, node.file.path));
      }
    },
    "takeback.revertFile": async (node: FileNode) => {
      if (!isFileNode(node)) {
        return undefined;
      }
      return runOperation(ctx, content, {
        kind: "revert",
        folder: node.folder,
        turnId: node.entry.id,
        uri: workspaceFileUri(node.folder, node.file.path).toString(),
        what: `#${node.entry.number}'s changes to ${node.file.path}`,
      });
    },
    "takeback.showLogs": () => showLogs(),
    "takeback.restartServer": () => ctx.restart(),
    // The agent API, as commands (same arguments as the exported functions).
    "takeback.agent.beginTurn": (options?: Parameters<TakebackApi["beginTurn"]>[0]) => api.beginTurn(options),
    "takeback.agent.applyEdit": (edit: Parameters<TakebackApi["applyEdit"]>[0], options?: Parameters<TakebackApi["applyEdit"]>[1]) =>
      api.applyEdit(edit, options),
    "takeback.agent.endTurn": (options?: Parameters<TakebackApi["endTurn"]>[0]) => api.endTurn(options),
    "takeback.agent.recordCheck": (check: Parameters<TakebackApi["recordCheck"]>[0]) => api.recordCheck(check),
  };
  return Object.entries(commands).map(([name, handler]) =>
    vscode.commands.registerCommand(name, name.startsWith("takeback.agent.") ? handler : guard(name, handler)),
  );
}
