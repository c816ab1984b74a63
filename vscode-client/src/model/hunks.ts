/**
 * "Revert This Change" on a hunk of a diff view's right side (a `takeback:` document of a turn's
 * or a step's result): which revert it runs. The hunks themselves are the server's
 * (`takeback/hunks`); a line of the right side names one to `takeback/revertTurn` as
 * `hunk: {uri, line, of: "change"}`, with the turn (`turnId`) or the step (`#N.k`). Pure module.
 */
import type { HunkParams, HunkRange } from "../lspExt";
import type { ContentRef } from "./uris";

export const REVERT_HUNK_TITLE = "Revert This Change";

export interface HunkRevert {
  kind: "revert";
  folder: string;
  turnId: string;
  hunk: HunkParams;
  /** The confirmation's words: "the change at line 6 of app/greet.py from #2" (1-based). */
  what: string;
}

/** Whether a `takeback:` document is the right side of a turn's or step's diff view. */
export function isResultSide(ref: ContentRef): boolean {
  return ref.side === "after" && !!ref.uri && !!ref.path;
}

/** The revert of the hunk at 0-based `line` of the right side `ref` (undefined: not a right side). */
export function hunkRevert(ref: ContentRef, line: number): HunkRevert | undefined {
  if (!isResultSide(ref) || !ref.uri) {
    return undefined;
  }
  const entry = ref.step ? `#${ref.number}.${ref.step}` : `#${ref.number}`;
  return {
    kind: "revert",
    folder: ref.folder,
    // A step is named `#N.k`; a whole turn by its id (exact, whatever its number).
    turnId: ref.step ? entry : ref.turnId,
    hunk: { uri: ref.uri, line, of: "change" },
    what: `the change at line ${line + 1} of ${ref.path} from ${entry}`,
  };
}

/** The line of the right side where a hunk's action sits: its first line, or for a hunk that
 * only removed lines the line the server names it by. */
export function actionLine(hunk: HunkRange): number {
  return hunk.end > hunk.start ? hunk.start : hunk.line;
}

/** What the action says beside the hunk: "↶ Revert This Change (−2 +3)". */
export function actionLabel(hunk: HunkRange): string {
  const added = hunk.end - hunk.start;
  const counts = [hunk.removed ? `−${hunk.removed}` : "", added ? `+${added}` : ""].filter(Boolean).join(" ");
  return `↶ ${REVERT_HUNK_TITLE}${counts ? ` (${counts})` : ""}`;
}

/** The hover's words under the action: what it takes back and what stays. */
export function actionDetail(ref: ContentRef): string {
  const entry = ref.step ? `step #${ref.number}.${ref.step}` : `turn #${ref.number}`;
  return `Takes back only this change of ${entry}; the rest of it and every later edit stay.`;
}
