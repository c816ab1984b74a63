/**
 * What the commands accept as their argument, so they work from the palette (no argument), the
 * panel (a tree node), a code action or another extension (an Entry, a number, "#12", an id, or
 * `{ turnId }`). Pure module.
 */
import type { Entry, HunkParams } from "../lspExt";
import { ON_CONFLICT_CHOICES, type OnConflict } from "./choices";

export interface TurnRef {
  turnId: string;
  folder?: string;
  number?: number;
}

const ON_CONFLICT = new Set<string>(ON_CONFLICT_CHOICES);

/** A turn reference from whatever a command was called with; undefined: ask the person. */
export function turnRefFrom(arg: unknown): TurnRef | undefined {
  if (arg === undefined || arg === null) {
    return undefined;
  }
  if (typeof arg === "number" && Number.isInteger(arg) && arg > 0) {
    return { turnId: String(arg), number: arg };
  }
  if (typeof arg === "string") {
    const text = arg.trim();
    if (!text) {
      return undefined;
    }
    const digits = /^#?(\d+)$/.exec(text)?.[1];
    return digits ? { turnId: digits, number: Number(digits) } : { turnId: text };
  }
  if (typeof arg === "object") {
    const o = arg as Record<string, unknown>;
    // A tree node ({ kind: "turn" | "file", entry, folder }) or an Entry or { turnId, folder }.
    const entry = (o.entry ?? (typeof o.id === "string" && typeof o.number === "number" ? o : undefined)) as Entry | undefined;
    const folder = typeof o.folder === "string" ? o.folder : undefined;
    if (entry && typeof entry.id === "string") {
      return { turnId: entry.id, folder, number: entry.number };
    }
    if (typeof o.turnId === "string" || typeof o.turnId === "number") {
      const ref = turnRefFrom(o.turnId);
      return ref ? { ...ref, folder } : undefined;
    }
  }
  return undefined;
}

export function onConflictFrom(value: unknown): OnConflict | undefined {
  return typeof value === "string" && ON_CONFLICT.has(value) ? (value as OnConflict) : undefined;
}

/** Normalise check input from an agent: `{name, status}` with a known status, or an error. */
export function checkFrom(value: unknown): { name: string; status: "passed" | "failed" | "error" | "skipped"; command?: string; exitCode?: number } {
  if (!value || typeof value !== "object") {
    throw new TypeError("a check must be an object { name, status, command?, exitCode? }");
  }
  const o = value as Record<string, unknown>;
  if (typeof o.name !== "string" || !o.name) {
    throw new TypeError("a check needs a non-empty name");
  }
  let status = o.status;
  if (typeof status === "boolean") {
    status = status ? "passed" : "failed";
  }
  if (status !== "passed" && status !== "failed" && status !== "error" && status !== "skipped") {
    throw new TypeError(`check ${o.name}: status must be passed, failed, error or skipped (or a boolean)`);
  }
  const out: { name: string; status: "passed" | "failed" | "error" | "skipped"; command?: string; exitCode?: number } = { name: o.name, status };
  if (typeof o.command === "string") {
    out.command = o.command;
  }
  if (typeof o.exitCode === "number") {
    out.exitCode = o.exitCode;
  }
  return out;
}

/** An undo / redo / revert / restore as the panel and palette run it (see operations.ts). */
export type OperationSpec =
  | { kind: "undo" | "redo"; folder?: string; expectTurnId?: string }
  | { kind: "revert"; folder?: string; turnId: string; uri?: string; pathspec?: string[]; hunk?: HunkParams; expectTurnId?: string; onConflict?: OnConflict }
  | { kind: "restore"; folder?: string; checkpointId: string };

const SERVER_COMMAND_KIND: Record<string, OperationSpec["kind"]> = {
  "takeback.undoTurn": "undo",
  "takeback.redoTurn": "redo",
  "takeback.revertTurn": "revert",
  "takeback.restore": "restore",
};

/**
 * A server command (from a code action: `takeback.undoTurn {expectTurnId, folder}` …) as an
 * operation the client runs with its preview and confirmation. Undefined: pass the command to
 * the server unchanged (not ours, or the caller asked for a dry run or a conflict mode itself).
 */
export function operationFromServerCommand(command: string, args: unknown[]): OperationSpec | undefined {
  const kind = SERVER_COMMAND_KIND[command];
  if (!kind) {
    return undefined;
  }
  const arg = (args[0] ?? {}) as Record<string, unknown>;
  if (typeof arg !== "object" || arg === null || arg.dryRun !== undefined || arg.onConflict !== undefined || args.length > 1) {
    return undefined;
  }
  const folder = typeof arg.folder === "string" ? arg.folder : undefined;
  switch (kind) {
    case "undo":
    case "redo":
      return { kind, folder, expectTurnId: typeof arg.expectTurnId === "string" ? arg.expectTurnId : undefined };
    case "revert":
      return typeof arg.turnId === "string" || typeof arg.turnId === "number" ? revertSpec(arg, folder, String(arg.turnId)) : undefined;
    case "restore":
      return typeof arg.checkpointId === "string" ? { kind, folder, checkpointId: arg.checkpointId } : undefined;
  }
}

/** A revert command's narrowing (a file, patterns, one hunk, the entry it must target), carried
 * as given: a code action's "Take back these lines" must stay one hunk, never the whole turn.
 * Undefined when a narrowing is malformed: the server gets the command as it is, and refuses it. */
function revertSpec(arg: Record<string, unknown>, folder: string | undefined, turnId: string): OperationSpec | undefined {
  const spec: OperationSpec = { kind: "revert", folder, turnId, uri: typeof arg.uri === "string" ? arg.uri : undefined };
  if (arg.pathspec !== undefined && arg.pathspec !== null) {
    if (!Array.isArray(arg.pathspec) || !arg.pathspec.every((p) => typeof p === "string")) {
      return undefined;
    }
    spec.pathspec = arg.pathspec;
  }
  if (arg.hunk !== undefined && arg.hunk !== null) {
    const hunk = arg.hunk as Record<string, unknown>;
    if (typeof hunk !== "object" || typeof hunk.uri !== "string" || typeof hunk.line !== "number" || (hunk.of !== undefined && hunk.of !== "now" && hunk.of !== "change")) {
      return undefined;
    }
    spec.hunk = { uri: hunk.uri, line: hunk.line, ...(hunk.of ? { of: hunk.of } : {}) };
  }
  if (typeof arg.expectTurnId === "string") {
    spec.expectTurnId = arg.expectTurnId;
  }
  return spec;
}
