/** Timeline entries shaped like the server sends them (camelCase, protocol version 2). */
import type { Entry } from "../src/lspExt";

let counter = 0;

export function entry(overrides: Partial<Entry> & { number: number }): Entry {
  counter += 1;
  return {
    id: `01JTEST${String(overrides.number).padStart(4, "0")}${counter}`,
    kind: "turn",
    createdAt: "2025-01-01T10:00:00Z",
    finishedAt: "2025-01-01T10:01:00Z",
    state: "applied",
    session: null,
    label: `turn ${overrides.number}`,
    checkpoints: [{ id: `cp${overrides.number}`, at: "2025-01-01T10:00:30Z", paths: ["a.txt"] }],
    files: [{ path: "a.txt", kind: "modified", additions: 1, deletions: 1 }],
    additions: 1,
    deletions: 1,
    checks: [],
    commands: [],
    ...overrides,
  };
}
