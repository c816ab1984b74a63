/**
 * The "Takeback" side panel: the server's timeline per workspace folder, fetched on
 * `takeback/timelineChanged` (debounced) and shown as sessions → turns → files and steps, with
 * operations in their own group and empty turns counted in one row (setting
 * `takeback.timeline.showEmptyTurns` lists them); each
 * folder's status comes with it (the undo/redo targets, which only the server decides; hook failures). The tree's
 * shape and wording come from model/tree.ts; this file only fetches and renders. It keeps no
 * timeline of its own beyond the last answer, and clears when the server stops.
 */
import * as vscode from "vscode";
import { pageSize, showEmptyTurns } from "./config";
import type { ServerContext } from "./ctx";
import { folderParam, folders } from "./folders";
import * as ext from "./lspExt";
import { log } from "./logger";
import { FolderFailures, newFailures } from "./model/failures";
import { buildTree, FolderTimeline, latestTurn, mergePage, sessionsById, TreeNode, TurnIcon } from "./model/tree";

const ICONS: Record<TurnIcon, [string, string?]> = {
  applied: ["git-commit", "charts.green"],
  reverted: ["discard", "disabledForeground"],
  partial: ["warning", "charts.yellow"],
  open: ["loading~spin"],
  "not-applied": ["error", "errorForeground"],
  operation: ["history", "charts.blue"],
  mark: ["bookmark", "charts.purple"],
  "checks-failed": ["git-commit", "errorForeground"],
};

export class TimelineModel implements vscode.Disposable {
  private _timelines: FolderTimeline[] = [];
  private readonly emitter = new vscode.EventEmitter<void>();
  private readonly failureEmitter = new vscode.EventEmitter<FolderFailures[]>();
  private timer: NodeJS.Timeout | undefined;
  private generation = 0;
  private readonly disposables: vscode.Disposable[] = [];
  readonly onDidChange = this.emitter.event;
  /** Agents' hooks logged failures since the last refresh (not fired for older ones). */
  readonly onDidLogHookFailures = this.failureEmitter.event;

