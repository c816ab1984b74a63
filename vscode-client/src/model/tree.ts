/**
 * The side panel's tree, as plain data: workspace folders (only when there are several) →
 * sessions (titled by their first prompt and time, the server's `sessions`) → agent turns →
 * files, then the turn's steps (its checkpoints, when the server says it shows them: one per
 * tool call of an agent's hooks, one per edit batch of an agent extension) → each step's files.
 * Turns recorded without a session sit under a group named for where they came from (the
 * terminal's begin/end, an editor); operations (undo, redo, revert, restore) under their own
 * "Operations" group, the person's own marks (`takeback mark`) under "Your marks"; the empty turns the server left out are counted in one row. Nodes are a
 * union discriminated on `kind`; `contextValue` carries the actions a node allows (the
 * package.json menus match on it), and ids are stable so the selection survives a refresh.
 *
 * Pure module (no `vscode` import): timelineView.ts turns these nodes into TreeItems.
 */
import type { Checkpoint, Entry, FileChange, SessionStart } from "../lspExt";
import { basename, clockTime, dirname, entryDescription, entryTitle, entryTooltip, escapeMarkdown, fileDescription, plural, relativeTime } from "./format";

export interface FolderTimeline {
  /** The workspace folder's URI (as the server names it). */
  folder: string;
  name: string;
  /** Newest first, as the server pages them. */
  entries: Entry[];
  /** The `before` of the next page, if there is one. */
  nextBefore?: number | null;
  /** What undo and redo act on: the numbers the server's `takeback/status` gives (the client has
   * no rule of its own; unknown: the panel offers neither). */
  undoTarget?: number | null;
  redoTarget?: number | null;
  /** From the same status: failures agents' hooks logged in this folder's store. */
  hookFailures?: number;
  lastHookFailure?: string | null;
  /** From the same status: hook payloads read only in part (recorded anyway), and the latest. */
  payloadProblems?: number;
  lastPayloadProblem?: string | null;
  /** The folder's store (where the hook failure log is). */
  store?: string;
  error?: string;
  /** Empty turns the server left out of the pages loaded so far (their `hiddenEmpty`, added up). */
  hiddenEmpty?: number;
  /** How each session begins (the server's `sessions`, by session id). */
  sessions?: Record<string, SessionStart>;
}

export type RedoVia = { method: "redo" } | { method: "revertTurn"; turnId: string };

export interface TurnActions {
  /** This entry is what "Undo Agent Turn" would revert now. */
  undo: boolean;
  /** Its changes can be reverted (keeping later edits). */
  revert: boolean;
  /** What it took away (or what took it away) can be re-applied, and how. */
  redo?: RedoVia;
  /** It has a checkpoint to restore to. */
  restore: boolean;
}

export interface FolderNode {
  kind: "folder";
  id: string;
  folder: string;
  label: string;
  description: string;
  error?: string;
  children: TreeNode[];
}

/** A group of entries: one agent session, the turns without a session from one source, or the operations. */
export interface SessionNode {
  kind: "session";
  id: string;
  folder: string;
  session: string | null;
  /** What the group holds: a session's turns, turns without a session, or operations. */
  group: "session" | "no-session" | "operations" | "marks";
  label: string;
  description: string;
  tooltip: string;
  children: TreeNode[];
}

export interface TurnNode {
  kind: "turn";
  id: string;
  folder: string;
  entry: Entry;
  label: string;
  description: string;
  tooltip: string;
  icon: TurnIcon;
  actions: TurnActions;
  contextValue: string;
  children: Array<FileNode | StepNode>;
}

/** One checkpoint of a turn: a tool call of an agent's hooks, a batch of an agent extension. */
export interface StepNode {
  kind: "step";
  id: string;
  folder: string;
  entry: Entry;
  checkpoint: Checkpoint;
  /** From 1, as in `#N.k`. */
  index: number;
  /** What "Restore to This Step" sends: the state just after it. */
  checkpointId: string;
  /** What "Restore to Before This Step" sends: `#N.(k-1)`; `#N.0` is where the turn started. */
  beforeId: string;
  label: string;
  description: string;
  tooltip: string;
  contextValue: string;
  /** The files this step changed: each opens the step's own diff. */
  children: StepFileNode[];
}

