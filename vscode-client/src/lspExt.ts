/**
 * Takeback's LSP extensions, as the client sees them.
 *
 * This file MIRRORS server/takeback/lsp/protocol.py (method names, params, results) and the
 * engine objects of server/takeback/models.py; docs/protocol.md documents both. Change them
 * together: tests/lsp/test_protocol_mirror.py fails when a field's name here is not the one the
 * server sends.
 *
 * Wire casing (protocol version 2, model/version.ts): everything is camelCase, engine objects
 * (Entry, OperationResult, StoreStatus) included: the server renames their fields, so the client
 * takes answers as they come. Fields the client may leave unread are optional.
 */
import { NotificationType, RequestType } from "vscode-languageclient";
import type * as lsp from "vscode-languageclient";

// ------------------------------------------------------------------ engine objects (models.py)

/** mark: the person's own checkpoint (`takeback mark`), a restore point holding the files they changed. */
export type EntryKind = "turn" | "undo" | "redo" | "revert" | "restore" | "mark";
export type EntryState = "open" | "applied" | "reverted" | "partial" | "not-applied";
/** safe, partial, refused (nothing was written); broken only in answers of older servers. */
export type Verdict = "safe" | "partial" | "broken" | "refused";
export type { OnConflict } from "./model/choices";
export { PROTOCOL_VERSION } from "./model/version";
import type { OnConflict } from "./model/choices";
export type CheckStatus = "passed" | "failed" | "error" | "skipped";

export interface FileVersion {
  oid: string;
  mode?: number;
  size?: number;
  withheld?: "secret" | "oversize" | "unknown" | null;
}

export interface FileChange {
  path: string;
  kind: "added" | "modified" | "deleted" | "renamed";
  oldPath?: string | null;
  before?: FileVersion | null;
  after?: FileVersion | null;
  additions?: number;
  deletions?: number;
  binary?: boolean;
  withheld?: "secret" | "oversize" | "unknown" | null;
}

export interface Check {
  name: string;
  status: CheckStatus;
  command?: string | null;
  exitCode?: number | null;
  at?: string | null;
  /** end: it ran on the entry's end state; other: on other files; earlier: before the entry changed more. Only end (or null) counts. */
  ranOn?: "end" | "earlier" | "other" | null;
}

export interface Checkpoint {
  id: string;
  at: string;
  label?: string | null;
  paths: string[];
  applied?: boolean;
  /** What a bracket saw change on disk during the turn, not a step of the agent's. */
  bracket?: boolean;
  /** What of the person's git state moved during this step (Takeback never takes that back). */
  gitMoved?: GitMove[];
  /** Files the step's tool named outside the workspace, which Takeback does not hold. */
  outside?: string[];
  /** Ignored files the step's guarded call deleted or overwrote (models.LostFile). */
  lost?: LostFile[];
}

/** An ignored file a guarded call deleted or overwrote (models.LostFile): kept by Takeback
 * (`command` writes it back, run in the workspace's folder) or lost (`why`). */
export interface LostFile {
  path: string;
  how: "deleted" | "overwritten";
  kept?: FileVersion | null;
  why?: string | null;
  command?: string | null;
}

/** Something of the person's git state that moved during a step or turn (models.GitMove). */
export interface GitMove {
  what: "branch" | "ref" | "head" | "index" | "stash";
  /** e.g. "branch main moved from abc1234 to def5678" */
  fact: string;
  /** The git command that would put it back from the reflog, where there is one. */
  command?: string | null;
}

export interface Entry {
  id: string;
  number: number;
  kind: EntryKind;
  session?: string | null;
  label?: string | null;
  agent?: string | null;
  source?: string;
  createdAt: string;
  finishedAt?: string | null;
  head?: string | null;
  state: EntryState;
  checkpoints?: Checkpoint[];
  files?: FileChange[];
  additions?: number;
  deletions?: number;
  stateHash?: string | null;
  commands?: string[];
  checks?: Check[];
  target?: string | null;
  targetNumber?: number | null;
  verdict?: Verdict | null;
  revertedBy?: string | null;
  /** Who ended a turn: `stop`, `next_prompt`, `session_end`, `end_command`, or null. */
  endedBy?: string | null;
  notices?: string[];
  /** What of the person's git state moved during the turn, which no undo of it takes back. */
  gitMoved?: GitMove[];
  /** Files its steps' tools wrote outside the workspace: not recorded, so no undo takes them back. */
  outside?: string[];
  /** Ignored files its steps' guarded calls deleted or overwrote: no undo puts them back. */
  lost?: LostFile[];
  /** Names of the checks whose latest run did not pass (the server's rule). */
  failedChecks?: string[];
  /** Whether the latest run of every named check passed; null: no check (the server's rule). */
  checksPassed?: boolean | null;
  /** Whether people are shown this entry's steps (the server's rule, as `takeback show`). */
  showsSteps?: boolean;
}

