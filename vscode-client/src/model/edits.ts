/**
 * Converts the parts of a `vscode.WorkspaceEdit` (text edits and file operations, in order) into
 * an LSP `WorkspaceEdit` with `documentChanges`, as `takeback/applyEdit` takes it. Open
 * documents carry their version, so the server can refuse a stale edit. Pure module: api.ts
 * reads the parts out of VS Code's object and hands them over as plain data.
 */
import type * as lsp from "vscode-languageclient";

export interface PlainRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

export type EditPart =
  | { type: "text"; uri: string; range: PlainRange; newText: string }
  | { type: "create"; uri: string; overwrite?: boolean; ignoreIfExists?: boolean; contents?: string }
  | { type: "delete"; uri: string; recursive?: boolean; ignoreIfNotExists?: boolean }
  | { type: "rename"; oldUri: string; newUri: string; overwrite?: boolean; ignoreIfExists?: boolean };

/** `version(uri)`: the open document's version, or null when it is not open. */
export function toLspWorkspaceEdit(parts: EditPart[], version: (uri: string) => number | null): lsp.WorkspaceEdit {
  const documentChanges: lsp.WorkspaceEdit["documentChanges"] & unknown[] = [];
  let current: lsp.TextDocumentEdit | undefined;
  const created = new Set<string>();
  const textEdit = (uri: string, edit: lsp.TextEdit) => {
    if (!current || current.textDocument.uri !== uri) {
      current = {
        textDocument: { uri, version: created.has(uri) ? null : version(uri) },
        edits: [],
      };
      documentChanges.push(current);
    }
    current.edits.push(edit);
  };
  for (const part of parts) {
    switch (part.type) {
      case "text":
        textEdit(part.uri, { range: part.range, newText: part.newText });
        break;
      case "create": {
        current = undefined;
        const options = cleanOptions({ overwrite: part.overwrite, ignoreIfExists: part.ignoreIfExists });
        documentChanges.push({ kind: "create", uri: part.uri, ...(options ? { options } : {}) });
        created.add(part.uri);
        if (part.contents) {
          const zero = { line: 0, character: 0 };
          textEdit(part.uri, { range: { start: zero, end: zero }, newText: part.contents });
        }
        break;
      }
      case "delete": {
        current = undefined;
        const options = cleanOptions({ recursive: part.recursive, ignoreIfNotExists: part.ignoreIfNotExists });
        documentChanges.push({ kind: "delete", uri: part.uri, ...(options ? { options } : {}) });
        break;
      }
      case "rename": {
        current = undefined;
        const options = cleanOptions({ overwrite: part.overwrite, ignoreIfExists: part.ignoreIfExists });
        documentChanges.push({ kind: "rename", oldUri: part.oldUri, newUri: part.newUri, ...(options ? { options } : {}) });
        break;
      }
    }
  }
  return { documentChanges };
}

function cleanOptions<T extends Record<string, boolean | undefined>>(options: T): Partial<T> | undefined {
  const out: Record<string, boolean> = {};
  for (const [k, v] of Object.entries(options)) {
    if (v !== undefined) {
      out[k] = v;
    }
  }
  return Object.keys(out).length ? (out as Partial<T>) : undefined;
}

/** The URIs whose content an LSP edit changes (for saving them afterwards). */
export function touchedUris(edit: lsp.WorkspaceEdit): string[] {
  const out = new Set<string>();
  for (const uri of Object.keys(edit.changes ?? {})) {
    out.add(uri);
  }
  for (const change of edit.documentChanges ?? []) {
    if ("textDocument" in change) {
      out.add(change.textDocument.uri);
    } else if (change.kind === "create") {
      out.add(change.uri);
    } else if (change.kind === "rename") {
      out.add(change.newUri);
    }
  }
  return [...out];
}

/** Is this value already an LSP WorkspaceEdit (plain JSON), rather than VS Code's class? */
export function isLspWorkspaceEdit(value: unknown): value is lsp.WorkspaceEdit {
  if (value === null || typeof value !== "object") {
    return false;
  }
  const v = value as Record<string, unknown>;
  const keys = Object.keys(v);
  return keys.length > 0 && keys.every((k) => k === "changes" || k === "documentChanges" || k === "changeAnnotations") && (Array.isArray(v.documentChanges) || (typeof v.changes === "object" && v.changes !== null));
}
