import { Buffer } from 'node:buffer';
import { crc32 } from 'node:zlib';
import { sessionFiguresSchema, type SessionFigures, type SessionSummary } from './sessionSummaries.js';
import * as z from './zod.js';

/**
 * The summary index, `sessions-index.json` beside the sessions folder: each session's
 * summary keyed by its file's size and modification time, so that listing thousands
 * of sessions reads only the files that changed. A cache, never a record: an entry
 * counts only while its file is exactly as it was, and a damaged index is rebuilt.
 *
 * The file is a header line, then one line per session of tab-separated fields:
 *
 *     id  size  mtime_us  started_ms  summary  warnings  prompt  figures
 *
 * `mtime_us` is the file's modification time in whole microseconds (whole, so that it
 * is read like the other numbers, without decoding a string per line).
 * `summary` is the session's `SessionSummary` as JSON text, kept as text so that a
 * listing prints it as it is, parsing nothing it does not filter on; `warnings` is a
 * JSON array of what reading the file warned about (empty field: none); `prompt` the
 * whole prompt as a JSON string, for searching (`null`: too long to keep here, the
 * file is read then); `figures` the session's `SessionFigures` (what stats need of its
 * middle lines) as a JSON array of their values in the schema's order (`figuresText`):
 * ten thousand lines are read by every listing, and the names would make the index
 * half as big again. JSON text never holds a raw tab or newline, so the separators
 * cannot occur inside a field.
 */

export const SESSION_INDEX_VERSION = 8;

/** `<folder>-index.json` beside the sessions folder, outside the `sessions/*.jsonl` glob: `sessions-index.json`. */
export function sessionIndexFileName(sessionsFolderName: string): string {
  return `${sessionsFolderName}-index.json`;
}

/**
 * The header carries the CRC-32 of the lines after it: an index whose text is exactly
 * what a runner wrote is taken as it is, without validating ten thousand entries on
 * every listing (that cost more than reading the index); a damaged or edited one is
 * rebuilt. A checksum against accidents, not a seal: the index is the user's own
 * cache, and whoever can write it can as well write the sessions it summarizes.
 */
const sessionIndexHeaderSchema = z.object({
  version: z.literal(SESSION_INDEX_VERSION),
  /** The folder it indexes: an index found beside another folder (moved, copied) is not used. */
  sessions_dir: z.string(),
  entries_crc32: z.number(),
});
type SessionIndexHeader = z.infer<typeof sessionIndexHeaderSchema>;

/** The index file for these lines (each a `SessionIndexLine`'s text) of the folder `sessionsDirectory`. */
export function formatIndexFile(lines: readonly Uint8Array[], sessionsDirectory: string): { file: Buffer; body: Buffer } {
  const parts: Uint8Array[] = [];
  for (const line of lines) {
    if (parts.length > 0) parts.push(NEWLINE_BYTES);
    parts.push(line);
  }
  const body = Buffer.concat(parts);
  const header: SessionIndexHeader = { version: SESSION_INDEX_VERSION, sessions_dir: sessionsDirectory, entries_crc32: crc32(body) };
  return { file: Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body, NEWLINE_BYTES]), body };
}

/**
 * The lines of an index file (the bytes after its header), or undefined for an index
 * that is not to be used: of an older version, of another folder (moved, copied), or
 * whose text is not what a runner wrote.
 */
export function readIndexFile(file: Buffer, sessionsDirectory: string): Buffer | undefined {
  const newline = file.indexOf(NEWLINE);
  if (newline < 0) return undefined;
  const end = file[file.length - 1] === NEWLINE ? file.length - 1 : file.length;
  const lines = file.subarray(newline + 1, Math.max(newline + 1, end));
  try {
    const header = sessionIndexHeaderSchema.safeParse(JSON.parse(file.toString('utf8', 0, newline)));
    return header.success && header.data.sessions_dir === sessionsDirectory && header.data.entries_crc32 === crc32(lines) ? lines : undefined;
  } catch {
    return undefined; // a header that is not JSON
  }
}

/** What the index keeps of one session, as a runner writes it. */
export interface SessionIndexFields {
  id: string;
  size: number;
  /** The file's modification time in whole microseconds (`microsecondsOf`). */
  mtimeUs: number;
  /** When the session started (its summary's `timestamp`), in milliseconds: what listings sort by. */
  startedMs: number;
  /** The `SessionSummary`, as JSON text. */
  summaryJson: string;
  /** A JSON array of strings, or `''` for none. */
  warningsJson: string;
  /** A JSON string, or `null`. */
  promptJson: string;
  /** The `SessionFigures`, as `figuresText` writes them. */
  figuresJson: string;
}

const TAB = 0x09;
const NEWLINE = 0x0a;
const NEWLINE_BYTES = Buffer.from('\n');
const SUMMARY_START = Buffer.from('{"id":');