/** A file one step changed: opens a diff of that file just before and just after the step. */
export interface StepFileNode {
  kind: "stepFile";
  id: string;
  folder: string;
  entry: Entry;
  /** From 1, as in `#N.k`. */
  step: number;
  path: string;
  label: string;
  description: string;
}

export interface FileNode {
  kind: "file";
  id: string;
  folder: string;
  entry: Entry;
  file: FileChange;
  label: string;
  description: string;
  contextValue: string;
}

export interface MoreNode {
  kind: "more";
  id: string;
  folder: string;
  before: number;
  label: string;
}

export interface MessageNode {
  kind: "message";
  id: string;
  label: string;
}

/** "3 empty turns hidden": the turns that changed no file, which the server left out. */
export interface HiddenNode {
  kind: "hidden";
  id: string;
  folder: string;
  count: number;
  label: string;
  description: string;
  tooltip: string;
}

export type TreeNode = FolderNode | SessionNode | TurnNode | FileNode | StepNode | StepFileNode | MoreNode | MessageNode | HiddenNode;

export type TurnIcon =
  | "applied"
  | "reverted"
  | "partial"
  | "open"
  | "not-applied"
  | "operation"
  | "mark"
  | "checks-failed";

/** The entries a redo re-applies (the server's `REDO_KINDS`, compared by a test). */
export const REDO_KINDS: ReadonlySet<string> = new Set(["undo", "revert", "restore"]);
/** Turns without a session, by where they were recorded (Entry.source). */
const NO_SESSION: Record<string, { label: string; tooltip: string }> = {
  cli: { label: "Terminal (takeback begin … end)", tooltip: "Turns bracketed from a terminal with takeback begin and takeback end" },
  bracket: { label: "Terminal (takeback begin … end)", tooltip: "Turns bracketed from a terminal with takeback begin and takeback end" },
  lsp: { label: "Editor (no agent session)", tooltip: "Turns an editor extension recorded without a session id" },
  edit: { label: "Editor (no agent session)", tooltip: "Turns an editor extension recorded without a session id" },
};
const OTHER = { label: "Without a session", tooltip: "Turns recorded without a session id" };

export function turnActions(entry: Entry, byId: Map<string, Entry>, undoTarget?: number | null, redoTarget?: number | null): TurnActions {
  const hasChanges = (entry.files?.length ?? 0) > 0;
  const live = entry.state === "applied" || entry.state === "partial" || entry.state === "open";
  const actions: TurnActions = {
    undo: entry.kind === "turn" && undoTarget != null && entry.number === undoTarget,
    revert: live && hasChanges && !(REDO_KINDS.has(entry.kind) && entry.state === "applied"),
    restore: (entry.kind === "turn" || entry.kind === "mark") && (entry.checkpoints?.length ?? 0) > 0 && entry.state !== "not-applied",
  };
  if (entry.kind === "turn" && entry.state === "reverted" && entry.revertedBy) {
    // Bring a reverted turn back: redo if what reverted it is the redo target, else revert that operation.
    const by = byId.get(entry.revertedBy);
    actions.redo = by && redoTarget != null && by.number === redoTarget ? { method: "redo" } : { method: "revertTurn", turnId: entry.revertedBy };
  } else if (REDO_KINDS.has(entry.kind) && entry.state === "applied") {
    // An undo / revert / restore that is in effect: re-apply what it took away.
    actions.redo = redoTarget != null && entry.number === redoTarget ? { method: "redo" } : { method: "revertTurn", turnId: entry.id };
  }
  return actions;
}

