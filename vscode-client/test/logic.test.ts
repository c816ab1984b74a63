import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { checkFrom, onConflictFrom, operationFromServerCommand, turnRefFrom } from "../src/model/args";
import { isLspWorkspaceEdit, toLspWorkspaceEdit, touchedUris } from "../src/model/edits";
import { confirmationFor, conflictChoices, outcomeFor } from "../src/model/preview";
import { classifyStderr, expandPath, Probes, resolveServer } from "../src/model/resolve";
import { contentUri, diffTitle, joinFolderUri, parseContentUri } from "../src/model/uris";
import { advertisedVersion, PROTOCOL_VERSION, versionProblem } from "../src/model/version";
import type { OperationResult } from "../src/lspExt";

test("src/model/ stays free of the vscode module (so these tests can run in plain node)", () => {
  const dir = join(__dirname, "..", "..", "src", "model");
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name), "utf8");
    assert.doesNotMatch(text, /from "vscode"|require\("vscode"\)/, `${name} imports vscode`);
    assert.doesNotMatch(text, /^import (?!type)[^;]*from "vscode-languageclient/m, `${name} imports vscode-languageclient at run time`);
  }
});

test("command arguments: nothing, numbers, '#N', ids, entries, tree nodes, {turnId}", () => {
  assert.equal(turnRefFrom(undefined), undefined);
  assert.equal(turnRefFrom(""), undefined);
  assert.deepEqual(turnRefFrom(12), { turnId: "12", number: 12 });
  assert.deepEqual(turnRefFrom("#12"), { turnId: "12", number: 12 });
  assert.deepEqual(turnRefFrom("01JABCDEF"), { turnId: "01JABCDEF" });
  assert.deepEqual(turnRefFrom({ id: "01J1", number: 3, kind: "turn" }), { turnId: "01J1", folder: undefined, number: 3 });
  assert.deepEqual(turnRefFrom({ kind: "turn", folder: "file:///w", entry: { id: "01J2", number: 4 } }), { turnId: "01J2", folder: "file:///w", number: 4 });
  assert.deepEqual(turnRefFrom({ turnId: "#5", folder: "file:///w" }), { turnId: "5", number: 5, folder: "file:///w" });
  assert.equal(turnRefFrom({ something: 1 }), undefined);
  assert.equal(turnRefFrom(-1), undefined);
  assert.equal(onConflictFrom("markers"), "markers");
  assert.equal(onConflictFrom("nope"), undefined);
});

test("checks from an agent: booleans allowed, bad input is a clear error", () => {
  assert.deepEqual(checkFrom({ name: "tests", status: true, command: "pytest", exitCode: 0 }), { name: "tests", status: "passed", command: "pytest", exitCode: 0 });
  assert.deepEqual(checkFrom({ name: "lint", status: "failed" }), { name: "lint", status: "failed" });
  assert.throws(() => checkFrom({ name: "x", status: "green" }), /status must be/);
  assert.throws(() => checkFrom({ status: "passed" }), /non-empty name/);
  assert.throws(() => checkFrom(null), /must be an object/);
});

test("workspace edits: text edits grouped per document with versions, file operations in order", () => {
  const r = (l: number, c: number, l2: number, c2: number) => ({ start: { line: l, character: c }, end: { line: l2, character: c2 } });
  const edit = toLspWorkspaceEdit(
    [
      { type: "text", uri: "file:///w/a.ts", range: r(0, 0, 0, 1), newText: "x" },
      { type: "text", uri: "file:///w/a.ts", range: r(2, 0, 2, 0), newText: "y\n" },
      { type: "text", uri: "file:///w/b.ts", range: r(1, 0, 1, 3), newText: "" },
      { type: "create", uri: "file:///w/new.ts", contents: "hello\n" },
      { type: "rename", oldUri: "file:///w/old.ts", newUri: "file:///w/renamed.ts", overwrite: true },
      { type: "delete", uri: "file:///w/gone.ts" },
    ],
    (uri) => (uri === "file:///w/a.ts" ? 7 : null),
  );
  assert.deepEqual(edit.documentChanges, [
    { textDocument: { uri: "file:///w/a.ts", version: 7 }, edits: [{ range: r(0, 0, 0, 1), newText: "x" }, { range: r(2, 0, 2, 0), newText: "y\n" }] },
    { textDocument: { uri: "file:///w/b.ts", version: null }, edits: [{ range: r(1, 0, 1, 3), newText: "" }] },
    { kind: "create", uri: "file:///w/new.ts" },
    { textDocument: { uri: "file:///w/new.ts", version: null }, edits: [{ range: r(0, 0, 0, 0), newText: "hello\n" }] },
    { kind: "rename", oldUri: "file:///w/old.ts", newUri: "file:///w/renamed.ts", options: { overwrite: true } },
    { kind: "delete", uri: "file:///w/gone.ts" },
  ]);
  assert.deepEqual(touchedUris(edit).sort(), ["file:///w/a.ts", "file:///w/b.ts", "file:///w/new.ts", "file:///w/renamed.ts"]);
  assert.ok(isLspWorkspaceEdit(edit));
  assert.ok(isLspWorkspaceEdit({ changes: { "file:///w/a.ts": [] } }));
  assert.ok(!isLspWorkspaceEdit({ changes: 1, other: 2 }));
  assert.ok(!isLspWorkspaceEdit(null));
});

