import assert from "node:assert/strict";
import { test } from "node:test";
import type { BlameOrigin } from "../src/lspExt";
import { agentOrigin, annotationText, shorten } from "../src/model/blame";

const TURN: BlameOrigin = { kind: "turn", entry: "01J", number: 12, step: 2, agent: "claude-code", label: "Make the answers\nten times bigger" };

test("an agent's line: its turn, agent and prompt on one line", () => {
  assert.equal(annotationText(TURN), "#12 claude-code · Make the answers ten times bigger");
  assert.equal(annotationText({ ...TURN, agent: null, label: null }), "#12");
});

test("a teammate's line names their fetched timeline before their own number", () => {
  const theirs: BlameOrigin = { ...TURN, remote: "origin", who: "alice@laptop" };
  assert.equal(annotationText(theirs), "origin/alice@laptop #12 claude-code · Make the answers ten times bigger");
});

test("a line the person edited keeps the agent's turn and says so", () => {
  const edited: BlameOrigin = { kind: "person", why: "since", editedFrom: TURN };
  assert.equal(agentOrigin(edited), TURN);
  assert.equal(annotationText(edited), "#12 claude-code · Make the answers ten times bigger · edited by you since");
});

test("the person's lines, lines before the timeline and unknown ones have none", () => {
  for (const origin of [{ kind: "person", why: "between" }, { kind: "before", commit: "abc" }, { kind: "unknown" }] as BlameOrigin[]) {
    assert.equal(annotationText(origin), undefined);
  }
});

test("a long or hostile prompt is shortened to one plain line", () => {
  assert.equal(shorten("a\u202eb\u0007c\r\nd", 60), "a b c d");
  const text = annotationText({ ...TURN, label: "x".repeat(200) }, 20) ?? "";
  assert.ok(text.endsWith("x…") && text.length < 60, text);
});