export function contextValueFor(kind: "turn" | "file" | "step", flags: Record<string, boolean>): string {
  return `${kind};${Object.keys(flags)
    .filter((k) => flags[k])
    .map((k) => `${k};`)
    .join("")}`;
}

function turnIcon(entry: Entry): TurnIcon {
  if (entry.kind === "mark") {
    return entry.state === "reverted" ? "reverted" : "mark";
  }
  if (entry.kind !== "turn") {
    return entry.state === "reverted" ? "reverted" : "operation";
  }
  if (entry.state === "applied" && entry.checksPassed === false) {
    return "checks-failed"; // the server's rule: the latest run of each named check
  }
  switch (entry.state) {
    case "reverted":
      return "reverted";
    case "partial":
      return "partial";
    case "open":
      return "open";
    case "not-applied":
      return "not-applied";
    default:
      return "applied";
  }
}

export function fileNode(folder: string, entry: Entry, file: FileChange, revertable: boolean): FileNode {
  return {
    kind: "file",
    id: `${folder}|${entry.id}|${file.path}`,
    folder,
    entry,
    file,
    label: basename(file.path),
    description: fileDescription(file),
    contextValue: contextValueFor("file", {
      revert: revertable && entry.kind === "turn",
      exists: file.kind !== "deleted",
      diff: !file.binary && !file.withheld,
    }),
  };
}

export function stepNodes(folder: string, entry: Entry, actions: TurnActions, now: Date = new Date()): StepNode[] {
  if (!entry.showsSteps) {
    return [];
  }
  const checkpoints = entry.checkpoints ?? [];
  return checkpoints.map((checkpoint, i) => {
    const index = i + 1;
    const name = `#${entry.number}.${index}`;
    const applied = checkpoint.applied !== false;
    const description = [plural(checkpoint.paths.length, "file"), relativeTime(checkpoint.at, now), applied ? "" : "not applied"]
      .filter(Boolean)
      .join(" · ");
    const tooltip = [
      `**${escapeMarkdown(`Step ${name}`)}**${checkpoint.label ? ` ${escapeMarkdown(checkpoint.label)}` : ""}`,
      "",
      `At: ${checkpoint.at}${applied ? "" : " (not applied by the editor)"}`,
      ...checkpoint.paths.map((p) => `- ${escapeMarkdown(p)}`),
      "",
      `Restore to this step: files touched since go back to how they were just after it (\`${name}\`).`,
      `Restore to before this step: … just before it (\`#${entry.number}.${index - 1}\`${index === 1 ? ", where the turn started" : ""}).`,
    ].join("  \n");
    return {
      kind: "step" as const,
      id: `${folder}|${entry.id}|step|${checkpoint.id}`,
      folder,
      entry,
      checkpoint,
      index,
      checkpointId: name,
      beforeId: `#${entry.number}.${index - 1}`,
      label: `${name} ${checkpoint.label?.trim() || "changes"}`,
      description,
      tooltip,
      contextValue: contextValueFor("step", { restore: actions.restore, before: actions.restore, last: index === checkpoints.length }),
      children: checkpoint.paths.map((path) => ({
        kind: "stepFile" as const,
        id: `${folder}|${entry.id}|step|${checkpoint.id}|${path}`,
        folder,
        entry,
        step: index,
        path,
        label: basename(path),
        description: dirname(path),
      })),
    };
  });
}

export function turnNode(folder: string, entry: Entry, actions: TurnActions, now: Date): TurnNode {
  const revertable = actions.revert;
  return {
    kind: "turn",
    id: `${folder}|${entry.id}`,
    folder,
    entry,
    label: entryTitle(entry),
    description: entryDescription(entry, now),
    tooltip: entryTooltip(entry),
    icon: turnIcon(entry),
    actions,
    contextValue: contextValueFor("turn", {
      [entry.kind === "turn" ? "agent" : entry.kind === "mark" ? "mark" : "operation"]: true,
      undo: actions.undo,
      revert: actions.revert,
      redo: actions.redo !== undefined,
      restore: actions.restore,
      [entry.state]: true,
    }),
    children: [...(entry.files ?? []).map((file) => fileNode(folder, entry, file, revertable)), ...stepNodes(folder, entry, actions, now)],
  };
}

