import assert from "node:assert/strict";
import { test } from "node:test";
import {
  buildTree,
  FolderTimeline,
  mergePage,
  SessionNode,
  sessionsById,
  sessionNodes,
  StepNode,
  stepNodes,
  TurnNode,
  latestTurn,
  turnActions,
} from "../src/model/tree";
import { entry } from "./fixtures";

const NOW = new Date("2025-01-01T10:06:00Z");
const F = "file:///ws";

function timeline(entries: ReturnType<typeof entry>[], extra: Partial<FolderTimeline> = {}): FolderTimeline {
  return { folder: F, name: "ws", entries, ...extra };
}

test("an empty timeline gives no nodes (the view shows its welcome)", () => {
  assert.deepEqual(buildTree([timeline([])], NOW), []);
  assert.deepEqual(buildTree([timeline([]), { folder: "file:///b", name: "b", entries: [] }], NOW), []);
});

test("sessions group turns, newest activity first, titled by their first prompt; turns carry their files", () => {
  const t1 = entry({ number: 1, session: "s-a", agent: "claude", label: "fix the login bug" });
  const t2 = entry({ number: 2, session: "s-b" });
  const t3 = entry({ number: 3, session: "s-a", agent: "claude", files: [
    { path: "src/x.ts", kind: "modified", additions: 2, deletions: 0 },
    { path: "y.ts", kind: "added", additions: 5 },
  ] });
  const t4 = entry({ number: 4, session: null, source: "cli" });
  const started = new Date(2025, 0, 1, 14, 2).toISOString();
  const sessions = sessionsById([{ session: "s-a", label: "fix the login bug", number: 1, createdAt: started }]);
  const nodes = buildTree([timeline([t4, t3, t2, t1], { sessions })], new Date(2025, 0, 1, 15, 0)) as SessionNode[];
  assert.deepEqual(nodes.map((n) => n.label), ["Terminal (takeback begin … end)", "fix the login bug · 14:02", "Session s-b"]);
  assert.equal(nodes[1]!.tooltip.split("\n")[0], "Agent session s-a");
  assert.equal(nodes[1]!.description.split(" · ").slice(0, 2).join(" · "), "claude · 2 turns");
  const turns = nodes[1]!.children as TurnNode[];
  assert.deepEqual(turns.map((t) => t.label), ["#3 turn 3", "#1 fix the login bug"]);
  assert.deepEqual(turns[0]!.children.map((f) => [f.label, f.description]), [
    ["x.ts", "src · +2 −0"],
    ["y.ts", "added · +5 −0"],
  ]);
  // Stable ids: the same entry gives the same node id on every refresh.
  const again = buildTree([timeline([t4, t3, t2, t1], { sessions })], NOW) as SessionNode[];
  assert.equal((again[1]!.children[0] as TurnNode).id, turns[0]!.id);
});

test("operations sit in their own group, after the sessions", () => {
  const t1 = entry({ number: 1, session: "s-a" });
  const undo = entry({ number: 2, kind: "undo", session: "s-a", target: t1.id, targetNumber: 1, label: null });
  const groups = sessionNodes(timeline([undo, { ...t1, state: "reverted", revertedBy: undo.id }]), NOW);
  assert.deepEqual(groups.map((g) => [g.group, g.label]), [["session", "Session s-a"], ["operations", "Operations"]]);
  assert.deepEqual(groups[0]!.children.map((c) => (c as TurnNode).label), ["#1 turn 1"]);
  assert.deepEqual(groups[1]!.children.map((c) => (c as TurnNode).label), ["#2 Undo #1"]);
});

test("empty turns the server left out are counted in one row, added up over pages", () => {
  const page = timeline([entry({ number: 5 })], { hiddenEmpty: 2, nextBefore: 5 });
  const nodes = buildTree([page], NOW);
  const hidden = nodes.find((n) => n.kind === "hidden");
  assert.equal(hidden?.label, "2 empty turns hidden");
  assert.equal(nodes.at(-1)?.kind, "more");
  const merged = mergePage(page, [entry({ number: 2 })], null, 1, [{ session: "s", label: "hi", number: 1, createdAt: "2025-01-01T10:00:00Z" }]);
  assert.equal(merged.hiddenEmpty, 3);
  assert.equal(merged.sessions?.["s"]?.label, "hi");
  // only empty turns: the row still shows (not the welcome text)
  assert.deepEqual(buildTree([timeline([], { hiddenEmpty: 1 })], NOW).map((n) => n.label), ["1 empty turn hidden"]);
});

test("undo and redo are the server's targets only: without its status, no turn offers them", () => {
  const t1 = entry({ number: 1 });
  const t2 = entry({ number: 2, state: "reverted" });
  const undo = entry({ number: 3, kind: "undo", target: t2.id });
  t2.revertedBy = undo.id;
  const actionsOf = (extra: Partial<FolderTimeline>) =>
    new Map(sessionNodes(timeline([undo, t2, t1], extra), NOW).flatMap((g) => g.children).map((c) => [(c as TurnNode).entry.number, (c as TurnNode).actions] as const));
  const unknown = actionsOf({});
  assert.equal(unknown.get(1)!.undo, false);
  assert.deepEqual(unknown.get(3)!.redo, { method: "revertTurn", turnId: undo.id });
  const told = actionsOf({ undoTarget: 1, redoTarget: 3 });
  assert.equal(told.get(1)!.undo, true);
  assert.deepEqual(told.get(3)!.redo, { method: "redo" });
});

