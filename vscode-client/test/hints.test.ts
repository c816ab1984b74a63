import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { OperationResult } from "../src/lspExt";
import { STEP_COMMANDS, nextHint, stepButton, stepHint, stepOperation } from "../src/model/hints";
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

test("a narrow revert step is said as narrow and runs the same narrow revert", () => {
  const folder = "file:///w";
  const step = { command: "revert" as const, number: 12, step: "12.3", onConflict: "force" as const, does: "puts back …" };
  assert.equal(stepHint(step), '"Takeback: Revert Agent Turn…" on #12.3, choosing "Force", puts back …');
  assert.deepEqual(stepOperation(step, folder), { kind: "revert", folder, turnId: "#12.3", onConflict: "force", what: "#12.3" });
  assert.equal(stepButton(step), "Revert #12.3 (Force)");

  const paths = { command: "revert" as const, number: 12, paths: ["src/a.py", "tests/**"], does: "takes those files back" };
  assert.equal(stepHint(paths), '"Takeback: Revert Agent Turn…" on #12 (only src/a.py, tests/**) takes those files back');
  assert.deepEqual(stepOperation(paths, folder), { kind: "revert", folder, turnId: "#12", pathspec: ["src/a.py", "tests/**"], what: "#12 (only src/a.py, tests/**)" });

  // A hunk is "PATH:LINE", a 1-based line of the file as it stands now: `of: "now"`, 0-based.
  const hunk = { command: "revert" as const, number: 12, hunk: "src/my app.py:40", onConflict: "markers" as const, does: "writes markers" };
  assert.equal(stepHint(hunk), '"Takeback: Revert Agent Turn…" on the hunk at src/my app.py:40 of #12, choosing "Write conflict markers", writes markers');
  assert.deepEqual(stepOperation(hunk, folder)?.hunk, { uri: "file:///w/src/my%20app.py", line: 39, of: "now" });
  assert.equal(stepButton(hunk), "Revert the hunk at src/my app.py:40 of #12 (Write conflict markers)");

  // Not a revert, or a revert of nothing named: no operation of its own.
  assert.equal(stepOperation({ command: "redo", does: "brings it back" }, folder), undefined);
  assert.equal(stepOperation({ command: "revert", does: "?" }, folder), undefined);
});
