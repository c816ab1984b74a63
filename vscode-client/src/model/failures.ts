/**
 * Failures agents' hooks logged (`takeback hook` never disturbs the agent, so it logs what it
 * could not record in the store's `hook-failures.log`, and the server's status counts them):
 * which folders have failures the person has not seen yet, how the status bar warns, which
 * ones are new since the last refresh (a notification), and the log as readable lines.
 *
 * Pure module (no `vscode` import). "Seen" is the last failure the person looked at per folder
 * (hookFailures.ts keeps it in the workspace state); a newer last failure makes the warning
 * come back.
 */
import type { FolderTimeline } from "./tree";
import { plural } from "./format";

/** The log's file name in a store (server/takeback/failures.py FILE_NAME). */
export const FAILURE_LOG = "hook-failures.log";

export interface FolderFailures {
  folder: string;
  name: string;
  count: number;
  last: string;
  store?: string;
}

/** Folders whose last hook failure differs from the one the person has seen. */
export function unseenFailures(timelines: FolderTimeline[], seen: Record<string, string | undefined>): FolderFailures[] {
  const out: FolderFailures[] = [];
  for (const t of timelines) {
    if ((t.hookFailures ?? 0) > 0 && t.lastHookFailure && seen[t.folder] !== t.lastHookFailure) {
      out.push({ folder: t.folder, name: t.name, count: t.hookFailures ?? 0, last: t.lastHookFailure, store: t.store });
    }
  }
  return out;
}

/**
 * Folders whose last failure changed between two refreshes (a failure logged meanwhile). A
 * folder not in `previous` (the first refresh, a folder just added) has nothing new: failures
 * logged before are for the status bar only.
 */
export function newFailures(previous: FolderTimeline[], next: FolderTimeline[]): FolderFailures[] {
  const before = new Map(previous.filter((t) => !t.error).map((t) => [t.folder, t] as const));
  const out: FolderFailures[] = [];
  for (const t of next) {
    const old = before.get(t.folder);
    if (!old || t.error || !t.lastHookFailure || (t.hookFailures ?? 0) === 0 || old.hookFailures === undefined) {
      continue;
    }
    if (old.lastHookFailure !== t.lastHookFailure) {
      out.push({ folder: t.folder, name: t.name, count: t.hookFailures ?? 0, last: t.lastHookFailure, store: t.store });
    }
  }
  return out;
}

/** The status bar's warning: its text suffix and tooltip lines. */
export function failureWarning(unseen: FolderFailures[], multiRoot: boolean): { text: string; tooltip: string } | undefined {
  if (!unseen.length) {
    return undefined;
  }
  const total = unseen.reduce((n, f) => n + f.count, 0);
  const lines = [`Agents' hooks failed to record: ${plural(total, "failure")} logged.`];
  for (const f of unseen) {
    lines.push(`${multiRoot ? `${f.name}: ` : ""}last: ${f.last}`);
  }
  lines.push(
    "Turns or steps may be missing from the timeline.",
    "Click to see the failures (Takeback: Show Hook Failures); `takeback status` in a terminal counts them.",
  );
  return { text: plural(total, "hook failure"), tooltip: lines.join("\n") };
}

/** One failure log (JSON lines `{at, agent, event, message}`) as readable lines, newest last. */
export function formatFailureLog(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) {
      continue;
    }
    try {
      const item = JSON.parse(line) as { at?: string; agent?: string; event?: string | null; message?: string };
      out.push(`${item.at ?? "?"}  ${item.agent ?? "?"}${item.event ? ` ${item.event}` : ""}: ${item.message ?? ""}`);
    } catch {
      out.push(line);
    }
  }
  return out;
}

/** The document "Show Hook Failures" opens: per folder, a heading, the log, and what to do. */
export function failureReport(folders: Array<{ name: string; path?: string; lines: string[]; error?: string }>): string {
  const parts: string[] = [];
  for (const f of folders) {
    parts.push(`# ${f.name}: ${plural(f.lines.length, "hook failure")}${f.path ? ` (${f.path})` : ""}`, "");
    if (f.error) {
      parts.push(`(could not read the log: ${f.error})`, "");
    }
    parts.push(...f.lines, "");
  }
  parts.push(
    "# What this means",
    "",
    "An agent's hook (`takeback hook AGENT`) could not record what the agent did, so a turn or a step",
    "may be missing from the timeline. The agent itself was not disturbed. Check the agent's hook",
    "set-up (`takeback install AGENT`), and that `takeback` runs from the agent's environment.",
    "Delete the log file to start counting afresh.",
    "",
  );
  return parts.join("\n");
}
