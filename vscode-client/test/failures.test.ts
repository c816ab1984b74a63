import assert from "node:assert/strict";
import { test } from "node:test";
import { failureReport, failureWarning, formatFailureLog, newFailures, unseenFailures } from "../src/model/failures";
import type { FolderTimeline } from "../src/model/tree";

const LAST = "2026-11-26T08:10:00+00:00 claude pre_tool: JSONDecodeError: Expecting value";

function folder(name: string, failures?: number, last?: string | null, extra: Partial<FolderTimeline> = {}): FolderTimeline {
  return { folder: `file:///${name}`, name, entries: [], hookFailures: failures, lastHookFailure: last, store: `/state/${name}`, ...extra };
}

test("unseen failures: folders whose last failure the person has not looked at", () => {
  const timelines = [folder("a", 2, LAST), folder("b", 0, null), folder("c", 1, "older")];
  assert.deepEqual(unseenFailures(timelines, {}).map((f) => [f.name, f.count, f.last, f.store]), [
    ["a", 2, LAST, "/state/a"],
    ["c", 1, "older", "/state/c"],
  ]);
  assert.deepEqual(unseenFailures(timelines, { "file:///a": LAST, "file:///c": "older" }), []);
  // A newer failure in a folder seen before makes it unseen again.
  assert.deepEqual(unseenFailures(timelines, { "file:///a": "earlier one", "file:///c": "older" }).map((f) => f.name), ["a"]);
});

test("new failures: only a last failure that changed between two refreshes", () => {
  const before = [folder("a", 1, "first"), folder("b", 0, null)];
  assert.deepEqual(newFailures([], [folder("a", 1, "first")]), []); // the first refresh: old ones
  assert.deepEqual(newFailures(before, before), []);
  assert.deepEqual(newFailures(before, [folder("a", 2, LAST), folder("b", 1, "b's")]).map((f) => [f.name, f.count, f.last]), [
    ["a", 2, LAST],
    ["b", 1, "b's"],
  ]);
  // A status that could not be read (no counts) is not news, nor is the log going away.
  assert.deepEqual(newFailures(before, [folder("a", undefined, undefined), folder("b", 0, null)]), []);
  assert.deepEqual(newFailures([folder("a", undefined, undefined)], [folder("a", 1, "first")]), []);
  assert.deepEqual(newFailures([folder("a", 0, null, { error: "boom" })], [folder("a", 1, "x")]), []);
});

test("the status bar's warning: count, last failure, how to see them", () => {
  assert.equal(failureWarning([], false), undefined);
  const one = failureWarning(unseenFailures([folder("a", 1, LAST)], {}), false)!;
  assert.equal(one.text, "1 hook failure");
  assert.match(one.tooltip, /1 failure logged/);
  assert.ok(one.tooltip.includes(`last: ${LAST}`), one.tooltip);
  assert.match(one.tooltip, /Show Hook Failures/);
  assert.match(one.tooltip, /takeback status/);
  const two = failureWarning(unseenFailures([folder("a", 2, LAST), folder("b", 3, "b's")], {}), true)!;
  assert.equal(two.text, "5 hook failures");
  assert.ok(two.tooltip.includes(`a: last: ${LAST}`) && two.tooltip.includes("b: last: b's"), two.tooltip);
});

test("the failure log reads as lines; a line that is not JSON is kept as it is", () => {
  const log = [
    JSON.stringify({ at: "2026-11-26T08:10:00+00:00", agent: "claude", event: "pre_tool", message: "JSONDecodeError: x" }),
    JSON.stringify({ at: "2026-11-26T08:11:00+00:00", agent: "codex", event: null, message: "store is locked" }),
    "{broken",
    "",
  ].join("\n");
  assert.deepEqual(formatFailureLog(log), [
    "2026-11-26T08:10:00+00:00  claude pre_tool: JSONDecodeError: x",
    "2026-11-26T08:11:00+00:00  codex: store is locked",
    "{broken",
  ]);
  const report = failureReport([{ name: "ws", path: "/state/ws/hook-failures.log", lines: formatFailureLog(log) }]);
  assert.ok(report.startsWith("# ws: 3 hook failures (/state/ws/hook-failures.log)\n"), report);
  assert.match(report, /codex: store is locked/);
  assert.match(report, /takeback install AGENT/);
});