/** The group an agent turn is listed under: its session, or where it was recorded. */
function groupKey(entry: Entry): string {
  return entry.session ? `s:${entry.session}` : `n:${(NO_SESSION[entry.source ?? ""] ?? OTHER).label}`;
}

/** "fix the login bug · 14:02": a session's first prompt and when it began (the server's `sessions`). */
export function sessionTitle(session: string, start: SessionStart | undefined, now: Date = new Date()): string {
  const prompt = start?.label?.trim();
  const when = start ? clockTime(start.createdAt, now) : "";
  return [prompt ? oneLine(prompt) : `Session ${session.slice(0, 8)}`, when].filter(Boolean).join(" · ");
}

function oneLine(text: string, max = 60): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function sessionNodes(timeline: FolderTimeline, now: Date = new Date()): SessionNode[] {
  const byId = new Map(timeline.entries.map((e) => [e.id, e] as const));
  // What undo and redo act on is the server's answer (takeback/status); unknown: neither is offered.
  const { undoTarget, redoTarget } = timeline;
  const node = (entry: Entry) => turnNode(timeline.folder, entry, turnActions(entry, byId, undoTarget, redoTarget), now);
  const groups = new Map<string, Entry[]>();
  const operations: Entry[] = [];
  const marks: Entry[] = [];
  for (const entry of timeline.entries) {
    if (entry.kind === "mark") {
      marks.push(entry);
      continue;
    }
    if (entry.kind !== "turn") {
      operations.push(entry);
      continue;
    }
    const key = groupKey(entry);
    groups.set(key, [...(groups.get(key) ?? []), entry]);
  }
  // Map keeps insertion order, and entries come newest first: groups are ordered by latest activity.
  const nodes: SessionNode[] = [];
  for (const [key, entries] of groups) {
    const first = entries[0];
    if (!first) {
      continue;
    }
    const agents = [...new Set(entries.map((e) => e.agent).filter((a): a is string => !!a))];
    const description = [agents.join(", "), plural(entries.length, "turn"), relativeTime(first.finishedAt ?? first.createdAt, now)]
      .filter(Boolean)
      .join(" · ");
    const session = first.session ?? null;
    const start = session ? timeline.sessions?.[session] : undefined;
    const none = NO_SESSION[first.source ?? ""] ?? OTHER;
    nodes.push({
      kind: "session",
      id: `${timeline.folder}|session|${session ?? key}`,
      folder: timeline.folder,
      session,
      group: session ? "session" : "no-session",
      label: session ? sessionTitle(session, start, now) : none.label,
      description,
      tooltip: session
        ? [`Agent session ${session}`, start ? `First prompt (#${start.number}, ${start.createdAt}): ${start.label ?? "(none)"}` : ""].filter(Boolean).join("\n")
        : none.tooltip,
      children: entries.map(node),
    });
  }
  if (marks.length) {
    const latest = marks[0];
    nodes.push({
      kind: "session",
      id: `${timeline.folder}|marks`,
      folder: timeline.folder,
      session: null,
      group: "marks",
      label: "Your marks",
      description: [plural(marks.length, "mark"), relativeTime(latest?.finishedAt ?? latest?.createdAt, now)].filter(Boolean).join(" · "),
      tooltip: "Your own checkpoints (takeback mark): each holds the files you changed since the entry before it; restore goes back to one",
      children: marks.map(node),
    });
  }
  if (operations.length) {
    const latest = operations[0];
    nodes.push({
      kind: "session",
      id: `${timeline.folder}|operations`,
      folder: timeline.folder,
      session: null,
      group: "operations",
      label: "Operations",
      description: [plural(operations.length, "operation"), relativeTime(latest?.finishedAt ?? latest?.createdAt, now)].filter(Boolean).join(" · "),
      tooltip: "Undo, redo, revert and restore: each is an entry of the timeline, and can itself be taken back",
      children: operations.map(node),
    });
  }
  return nodes;
}

