import assert from "node:assert/strict";
import { test } from "node:test";
import {
  clockTime,
  checksState,
  checksText,
  entryDescription,
  entryTitle,
  entryTooltip,
  fileDescription,
  lineDelta,
  relativeTime,
  statusBarText,
} from "../src/model/format";
import { entry } from "./fixtures";

const NOW = new Date("2025-01-01T10:06:00Z");

test("relative times", () => {
  assert.equal(relativeTime("2025-01-01T10:05:50Z", NOW), "just now");
  assert.equal(relativeTime("2025-01-01T10:01:00Z", NOW), "5 min ago");
  assert.equal(relativeTime("2025-01-01T07:00:00Z", NOW), "3 h ago");
  assert.equal(relativeTime("2024-12-30T10:00:00Z", NOW), "2 days ago");
  assert.equal(relativeTime("2024-11-01T10:00:00Z", NOW), "2024-11-01");
  assert.equal(relativeTime(undefined, NOW), "");
  assert.equal(relativeTime("garbage", NOW), "");
});

test("line deltas use a real minus sign and vanish when nothing changed", () => {
  assert.equal(lineDelta(12, 3), "+12 −3");
  assert.equal(lineDelta(0, 0), "");
  assert.equal(lineDelta(undefined, undefined), "");
});

test("checks: shown as the server decided them (checksPassed, failedChecks)", () => {
  assert.equal(checksState({}), "none");
  assert.equal(checksState({ checksPassed: null }), "none");
  assert.equal(checksState({ checksPassed: true }), "passed");
  assert.equal(checksState({ checksPassed: false }), "failed");
  const two = [{ name: "tests", status: "passed" as const }, { name: "lint", status: "skipped" as const }, { name: "tests", status: "passed" as const }];
  assert.equal(checksText({ checks: two, checksPassed: true, failedChecks: [] }), "✓ 2 checks");
  assert.equal(checksText({ checks: [{ name: "tests", status: "failed" }], checksPassed: false, failedChecks: ["tests"] }), "✗ tests");
  assert.equal(checksText({ checks: [], checksPassed: null }), "");
});

test("entry titles and descriptions", () => {
  const e = entry({ number: 12, label: "Add a login form", additions: 12, deletions: 3, files: [
    { path: "a.ts", kind: "modified" },
    { path: "b.ts", kind: "added" },
  ], checks: [{ name: "tests", status: "passed" }], checksPassed: true, failedChecks: [] });
  assert.equal(entryTitle(e), "#12 Add a login form");
  assert.equal(entryDescription(e, NOW), "5 min ago · 2 files +12 −3 · ✓ 1 check");
  assert.equal(entryDescription({ ...e, state: "reverted" }, NOW), "5 min ago · 2 files +12 −3 · ✓ 1 check · undone");
  assert.equal(entryTitle(entry({ number: 3, label: "" })), "#3 (no label)");
  assert.equal(entryTitle(entry({ number: 13, kind: "undo", label: null, targetNumber: 12 })), "#13 Undo #12");
  assert.equal(entryTitle(entry({ number: 13, kind: "undo", label: "undo turn #12: Add a form" })), "#13 undo turn #12: Add a form");
});

test("file descriptions say what the turn did, never git's status letter", () => {
  assert.equal(fileDescription({ path: "src/app/a.ts", kind: "modified", additions: 3, deletions: 1 }), "src/app · +3 −1");
  assert.equal(fileDescription({ path: "b.png", kind: "added", binary: true }), "added · binary");
  assert.equal(fileDescription({ path: "n.ts", kind: "renamed", oldPath: "o.ts" }), "renamed from o.ts");
  assert.equal(fileDescription({ path: "gone.ts", kind: "deleted", deletions: 4 }), "deleted · +0 −4");
  assert.equal(fileDescription({ path: ".env", kind: "modified", withheld: "secret" }), "content withheld (secret)");
});

test("status bar text", () => {
  assert.equal(statusBarText(undefined), "Takeback");
  assert.equal(statusBarText(entry({ number: 7 })), "Takeback: #7 · 1 file");
  assert.equal(statusBarText(entry({ number: 7, state: "reverted", files: [] })), "Takeback: #7 · 0 files · undone");
});

test("clock time: the time today, the date and time on another day (local time)", () => {
  const now = new Date(2025, 0, 3, 18, 0);
  assert.equal(clockTime(new Date(2025, 0, 3, 14, 2).toISOString(), now), "14:02");
  assert.equal(clockTime(new Date(2025, 0, 2, 9, 5).toISOString(), now), "2025-01-02 09:05");
  assert.equal(clockTime("not a time", now), "");
});

test("the tooltip names what an undo cannot take back: git moves and files written outside the workspace", () => {
  const tip = entryTooltip(
    entry({
      number: 3,
      gitMoved: [{ what: "branch", fact: "branch main moved from abc1234 to def5678", command: "git branch -f main abc1234" }],
      outside: ["/home/me/.bashrc"],
    }),
  );
  assert.match(tip, /Not taken back by an undo: branch main moved from abc1234 to def5678 \(to put it back: `git branch -f main abc1234`\)/);
  assert.match(tip, /Not taken back by an undo: \/home\/me\/\\\.bashrc \(written outside the workspace\)/);
  assert.doesNotMatch(entryTooltip(entry({ number: 4 })), /Not taken back/);
});

test("the tooltip names the ignored files a guarded call lost, with the command that writes a kept one back", () => {
  const tip = entryTooltip(
    entry({
      number: 5,
      lost: [
        { path: "build/app.db", how: "deleted", kept: { oid: "ab", mode: 33188, size: 3 },
          command: "mkdir -p build && takeback cat 5 build/app.db --before > build/app.db" },
        { path: ".env", how: "deleted", why: "a secret: Takeback never copies one" },
      ],
    }),
  );
  assert.ok(tip.includes("Not taken back by an undo: build/app\\.db (an ignored file, deleted): kept by Takeback " +
    "(to write it back: `mkdir -p build && takeback cat 5 build/app.db --before > build/app.db`)"), tip);
  assert.ok(tip.includes("Not taken back by an undo: \\.env (an ignored file, deleted): lost (a secret: Takeback never copies one)"), tip);
});