function probes(overrides: Partial<Probes> = {}): Probes {
  return {
    which: (name) => ({ takeback: "/usr/bin/takeback", python3: "/usr/bin/python3", "/opt/tb/bin/takeback": "/opt/tb/bin/takeback", "/home/me/venv/bin/python": "/home/me/venv/bin/python" } as Record<string, string>)[name],
    pythonProblem: () => undefined,
    bundle: { entry: "/ext/bundled/libs/takeback/__main__.py", pythons: ["3.11", "3.12"] },
    bundleProblem: () => undefined,
    home: "/home/me",
    workspaceFolder: "/w",
    trusted: true,
    ...overrides,
  };
}

test("server resolution: setting, then PATH, then the bundled copy run by python3", () => {
  const base = { command: "", python: "", logLevel: "INFO" };
  const explicit = resolveServer({ ...base, command: "/opt/tb/bin/takeback" }, probes());
  assert.ok(explicit.ok && explicit.server.source === "setting:command" && explicit.server.args.join(" ") === "serve");

  const python = resolveServer({ ...base, python: "~/venv/bin/python", logLevel: "DEBUG" }, probes());
  assert.ok(python.ok);
  assert.deepEqual(python.ok && [python.server.command, ...python.server.args], ["/home/me/venv/bin/python", "-m", "takeback", "serve", "--log-level", "DEBUG"]);

  const onPath = resolveServer(base, probes());
  assert.ok(onPath.ok && onPath.server.source === "path" && onPath.server.command === "/usr/bin/takeback");
  assert.deepEqual(onPath.steps, ["takeback.server.command: not set", "takeback.server.python: not set", "takeback on PATH: /usr/bin/takeback"]);

  const viaBundle = resolveServer(base, probes({ which: (n) => (n === "python3" ? "/usr/bin/python3" : undefined) }));
  assert.ok(viaBundle.ok && viaBundle.server.source === "bundled" && viaBundle.server.command === "/usr/bin/python3");
  assert.deepEqual(viaBundle.ok && viaBundle.server.args, ["-I", "-u", "/ext/bundled/libs/takeback/__main__.py", "serve"]);

  // python3 too old, `python` on PATH new enough: the first Python that can run the bundle.
  const paths: Record<string, string> = { python3: "/usr/bin/python3", python: "/opt/py/bin/python" };
  const second = resolveServer(base, probes({ which: (n) => paths[n], bundleProblem: (p) => (p === "/usr/bin/python3" ? "Python 3.9 is older than 3.11" : undefined) }));
  assert.ok(second.ok && second.server.command === "/opt/py/bin/python");
  assert.deepEqual(second.steps.slice(3), ["python3 on PATH: /usr/bin/python3: Python 3.9 is older than 3.11", "bundled Takeback: run by /opt/py/bin/python"]);

  // A takeback.server.python without Takeback of its own runs the bundled copy.
  const setPython = resolveServer({ ...base, python: "~/venv/bin/python" }, probes({ pythonProblem: () => "cannot import takeback" }));
  assert.ok(setPython.ok && setPython.server.source === "bundled" && setPython.server.command === "/home/me/venv/bin/python");
});