function folderChildren(timeline: FolderTimeline, now: Date): TreeNode[] {
  if (timeline.error) {
    return [{ kind: "message", id: `${timeline.folder}|error`, label: timeline.error }];
  }
  const children: TreeNode[] = sessionNodes(timeline, now);
  const problems = timeline.payloadProblems ?? 0;
  if (problems > 0) {
    children.unshift({
      kind: "message",
      id: `${timeline.folder}|payload-problems|${problems}`,
      label: `${problems} hook payload(s) read only in part (recorded anyway); last: ${timeline.lastPayloadProblem ?? "?"}`,
    });
  }
  const hidden = timeline.hiddenEmpty ?? 0;
  if (hidden > 0) {
    children.push({
      kind: "hidden",
      id: `${timeline.folder}|hidden-empty`,
      folder: timeline.folder,
      count: hidden,
      label: `${plural(hidden, "empty turn")} hidden`,
      description: "prompts that changed no file",
      tooltip: "Turns that changed no file (a prompt answered in words) are left out. Click to show them (setting takeback.timeline.showEmptyTurns).",
    });
  }
  if (timeline.nextBefore != null) {
    children.push({
      kind: "more",
      id: `${timeline.folder}|more|${timeline.nextBefore}`,
      folder: timeline.folder,
      before: timeline.nextBefore,
      label: "Load older entries…",
    });
  }
  return children;
}

/**
 * The tree's top level. One folder: its sessions directly. Several: one node per folder.
 * No entry anywhere: an empty list (the view then shows its welcome content).
 */
export function buildTree(timelines: FolderTimeline[], now: Date = new Date()): TreeNode[] {
  if (timelines.every((t) => t.entries.length === 0 && !t.error && !t.hiddenEmpty)) {
    return [];
  }
  const [only, ...others] = timelines;
  if (only && others.length === 0) {
    return folderChildren(only, now);
  }
  return timelines.map((t) => ({
    kind: "folder" as const,
    id: `${t.folder}|folder`,
    folder: t.folder,
    label: t.name,
    description: t.error ? "error" : plural(t.entries.filter((e) => e.kind === "turn").length, "turn"),
    error: t.error,
    children: folderChildren(t, now),
  }));
}

/** The newest agent turn across folders (for the status bar). */
export function latestTurn(timelines: FolderTimeline[]): { folder: string; entry: Entry } | undefined {
  let best: { folder: string; entry: Entry } | undefined;
  for (const t of timelines) {
    const entry = t.entries.find((e) => e.kind === "turn");
    if (entry && (!best || entry.createdAt > best.entry.createdAt)) {
      best = { folder: t.folder, entry };
    }
  }
  return best;
}

/** Merge a further page into a folder's timeline (entries by id, newest first). */
export function mergePage(
  timeline: FolderTimeline,
  page: Entry[],
  nextBefore: number | null | undefined,
  hiddenEmpty = 0,
  sessions: SessionStart[] = [],
): FolderTimeline {
  const seen = new Set(timeline.entries.map((e) => e.id));
  const entries = [...timeline.entries, ...page.filter((e) => !seen.has(e.id))];
  entries.sort((a, b) => b.number - a.number);
  return {
    ...timeline,
    entries,
    nextBefore,
    hiddenEmpty: (timeline.hiddenEmpty ?? 0) + hiddenEmpty,
    sessions: { ...sessionsById(sessions), ...timeline.sessions },
  };
}

/** The server's `sessions` list, by session id. */
export function sessionsById(sessions: SessionStart[] | undefined): Record<string, SessionStart> {
  return Object.fromEntries((sessions ?? []).map((s) => [s.session, s] as const));
}
