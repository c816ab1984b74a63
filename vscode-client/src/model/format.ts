/**
 * How entries, files and checks read in the panel, the status bar and
 * messages. Pure module (no `vscode` import).
 */
import type { Entry, FileChange } from "../lspExt";

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** "+12 −3" (a real minus sign); empty when nothing changed. */
export function lineDelta(additions = 0, deletions = 0): string {
  if (!additions && !deletions) {
    return "";
  }
  return `+${additions} −${deletions}`;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago", then the date. */
export function relativeTime(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) {
    return "";
  }
  const then = new Date(iso);
  if (Number.isNaN(then.getTime())) {
    return "";
  }
  const seconds = Math.round((now.getTime() - then.getTime()) / 1000);
  if (seconds < 45) {
    return "just now";
  }
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.round(minutes / 60);
  if (hours < 24) {
    return `${hours} h ago`;
  }
  const days = Math.round(hours / 24);
  if (days < 7) {
    return plural(days, "day") + " ago";
  }
  return then.toISOString().slice(0, 10);
}

/** "14:02" (local time) today; "2025-01-03 14:02" on another day. */
export function clockTime(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) {
    return "";
  }
  const then = new Date(iso);
  if (Number.isNaN(then.getTime())) {
    return "";
  }
  const two = (n: number) => String(n).padStart(2, "0");
  const time = `${two(then.getHours())}:${two(then.getMinutes())}`;
  const day = `${then.getFullYear()}-${two(then.getMonth() + 1)}-${two(then.getDate())}`;
  const today = `${now.getFullYear()}-${two(now.getMonth() + 1)}-${two(now.getDate())}`;
  return day === today ? time : `${day} ${time}`;
}

export type ChecksState = "passed" | "failed" | "none";

/** The server decides (`checksPassed`: the latest run of each named check). */
export function checksState(entry: Pick<Entry, "checksPassed">): ChecksState {
  if (entry.checksPassed === undefined || entry.checksPassed === null) {
    return "none";
  }
  return entry.checksPassed ? "passed" : "failed";
}

export function checksText(entry: Pick<Entry, "checks" | "checksPassed" | "failedChecks">): string {
  const state = checksState(entry);
  if (state === "none") {
    return "";
  }
  const names = new Set((entry.checks ?? []).map((c) => c.name));
  return state === "passed" ? `✓ ${plural(names.size, "check")}` : `✗ ${(entry.failedChecks ?? []).join(", ")}`;
}

const OPERATION_VERB: Record<string, string> = {
  undo: "Undo",
  redo: "Redo",
  revert: "Revert",
  restore: "Restore",
  mark: "Mark",
};

/** "#12 Add a login form" for a turn; "#13 Undo #12" for an operation. */
export function entryTitle(entry: Entry): string {
  if (entry.kind === "turn") {
    return `#${entry.number} ${entry.label?.trim() || "(no label)"}`;
  }
  const verb = OPERATION_VERB[entry.kind] ?? entry.kind;
  const label = entry.label?.trim();
  if (label) {
    return `#${entry.number} ${label}`;
  }
  return `#${entry.number} ${verb}${entry.targetNumber ? ` #${entry.targetNumber}` : ""}`;
}

export function stateText(entry: Entry): string {
  switch (entry.state) {
    case "applied":
      return "applied";
    case "reverted":
      return "undone";
    case "partial":
      return "partly undone";
    case "open":
      return "in progress";
    case "not-applied":
      return "not applied";
    default:
      return entry.state;
  }
}

/** "5 min ago · 3 files +12 −3 · ✓ 2 checks · undone" */
export function entryDescription(entry: Entry, now: Date = new Date()): string {
  const parts: string[] = [];
  const when = relativeTime(entry.finishedAt ?? entry.createdAt, now);
  if (when) {
    parts.push(when);
  }
  const files = entry.files?.length ?? 0;
  const delta = lineDelta(entry.additions, entry.deletions);
  parts.push([plural(files, "file"), delta].filter(Boolean).join(" "));
  const checks = checksText(entry);
  if (checks) {
    parts.push(checks);
  }
  if (entry.state !== "applied") {
    parts.push(stateText(entry));
  }
  return parts.join(" · ");
}