test("turn actions and the context values the menus match", () => {
  const t1 = entry({ number: 1 });
  const t2 = entry({ number: 2, state: "reverted" });
  const undo = entry({ number: 3, kind: "undo", target: t2.id });
  t2.revertedBy = undo.id;
  const t4 = entry({ number: 4 });
  const entries = [t4, undo, t2, t1];
  const byId = new Map(entries.map((e) => [e.id, e] as const));

  const a4 = turnActions(t4, byId, 4, 3);
  assert.deepEqual(a4, { undo: true, revert: true, restore: true });
  const a1 = turnActions(t1, byId, 4, 3);
  assert.equal(a1.undo, false);
  assert.equal(a1.revert, true);
  // The reverted turn comes back with redo (its undo is the redo target) ...
  assert.deepEqual(turnActions(t2, byId, 4, 3).redo, { method: "redo" });
  // ... or, when a later operation is the redo target, by reverting the undo that took it away.
  assert.deepEqual(turnActions(t2, byId, 4, 9).redo, { method: "revertTurn", turnId: undo.id });
  // The undo entry itself offers redo, not revert.
  const aUndo = turnActions(undo, byId, 4, 3);
  assert.equal(aUndo.revert, false);
  assert.deepEqual(aUndo.redo, { method: "redo" });

  const groups = sessionNodes(timeline(entries, { undoTarget: 4, redoTarget: 3 }), NOW);
  const byLabel = new Map(groups.flatMap((g) => g.children).map((c) => [(c as TurnNode).entry.number, c as TurnNode] as const));
  assert.equal(byLabel.get(4)!.contextValue, "turn;agent;undo;revert;restore;applied;");
  assert.equal(byLabel.get(2)!.contextValue, "turn;agent;redo;restore;reverted;");
  assert.equal(byLabel.get(3)!.contextValue, "turn;operation;redo;applied;");
  assert.match(byLabel.get(4)!.contextValue, /^turn.*;undo;/);
  assert.doesNotMatch(byLabel.get(1)!.contextValue, /^turn.*;undo;/);
  // Files of a revertable turn offer "revert this file"; of a reverted one they do not.
  assert.match(byLabel.get(4)!.children[0]!.contextValue, /^file.*;revert;/);
  assert.doesNotMatch(byLabel.get(2)!.children[0]!.contextValue, /;revert;/);
});

test("several folders get a node each; one folder shows its sessions directly", () => {
  const a = timeline([entry({ number: 1 })]);
  const b: FolderTimeline = { folder: "file:///b", name: "b", entries: [], error: "boom" };
  const nodes = buildTree([a, b], NOW);
  assert.deepEqual(nodes.map((n) => [n.kind, "label" in n ? n.label : ""]), [["folder", "ws"], ["folder", "b"]]);
  const bChildren = (nodes[1] as { children: { kind: string; label: string }[] }).children;
  assert.deepEqual(bChildren.map((c) => [c.kind, c.label]), [["message", "boom"]]);
});

test("paging: a 'load more' node, and merging a further page", () => {
  const page1 = timeline([entry({ number: 5 }), entry({ number: 4 })], { nextBefore: 4 });
  const nodes = buildTree([page1], NOW);
  assert.equal(nodes.at(-1)?.kind, "more");
  const merged = mergePage(page1, [entry({ number: 3 }), page1.entries[1]!], null);
  assert.deepEqual(merged.entries.map((e) => e.number), [5, 4, 3]);
  assert.equal(merged.nextBefore, null);
});

test("latest turn across folders", () => {
  const older = entry({ number: 9, createdAt: "2025-01-01T09:00:00Z" });
  const newer = entry({ number: 2, createdAt: "2025-01-01T10:00:00Z" });
  const op = entry({ number: 10, kind: "undo", createdAt: "2025-01-01T11:00:00Z" });
  const latest = latestTurn([timeline([op, older]), { folder: "file:///b", name: "b", entries: [newer] }]);
  assert.equal(latest?.entry.number, 2);
  assert.equal(latest?.folder, "file:///b");
});

