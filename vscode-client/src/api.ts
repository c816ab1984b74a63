/**
 * The API other extensions get from `activate` (and the matching `takeback.agent.*` commands):
 * an agent extension begins a turn, applies its `vscode.WorkspaceEdit`s through Takeback (each
 * one a recorded checkpoint, applied by the server through the editor), and ends the turn with
 * the commands it ran and the checks' results. See docs/vscode.md.
 */
import * as vscode from "vscode";
import type * as lsp from "vscode-languageclient";
import type { ServerContext } from "./ctx";
import { folderParam } from "./folders";
import * as ext from "./lspExt";
import { checkFrom } from "./model/args";
import { EditPart, isLspWorkspaceEdit, PlainRange, toLspWorkspaceEdit } from "./model/edits";

export interface BeginTurnOptions {
  /** The prompt or a summary; shown in the timeline. */
  label?: string;
  /** The agent conversation; turns are grouped by it in the panel. */
  sessionId?: string;
  /** Which agent (shown in the panel). */
  agent?: string;
  /** The workspace folder (only needed in a multi-root workspace). */
  folder?: vscode.Uri | string;
  /** Also record what changes on disk until endTurn, e.g. by the agent's shell commands (default true). */
  bracket?: boolean;
}

export interface ApplyEditOptions {
  /** A label for this batch (checkpoint). */
  label?: string;
  sessionId?: string;
  /** The turn to add the batch to (default: the open turn; none open: the batch is its own turn). */
  turnId?: string;
  agent?: string;
}

export interface CheckInput {
  name: string;
  /** passed | failed | error | skipped, or a boolean (true = passed). */
  status: ext.CheckStatus | boolean;
  command?: string;
  exitCode?: number;
}

export interface EndTurnOptions {
  turnId?: string;
  /** Commands the agent ran during the turn. */
  commandsRun?: string[];
  checks?: CheckInput[];
  folder?: vscode.Uri | string;
}

export interface TakebackApi {
  readonly apiVersion: 1;
  beginTurn(options?: BeginTurnOptions): Promise<ext.Entry>;
  /** Record and apply one edit batch. Resolves with `applied: false` (and the reason) if the editor refused it. */
  applyEdit(edit: vscode.WorkspaceEdit | lsp.WorkspaceEdit, options?: ApplyEditOptions): Promise<ext.ApplyEditResult>;
  endTurn(options?: EndTurnOptions): Promise<ext.Entry>;
  recordCheck(check: CheckInput & { turnId?: string; folder?: vscode.Uri | string }): Promise<ext.Entry>;
  /** The timeline of a folder, newest first. */
  timeline(options?: { folder?: vscode.Uri | string; limit?: number; sessionId?: string }): Promise<ext.TimelineResult>;
  /** Fires when the timeline changed (any folder). */
  readonly onDidChangeTimeline: vscode.Event<void>;
}

function folderString(folder: vscode.Uri | string | undefined): string | undefined {
  return folder === undefined ? undefined : typeof folder === "string" ? folder : folder.toString();
}

function definedOnly<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/**
 * One entry of VS Code's internal WorkspaceEdit list (not public API): `_type` 1 a file
 * operation (from / to / options), 2 a text edit (uri / edit), 6 a snippet edit (uri / range /
 * edit, a SnippetString); other kinds (notebook cells) are refused.
 */
interface InternalEditEntry {
  _type: number;
  from?: vscode.Uri;
  to?: vscode.Uri;
  options?: { overwrite?: boolean; ignoreIfExists?: boolean; ignoreIfNotExists?: boolean; recursive?: boolean; contents?: unknown };
  uri: vscode.Uri;
  range: vscode.Range;
  edit?: { range: vscode.Range; newText?: string; value?: string };
}