export interface FileOutcome {
  path: string;
  action: "write" | "create" | "delete" | "unchanged";
  additions?: number;
  deletions?: number;
  merged?: boolean;
  /** a create that puts back what a delete of the same operation removes: the two are one rename */
  renamedFrom?: string | null;
}

export interface SkippedFile {
  path: string;
  reason: string;
}

export interface Conflict {
  path: string;
  reason: string;
  hunks?: number;
  binary?: boolean;
  /** False for a binary file, a file created or deleted on one side, a mode or symlink change. */
  markersPossible?: boolean;
  markersWritten?: boolean;
  /** What the person can do about this file. */
  advice?: string;
}

/** One command an answer's next safe action names (`nextAction`'s quoted commands, as data). */
export interface NextStep {
  command: "undo" | "redo" | "revert" | "restore";
  /** The entry `revert` acts on. */
  number?: number | null;
  /** The checkpoint `restore` goes back to, as a person types it. */
  checkpoint?: string | null;
  /** The one step of entry `number` that `revert` takes back (`12.3`); null: the whole entry. */
  step?: string | null;
  /** Only the files these patterns name (`revert N -- PATTERN…`, from the workspace's top). */
  paths?: string[];
  /** Only the hunk at `PATH:LINE` (`revert N --hunk PATH:LINE`). */
  hunk?: string | null;
  /** null: the default, abort. */
  onConflict?: OnConflict | null;
  /** What it does ("brings turn #4 back"). */
  does: string;
}

export interface OperationResult {
  operation: "undo" | "redo" | "revert" | "restore";
  verdict: Verdict;
  applied: boolean;
  dryRun?: boolean;
  onConflict?: OnConflict;
  target?: string | null;
  targetNumber?: number | null;
  entry?: Entry | null;
  restored?: FileOutcome[];
  skipped?: SkippedFile[];
  conflicts?: Conflict[];
  nextAction: string;
  /** The commands `nextAction` names, in its order: a client says them in its own words (hints.ts). */
  next?: NextStep[];
  message: string;
  /** E.g. that the operation ended the turn still open. */
  notices?: string[];
  patch?: string | null;
}

export interface RetentionPolicy {
  maxEntries: number;
  maxAgeDays: number;
  maxBytes: number;
}

export interface RecoveryReport {
  at: string;
  operation: string;
  action: "rolled-back" | "rolled-forward" | "set-aside";
  paths: string[];
  /** Paths recovery left as they were (they changed after the crash, or could not be read or written). */
  left?: string[];
  /** One line per path left for another reason than a later change, or why the journal was set aside. */
  problems?: string[];
  /** Where a journal that could not be read was moved ("set-aside"), or null. */
  journalKept?: string | null;
}

/** A file of the store a crash or power cut left torn, moved into `quarantine/`. */
export interface SetAside {
  path: string;
  problem: string;
}

/** What opening the store set aside after a crash or power cut. */
export interface StoreRepair {
  at: string;
  folder: string;
  files?: SetAside[];
  logWas?: string | null;
  logNow?: string | null;
  logNowSubject?: string | null;
  /** One line per log commit lost. */
  lost?: string[];
}

export interface StoreStatus {
  workspace: string;
  store: string;
  /** False: nothing recorded yet, no store exists (`store` is where the first turn makes it). */
  storeMade?: boolean;
  storeBytes: number;
  entries: number;
  turns: number;
  /** The newest open turn. */
  openTurn?: Entry | null;
  /** Every open turn, oldest first (one per agent session). */
  openTurns?: Entry[];
  lastEntry?: Entry | null;
  /** What undo and redo act on now (entry numbers): the server's answer, the client has no rule of its own. */
  undoTarget?: number | null;
  redoTarget?: number | null;
  gitRepository: boolean;
  head?: string | null;
  retention?: RetentionPolicy;
  fsync?: boolean;
  lastRecovery?: RecoveryReport | null;
  /** What opening the store set aside after a crash or power cut, oldest first. */
  repairs?: StoreRepair[];
  /** Settings ignored for this folder, and why. */
  configProblems?: string[];
  /** Failures agents' hooks (`takeback hook`) logged in the store. */
  hookFailures?: number;
  /** The latest: "AT AGENT EVENT: MESSAGE", or null. */
  lastHookFailure?: string | null;
  /** Hook payloads read only in part (bytes not UTF-8, half a character), recorded anyway. */
  payloadProblems?: number;
  /** The latest: "AT AGENT EVENT: WHAT", or null. */
  lastPayloadProblem?: string | null;
  /** What the newest operation applied in the editor and the disk lacks (`takeback/save` writes it). */
  unsaved?: UnsavedFile[];
}

