import { Buffer } from 'node:buffer';
import * as z from './zod.js';

/**
 * The summary index, `sessions-index.json` beside the sessions folder: each session's
 * summary keyed by its file's size and modification time, so that listing thousands
 * of sessions reads only the files that changed. A cache, never a record: an entry
 * counts only while its file is exactly as it was, and a damaged index is rebuilt.
 *
 * The file is a header line, then one line per session of tab-separated fields:
 *
 *     id  size  mtime_ms  started_ms  summary  warnings  prompt
 *
 * `summary` is the session's `SessionSummary` as JSON text, kept as text so that a
 * listing prints it as it is, parsing nothing it does not filter on; `warnings` is a
 * JSON array of what reading the file warned about (empty field: none); `prompt` the
 * whole prompt as a JSON string, for searching (`null`: too long to keep here, the
 * file is read then). JSON text never holds a raw tab or newline, so the separators
 * cannot occur inside a field.
 */

export const SESSION_INDEX_VERSION = 3;

/** `<folder>-index.json` beside the sessions folder, outside the `sessions/*.jsonl` glob: `sessions-index.json`. */
export function sessionIndexFileName(sessionsFolderName: string): string {
  return `${sessionsFolderName}-index.json`;
}

/**
 * The header carries the SHA-256 of the lines after it: an index whose text is
 * exactly what a runner wrote is taken as it is, without validating ten thousand
 * entries on every listing (that cost more than reading the index); a damaged or
 * edited one is rebuilt.
 */
export const sessionIndexHeaderSchema = z.object({
  version: z.literal(SESSION_INDEX_VERSION),
  /** The folder it indexes: an index found beside another folder (moved, copied) is not used. */
  sessions_dir: z.string(),
  entries_sha256: z.string(),
});
export type SessionIndexHeader = z.infer<typeof sessionIndexHeaderSchema>;

/** What the index keeps of one session, as a runner writes it. */
export interface SessionIndexFields {
  id: string;
  size: number;
  mtimeMs: number;
  /** When the session started (its summary's `timestamp`), in milliseconds: what listings sort by. */
  startedMs: number;
  /** The `SessionSummary`, as JSON text. */
  summaryJson: string;
  /** A JSON array of strings, or `''` for none. */
  warningsJson: string;
  /** A JSON string, or `null`. */
  promptJson: string;
}

const TAB = 0x09;
const NEWLINE = 0x0a;
const SUMMARY_START = Buffer.from('{"id":');

/**
 * One line of the index, kept as the index file's bytes: its numbers are read when
 * the line is, its text fields only when asked for. Listing ten thousand sessions as
 * JSON copies each summary's bytes from the index to the output and decodes none
 * (decoding 4 MB into strings and encoding them again cost a listing more than its
 * reading; a single emoji makes a decoded string two bytes a character).
 */
export class SessionIndexLine {
  /** Where the prompt field starts (after the warnings) and where the line ends: found when first asked for. */
  private promptStart = -1;
  private end = -1;

  private constructor(
    private readonly bytes: Buffer,
    private readonly start: number,
    private readonly summaryStart: number,
    private readonly summaryEnd: number,
    readonly id: string,
    readonly size: number,
    readonly mtimeMs: number,
    readonly startedMs: number,
  ) {}

  static format(fields: SessionIndexFields): SessionIndexLine {
    const { id, size, mtimeMs, startedMs, summaryJson, warningsJson, promptJson } = fields;
    const bytes = Buffer.from([id, size, mtimeMs, startedMs, summaryJson, warningsJson, promptJson].join('\t'));
    return SessionIndexLine.parse(id, bytes, 0)!;
  }

