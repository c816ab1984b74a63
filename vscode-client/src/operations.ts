/**
 * Undo, redo, revert and restore, the careful way: the server's dry run first, shown as a
 * confirmation (the turn's prompt, which files change and how; setting
 * `takeback.confirmDestructive`), a clear
 * choice when the operation meets later edits (clean files only / conflict markers / force /
 * cancel, with the conflicted files one click away), then the real operation and its outcome.
 */
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient";
import { confirmDestructive } from "./config";
import type { TakebackContentProvider } from "./content";
import { workspaceFileUri } from "./content";
import { ServerContext, TakebackUnavailable } from "./ctx";
import { folderParam } from "./folders";
import * as ext from "./lspExt";
import { log, showLogs } from "./logger";
import { stepButton, stepOperation, type StepRevert } from "./model/hints";
import { confirmationFor, conflictChoices, outcomeFor } from "./model/preview";

export type OperationRequest =
  | { kind: "undo"; folder: string; expectTurnId?: string }
  | { kind: "redo"; folder: string; expectTurnId?: string }
  | {
      kind: "revert";
      folder: string;
      /** An entry (`#12`, an id) or one step of it (`#12.3`). */
      turnId: string;
      uri?: string;
      pathspec?: string[];
      hunk?: ext.HunkParams;
      expectTurnId?: string;
      /** How to meet later edits, chosen beforehand (an outcome's next step); default: ask. */
      onConflict?: ext.OnConflict;
      what?: string;
    }
  | { kind: "restore"; folder: string; checkpointId: string; what?: string };

function send(
  ctx: ServerContext,
  op: OperationRequest,
  dryRun: boolean,
  onConflict: ext.OnConflict,
): Promise<ext.OperationResult> {
  const common = { dryRun, onConflict, ...folderParam(op.folder) };
  switch (op.kind) {
    case "undo":
      return ctx.request(ext.undo, { ...common, ...(op.expectTurnId ? { expectTurnId: op.expectTurnId } : {}) });
    case "redo":
      return ctx.request(ext.redo, { ...common, ...(op.expectTurnId ? { expectTurnId: op.expectTurnId } : {}) });
    case "revert":
      return ctx.request(ext.revertTurn, {
        ...common,
        turnId: op.turnId,
        ...(op.uri ? { uri: op.uri } : {}),
        ...(op.pathspec ? { pathspec: op.pathspec } : {}),
        ...(op.hunk ? { hunk: op.hunk } : {}),
        ...(op.expectTurnId ? { expectTurnId: op.expectTurnId } : {}),
      });
    case "restore":
      return ctx.request(ext.restore, { ...common, checkpointId: op.checkpointId });
  }
}

