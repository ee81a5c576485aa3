import { normalizeSessionLine, sessionLineSchema, sessionStartLineSchema, type SessionLine, type SessionStartLine } from '../sessionFormat/sessionLines.js';

/**
 * One session line's text through its schema, as listing and reading both check it:
 * a line that does not pass says why, in a few words a warning can carry.
 */

export type ParseResult<T> = { ok: true; line: T } | { ok: false; reason: string };

type Issues = readonly { path: PropertyKey[]; message: string }[];

/** Any line of a session. */
export const parseLine = (text: string): ParseResult<SessionLine> => parseWith(sessionLineSchema, text);

/** A line that must be the session's start (the first line, as listing reads it). */
export const parseStartLine = (text: string): ParseResult<SessionStartLine> => parseWith(sessionStartLineSchema, text);

/** A line read front to back; undefined for a blank line. */
export function parseReadLine(text: string): ParseResult<SessionLine> | undefined {
  return text.trim() === '' ? undefined : parseLine(text);
}

/** A value already parsed (a scanned long line), through the schema. */
export function validateLine(value: unknown): ParseResult<SessionLine> {
  const result = sessionLineSchema.safeParse(value);
  return result.success ? { ok: true, line: result.data } : { ok: false, reason: describeIssues(result.error.issues) };
}

/** A byte-order mark (some editors add one) is not an error. */
function parseWith<T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: Issues } } },
  text: string,
): ParseResult<T> {
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    // Lines are ended by "\n": a file whose lines end in a carriage return alone reads as one long line.
    return {
      ok: false,
      reason: text.includes('\r') ? 'not valid JSON; its lines end in a carriage return alone, and session lines must end in "\\n"' : 'not valid JSON',
    };
  }
  // Other writers' words (the original codeloops') in the documented terms first.
  const result = schema.safeParse(normalizeSessionLine(json));
  if (!result.success) return { ok: false, reason: describeIssues(result.error.issues) };
  return { ok: true, line: result.data };
}

function describeIssues(issues: Issues): string {
  return issues
    .slice(0, 3)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}