/** The parts of VS Code's WorkspaceEdit, file operations included, in order. */
export function editParts(edit: vscode.WorkspaceEdit): EditPart[] {
  const parts: EditPart[] = [];
  // VS Code's WorkspaceEdit exposes only text edits publicly (entries()); its internal list also
  // has the create / rename / delete operations in order. Use it when it is there.
  const all = (edit as unknown as { _allEntries?: () => InternalEditEntry[] })._allEntries;
  if (typeof all === "function") {
    for (const e of all.call(edit)) {
      if (e._type === 1) {
        const options = e.options ?? {};
        if (e.from && e.to) {
          parts.push({ type: "rename", oldUri: e.from.toString(), newUri: e.to.toString(), overwrite: options.overwrite, ignoreIfExists: options.ignoreIfExists });
        } else if (e.to) {
          const contents = options.contents instanceof Uint8Array ? Buffer.from(options.contents).toString("utf8") : undefined;
          parts.push({ type: "create", uri: e.to.toString(), overwrite: options.overwrite, ignoreIfExists: options.ignoreIfExists, contents });
        } else if (e.from) {
          parts.push({ type: "delete", uri: e.from.toString(), recursive: options.recursive, ignoreIfNotExists: options.ignoreIfNotExists });
        }
      } else if (e._type === 2 && e.edit) {
        parts.push({ type: "text", uri: e.uri.toString(), range: plainRange(e.edit.range), newText: e.edit.newText ?? "" });
      } else if (e._type === 6 && typeof e.edit?.value === "string") {
        // A snippet edit: insert its text without the placeholders' syntax.
        parts.push({ type: "text", uri: e.uri.toString(), range: plainRange(e.range), newText: e.edit.value.replace(/\$\{\d+:?([^}]*)\}|\$\d+/g, "$1") });
      } else {
        throw new Error(`Takeback cannot record this kind of workspace edit (type ${e._type}, e.g. a notebook cell edit)`);
      }
    }
    return parts;
  }
  for (const [uri, edits] of edit.entries()) {
    for (const e of edits) {
      parts.push({ type: "text", uri: uri.toString(), range: plainRange(e.range), newText: e.newText });
    }
  }
  return parts;
}

function plainRange(r: vscode.Range): PlainRange {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

/** vscode.WorkspaceEdit -> LSP WorkspaceEdit; open documents carry their version. */
export function toLspEdit(edit: vscode.WorkspaceEdit | lsp.WorkspaceEdit): lsp.WorkspaceEdit {
  if (isLspWorkspaceEdit(edit)) {
    return edit;
  }
  const versions = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d.version] as const));
  return toLspWorkspaceEdit(editParts(edit), (uri) => versions.get(vscode.Uri.parse(uri).toString()) ?? null);
}

export function createApi(ctx: ServerContext, onDidChangeTimeline: vscode.Event<void>): TakebackApi {
  return {
    apiVersion: 1,
    beginTurn: (options = {}) =>
      ctx.request(
        ext.beginTurn,
        definedOnly({
          label: options.label,
          sessionId: options.sessionId,
          agent: options.agent,
          bracket: options.bracket,
          ...folderParam(folderString(options.folder)),
        }),
      ),
    applyEdit: async (edit, options = {}) => {
      const lspEdit = toLspEdit(edit);
      const result = await ctx.request(
        ext.applyEdit,
        definedOnly({ edit: lspEdit, label: options.label, sessionId: options.sessionId, turnId: options.turnId, agent: options.agent }),
      );
      ctx.notifyChanged();
      return result;
    },
    endTurn: (options = {}) =>
      ctx.request(
        ext.endTurn,
        definedOnly({
          turnId: options.turnId,
          commandsRun: options.commandsRun,
          checks: options.checks?.map(checkFrom),
          ...folderParam(folderString(options.folder)),
        }),
      ),
    recordCheck: (check) => {
      const c = checkFrom(check);
      return ctx.request(ext.recordCheck, definedOnly({ ...c, turnId: check.turnId, ...folderParam(folderString(check.folder)) }));
    },
    timeline: (options = {}) =>
      ctx.request(ext.timeline, definedOnly({ limit: options.limit, sessionId: options.sessionId, ...folderParam(folderString(options.folder)) })),
    onDidChangeTimeline,
  };
}