/** A file the newest operation applied in the editor whose disk still holds what it held before. */
export interface UnsavedFile {
  path: string;
  /** The operation's entry number, and its kind ("undo"). */
  operation: number;
  kind: string;
  /** The entry it took back (an undo's turn), or null. */
  heldBy?: number | null;
  /** "unsaved": a buffer holds the operation's content; "discarded": none does. */
  editor?: "unsaved" | "discarded" | null;
}

/** The answer of `takeback/save`. */
export interface SaveReport {
  operation?: number | null;
  written?: string[];
  skipped?: SkippedFile[];
  message: string;
}

// ------------------------------------------------------------------ params (protocol.py)

/** Every request takes `folder`: a workspace folder URI, needed only in a multi-root workspace. */
export interface FolderParams {
  folder?: string;
}

export interface BeginTurnParams extends FolderParams {
  sessionId?: string;
  label?: string;
  agent?: string;
  /** Also record whatever changes on disk until endTurn (default true on the server). */
  bracket?: boolean;
}

export interface CheckParams {
  name: string;
  status: CheckStatus;
  command?: string;
  exitCode?: number;
}

export interface EndTurnParams extends FolderParams {
  turnId?: string;
  commandsRun?: string[];
  checks?: CheckParams[];
}

export interface ApplyEditParams {
  edit: lsp.WorkspaceEdit;
  label?: string;
  sessionId?: string;
  turnId?: string;
  agent?: string;
}

export interface OperationParams extends FolderParams {
  dryRun?: boolean;
  onConflict?: OnConflict;
  /** Only act if the operation would target this entry. */
  expectTurnId?: string;
}

/** One hunk of a file's change: the file, and a 0-based line the hunk covers, of the document
 * as it stands now (`now`, the default) or of the change's result (`change`: a diff view's right side). */
export interface HunkParams {
  uri: string;
  line: number;
  of?: "now" | "change";
}

export interface RevertTurnParams extends FolderParams {
  /** A turn (`#12`, an id) or one step of it (`#12.3`). */
  turnId: string;
  dryRun?: boolean;
  onConflict?: OnConflict;
  /** Revert only the turn's changes to this file. */
  uri?: string;
  /** Only the files these patterns name (git's pathspec, from the workspace top). */
  pathspec?: string[];
  /** Only this hunk of one file's change. */
  hunk?: HunkParams;
  /** Only act if the revert would target this entry. */
  expectTurnId?: string;
}

export interface RestoreParams extends FolderParams {
  /** A checkpoint id, `#N` (turn N's last checkpoint), `#N.k` (`#N.0`: where turn N started), or `last-green`. */
  checkpointId: string;
  dryRun?: boolean;
  onConflict?: OnConflict;
}

export interface TimelineParams extends FolderParams {
  sessionId?: string;
  limit?: number;
  before?: number;
  /** Also list empty turns (ended, no file changed); default false: left out and counted. */
  includeEmpty?: boolean;
}

export interface TurnParams extends FolderParams {
  turnId: string;
}

export interface DiffParams extends FolderParams {
  turnId: string;
  uri?: string;
}

export interface FileAtParams extends FolderParams {
  turnId: string;
  uri: string;
  side: "before" | "after";
  /** The file before or after step k of the turn (`#N.k`), not the whole turn. */
  step?: number;
}

export interface HunksParams extends FolderParams {
  turnId: string;
  uri: string;
  /** The hunks of step k of the turn (`#N.k`), not of the whole turn. */
  step?: number;
}

export interface BlameParams extends FolderParams {
  uri: string;
  /** The first line to answer, from 1 (as `takeback blame -L`); default: the top. */
  first?: number;
  /** The last line to answer, from 1, included; default: the end. */
  last?: number;
}

/** Who wrote a line (`takeback blame --json`'s origin, camelCase). */
export interface BlameOrigin {
  kind: "turn" | "person" | "before" | "unknown";
  entry?: string | null;
  number?: number | null;
  step?: number | null;
  stepLabel?: string | null;
  agent?: string | null;
  session?: string | null;
  /** The turn's prompt. */
  label?: string | null;
  at?: string | null;
  why?: "between" | "mark" | "operation" | "since" | null;
  commit?: string | null;
  /** The agent's line the person edited into this one. */
  editedFrom?: BlameOrigin | null;
  /** A teammate's turn: the remote their fetched timeline came from, and `person@machine`. */
  remote?: string | null;
  who?: string | null;
}

export interface BlameLine {
  /** From 1. */
  line: number;
  text: string;
  origin: BlameOrigin;
}

