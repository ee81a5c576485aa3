import { homedir } from 'node:os';
import path from 'node:path';
import { CodeloopsError } from './failures.js';

/**
 * Where sessions live and how their files are named. The same paths on every OS
 * (the original documented XDG paths but used macOS's Library folder there).
 */

export type Environment = Readonly<Record<string, string | undefined>>;

export function dataHome(env: Environment = process.env): string {
  const configured = env.XDG_DATA_HOME;
  return configured && path.isAbsolute(configured) ? configured : path.join(env.HOME || homedir(), '.local', 'share');
}

/** `$XDG_DATA_HOME/codeloops/sessions`: one `<id>.jsonl` per session, nothing else. */
export function sessionsDir(env: Environment = process.env): string {
  return path.join(dataHome(env), 'codeloops', 'sessions');
}

/**
 * Everything else the runner records about a session (events, raw agent output)
 * lives here, outside the `sessions/*.jsonl` glob that readers of the format use.
 */
export function sidecarsDir(env: Environment = process.env): string {
  return path.join(dataHome(env), 'codeloops', 'sidecars');
}

/** The sidecar folder of a session. (A folder is a `…Dir`; a function that finds one for a session, a `…DirOf`.) */
export function sidecarDirOf(sessionId: string, env: Environment = process.env): string {
  return path.join(sidecarsDir(env), assertSessionId(sessionId));
}

/** In a sidecar folder: every run event of the session, one a line (`runEvents.ts`), append-only. */
export const EVENTS_FILE = 'events.jsonl';

/** In a sidecar folder: the user's review records (`reviewRecords.ts`), one a line, append-only. */
export const REVIEW_FILE = 'review.jsonl';

/** Which answer of the critic (or the candidates' judge): the first, or the one asked for again when the first could not be read. */
export type AnswerAttempt = 'first' | 'repair';

/** In a sidecar folder: one agent run's untouched stdout. */
export function rawStdoutFileName(iteration: number, role: 'actor' | 'critic', attempt: AnswerAttempt = 'first'): string {
  return `iteration-${iteration}-${role}${attempt === 'repair' ? '-repair' : ''}.stdout`;
}

/** First 6 hex digits of SHA-256 of the prompt, as in the documented file name. */
export function promptHash(prompt: string): string {
  // `crypto` loaded when a session is named, not with this module: every listing would pay for it at start.
  return process.getBuiltinModule('node:crypto').createHash('sha256').update(prompt, 'utf8').digest('hex').slice(0, 6);
}

/** `2025-01-27T15-30-45Z`: ISO 8601 at second precision with `-` for `:`. */
export function fileTimestamp(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '-');
}

export function sessionIdFor(date: Date, prompt: string): string {
  return `${fileTimestamp(date)}_${promptHash(prompt)}`;
}

/**
 * A session id is a plain file name stem: letters, digits, `-`, `_`, `.`, no path
 * separators, no `..`. Anything else is refused before it reaches the file system.
 */
const SESSION_ID = /^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}

export class InvalidSessionIdError extends CodeloopsError {
  override name = 'InvalidSessionIdError';
  constructor(value: string) {
    super('session_not_found', `"${value}" is not a session id (expected a name such as 2025-01-27T15-30-45Z_a3f2c1).`, { id: value });
  }
}

export function assertSessionId(value: string): string {
  if (!isSessionId(value)) throw new InvalidSessionIdError(value);
  return value;
}

export function sessionFilePath(sessionsDirectory: string, sessionId: string): string {
  return path.join(sessionsDirectory, `${assertSessionId(sessionId)}.jsonl`);
}

/** The session start time encoded in a file name, or undefined for foreign names. */
export function timestampFromSessionId(sessionId: string): Date | undefined {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})Z/.exec(sessionId);
  if (!match) return undefined;
  const date = new Date(`${match[1]}T${match[2]}:${match[3]}:${match[4]}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
