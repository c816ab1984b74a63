/**
 * What the person is shown before and after a destructive operation: the server's dry run as a
 * confirmation (which files change and how), the choices when the operation meets their later
 * edits, and the outcome. Pure module: operations.ts shows these with VS Code's UI.
 */
import type { OnConflict, OperationResult } from "../lspExt";
import { lineDelta, plural } from "./format";
import { nextHint } from "./hints";

export type OperationKind = OperationResult["operation"];

const VERB: Record<OperationKind, string> = {
  undo: "Undo",
  redo: "Redo",
  revert: "Revert",
  restore: "Restore",
};

/** What the operation does to a file, in words (a rewrite says nothing: its +/- does). */
const ACTION_WORD: Record<string, string> = { write: "", create: "created", delete: "deleted", unchanged: "unchanged" };

export interface Confirmation {
  /** The modal's message (one line). */
  message: string;
  /** The modal's detail: the files and what happens to each. */
  detail: string;
  /** The button that goes ahead. */
  confirm: string;
  /** True when the dry run found conflicts: the person must choose how to go on. */
  needsConflictChoice: boolean;
}

export function fileLines(result: OperationResult, max = 12): string[] {
  const lines: string[] = [];
  for (const r of result.restored ?? []) {
    if (r.action === "unchanged") {
      continue;
    }
    const what = [
      r.renamedFrom ? `back from ${r.renamedFrom}` : ACTION_WORD[r.action] ?? r.action,
      lineDelta(r.additions, r.deletions),
      r.merged ? "merged with later edits" : "",
    ].filter(Boolean);
    lines.push(`${r.path}${what.length ? `  ${what.join(", ")}` : ""}`);
  }
  for (const c of result.conflicts ?? []) {
    lines.push(`${c.path}  conflict: ${c.reason}${c.markersWritten ? " (markers written)" : ""}`);
  }
  for (const s of result.skipped ?? []) {
    lines.push(`${s.path}  skipped: ${s.reason}`);
  }
  if (lines.length > max) {
    const rest = lines.length - max;
    return [...lines.slice(0, max), `… and ${plural(rest, "more file")}`];
  }
  return lines;
}

/** What the person typed for the turn (its label), as the confirmation quotes it. */
function prompt(result: OperationResult, max = 400): string {
  const label = result.entry?.kind === "turn" && result.entry.number === result.targetNumber ? result.entry.label?.trim() : undefined;
  if (!label) {
    return "";
  }
  return `“${label.length > max ? `${label.slice(0, max - 1)}…` : label}”`;
}

/** The confirmation before an operation, from the server's preview of it (`result.dryRun`):
 * "Undo agent turn #12?" ("Revert the change at line 6 of app.py from #12?" for a `narrow` one,
 * in the words of `what`), then the turn's prompt, then the files and what happens to each. */
export function confirmationFor(result: OperationResult, what?: string, narrow = false): Confirmation {
  const verb = VERB[result.operation] ?? result.operation;
  const target = result.targetNumber ? `#${result.targetNumber}` : what ?? "";
  const conflicts = result.conflicts?.length ?? 0;
  const files = (result.restored ?? []).filter((r) => r.action !== "unchanged").length;
  const noun = result.operation === "restore" ? "checkpoint" : "agent turn";
  // A restore says where to ("just before step #12.3 Edit app.py"): the server's target number
  // is the checkpoint's owner, which for "#N.0" is an earlier entry.
  // A narrow revert (a step, some paths, one hunk) says what of the entry it takes back.
  const message = result.operation === "restore" && what ? `Restore the files to ${what}?`
    : narrow && what ? `${verb} ${what}?` : `${verb} ${noun} ${target}?`.replace(/\s+\?$/, "?");
  const head = conflicts
    ? `${plural(conflicts, "file")} changed since, in the same places (conflict); ${plural(files, "file")} can be restored cleanly.`
    : `${plural(files, "file")} will change:`;
  const notes = [...(result.notices ?? []), ...(result.entry?.notices ?? [])].map((n) => `Note: ${n}`);
  const detail = [prompt(result), "", head, ...fileLines(result), "", ...notes]
    .filter((l, i, all) => !(l === "" && (i === 0 || all[i - 1] === "")))
    .join("\n")
    .trim();
  return { message, detail, confirm: verb, needsConflictChoice: conflicts > 0 };
}

export interface ConflictChoice {
  value: OnConflict | "open" | "cancel";
  label: string;
  description: string;
  detail?: string;
}

export function conflictChoices(result: OperationResult): ConflictChoice[] {
  const conflicts = result.conflicts?.length ?? 0;
  const clean = (result.restored ?? []).filter((r) => r.action !== "unchanged").length;
  const markable = (result.conflicts ?? []).filter((c) => c.markersPossible).map((c) => c.path);
  const choices: ConflictChoice[] = [];
  choices.push({
    value: "skip",
    label: "$(check) Revert only the clean files",
    description:
      clean > 0
        ? `${plural(clean, "file")}; the ${plural(conflicts, "conflicted file")} stay as they are`
        : `the files without conflicts; the ${plural(conflicts, "conflicted file")} stay as they are`,
  });
  if (markable.length) {
    // Only text files both sides edited can take markers (not binary, created or deleted files).
    choices.push({
      value: "markers",
      label: "$(git-merge) Write conflict markers",
      description:
        markable.length === conflicts
          ? "conflicted files get <<<<<<< / >>>>>>> sections to resolve by hand"
          : `${markable.join(", ")} get <<<<<<< / >>>>>>> sections; the others cannot take markers`,
    });
  }
  choices.push(
    {
      value: "force",
      label: "$(warning) Force",
      description: "put back the turn's starting content where later edits overlap it, keeping the other later edits",
    },
    {
      value: "open",
      label: "$(go-to-file) Open the conflicted files",
      description: (result.conflicts ?? []).map((c) => c.path).join(", "),
    },
    { value: "cancel", label: "$(close) Cancel", description: "change nothing" },
  );
  return choices;
}

export interface Outcome {
  severity: "info" | "warning" | "error";
  message: string;
  /** Paths worth opening afterwards (conflicts, files with markers). */
  openable: string[];
}

/** The outcome in one sentence: the server's (which says what was done, to how many files, and
 * what was skipped or left in conflict), then its notes and, when it did not all go well, the
 * next step. */
export function outcomeFor(result: OperationResult): Outcome {
  const said = result.message.trim();
  const headline = said ? `${said.charAt(0).toUpperCase()}${said.slice(1)}${/[.!?]$/.test(said) ? "" : "."}` : `${VERB[result.operation]}: ${result.verdict}.`;
  const conflicts = (result.conflicts ?? []).map((c) => c.path);
  // refused: nothing was written, the workspace is as it was (a warning with the way out, not an error)
  const severity = result.verdict === "broken" || (!result.applied && result.verdict !== "refused") ? "error"
    : result.verdict !== "safe" || conflicts.length ? "warning" : "info";
  const hint = nextHint(result);
  const next = hint && severity !== "info" ? ` Next: ${hint}` : "";
  const notes = (result.notices ?? []).map((n) => ` Note: ${n}.`).join("");
  return { severity, message: `Takeback: ${headline}${notes}${next}`.trim(), openable: conflicts };
}