export interface Blame {
  path: string;
  lines: BlameLine[];
  /** How many timeline entries that changed the file were read (0: no turn changed it). */
  entries: number;
}

export interface RecordCheckParams extends FolderParams {
  name: string;
  status: CheckStatus;
  turnId?: string;
  command?: string;
  exitCode?: number;
}

// ------------------------------------------------------------------ results (protocol.py)

export interface ApplyEditResult {
  applied: boolean;
  checkpointId: string;
  /** The turn the batch joined. */
  entry: Entry;
  failureReason?: string | null;
  folder: string;
}

/** How a session listed in a timeline page begins (its first turn may be on an older page). */
export interface SessionStart {
  session: string;
  /** Its first prompt: the oldest turn's label that is not blank. */
  label?: string | null;
  /** Its first turn's number. */
  number: number;
  /** When its first turn began. */
  createdAt: string;
}

export interface TimelineResult {
  /** Newest first. */
  entries: Entry[];
  /** Pass as `before` for the next page; null on the last page. */
  nextBefore?: number | null;
  folder: string;
  /** Empty turns this page left out (`includeEmpty` false); absent from older servers. */
  hiddenEmpty?: number;
  /** Each session of `entries`: its first turn and prompt (the server's rule). */
  sessions?: SessionStart[];
  /** As StoreStatus.unsaved. */
  unsaved?: UnsavedFile[];
}

export interface DiffResult {
  diff: string;
  folder: string;
}

export interface FileAtResult {
  exists: boolean;
  content?: string | null;
  encoding: "utf-8" | "base64";
  folder: string;
}

/** One hunk in the lines of the change's result (0-based, `end` excluded; `start` = `end`: it
 * only removed lines), and the `line` that names it to `takeback/revertTurn` (`of: "change"`). */
export interface HunkRange {
  start: number;
  end: number;
  removed: number;
  line: number;
}

export interface HunksResult {
  hunks: HunkRange[];
  folder: string;
}

export interface TimelineChangedParams {
  folder: string;
  head?: string | null;
  /** `request` (this server), `external` (another process, e.g. the CLI) or `hook-failure`
   * (an agent's hook logged a failure: the status changed). */
  reason: string;
}

// ------------------------------------------------------------------ methods

export const beginTurn = new RequestType<BeginTurnParams, Entry, void>("takeback/beginTurn");
export const endTurn = new RequestType<EndTurnParams, Entry, void>("takeback/endTurn");
export const applyEdit = new RequestType<ApplyEditParams, ApplyEditResult, void>("takeback/applyEdit");
export const undo = new RequestType<OperationParams, OperationResult, void>("takeback/undo");
export const redo = new RequestType<OperationParams, OperationResult, void>("takeback/redo");
export const revertTurn = new RequestType<RevertTurnParams, OperationResult, void>("takeback/revertTurn");
export const restore = new RequestType<RestoreParams, OperationResult, void>("takeback/restore");
export const timeline = new RequestType<TimelineParams, TimelineResult, void>("takeback/timeline");
export const turn = new RequestType<TurnParams, Entry, void>("takeback/turn");
export const diff = new RequestType<DiffParams, DiffResult, void>("takeback/diff");
export const fileAt = new RequestType<FileAtParams, FileAtResult, void>("takeback/fileAt");
export const hunks = new RequestType<HunksParams, HunksResult, void>("takeback/hunks");
export const blame = new RequestType<BlameParams, Blame, void>("takeback/blame");
export const recordCheck = new RequestType<RecordCheckParams, Entry, void>("takeback/recordCheck");
export const status = new RequestType<FolderParams, StoreStatus, void>("takeback/status");
export const save = new RequestType<FolderParams, SaveReport, void>("takeback/save");
export const timelineChanged = new NotificationType<TimelineChangedParams>("takeback/timelineChanged");

/** `workspace/executeCommand` commands the server offers (registered by the language client). */
export const SERVER_COMMANDS = {
  undo: "takeback.undoTurn",
  redo: "takeback.redoTurn",
  revert: "takeback.revertTurn",
  restore: "takeback.restore",
  save: "takeback.save",
} as const;

/** JSON-RPC error codes (protocol.py ERROR_CODES). */
export const ErrorCodes = {
  error: -32001,
  notFound: -32002,
  nothingToDo: -32003,
  invalidInput: -32602,
  outsideWorkspace: -32004,
  state: -32005,
  stale: -32006, // also data.kind "changed-meanwhile": another program wrote to a file an operation wrote
  store: -32007,
  busy: -32008,
  cannotWrite: -32009,
  needsConsent: -32010,
  cancelled: -32800,
} as const;