  /**
   * The line of session `id` (what comes before its first tab: `indexLineId`) that
   * starts at `start` of an index file's bytes, or undefined for a line that is not one
   * (its session is then read again from its file). Only the fields every listing reads
   * are looked at: the index's hash says its text is what a runner wrote.
   */
  static parse(id: string, bytes: Buffer, start: number): SessionIndexLine | undefined {
    // Read with plain loops over the bytes: every listing parses every line, and ten
    // Buffer method calls a line (each checking its arguments) cost more than the scan.
    let at = start + id.length;
    if (bytes[at] !== TAB) return undefined;
    const size = readWholeNumber(bytes, ++at);
    at = afterDigits(bytes, at);
    if (bytes[at] !== TAB) return undefined;
    const mtimeStart = ++at;
    while (at < bytes.length && bytes[at] !== TAB && bytes[at] !== NEWLINE) at++;
    // A fraction of a millisecond: read as JavaScript reads a number, so that it equals the file's stamp exactly.
    const mtimeMs = at > mtimeStart ? Number(bytes.toString('latin1', mtimeStart, at)) : NaN;
    if (bytes[at] !== TAB) return undefined;
    const startedMs = readWholeNumber(bytes, ++at);
    at = afterDigits(bytes, at);
    if (bytes[at] !== TAB || !Number.isFinite(mtimeMs) || size < 0 || startedMs < 0) return undefined;
    const summaryStart = at + 1;
    for (let index = 0; index < SUMMARY_START.length; index++) if (bytes[summaryStart + index] !== SUMMARY_START[index]) return undefined;
    // JSON text holds no raw tab or newline: the summary ends at the next tab.
    const summaryEnd = bytes.indexOf(TAB, summaryStart);
    if (summaryEnd < 0) return undefined;
    return new SessionIndexLine(bytes, start, summaryStart, summaryEnd, id, size, mtimeMs, startedMs);
  }

  /** The whole line, without its newline. */
  get text(): Uint8Array {
    return this.bytes.subarray(this.start, this.lineEnd());
  }

  /** The summary's JSON text as UTF-8 bytes, to be printed as it is. */
  get summaryBytes(): Uint8Array {
    return this.bytes.subarray(this.summaryStart, this.summaryEnd);
  }

  get summaryJson(): string {
    return this.bytes.toString('utf8', this.summaryStart, this.summaryEnd);
  }

  /** `''` for none, as most lines have: told without decoding anything. */
  get warningsJson(): string {
    const start = this.summaryEnd + 1;
    return this.bytes[start] === TAB ? '' : this.bytes.toString('utf8', start, this.findPromptStart() - 1);
  }

  get promptJson(): string {
    return this.bytes.toString('utf8', this.findPromptStart(), this.lineEnd());
  }

  private findPromptStart(): number {
    if (this.promptStart < 0) {
      const tab = this.bytes.indexOf(TAB, this.summaryEnd + 1);
      this.promptStart = tab < 0 || tab >= this.lineEnd() ? this.lineEnd() : tab + 1;
    }
    return this.promptStart;
  }

  private lineEnd(): number {
    if (this.end < 0) this.end = lineEnd(this.bytes, this.start);
    return this.end;
  }
}

/** Where the line that starts at `start` ends: at its newline, or at the end of the bytes. */
export function lineEnd(bytes: Buffer, start: number): number {
  const newline = bytes.indexOf(NEWLINE, start);
  return newline < 0 ? bytes.length : newline;
}

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/** The whole number written in ASCII digits at `at`, or -1 if there are none (or more than a number can hold exactly). */
function readWholeNumber(bytes: Buffer, at: number): number {
  let value = 0;
  const start = at;
  for (let byte = bytes[at]; byte !== undefined && byte >= DIGIT_0 && byte <= DIGIT_9; byte = bytes[++at]) value = value * 10 + (byte - DIGIT_0);
  return at === start || at - start > 15 ? -1 : value;
}

function afterDigits(bytes: Buffer, at: number): number {
  for (let byte = bytes[at]; byte !== undefined && byte >= DIGIT_0 && byte <= DIGIT_9; byte = bytes[++at]);
  return at;
}

/** The session a line of the index is about: what comes before its first tab ('' if there is none before `end`). */
export function indexLineId(bytes: Buffer, start: number, end: number): string {
  const tab = bytes.indexOf(TAB, start);
  // Session ids are ASCII (`isSessionId`): one that is not never matches a session.
  return tab < 0 || tab >= end ? '' : bytes.toString('latin1', start, tab);
}
