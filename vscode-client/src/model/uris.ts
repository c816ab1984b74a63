/**
 * The `takeback:` URIs of read-only documents the content provider serves: one side of a file
 * as a turn found or left it (`takeback/fileAt`), or a turn's whole patch (`takeback/diff`).
 * The path ends with the file's own name so VS Code picks the right language; the query
 * carries what the request needs. Pure module (no `vscode` import).
 */

export const SCHEME = "takeback";

export type ContentSide = "before" | "after" | "patch";

export interface ContentRef {
  folder: string;
  turnId: string;
  number: number;
  side: ContentSide;
  /** Workspace-relative path of the file (for `patch`: optional, limits the diff to it). */
  path?: string;
  /** The file's URI, as `takeback/fileAt` and `takeback/diff` take it. */
  uri?: string;
  /** One step of the turn (k, from 1, as in `#N.k`): the file before or after that step only. */
  step?: number;
}

export interface UriParts {
  scheme: string;
  path: string;
  query: string;
}

export function contentUri(ref: ContentRef): UriParts {
  const name = ref.side === "patch" ? `turn-${ref.number}${ref.path ? "-" + ref.path.replace(/\//g, "_") : ""}.diff` : ref.path ?? "file";
  const path = `/${ref.number}${ref.step ? `.${ref.step}` : ""}/${ref.side}/${name}`;
  const query = new URLSearchParams({
    folder: ref.folder,
    turn: ref.turnId,
    n: String(ref.number),
    side: ref.side,
    ...(ref.path ? { path: ref.path } : {}),
    ...(ref.uri ? { uri: ref.uri } : {}),
    ...(ref.step ? { step: String(ref.step) } : {}),
  }).toString();
  return { scheme: SCHEME, path, query };
}

export function parseContentUri(query: string): ContentRef {
  const q = new URLSearchParams(query);
  const side = q.get("side");
  const folder = q.get("folder");
  const turnId = q.get("turn");
  if (!folder || !turnId || (side !== "before" && side !== "after" && side !== "patch")) {
    throw new Error(`not a Takeback content URI (query: ${query})`);
  }
  return {
    folder,
    turnId,
    number: Number(q.get("n") ?? "0"),
    side,
    path: q.get("path") ?? undefined,
    uri: q.get("uri") ?? undefined,
    ...(q.get("step") ? { step: Number(q.get("step")) } : {}),
  };
}

/** `file:///ws` + `src/a.ts` -> `file:///ws/src/a.ts` (paths from the server use `/`). */
export function joinFolderUri(folder: string, path: string): string {
  const base = folder.endsWith("/") ? folder.slice(0, -1) : folder;
  return `${base}/${path.split("/").map(encodeURIComponent).join("/")}`;
}

/** The diff editor's title: "#12 src/a.ts (before ↔ after)"; a step's: "#12.3 src/a.ts (…)". */
export function diffTitle(number: number, path: string, kind?: string, step?: number): string {
  const note = kind === "added" ? "added" : kind === "deleted" ? "deleted" : "before ↔ after";
  return `#${number}${step ? `.${step}` : ""} ${path} (${note})`;
}
