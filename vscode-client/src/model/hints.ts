/**
 * The next safe action in VS Code's words: the server sends it as a sentence in the CLI's words
 * (`nextAction`: "'takeback redo' brings turn #4 back") and as data (`next`, one step per command
 * it names); this module says each step with the title of the command a person runs here
 * ("Takeback: Redo Agent Turn" brings turn #4 back). The titles are package.json's
 * (contributes.commands; a unit test keeps them equal), the on-conflict choices the labels of
 * preview.ts's conflict pick. A revert step may be narrow (one step of the entry, some paths, one
 * hunk): it is said so, and `stepOperation` runs that same narrow revert. Pure module.
 */
import type { HunkParams, NextStep, OnConflict, OperationResult } from "../lspExt";
import { joinFolderUri } from "./uris";

/** Each step's command, by the title package.json gives it (category "Takeback"). */
export const STEP_COMMANDS: Record<NextStep["command"], { command: string; title: string }> = {
  undo: { command: "takeback.undoAgentTurn", title: "Takeback: Undo Agent Turn" },
  redo: { command: "takeback.redoAgentTurn", title: "Takeback: Redo Agent Turn" },
  revert: { command: "takeback.revertAgentTurn", title: "Takeback: Revert Agent Turn…" },
  restore: { command: "takeback.restoreCheckpoint", title: "Takeback: Restore Checkpoint…" },
};

/** The choice in the conflict pick (preview.ts `conflictChoices`) that a step's on-conflict is. */
const CHOICES: Record<Exclude<OnConflict, "abort">, string> = {
  skip: "Revert only the clean files",
  markers: "Write conflict markers",
  force: "Force",
};

/** One step: `"Takeback: Revert Agent Turn…" on #7, choosing "Force", puts back …`. */
export function stepHint(step: NextStep): string {
  let text = `"${STEP_COMMANDS[step.command].title}"`;
  if (step.command === "revert" && step.number != null) {
    text += ` on ${revertTarget(step)}`;
  } else if (step.command === "restore" && step.checkpoint) {
    text += ` to #${step.checkpoint.replace(/^#/, "")}`;
  }
  if (step.onConflict && step.onConflict !== "abort") {
    text += `, choosing "${CHOICES[step.onConflict]}",`;
  }
  return `${text} ${step.does}`;
}

/** The next safe action for the outcome message: the steps in VS Code's words, or the
 * server's sentence when it names no command (or is an older server's, without `next`). */
export function nextHint(result: OperationResult): string {
  const steps = result.next ?? [];
  if (!steps.length) {
    return result.nextAction;
  }
  return steps.map(stepHint).join("; or ");
}

/** What a revert step acts on, as the person reads it: `#12`, `#12.3`, `#12 (only src/a.py,
 * tests/**)`, `the hunk at src/app.py:40 of #12`. */
export function revertTarget(step: NextStep): string {
  const entry = step.step ? `#${step.step.replace(/^#/, "")}` : `#${step.number}`;
  if (step.hunk) {
    return `the hunk at ${step.hunk} of ${entry}`;
  }
  return step.paths?.length ? `${entry} (only ${step.paths.join(", ")})` : entry;
}

/** The revert a step names, as operations.ts runs it (undefined: not a revert, or no entry). */
export interface StepRevert {
  kind: "revert";
  folder: string;
  turnId: string;
  pathspec?: string[];
  hunk?: HunkParams;
  onConflict?: OnConflict;
  what: string;
}

/** A revert step as the operation it names, in workspace folder `folder`: the same step, paths
 * or hunk (`PATH:LINE`, a 1-based line of the file as it stands now: `of: "now"`, 0-based). */
export function stepOperation(step: NextStep, folder: string): StepRevert | undefined {
  if (step.command !== "revert" || (step.number == null && !step.step)) {
    return undefined;
  }
  const op: StepRevert = { kind: "revert", folder, turnId: step.step ? `#${step.step.replace(/^#/, "")}` : `#${step.number}`, what: revertTarget(step) };
  if (step.paths?.length) {
    op.pathspec = [...step.paths];
  }
  const hunk = step.hunk ? /^(.*):(\d+)$/.exec(step.hunk) : null;
  if (hunk?.[1] && Number(hunk[2]) >= 1) {
    op.hunk = { uri: joinFolderUri(folder, hunk[1]), line: Number(hunk[2]) - 1, of: "now" };
  }
  if (step.onConflict && step.onConflict !== "abort") {
    op.onConflict = step.onConflict;
  }
  return op;
}

/** The outcome's button for a revert step: `Revert #12.3`, `Revert the hunk at src/app.py:40 of #12 (Force)`. */
export function stepButton(step: NextStep): string {
  const choice = step.onConflict && step.onConflict !== "abort" ? ` (${CHOICES[step.onConflict]})` : "";
  return `Revert ${revertTarget(step)}${choice}`;
}