test("server resolution failures say what is wrong and how to fix it", () => {
  const base = { command: "", python: "", logLevel: "INFO" };
  // No Python that can run the bundle: the message names what was tried, the fix is one.
  const old = { which: (n: string) => (n === "python3" ? "/usr/bin/python3" : undefined), bundleProblem: () => "Python 3.9 is older than 3.11" };
  const none = resolveServer(base, probes(old));
  assert.ok(!none.ok);
  assert.match(!none.ok ? none.problem : "", /no Python 3\.11 or newer .*python3 on PATH: \/usr\/bin\/python3: Python 3\.9 is older than 3\.11; python on PATH: not found/);
  assert.match(!none.ok ? none.fix : "", /^Install Python 3\.11 or newer so that `python3` is on PATH/);
  // A build without the bundle (run from source): the fix is the clone's setup.
  const unbundled = resolveServer(base, probes({ ...old, bundle: undefined }));
  assert.ok(!unbundled.ok);
  assert.match(!unbundled.ok ? unbundled.fix : "", /not published as a package: in a clone of it, `pipx install \.` puts `takeback` on PATH/);
  assert.deepEqual(unbundled.steps.at(-1), "bundled Takeback: not in this build of the extension");

  // A setting that is set but broken is an error, never silently skipped.
  const broken = resolveServer({ ...base, command: "${workspaceFolder}/missing/takeback" }, probes());
  assert.ok(!broken.ok);
  assert.match(!broken.ok ? broken.problem : "", /\/w\/missing\/takeback/);
  const badPython = resolveServer({ ...base, python: "/usr/bin/python3" }, probes({ pythonProblem: () => "cannot import takeback", bundle: undefined }));
  assert.ok(!badPython.ok && /python3 -m pip install PATH-TO-THE-CLONE/.test(badPython.fix));
  const oldPython = resolveServer({ ...base, python: "~/venv/bin/python" }, probes({ pythonProblem: () => "cannot import takeback", bundleProblem: () => "Python 3.9 is older than 3.11" }));
  assert.ok(!oldPython.ok && /cannot run Takeback: Python 3\.9 is older than 3\.11/.test(oldPython.problem) && /Python 3\.11 or newer/.test(oldPython.fix));

  // Restricted Mode: no program inside the workspace folder runs, however it was found.
  const inside = { which: (n: string) => ({ "/w/.venv/bin/takeback": "/w/.venv/bin/takeback", "/w/bin/python3": "/w/bin/python3", takeback: "/w/bin/takeback", python3: "/w/bin/python3" } as Record<string, string>)[n] };
  const planted = resolveServer({ ...base, command: "${workspaceFolder}/.venv/bin/takeback" }, probes({ ...inside, trusted: false }));
  assert.ok(!planted.ok && /not run in Restricted Mode/.test(planted.problem) && /Manage Workspace Trust/.test(planted.fix));
  const plantedPython = resolveServer({ ...base, python: "/w/bin/python3" }, probes({ ...inside, trusted: false }));
  assert.ok(!plantedPython.ok && /takeback\.server\.python names \/w\/bin\/python3/.test(plantedPython.problem));
  const onPathInside = resolveServer(base, probes({ ...inside, trusted: false }));
  assert.ok(!onPathInside.ok && /Manage Workspace Trust/.test(onPathInside.fix));
  assert.deepEqual(onPathInside.steps.slice(2), [
    "takeback on PATH: /w/bin/takeback is inside the workspace folder, which is not trusted: not run in Restricted Mode",
    "python3 on PATH: /w/bin/python3 is inside the workspace folder, which is not trusted: not run in Restricted Mode",
    "python on PATH: not found",
  ]);
  const trusted = resolveServer({ ...base, command: "${workspaceFolder}/.venv/bin/takeback" }, probes(inside));
  assert.ok(trusted.ok && trusted.server.command === "/w/.venv/bin/takeback");
  assert.ok(resolveServer(base, probes({ trusted: false })).ok); // outside the folder: runs

  assert.equal(expandPath("~/x", "/home/me"), "/home/me/x");
  assert.equal(expandPath("${workspaceFolder}/.venv/bin/takeback", "/h", "/w"), "/w/.venv/bin/takeback");
});