/** Plain-text tooltip lines (the tree view renders them as Markdown). */
export function entryTooltip(entry: Entry): string {
  const lines = [`**${escapeMarkdown(entryTitle(entry))}**`, ""];
  lines.push(`State: ${stateText(entry)}${entry.verdict ? ` (verdict: ${entry.verdict})` : ""}`);
  if (entry.agent) {
    lines.push(`Agent: ${escapeMarkdown(entry.agent)}`);
  }
  if (entry.session) {
    lines.push(`Session: ${escapeMarkdown(entry.session)}`);
  }
  lines.push(`Started: ${entry.createdAt}`);
  if (entry.finishedAt) {
    lines.push(`Finished: ${entry.finishedAt}`);
  }
  const files = entry.files ?? [];
  lines.push(`Files: ${files.length} (${lineDelta(entry.additions, entry.deletions) || "no line changes"})`);
  for (const command of entry.commands ?? []) {
    lines.push(`Ran: \`${command.replace(/`/g, "'")}\``);
  }
  for (const check of entry.checks ?? []) {
    lines.push(`Check ${escapeMarkdown(check.name)}: ${check.status}`);
  }
  for (const notice of entry.notices ?? []) {
    lines.push(`Note: ${escapeMarkdown(notice)}`);
  }
  for (const move of entry.gitMoved ?? []) {
    const back = move.command ? ` (to put it back: \`${move.command.replace(/`/g, "'")}\`)` : "";
    lines.push(`Not taken back by an undo: ${escapeMarkdown(move.fact)}${back}`);
  }
  for (const path of entry.outside ?? []) {
    lines.push(`Not taken back by an undo: ${escapeMarkdown(path)} (written outside the workspace)`);
  }
  for (const lost of entry.lost ?? []) {
    const back = lost.command
      ? `kept by Takeback (to write it back: \`${lost.command.replace(/`/g, "'")}\`)`
      : `lost (${escapeMarkdown(lost.why ?? "not kept")})`;
    lines.push(`Not taken back by an undo: ${escapeMarkdown(lost.path)} (an ignored file, ${lost.how}): ${back}`);
  }
  lines.push("", `id ${entry.id}`);
  return lines.join("  \n");
}

export function escapeMarkdown(text: string): string {
  return text.replace(/([\\`*_{}[\]()#+\-.!|<>])/g, "\\$1");
}

/** What a turn did to a file, in words (a modified file says nothing: its +/- does). */
const KIND_WORD: Record<FileChange["kind"], string> = {
  added: "added",
  modified: "",
  deleted: "deleted",
  renamed: "renamed",
};

export function basename(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? path : path.slice(i + 1);
}

export function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

/** "src/app · +3 −1", "added · +5 −0", "renamed from old.ts · +1 −1": the turn's change to the
 * file (no git status letter: the panel shows what the turn did, not what git sees now). */
export function fileDescription(file: FileChange): string {
  const parts: string[] = [];
  const dir = dirname(file.path);
  if (dir) {
    parts.push(dir);
  }
  if (file.kind === "renamed" && file.oldPath) {
    parts.push(`renamed from ${file.oldPath}`);
  } else if (KIND_WORD[file.kind]) {
    parts.push(KIND_WORD[file.kind]);
  }
  if (file.binary) {
    parts.push("binary");
  } else {
    const delta = lineDelta(file.additions, file.deletions);
    if (delta) {
      parts.push(delta);
    }
  }
  if (file.withheld) {
    parts.push(`content withheld (${file.withheld})`);
  }
  return parts.join(" · ");
}

/** The status bar text for the last turn: "Takeback: #12 · 3 files". */
export function statusBarText(entry: Entry | undefined): string {
  if (!entry) {
    return "Takeback";
  }
  const files = entry.files?.length ?? 0;
  return `Takeback: #${entry.number} · ${plural(files, "file")}${entry.state === "reverted" ? " · undone" : ""}`;
}
