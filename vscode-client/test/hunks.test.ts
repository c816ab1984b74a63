import assert from "node:assert/strict";
import { test } from "node:test";
import { operationFromServerCommand } from "../src/model/args";
import { actionDetail, actionLabel, actionLine, hunkRevert, isResultSide } from "../src/model/hunks";
import { confirmationFor } from "../src/model/preview";
import { contentUri, parseContentUri } from "../src/model/uris";
import type { OperationResult } from "../src/lspExt";

const FOLDER = "file:///w";
const FILE = "file:///w/app/greet.py";

function ref(side: "before" | "after", step?: number) {
  const uri = contentUri({ folder: FOLDER, turnId: "01JTURN", number: 2, side, path: "app/greet.py", uri: FILE, step });
  return parseContentUri(uri.query);
}

test("a line of a turn's right side names its hunk by the turn's id, of the change", () => {
  assert.deepEqual(hunkRevert(ref("after"), 5), {
    kind: "revert",
    folder: FOLDER,
    turnId: "01JTURN",
    hunk: { uri: FILE, line: 5, of: "change" },
    what: "the change at line 6 of app/greet.py from #2",
  });
});

test("a step's right side reverts the hunk of that step only (#N.k)", () => {
  const op = hunkRevert(ref("after", 3), 0);
  assert.equal(op?.turnId, "#2.3");
  assert.equal(op?.what, "the change at line 1 of app/greet.py from #2.3");
});

test("the left side and a patch have no hunk action", () => {
  assert.equal(isResultSide(ref("before")), false);
  assert.equal(hunkRevert(ref("before"), 1), undefined);
  assert.equal(hunkRevert(parseContentUri(contentUri({ folder: FOLDER, turnId: "t", number: 2, side: "patch" }).query), 0), undefined);
});

test("where the action sits and what it says", () => {
  assert.equal(actionLine({ start: 4, end: 6, removed: 1, line: 4 }), 4);
  assert.equal(actionLine({ start: 9, end: 9, removed: 3, line: 8 }), 8); // only removed lines, at the end
  assert.equal(actionLabel({ start: 4, end: 6, removed: 1, line: 4 }), "↶ Revert This Change (−1 +2)");
  assert.equal(actionLabel({ start: 0, end: 2, removed: 0, line: 0 }), "↶ Revert This Change (+2)");
  assert.equal(actionDetail(ref("after", 3)), "Takes back only this change of step #2.3; the rest of it and every later edit stay.");
});

test("a narrow revert's confirmation says what of the turn it takes back", () => {
  const dry: OperationResult = {
    operation: "revert", verdict: "safe", applied: false, dryRun: true, targetNumber: 2,
    restored: [{ path: "app/greet.py", action: "write", additions: 1, deletions: 1 }], nextAction: "", message: "",
  };
  assert.equal(confirmationFor(dry, "the change at line 6 of app/greet.py from #2", true).message, "Revert the change at line 6 of app/greet.py from #2?");
  assert.equal(confirmationFor(dry, "#2's changes to app/greet.py").message, "Revert agent turn #2?");
});

test("a server command's hunk, pathspec and expected entry stay on the operation (never the whole turn)", () => {
  const hunk = { uri: FILE, line: 7, of: "now" };
  assert.deepEqual(operationFromServerCommand("takeback.revertTurn", [{ turnId: "#2", hunk, expectTurnId: "01JTURN", folder: FOLDER }]), {
    kind: "revert", folder: FOLDER, turnId: "#2", uri: undefined, hunk, expectTurnId: "01JTURN",
  });
  assert.deepEqual(operationFromServerCommand("takeback.revertTurn", [{ turnId: "#2.1", pathspec: ["app/**"] }]), {
    kind: "revert", folder: undefined, turnId: "#2.1", uri: undefined, pathspec: ["app/**"],
  });
  // a malformed hunk is not dropped (that would revert the whole turn): the server gets the command and refuses it
  assert.equal(operationFromServerCommand("takeback.revertTurn", [{ turnId: "#2", hunk: { uri: FILE } }]), undefined);
  assert.equal(operationFromServerCommand("takeback.revertTurn", [{ turnId: "#2", pathspec: "app" }]), undefined);
});