test("content URIs round-trip and name the file (for its language)", () => {
  const parts = contentUri({ folder: "file:///w", turnId: "01J9", number: 9, side: "before", path: "src/a b.ts", uri: "file:///w/src/a%20b.ts" });
  assert.equal(parts.scheme, "takeback");
  assert.equal(parts.path, "/9/before/src/a b.ts");
  assert.deepEqual(parseContentUri(parts.query), { folder: "file:///w", turnId: "01J9", number: 9, side: "before", path: "src/a b.ts", uri: "file:///w/src/a%20b.ts" });
  assert.match(contentUri({ folder: "f", turnId: "t", number: 3, side: "patch" }).path, /turn-3\.diff$/);
  assert.throws(() => parseContentUri("side=left"), /not a Takeback content URI/);
  assert.equal(joinFolderUri("file:///w/", "src/a b.ts"), "file:///w/src/a%20b.ts");
  assert.equal(diffTitle(4, "a.ts"), "#4 a.ts (before ↔ after)");
  const step = contentUri({ folder: "file:///w", turnId: "01J9", number: 9, side: "after", path: "a.ts", uri: "file:///w/a.ts", step: 2 });
  assert.equal(step.path, "/9.2/after/a.ts");
  assert.equal(parseContentUri(step.query).step, 2);
  assert.equal(diffTitle(9, "a.ts", undefined, 2), "#9.2 a.ts (before ↔ after)");
});

const dry: OperationResult = {
  operation: "undo",
  verdict: "safe",
  applied: false,
  dryRun: true,
  targetNumber: 4,
  entry: { id: "x", number: 4, kind: "turn", label: "Add a form", createdAt: "", state: "applied" },
  restored: [
    { path: "a.ts", action: "write", additions: 1, deletions: 2 },
    { path: "new.ts", action: "delete" },
    { path: "same.ts", action: "unchanged" },
  ],
  nextAction: "takeback redo",
  message: "would undo turn #4",
  patch: "--- a\n+++ b\n",
};

test("the confirmation lists what the dry run would change", () => {
  const c = confirmationFor(dry);
  assert.equal(c.message, "Undo agent turn #4?");
  assert.equal(c.confirm, "Undo");
  assert.equal(c.needsConflictChoice, false);
  // the prompt above the files; no "dry run", and the server's sentence is not repeated
  assert.equal(c.detail, "“Add a form”\n\n2 files will change:\na.ts  +1 −2\nnew.ts  deleted");
  const noted = confirmationFor({ ...dry, entry: { ...dry.entry!, notices: ["checkpoint cp1 was not applied by the editor"] } });
  assert.match(noted.detail, /\n\nNote: checkpoint cp1 was not applied by the editor$/);
  assert.doesNotMatch(confirmationFor({ ...dry, entry: { ...dry.entry!, number: 9 } }).detail, /Add a form/);
});

test("the outcome is one sentence, the server's", () => {
  const done = outcomeFor({ ...dry, dryRun: false, applied: true, message: "undo of #4 done as #5: 2 files changed" });
  assert.equal(done.message, "Takeback: Undo of #4 done as #5: 2 files changed.");
  assert.equal(done.severity, "info");
});