async function openFiles(folder: string, paths: string[]): Promise<void> {
  for (const [i, path] of paths.entries()) {
    try {
      const doc = await vscode.workspace.openTextDocument(workspaceFileUri(folder, path));
      await vscode.window.showTextDocument(doc, { preview: false, preserveFocus: i > 0 });
    } catch (error) {
      log().warn(`Could not open ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/** Ask how to go on when the dry run (or an aborted run) found conflicts. Undefined: cancel. */
async function chooseOnConflict(op: OperationRequest, result: ext.OperationResult): Promise<ext.OnConflict | undefined> {
  for (;;) {
    const choices = conflictChoices(result);
    const picked = await vscode.window.showQuickPick(
      choices.map((c) => ({ label: c.label, description: c.description, value: c.value })),
      {
        title: `Takeback: ${result.conflicts?.length ?? 0} conflicted file(s) — ${result.message}`,
        placeHolder: "Later edits overlap this change. How should Takeback go on?",
        ignoreFocusOut: true,
      },
    );
    if (!picked || picked.value === "cancel") {
      return undefined;
    }
    if (picked.value === "open") {
      await openFiles(op.folder, (result.conflicts ?? []).map((c) => c.path));
      continue;
    }
    return picked.value;
  }
}

/** The preview with the entry it acts on (its prompt and notes head the confirmation): the
 * server's preview names the target, `takeback/turn` gives it. */
async function withTarget(ctx: ServerContext, op: OperationRequest, dry: ext.OperationResult): Promise<ext.OperationResult> {
  if (dry.entry || !dry.target) {
    return dry;
  }
  try {
    return { ...dry, entry: await ctx.request(ext.turn, { turnId: dry.target, ...folderParam(op.folder) }) };
  } catch (error) {
    log().warn(`Reading #${dry.targetNumber ?? "?"} for the confirmation: ${error instanceof Error ? error.message : String(error)}`);
    return dry;
  }
}

/** Whether a revert takes back less than its entry (a step, some paths, one hunk). */
function isNarrow(op: OperationRequest): boolean {
  return op.kind === "revert" && !!(op.hunk || op.pathspec?.length || /^#\d+\.\d+$/.test(op.turnId));
}

/** The modal confirmation over a dry run. True: go ahead. */
async function confirm(preview: TakebackContentProvider, result: ext.OperationResult, what?: string, narrow = false): Promise<boolean> {
  const c = confirmationFor(result, what, narrow);
  for (;;) {
    const buttons = result.patch ? [c.confirm, "Show Changes"] : [c.confirm];
    const choice = await vscode.window.showWarningMessage(c.message, { modal: true, detail: c.detail }, ...buttons);
    if (choice === "Show Changes" && result.patch) {
      const doc = await vscode.workspace.openTextDocument(preview.preview(`${result.operation}-preview.diff`, result.patch));
      await vscode.languages.setTextDocumentLanguage(doc, "diff");
      await vscode.window.showTextDocument(doc, { preview: true });
      continue;
    }
    return choice === c.confirm;
  }
}

/** Run one operation with preview, confirmation, conflict choice and outcome. */
export async function runOperation(
  ctx: ServerContext,
  preview: TakebackContentProvider,
  op: OperationRequest,
): Promise<ext.OperationResult | undefined> {
  try {
    let onConflict: ext.OnConflict = (op.kind === "revert" && op.onConflict) || "abort";
    if (confirmDestructive()) {
      const dry = await send(ctx, op, true, onConflict);
      log().info(`Dry run of ${op.kind}: ${dry.verdict}, ${dry.restored?.length ?? 0} restored, ${dry.conflicts?.length ?? 0} conflicts`);
      if (dry.conflicts?.length && onConflict === "abort") {
        const chosen = await chooseOnConflict(op, dry);
        if (!chosen) {
          return undefined;
        }
        onConflict = chosen;
      } else if (!(await confirm(preview, await withTarget(ctx, op, dry), "what" in op ? op.what : undefined, isNarrow(op)))) {
        return undefined;
      }
    }
    let result = await send(ctx, op, false, onConflict);
    if (!result.applied && result.conflicts?.length && onConflict === "abort") {
      const chosen = await chooseOnConflict(op, result);
      if (!chosen) {
        return result;
      }
      result = await send(ctx, op, false, chosen);
    }
    ctx.notifyChanged();
    void showOutcome(ctx, preview, op, result);
    return result;
  } catch (error) {
    reportError(`${op.kind} failed`, error);
    return undefined;
  }
}

async function showOutcome(ctx: ServerContext, preview: TakebackContentProvider, op: OperationRequest, result: ext.OperationResult): Promise<void> {
  const outcome = outcomeFor(result);
  log().info(outcome.message);
  const buttons: string[] = [];
  if (outcome.openable.length) {
    buttons.push("Open Conflicted Files");
  }
  if (result.applied && (op.kind === "undo" || op.kind === "revert" || op.kind === "restore")) {
    buttons.push("Redo");
  }
  // A next step that is a revert (a narrow one, or one with a conflict choice) is a button that
  // runs that very revert: the same step, paths or hunk.
  const reverts = new Map<string, StepRevert>();
  for (const step of outcome.severity === "info" ? [] : result.next ?? []) {
    const spec = stepOperation(step, op.folder);
    if (spec && reverts.size < 2) {
      reverts.set(stepButton(step), spec);
      buttons.push(stepButton(step));
    }
  }
  const show =
    outcome.severity === "error"
      ? vscode.window.showErrorMessage
      : outcome.severity === "warning"
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  const choice = await show(outcome.message, ...buttons);
  if (choice === "Open Conflicted Files") {
    await openFiles(op.folder, outcome.openable);
  } else if (choice === "Redo") {
    await vscode.commands.executeCommand("takeback.redoAgentTurn");
  } else {
    const next = choice ? reverts.get(choice) : undefined;
    if (next) {
      await runOperation(ctx, preview, next);
    }
  }
}

/** Errors from the server: "nothing to do" is information, the rest an error with the log. */
export function reportError(what: string, error: unknown): void {
  if (error instanceof ResponseError) {
    if (error.code === ext.ErrorCodes.nothingToDo) {
      void vscode.window.showInformationMessage(`Takeback: ${error.message}`);
      return;
    }
    log().error(`${what}: ${error.message} (code ${error.code})`);
    void vscode.window.showErrorMessage(`Takeback: ${error.message}`, "Show Logs").then((c) => c && showLogs());
    return;
  }
  if (error instanceof TakebackUnavailable) {
    void vscode.window.showErrorMessage(`Takeback: ${error.message}`, "Show Logs").then((c) => c && showLogs());
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  log().error(`${what}: ${message}`);
  void vscode.window.showErrorMessage(`Takeback: ${what}: ${message}`, "Show Logs").then((c) => c && showLogs());
}
