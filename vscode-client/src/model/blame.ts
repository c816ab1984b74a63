/**
 * Words for the end-of-line blame annotation, from the server's `takeback/blame` answer (who
 * wrote a line is the server's rule; this only says it): `#12 claude-code · <prompt, shortened>`.
 */
import type { BlameOrigin } from "../lspExt";

export const ANNOTATION_CHARS = 60;

/** The agent turn a line comes from: its own, or the one whose line the person edited. */
export function agentOrigin(origin: BlameOrigin): BlameOrigin | undefined {
  if (origin.kind === "turn") {
    return origin;
  }
  return origin.kind === "person" && origin.editedFrom?.kind === "turn" ? origin.editedFrom : undefined;
}

/** One line of text: control characters and line breaks as spaces, at most `max` characters. */
export function shorten(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, " ").replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The annotation of a line an agent wrote, or undefined for any other line. */
export function annotationText(origin: BlameOrigin, max = ANNOTATION_CHARS): string | undefined {
  const turn = agentOrigin(origin);
  if (!turn || turn.number === undefined || turn.number === null) {
    return undefined;
  }
  const whose = turn.remote ? `${shorten(`${turn.remote}/${turn.who ?? "?"}`, 40)} ` : "";
  const parts = [`${whose}#${turn.number}${turn.agent ? ` ${shorten(turn.agent, 24)}` : ""}`];
  if (turn.label) {
    parts.push(shorten(turn.label, max));
  }
  if (turn !== origin) {
    parts.push("edited by you since");
  }
  return parts.join(" · ");
}