test("conflicts: the choices, and the outcome's severity", () => {
  const conflicted: OperationResult = { ...dry, verdict: "partial", conflicts: [{ path: "b.ts", reason: "edited since", markersPossible: true }] };
  assert.equal(confirmationFor(conflicted).needsConflictChoice, true);
  assert.deepEqual(conflictChoices(conflicted).map((c) => c.value), ["skip", "markers", "force", "open", "cancel"]);
  // markers are offered only where they can be written, and say where
  const binary = { path: "logo.png", reason: "binary file changed since", binary: true, markersPossible: false };
  assert.deepEqual(conflictChoices({ ...conflicted, conflicts: [binary] }).map((c) => c.value), ["skip", "force", "open", "cancel"]);
  const both = conflictChoices({ ...conflicted, conflicts: [...conflicted.conflicts!, binary] });
  assert.equal(both[1]!.value, "markers");
  assert.equal(both[1]!.description, "b.ts get <<<<<<< / >>>>>>> sections; the others cannot take markers");
  const ended = outcomeFor({ ...dry, dryRun: false, applied: true, notices: ["turn #4 was still open; undo ended it first"] });
  assert.match(ended.message, / Note: turn #4 was still open; undo ended it first\.$/);
  assert.match(conflictChoices(conflicted)[0]!.description, /^2 files; the 1 conflicted file stay/);
  assert.match(conflictChoices({ ...conflicted, restored: [] })[0]!.description, /^the files without conflicts/);
  assert.equal(outcomeFor({ ...dry, dryRun: false, applied: true }).severity, "info");
  const partial = outcomeFor({ ...conflicted, dryRun: false, applied: true });
  assert.equal(partial.severity, "warning");
  assert.deepEqual(partial.openable, ["b.ts"]);
  assert.match(partial.message, /Next: takeback redo/);
  assert.equal(outcomeFor({ ...dry, dryRun: false, applied: false, verdict: "refused" }).severity, "warning");
  assert.equal(outcomeFor({ ...dry, dryRun: false, applied: false, verdict: "broken" }).severity, "error");
});

test("server stderr: its own records are dropped once they arrive as logMessage; the rest keeps its level", () => {
  const info = "2026-11-25 23:01:54,195 INFO takeback.lsp: takeback 0.1.0 language server starting";
  assert.deepEqual(classifyStderr(info, false), { level: "info", text: "takeback.lsp: takeback 0.1.0 language server starting" });
  assert.equal(classifyStderr(info, true).level, "drop");
  const pygls = "2026-11-25 22:51:42,306 ERROR pygls.protocol.json_rpc: Exception occurred for message \"10\"";
  assert.deepEqual(classifyStderr(pygls, true), { level: "error", text: 'pygls.protocol.json_rpc: Exception occurred for message "10"' });
  assert.equal(classifyStderr("Traceback (most recent call last):", true).level, "error");
  assert.equal(classifyStderr("takeback: error: unrecognized arguments: --stdio", false).level, "error");
  assert.equal(classifyStderr("   ", true).level, "drop");
});

test("server commands from code actions become previewed operations; raw calls pass through", () => {
  assert.deepEqual(operationFromServerCommand("takeback.undoTurn", [{ expectTurnId: "01J", folder: "file:///w" }]), { kind: "undo", folder: "file:///w", expectTurnId: "01J" });
  assert.deepEqual(operationFromServerCommand("takeback.redoTurn", []), { kind: "redo", folder: undefined, expectTurnId: undefined });
  assert.deepEqual(operationFromServerCommand("takeback.revertTurn", [{ turnId: "3", uri: "file:///w/a.py" }]), { kind: "revert", folder: undefined, turnId: "3", uri: "file:///w/a.py" });
  assert.deepEqual(operationFromServerCommand("takeback.restore", [{ checkpointId: "last-green" }]), { kind: "restore", folder: undefined, checkpointId: "last-green" });
  assert.equal(operationFromServerCommand("takeback.undoTurn", [{ dryRun: true }]), undefined);
  assert.equal(operationFromServerCommand("takeback.revertTurn", [{ uri: "x" }]), undefined);
  assert.equal(operationFromServerCommand("editor.action.other", [{}]), undefined);
});

test("a server that speaks another protocol version is refused with what to do", () => {
  const speaking = (v: unknown) => ({ capabilities: { experimental: { takeback: { protocolVersion: v } } } });
  assert.equal(advertisedVersion(speaking(PROTOCOL_VERSION)), PROTOCOL_VERSION);
  assert.equal(versionProblem(speaking(PROTOCOL_VERSION), "takeback"), undefined);
  // A stale server (protocol version 1) advertised nothing.
  const stale = versionProblem({ capabilities: { textDocumentSync: 2 } }, "/usr/bin/takeback");
  assert.match(stale!.problem, /\/usr\/bin\/takeback\) speaks an older protocol \(version 1\); this extension speaks version 2/);
  assert.match(stale!.fix, /Upgrade the Takeback server/);
  assert.match(versionProblem(speaking(PROTOCOL_VERSION + 1), "takeback")!.fix, /Update the Takeback extension/);
  assert.equal(advertisedVersion(speaking("2")), undefined);
  assert.equal(advertisedVersion(undefined), undefined);
});