  constructor(private readonly ctx: ServerContext) {
    this.disposables.push(
      ctx.onDidChangeTimeline(() => this.scheduleRefresh()),
      ctx.onDidChangeState((state) => {
        if (state !== "running") {
          this.set([]);
        } else {
          this.scheduleRefresh();
        }
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.scheduleRefresh()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("takeback.timeline")) {
          this.scheduleRefresh(0);
        }
      }),
    );
  }

  get timelines(): FolderTimeline[] {
    return this._timelines;
  }

  private set(timelines: FolderTimeline[]): void {
    const fresh = newFailures(this._timelines, timelines);
    this._timelines = timelines;
    this.emitter.fire();
    if (fresh.length) {
      this.failureEmitter.fire(fresh);
    }
  }

  /** Refetch soon; bursts of notifications collapse into one fetch. */
  scheduleRefresh(delay = 150): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, delay);
  }

  async refresh(): Promise<void> {
    const generation = ++this.generation;
    if (this.ctx.state !== "running") {
      this.set([]);
      return;
    }
    const all = folders();
    const limit = pageSize();
    const includeEmpty = showEmptyTurns();
    const timelines = await Promise.all(
      all.map(async (f): Promise<FolderTimeline> => {
        try {
          const [page, status] = await Promise.all([
            this.ctx.request(ext.timeline, { limit, includeEmpty, ...folderParam(f.uri) }),
            this.ctx.request(ext.status, { ...folderParam(f.uri) }).catch((error: unknown) => {
              // Without the status the panel offers no undo or redo (the server decides their targets).
              log().warn(`Status of ${f.name}: ${error instanceof Error ? error.message : String(error)}`);
              return undefined;
            }),
          ]);
          return {
            folder: f.uri,
            name: f.name,
            entries: page.entries,
            nextBefore: page.nextBefore,
            hiddenEmpty: page.hiddenEmpty ?? 0,
            sessions: sessionsById(page.sessions),
            ...(status
              ? {
                  undoTarget: status.undoTarget ?? null,
                  redoTarget: status.redoTarget ?? null,
                  hookFailures: status.hookFailures ?? 0,
                  lastHookFailure: status.lastHookFailure ?? null,
                  payloadProblems: status.payloadProblems ?? 0,
                  lastPayloadProblem: status.lastPayloadProblem ?? null,
                  store: status.store,
                }
              : {}),
          };
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          log().warn(`Timeline of ${f.name}: ${message}`);
          return { folder: f.uri, name: f.name, entries: [], error: `Could not read the timeline: ${message}` };
        }
      }),
    );
    if (generation === this.generation) {
      this.set(timelines);
    }
  }

  async loadMore(folder: string, before: number): Promise<void> {
    const index = this._timelines.findIndex((t) => t.folder === folder);
    if (index < 0) {
      return;
    }
    const page = await this.ctx.request(ext.timeline, { limit: pageSize(), before, includeEmpty: showEmptyTurns(), ...folderParam(folder) });
    const next = [...this._timelines];
    const current = next[index];
    if (!current) {
      return; // the folders changed while the page loaded
    }
    next[index] = mergePage(current, page.entries, page.nextBefore, page.hiddenEmpty ?? 0, page.sessions);
    this.set(next);
  }

  /** Entries of one folder (loaded so far), newest first. */
  entries(folder: string): ext.Entry[] {
    return this._timelines.find((t) => t.folder === folder)?.entries ?? [];
  }

  latest(): { folder: string; entry: ext.Entry } | undefined {
    return latestTurn(this._timelines);
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.emitter.dispose();
    this.failureEmitter.dispose();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

export class TimelineTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<TreeNode | undefined | void>();
  readonly onDidChangeTreeData = this.emitter.event;
  private roots: TreeNode[] = [];
  private readonly parents = new Map<string, TreeNode>();
  private readonly subscription: vscode.Disposable;

  constructor(private readonly model: TimelineModel) {
    this.subscription = model.onDidChange(() => this.rebuild());
  }

  private rebuild(): void {
    this.roots = buildTree(this.model.timelines);
    this.parents.clear();
    const walk = (node: TreeNode) => {
      for (const child of childrenOf(node)) {
        this.parents.set(child.id, node);
        walk(child);
      }
    };
    this.roots.forEach(walk);
    this.emitter.fire();
  }

  getChildren(node?: TreeNode): TreeNode[] {
    return node ? childrenOf(node) : this.roots;
  }

  /** The panel's row of a turn (undefined: not on the pages loaded). */
  turnNode(folder: string, entryId: string): TreeNode | undefined {
    const id = `${folder}|${entryId}`;
    const find = (nodes: TreeNode[]): TreeNode | undefined => {
      for (const node of nodes) {
        if (node.id === id) {
          return node;
        }
        const inside = node.kind === "turn" ? undefined : find(childrenOf(node));
        if (inside) {
          return inside;
        }
      }
      return undefined;
    };
    return find(this.roots);
  }

  getParent(node: TreeNode): TreeNode | undefined {
    return this.parents.get(node.id);
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    switch (node.kind) {
      case "folder": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Expanded);
        item.id = node.id;
        item.description = node.description;
        item.iconPath = vscode.ThemeIcon.Folder;
        item.contextValue = "folder";
        return item;
      }
      case "session": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Expanded);
        item.id = node.id;
        item.description = node.description;
        item.iconPath = new vscode.ThemeIcon(node.group === "operations" ? "history" : node.group === "marks" ? "bookmark" : node.group === "no-session" ? "terminal" : "comment-discussion");
        item.contextValue = node.group;
        item.tooltip = node.tooltip;
        return item;
      }
      case "turn": {
        const newest = this.isNewestTurn(node);
        const state = node.children.length === 0 ? vscode.TreeItemCollapsibleState.None : newest ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed;
        const item = new vscode.TreeItem(node.label, state);
        item.id = node.id;
        item.description = node.description;
        const tooltip = new vscode.MarkdownString(node.tooltip);
        tooltip.supportThemeIcons = false;
        item.tooltip = tooltip;
        const [icon, color] = ICONS[node.icon];
        item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
        item.contextValue = node.contextValue;
        item.accessibilityInformation = { label: `${node.label}, ${node.description}` };
        return item;
      }
      case "file": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.description = node.description;
        // The file's icon comes from its name; a scheme of our own keeps git's status letter off
        // the row (its decorations apply to file: URIs): the row shows the turn's change.
        item.resourceUri = iconUri(node.file.path);
        item.tooltip = `${node.file.path} — ${node.file.kind} by #${node.entry.number}. Click to see the change.`;
        item.contextValue = node.contextValue;
        item.command = { command: "takeback.openFileDiff", title: "Open Changes", arguments: [node] };
        return item;
      }
      case "step": {
        const item = new vscode.TreeItem(node.label, node.children.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.description = node.description;
        const tooltip = new vscode.MarkdownString(node.tooltip);
        tooltip.supportThemeIcons = false;
        item.tooltip = tooltip;
        const applied = node.checkpoint.applied !== false;
        item.iconPath = new vscode.ThemeIcon(applied ? "debug-stackframe-dot" : "circle-slash", applied ? undefined : new vscode.ThemeColor("disabledForeground"));
        item.contextValue = node.contextValue;
        item.accessibilityInformation = { label: `Step ${node.label}, ${node.description}` };
        return item;
      }
      case "stepFile": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.description = node.description;
        item.resourceUri = iconUri(node.path);
        item.tooltip = `${node.path}: step #${node.entry.number}.${node.step}'s change. Click to see it.`;
        item.contextValue = "stepFile";
        item.command = { command: "takeback.openStepFileDiff", title: "Open Changes", arguments: [node] };
        return item;
      }
      case "hidden": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.description = node.description;
        item.tooltip = node.tooltip;
        item.iconPath = new vscode.ThemeIcon("eye-closed");
        item.contextValue = "hidden";
        item.command = { command: "takeback.showEmptyTurns", title: "Show Empty Turns" };
        return item;
      }
      case "more": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.iconPath = new vscode.ThemeIcon("ellipsis");
        item.command = { command: "takeback.loadMore", title: node.label, arguments: [node] };
        return item;
      }
      case "message": {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.iconPath = new vscode.ThemeIcon("error", new vscode.ThemeColor("errorForeground"));
        return item;
      }
    }
  }

  /** The newest agent turn of the first group opens expanded, so its files show at a glance. */
  private isNewestTurn(node: TreeNode): boolean {
    if (node.kind !== "turn" || node.entry.kind !== "turn") {
      return false;
    }
    const parent = this.parents.get(node.id);
    const first = this.roots[0]?.kind === "folder" ? childrenOf(this.roots[0])[0] : this.roots[0];
    if (!parent || parent.id !== first?.id) {
      return false;
    }
    const newest = childrenOf(parent).find((n) => n.kind === "turn" && n.entry.kind === "turn");
    return newest?.id === node.id;
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}

/** A URI that gives a row its file icon (by name) and nothing else. */
function iconUri(path: string): vscode.Uri {
  return vscode.Uri.from({ scheme: "takeback-file", path: `/${path}` });
}

function childrenOf(node: TreeNode): TreeNode[] {
  switch (node.kind) {
    case "folder":
    case "session":
    case "turn":
    case "step":
      return node.children;
    default:
      return [];
  }
}
