/**
 * The next safe action in VS Code's words: the server sends it as a sentence in the CLI's words
 * (`nextAction`: "'takeback redo' brings turn #4 back") and as data (`next`, one step per command
 * it names); this module says each step with the title of the command a person runs here
 * ("Takeback: Redo Agent Turn" brings turn #4 back). The titles are package.json's
 * (contributes.commands; a unit test keeps them equal), the on-conflict choices the labels of
 * preview.ts's conflict pick. Pure module.
 */
import type { NextStep, OnConflict, OperationResult } from "../lspExt";

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
    text += ` on #${step.number}`;
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