test("a turn with several or named checkpoints lists its steps after its files", () => {
  const hooked = entry({
    number: 12,
    label: "Fix the login form",
    agent: "claude",
    showsSteps: true,
    checkpoints: [
      { id: "cpA", at: "2025-01-01T10:00:10Z", label: "Edit src/app.py", paths: ["src/app.py"] },
      { id: "cpB", at: "2025-01-01T10:05:30Z", label: "Bash: npm test", paths: ["out/a.js", "out/b.js"] },
      { id: "cpC", at: "2025-01-01T10:05:40Z", label: null, paths: ["x.txt"], applied: false },
    ],
  });
  const [session] = sessionNodes(timeline([hooked]), NOW);
  const turn = session!.children[0] as TurnNode;
  assert.deepEqual(turn.children.map((c) => c.kind), ["file", "step", "step", "step"]);
  const steps = turn.children.filter((c): c is StepNode => c.kind === "step");
  assert.deepEqual(steps.map((s) => [s.label, s.description]), [
    ["#12.1 Edit src/app.py", "1 file · 6 min ago"],
    ["#12.2 Bash: npm test", "2 files · just now"],
    ["#12.3 changes", "1 file · just now · not applied"],
  ]);
  // What the actions send: the server's names, just after the step and just before it.
  assert.deepEqual(steps.map((s) => [s.checkpointId, s.beforeId]), [["#12.1", "#12.0"], ["#12.2", "#12.1"], ["#12.3", "#12.2"]]);
  assert.equal(steps[0]!.contextValue, "step;restore;before;");
  assert.equal(steps[2]!.contextValue, "step;restore;before;last;");
  assert.match(steps[0]!.tooltip, /- src\/app\\\.py/);
  assert.match(steps[0]!.tooltip, /`#12\.0`, where the turn started/);
  // Stable ids, distinct from the files'.
  assert.equal(steps[1]!.id, `${F}|${hooked.id}|step|cpB`);
  // Each step expands to its files; each opens that step's own diff (step k of #12).
  assert.deepEqual(steps[1]!.children.map((f) => [f.kind, f.label, f.description, f.step, f.path]), [
    ["stepFile", "a.js", "out", 2, "out/a.js"],
    ["stepFile", "b.js", "out", 2, "out/b.js"],
  ]);
  // A turn that can no longer be restored (never applied) offers no step actions.
  const notApplied = { ...hooked, state: "not-applied" as const };
  const [s2] = sessionNodes(timeline([notApplied]), NOW);
  assert.deepEqual((s2!.children[0] as TurnNode).children.filter((c) => c.kind === "step").map((c) => c.contextValue), [
    "step;",
    "step;",
    "step;last;",
  ]);
});

test("a turn lists its steps when the server says so (showsSteps), and only then", () => {
  const two = entry({ number: 3, showsSteps: true, checkpoints: [
    { id: "a", at: "2025-01-01T10:00:00Z", paths: ["a"] },
    { id: "b", at: "2025-01-01T10:00:01Z", paths: ["b"] },
  ] });
  assert.equal(stepNodes(F, two, { undo: false, revert: true, restore: true }, NOW)[1]!.label, "#3.2 changes");
  assert.deepEqual(stepNodes(F, { ...two, showsSteps: false }, { undo: false, revert: true, restore: true }, NOW), []);
  assert.deepEqual(stepNodes(F, { ...two, showsSteps: undefined }, { undo: false, revert: true, restore: true }, NOW), []);
});

test("a turn's icon shows failed checks as the server decided them (checksPassed)", () => {
  const icon = (extra: Partial<ReturnType<typeof entry>>) =>
    (sessionNodes(timeline([entry({ number: 1, ...extra })]), NOW)[0]!.children[0] as TurnNode).icon;
  const failedThenPassed = [{ name: "tests", status: "failed" as const }, { name: "tests", status: "passed" as const }];
  assert.equal(icon({ checks: failedThenPassed, checksPassed: true, failedChecks: [] }), "applied");
  assert.equal(icon({ checks: [{ name: "tests", status: "error" }], checksPassed: false, failedChecks: ["tests"] }), "checks-failed");
  assert.equal(icon({ checks: [], checksPassed: null }), "applied");
  assert.equal(icon({ state: "reverted", checksPassed: false }), "reverted");
});

test("hook payloads read only in part are shown at the top of their folder", () => {
  const t = timeline([entry({ number: 1 })], { payloadProblems: 2, lastPayloadProblem: "claude UserPromptSubmit: half a character" });
  const [first, ...rest] = buildTree([t], NOW);
  assert.equal(first!.kind, "message");
  assert.match((first as { label: string }).label, /^2 hook payload\(s\) read only in part \(recorded anyway\); last: claude/);
  assert.equal(rest.length, 1);
  assert.equal(buildTree([timeline([entry({ number: 1 })])], NOW)[0]!.kind, "session");
});

test("the person's marks sit in their own group with their own icon, and can be restored to and reverted", () => {
  const t1 = entry({ number: 1, session: "s-a" });
  const mark = entry({ number: 2, kind: "mark", session: null, source: "cli", label: "before the refactor", files: [
    { path: "a.txt", kind: "modified", additions: 1, deletions: 1 },
  ] });
  const groups = sessionNodes(timeline([mark, t1]), NOW);
  assert.deepEqual(groups.map((g) => [g.group, g.label]), [["session", "Session s-a"], ["marks", "Your marks"]]);
  const row = groups[1]!.children[0] as TurnNode;
  assert.equal(row.label, "#2 before the refactor");
  assert.equal(row.icon, "mark");
  assert.ok(row.actions.restore && row.actions.revert && !row.actions.undo);
  assert.match(row.contextValue, /^turn;mark;.*revert;.*restore;/);
});