const NO_WARNINGS: readonly string[] = Object.freeze([]);

/**
 * One line of the index, kept as the index file's bytes: its numbers are read when
 * the line is, its text fields only when asked for. Listing ten thousand sessions as
 * JSON copies each summary's bytes from the index to the output and decodes none
 * (decoding 4 MB into strings and encoding them again cost a listing more than its
 * reading; a single emoji makes a decoded string two bytes a character).
 */
export class SessionIndexLine {
  /** Where the prompt and figures fields start and where the line ends: found when first asked for. */
  private promptStart = -1;
  private figuresStart = -1;
  private end = -1;
  private parsedSummary: SessionSummary | undefined;

  private constructor(
    private readonly bytes: Buffer,
    private readonly start: number,
    private readonly summaryStart: number,
    private readonly summaryEnd: number,
    readonly id: string,
    readonly size: number,
    readonly mtimeUs: number,
    readonly startedMs: number,
  ) {}

  /** A line for a session just read from its file; `summary` is what `summaryJson` was made from. */
  static format(fields: SessionIndexFields, summary?: SessionSummary): SessionIndexLine {
    const { id, size, mtimeUs, startedMs, summaryJson, warningsJson, promptJson, figuresJson } = fields;
    const before = [id, size, mtimeUs, startedMs, ''].join('\t');
    const bytes = Buffer.from([before + summaryJson, warningsJson, promptJson, figuresJson].join('\t'));
    // Made from the fields, not parsed back: a file dated before 1970 has a line too, one the index does not keep (`storable`).
    const summaryStart = Buffer.byteLength(before);
    const line = new SessionIndexLine(bytes, 0, summaryStart, summaryStart + Buffer.byteLength(summaryJson), id, size, mtimeUs, startedMs);
    line.parsedSummary = summary;
    return line;
  }

  /** Whether its numbers are what an index line holds (whole, from 0, exact): a file dated before 1970 or after 2255 is not kept. */
  get storable(): boolean {
    return [this.size, this.mtimeUs, this.startedMs].every((value) => Number.isSafeInteger(value) && value >= 0);
  }

