import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { OperationResult } from "../src/lspExt";
import { STEP_COMMANDS, nextHint, stepHint } from "../src/model/hints";
import { outcomeFor } from "../src/model/preview";

test("each step names the command by its title in package.json", () => {
  // out/test/ when compiled: package.json is two folders up from here.
  type Contributed = { command: string; title: string; category?: string };
  const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as {
    contributes: { commands: Contributed[] };
  };
  const titles = new Map<string, string>(
    pkg.contributes.commands.map((c) => [c.command, `${c.category ? `${c.category}: ` : ""}${c.title}`]),
  );
  for (const { command, title } of Object.values(STEP_COMMANDS)) {
    assert.equal(titles.get(command), title);
  }
});

test("steps in VS Code's words: the title, the entry, the conflict choice, what it does", () => {
  assert.equal(stepHint({ command: "redo", does: "brings turn #4 back" }), '"Takeback: Redo Agent Turn" brings turn #4 back');
  assert.equal(stepHint({ command: "revert", number: 7, does: "takes this undo back" }), '"Takeback: Revert Agent Turn…" on #7 takes this undo back');
  assert.equal(
    stepHint({ command: "undo", onConflict: "skip", does: "changes only the 2 clean files" }),
    '"Takeback: Undo Agent Turn", choosing "Revert only the clean files", changes only the 2 clean files',
  );
  assert.equal(stepHint({ command: "restore", checkpoint: "3.1", onConflict: null, does: "carries it out" }),
    '"Takeback: Restore Checkpoint…" to #3.1 carries it out');
});

const UNDONE: OperationResult = {
  operation: "undo",
  verdict: "partial",
  applied: true,
  conflicts: [{ path: "m.txt", reason: "overlapping edits" }],
  message: "undo of #4 done as #5: 1 file changed (1 left in conflict)",
  nextAction: "m.txt left in conflict: 'takeback revert 4 --on-conflict force' puts back …; 'takeback redo' brings turn #4 back",
  next: [
    { command: "revert", number: 4, onConflict: "force", does: "puts back the starting content where it overlaps your later edits (undoable)" },
    { command: "redo", does: "brings turn #4 back" },
  ],
};

test("the outcome names VS Code's commands, never the CLI's", () => {
  const outcome = outcomeFor(UNDONE);
  assert.match(outcome.message, /Next: "Takeback: Revert Agent Turn…" on #4, choosing "Force", puts back/);
  assert.match(outcome.message, /; or "Takeback: Redo Agent Turn" brings turn #4 back/);
  assert.doesNotMatch(outcome.message, /takeback redo|'takeback/);
});

test("an answer without steps (an older server) keeps its sentence", () => {
  assert.equal(nextHint({ ...UNDONE, next: undefined }), UNDONE.nextAction);
  assert.equal(nextHint({ ...UNDONE, next: [] }), UNDONE.nextAction);
});