  /**
   * The line of session `id` (what comes before its first tab) that
   * starts at `start` of an index file's bytes, or undefined for a line that is not one
   * (its session is then read again from its file). Only the fields every listing reads
   * are looked at: the index's checksum says its text is what a runner wrote.
   */
  static parse(id: string, bytes: Buffer, start: number): SessionIndexLine | undefined {
    const idEnd = start + id.length;
    if (bytes[idEnd] !== TAB) return undefined;
    const summaryStart = readNumberFields(bytes, idEnd + 1);
    if (summaryStart < 0) return undefined;
    for (let index = 0; index < SUMMARY_START.length; index++) if (bytes[summaryStart + index] !== SUMMARY_START[index]) return undefined;
    // JSON text holds no raw tab or newline: the summary ends at the next tab.
    const summaryEnd = bytes.indexOf(TAB, summaryStart);
    if (summaryEnd < 0) return undefined;
    return new SessionIndexLine(bytes, start, summaryStart, summaryEnd, id, numberFields[0]!, numberFields[1]!, numberFields[2]!);
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

  /** The summary, parsed when first asked for: a listing printed as JSON parses none. */
  get summary(): SessionSummary {
    // The text is what a runner wrote from a checked summary (the index's checksum says so).
    return (this.parsedSummary ??= JSON.parse(this.summaryJson) as SessionSummary);
  }

  /** What reading the file warned about (a torn last line); most lines have nothing, told without decoding anything. */
  get warnings(): readonly string[] {
    return this.bytes[this.summaryEnd + 1] === TAB ? NO_WARNINGS : (JSON.parse(this.warningsJson) as string[]);
  }

  /** The whole prompt, or null when it was too long to keep (read it from the file). */
  get prompt(): string | null {
    return JSON.parse(this.promptJson) as string | null;
  }

  /** `''` for none, as most lines have: told without decoding anything. */
  get warningsJson(): string {
    const start = this.summaryEnd + 1;
    return this.bytes[start] === TAB ? '' : this.bytes.toString('utf8', start, this.findPromptStart() - 1);
  }

  get promptJson(): string {
    return this.bytes.toString('utf8', this.findPromptStart(), this.findFiguresStart() - 1);
  }

  /** What stats need of the session's middle lines; parsed each time asked (stats asks once). */
  get figures(): SessionFigures {
    const values = JSON.parse(this.figuresJson) as unknown[];
    return Object.fromEntries(FIGURE_NAMES.map((name, index) => [name, values[index]])) as SessionFigures;
  }

  get figuresJson(): string {
    return this.bytes.toString('utf8', this.findFiguresStart(), this.lineEnd());
  }

  /** Where the figures start: after the prompt's tab (a JSON string holds no raw tab). */
  private findFiguresStart(): number {
    if (this.figuresStart < 0) {
      const tab = this.bytes.indexOf(TAB, this.findPromptStart());
      this.figuresStart = tab < 0 || tab >= this.lineEnd() ? this.lineEnd() + 1 : tab + 1;
    }
    return this.figuresStart;
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

const FIGURE_NAMES = Object.keys(sessionFiguresSchema.shape) as (keyof SessionFigures)[];

/** A session's figures as its index line keeps them: their values, in the order of the schema's fields. */
export function figuresText(figures: SessionFigures): string {
  return JSON.stringify(FIGURE_NAMES.map((name) => figures[name]));
}

/** Where the line that starts at `start` ends: at its newline, or at the end of the bytes. */
export function lineEnd(bytes: Buffer, start: number): number {
  const newline = bytes.indexOf(NEWLINE, start);
  return newline < 0 ? bytes.length : newline;
}

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/** The size, mtime_us and started_ms of the line being parsed (reused: every listing parses every line). */
const numberFields = new Float64Array(3);

/**
 * Reads the line's three numbers, each whole ASCII digits ending in a tab, from `at`
 * into `numberFields`, and returns where the field after them starts, or -1 if the
 * text there is not that. One plain loop over the bytes: every listing parses every
 * line, and Buffer method calls (each checking its arguments) cost more than the scan.
 */
function readNumberFields(bytes: Buffer, at: number): number {
  for (let field = 0; field < numberFields.length; field++) {
    const first = at;
    let value = 0;
    for (let byte = bytes[at]; byte !== undefined && byte >= DIGIT_0 && byte <= DIGIT_9; byte = bytes[++at]) value = value * 10 + (byte - DIGIT_0);
    // More digits than a number holds exactly is no stamp a runner wrote.
    if (at === first || at - first > 16 || value > Number.MAX_SAFE_INTEGER || bytes[at] !== TAB) return -1;
    numberFields[field] = value;
    at++;
  }
  return at;
}

/**
 * A modification time as the index keeps it: Node gives it in milliseconds with a
 * fraction (the file system's nanoseconds), which a whole number of microseconds holds
 * exactly enough to tell two writes apart (the index keeps no file changed in the last
 * two seconds), and within a safe integer until the year 2255.
 */
export function microsecondsOf(milliseconds: number): number {
  return Math.round(milliseconds * 1000);
}

/**
 * The index's lines (the bytes after its header), found by session id: what comes
 * before a line's first tab. A listing asks for the sessions in the order the folder
 * lists them, and the index is written in that order (`SummaryIndex.keep`): each is
 * then the line after the last one found, told by comparing the id there, without a
 * table of ten thousand ids. Asked for one out of that order (a session added or
 * gone, a filtered listing), it builds the table once, and goes on in order from the
 * line it found.
 *
 * Searched in one copy of the text decoded as Latin-1 (a byte a character, so that
 * offsets are the same): string searches cost a fraction of the Buffer calls that
 * searching the bytes line by line took. Session ids are ASCII (`isSessionId`): a
 * line whose id is not never matches a session.
 */
export class IndexLines {
  private readonly text: string;
  /** Where the line after the last one found starts. */
  private next = 0;
  /** Where each line starts, by id: built when first asked for one out of order. */
  private table: Map<string, number> | undefined;

  constructor(readonly bytes: Buffer) {
    this.text = bytes.toString('latin1');
  }

  /** Where the line of `id` starts in `bytes`, or -1 if there is none. */
  find(id: string): number {
    // Called for every session of every listing, mostly before the JIT has compiled it: kept to the few steps it needs.
    const at = this.next;
    const start = this.text.startsWith(id, at) && this.text.charCodeAt(at + id.length) === TAB ? at : (this.starts().get(id) ?? -1);
    if (start >= 0) {
      const newline = this.text.indexOf('\n', start);
      this.next = newline < 0 ? this.text.length : newline + 1;
    }
    return start;
  }

  /** True when every line was found, each once, in the order of the file: whoever asked asked for exactly these. */
  get foundAllInOrder(): boolean {
    return this.table === undefined && this.next >= this.text.length;
  }

  /** Where the line of `id` starts, or -1, without moving on: for a lookup outside a listing's walk. */
  startOf(id: string): number {
    return this.starts().get(id) ?? -1;
  }

  /** How many lines there are. */
  get size(): number {
    return this.starts().size;
  }

  /** Starts again from the first line: a new listing. */
  rewind(): void {
    this.next = 0;
  }

  private starts(): Map<string, number> {
    if (this.table) return this.table;
    this.table = new Map();
    const { text } = this;
    for (let start = 0; start < text.length;) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      const tab = text.indexOf('\t', start);
      if (tab >= 0 && tab < end) this.table.set(text.slice(start, tab), start);
      start = end + 1;
    }
    return this.table;
  }
}
