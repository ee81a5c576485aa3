import fsSync from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import {
  diffIsSinceHead,
  normalizeSessionLine,
  sessionLineSchema,
  sessionStartLineSchema,
  type IterationLine,
  type SessionEndLine,
  type SessionLine,
  type SessionStartLine,
} from '../sessionFormat/sessionLines.js';
import { CodeloopsError, type FailureDetails } from '../sessionFormat/failures.js';
import { isSessionId, timestampFromSessionId } from '../sessionFormat/sessionFiles.js';
import { NotARegularFileError, openRegularFile, openRegularFileSync, realFolderOf, statRegularFile } from '../files/regularFile.js';
import { releaseMemorySoon } from '../process/memoryRelease.js';
import { LineReader, readFirstLine, readLineText, readLinesBackward, readPrefixAt } from './lineReader.js';
import { longStringLiteral, longStringText, scanLongLine, type LongString } from './longLine.js';
import { isEmptyFilter, matchesDates, matchesFilter, type SessionFilter } from './sessionFilter.js';
import type { SessionStats, SessionSummary } from '../sessionFormat/sessionSummaries.js';
import { computeStats, summarize } from './sessionSummary.js';
import { listedFromFile, SummaryIndex, summaryIndexPath, type ListedSession } from './summaryIndex.js';

export interface Session {
  id: string;
  filePath: string;
  start: SessionStartLine;
  iterations: IterationLine[];
  end: SessionEndLine | null;
  /** Lines that were skipped, with the reason; empty for a clean file. */
  warnings: string[];
}

export type WarningSink = (message: string) => void;

/** Where a line is in its file, in bytes (its newline excluded): enough to read it again alone. */
export interface LineRange {
  start: number;
  end: number;
}

/**
 * The long string values of a big iteration line, left in the file (their value in
 * the part's `line` is ''). Read while the part is current: the file is read on.
 */
export interface LongFields {
  /** Each long value's length, in UTF-16 code units (what `string.length` says). */
  readonly chars: ReadonlyMap<string, number>;
  /** A long value's text, decoded a slice at a time. */
  text(key: string): AsyncIterable<string>;
  /** A long value as its JSON string literal, a slice at a time, to be written out as it is. */
  json(key: string): AsyncIterable<Buffer>;
}

/** One piece of a session as `SessionStore.read` streams it. */
export type SessionPart =
  | { kind: 'start'; line: SessionStartLine; filePath: string }
  | { kind: 'iteration'; line: IterationLine; range: LineRange; long?: LongFields }
  | { kind: 'end'; line: SessionEndLine }
  | { kind: 'warning'; message: string };

/** As SessionPart, with each iteration as its validated JSON text, in pieces (`SessionStore.readAsJson`). */
export type SessionJsonPart = Exclude<SessionPart, { kind: 'iteration' }> | { kind: 'iteration'; json: AsyncIterable<string | Buffer> | Iterable<string> };

/** An iteration read alone (`openIterationAt`); its long values are read from the file until `close`. */
export interface OpenedIteration {
  line: IterationLine;
  long?: LongFields;
  close(): Promise<void>;
}

/** Lines longer than this are left in the file by the readers that can do without them whole (see longLine.ts). */
const LONG_LINE_BYTES = 1024 * 1024;

/** `whole`: every line parsed; `light`: long values left in the file; `json`: iterations as their JSON text. */
type ReadingMode = 'whole' | 'light' | 'json';

interface PartsReading {
  id: string;
  filePath: string;
  handle: FileHandle;
  lines: LineReader;
  mode: ReadingMode;
  started: boolean;
  ended: boolean;
  /** A part that follows the warning just handed on. */
  pending?: SessionPart | SessionJsonPart;
  /** A line was left in the file and read from there. */
  sawLongLine?: boolean;
  /** Why the first unreadable line before the start could not be read: what a refusal of the file says. */
  firstProblem?: string;
}

export class SessionNotFoundError extends CodeloopsError {
  override name = 'SessionNotFoundError';
  constructor(id: string, directory: string) {
    super('session_not_found', `No session "${id}" in ${directory}.`, { id, directory });
  }
}

export class AmbiguousSessionIdError extends CodeloopsError {
  override name = 'AmbiguousSessionIdError';
  constructor(prefix: string, matches: readonly string[]) {
    super(
      'session_ambiguous',
      `"${prefix}" matches ${matches.length} sessions (${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', …' : ''}); give more of the id.`,
      {
        prefix,
        matches: matches.slice(0, 20),
      },
    );
  }
}

export class IterationNotFoundError extends CodeloopsError {
  override name = 'IterationNotFoundError';
  constructor(message: string, details: FailureDetails = {}) {
    super('iteration_not_found', message, details);
  }
}

export class NotASessionError extends CodeloopsError {
  override name = 'NotASessionError';
  constructor(message: string, filePath: string) {
    super('not_a_session', message, { file: filePath });
  }
}

/**
 * Listing yields to the event loop when it has run this long (an editor or a server
 * must stay responsive); a yield per few hundred files whatever their cost made a
 * listing from the index a tenth slower.
 */
const LISTING_SLICE_MS = 10;
/** How often (in files) listing looks at the clock. */
const FILES_PER_CLOCK_CHECK = 50;
/** File names carry the start second; collisions push it later by seconds, so allow slack. */
const FILE_NAME_DATE_SLACK_MS = 3600 * 1000;

/**
 * Reads the sessions folder. Listing reads only the first and the last line of each
 * file; loading a session streams it line by line. Bad lines are skipped with a
 * warning and reading goes on.
 */
export interface SessionStoreOptions {
  /**
   * The summary index (`summaryIndex.ts`): a file, or null to keep it in memory only
   * (a server that never writes). Default: `sessions-index.json` beside the folder.
   */
  indexFile?: string | null;
}

/** What listing learns from one file: its summary, its whole prompt and what it warned about. */
interface FileSummary {
  summary: SessionSummary;
  prompt: string;
  warnings: string[];
}

export class SessionStore {
  private readonly index: SummaryIndex;
  /** The folder's real path, for telling links that stay in it from links that lead out. */
  private readonly realDirectory = once(() => realFolderOf(this.directory));

  constructor(
    readonly directory: string,
    private readonly warn: WarningSink = () => {},
    options: SessionStoreOptions = {},
  ) {
    this.index = new SummaryIndex(directory, options.indexFile === undefined ? summaryIndexPath(directory) : options.indexFile);
  }

  filePathOf(id: string): string {
    if (!isSessionId(id)) throw new SessionNotFoundError(id, this.directory);
    return path.join(this.directory, `${id}.jsonl`);
  }

  async listIds(): Promise<string[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    // One pass: listings run this over every name of the folder.
    const ids: string[] = [];
    for (const name of names) {
      if (!name.endsWith('.jsonl')) continue;
      const id = name.slice(0, -'.jsonl'.length);
      if (isSessionId(id)) ids.push(id);
    }
    return ids;
  }

  /** Summaries of the sessions matching the filter, newest first. */
  async list(filter: SessionFilter = {}): Promise<SessionSummary[]> {
    return (await this.listSessions(filter)).map((listed) => listed.summary);
  }

  /**
   * The sessions matching the filter, newest first, as listing knows them: each
   * summary as JSON text, parsed only when the filter needs a field (`ListedSession`).
   * A file is read (its first and last lines) only when the summary index has nothing
   * for it as it is now.
   */
  async listSessions(filter: SessionFilter = {}): Promise<ListedSession[]> {
    const reading = this.listIds();
    this.index.prepare(); // while the folder is read
    const all = await reading;
    const ids =
      !filter.after && !filter.before
        ? all
        : all.filter((id) => {
            const startedAt = timestampFromSessionId(id);
            if (!startedAt) return true;
            return matchesDates(
              {
                after: filter.after && new Date(filter.after.getTime() - FILE_NAME_DATE_SLACK_MS),
                before: filter.before && new Date(filter.before.getTime() + FILE_NAME_DATE_SLACK_MS),
              },
              startedAt,
            );
          });
    const filtering = !isEmptyFilter(filter);
    const listed: ListedSession[] = [];
    let sliceStarted = performance.now();
    for (let index = 0; index < ids.length; index++) {
      if (index % FILES_PER_CLOCK_CHECK === 0 && performance.now() - sliceStarted >= LISTING_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStarted = performance.now();
      }
      const id = ids[index]!;
      const found = this.summaryOf(id);
      if (!found) continue;
      // A prompt too long for the index is read again, only when a search needs it.
      if (!filtering || matchesFilter(filter, found.summary, () => found.prompt ?? this.readSummary(id)?.prompt ?? '')) listed.push(found);
    }
    this.index.keep(all);
    return listed.sort(newestFirst);
  }

  /** One session's summary from its first and last lines, or undefined if it is not readable. */
  async summary(id: string): Promise<SessionSummary | undefined> {
    return this.summaryOf(id)?.summary;
  }

  /** From the index while the file is as it was, else from the file; what the file warned about is said either way. */
  private summaryOf(id: string): ListedSession | undefined {
    // Not path.join: listing calls this for every session, and the id is a plain file name (`isSessionId`).
    const filePath = `${this.directory}${path.sep}${id}.jsonl`;
    let stat: fsSync.Stats | undefined;
    try {
      // A folder, a FIFO, a device or a link out of the folder named like a session: never opened.
      stat = statRegularFile(filePath, this.directory, this.realDirectory);
    } catch (error) {
      this.warn(`${id}: skipped, ${error instanceof NotARegularFileError ? error.message : `it cannot be read (${(error as Error).message})`}`);
      return undefined;
    }
    if (!stat) return undefined; // deleted since the folder was read: not a warning, just gone
    const cached = this.index.get(id, stat);
    if (cached) {
      for (const warning of cached.warnings) this.warn(`${id}: ${warning}`);
      return cached;
    }
    const read = this.readSummary(id);
    if (!read) return undefined;
    for (const warning of read.warnings) this.warn(`${id}: ${warning}`);
    const listed = listedFromFile(id, stat, read.summary, read.prompt, read.warnings);
    this.index.set(listed);
    return listed;
  }

  async stats(filter: SessionFilter = {}): Promise<SessionStats> {
    return computeStats(await this.list(filter));
  }

  /**
   * Resolves what a user typed: a full id, a unique prefix of one, or `latest`.
   */
  async resolveId(idOrPrefix: string): Promise<string> {
    // Every id starts with the empty prefix: it would pick whichever session is alone, or any of them.
    if (idOrPrefix === '') throw new CodeloopsError('usage', 'The session id is empty: give an id, a unique prefix of one, or "latest".', { id: '' });
    const ids = await this.listIds();
    if (idOrPrefix === 'latest' || idOrPrefix === 'last') {
      const newest = (await this.list())[0];
      if (!newest) throw new SessionNotFoundError(idOrPrefix, this.directory);
      return newest.id;
    }
    if (ids.includes(idOrPrefix)) return idOrPrefix;
    const matches = ids.filter((id) => id.startsWith(idOrPrefix));
    if (matches.length === 1) return matches[0]!;
    if (matches.length > 1) throw new AmbiguousSessionIdError(idOrPrefix, matches.sort());
    throw new SessionNotFoundError(idOrPrefix, this.directory);
  }

  async load(id: string): Promise<Session> {
    let start: SessionStartLine | undefined;
    const iterations: IterationLine[] = [];
    let end: SessionEndLine | null = null;
    const warnings: string[] = [];
    let filePath = '';
    for await (const part of this.read(id)) {
      if (part.kind === 'start') {
        start = part.line;
        filePath = part.filePath;
      } else if (part.kind === 'iteration') iterations.push(part.line);
      else if (part.kind === 'end') end = part.line;
      else warnings.push(part.message);
    }
    return { id, filePath, start: start!, iterations, end, warnings };
  }

  /**
   * A session's lines as they are read, one at a time: what `load` collects, and what
   * a server streams without holding a multi-megabyte session in memory. The start
   * comes first; a later `end` replaces an earlier one. With `leaveLongStrings`, an
   * iteration line of megabytes is not parsed whole: its long string values stay in
   * the file (`''` in `line`), measured and readable through the part's `long`.
   */
  async *read(id: string, options: { leaveLongStrings?: boolean } = {}): AsyncGenerator<SessionPart> {
    yield* this.readParts(id, options.leaveLongStrings ? 'light' : 'whole') as AsyncGenerator<SessionPart>;
  }

  /**
   * As `read`, with each iteration as its JSON text, validated, to be written out as it
   * is: a line of megabytes goes out from the file a slice at a time, never parsed whole.
   */
  async *readAsJson(id: string): AsyncGenerator<SessionJsonPart> {
    yield* this.readParts(id, 'json') as AsyncGenerator<SessionJsonPart>;
  }

  private async *readParts(id: string, mode: ReadingMode): AsyncGenerator<SessionPart | SessionJsonPart> {
    const filePath = this.filePathOf(id);
    const handle = await openSessionFile(filePath, id, this.directory);
    let reading: PartsReading | undefined;
    try {
      const lines = new LineReader(handle, mode === 'whole' ? Infinity : LONG_LINE_BYTES);
      reading = { id, filePath, handle, lines, mode, started: false, ended: false };
      // One part at a time, made outside this generator: nothing here holds a line's text while its part is out.
      for (let part = await this.nextPart(reading); part; part = await this.nextPart(reading)) yield part;
      if (!reading.started) {
        // Why its first line could not be read says what is wrong with the file (CR-only line endings, not JSON).
        throw new NotASessionError(`${filePath} has no readable session_start line${reading.firstProblem ? `: ${reading.firstProblem}` : ''}.`, filePath);
      }
    } finally {
      await handle.close();
      // Reading long lines leaves megabytes of garbage behind it (slices, pieces of text): given back once done.
      if (reading?.sawLongLine) releaseMemorySoon();
    }
  }

  private async nextPart(reading: PartsReading): Promise<SessionPart | SessionJsonPart | undefined> {
    const warning = (message: string): SessionPart => {
      this.warn(`${reading.id}: ${message}`);
      return { kind: 'warning', message };
    };
    if (reading.pending) {
      const pending = reading.pending;
      reading.pending = undefined;
      return pending;
    }
    for (;;) {
      const read = await reading.lines.next();
      if (!read) return undefined;
      const { lineNumber, last } = read;
      const range = { start: read.start, end: read.end };
      const parsed = read.text === null ? await this.parseLongLine(reading, range) : parseReadLine(read.text);
      if (parsed === undefined) continue; // a blank line
      if (!parsed.ok) {
        if (!reading.started) reading.firstProblem ??= `line ${lineNumber} is ${parsed.reason}`;
        return warning(last ? `skipped a torn last line ${lineNumber} (${parsed.reason})` : `skipped line ${lineNumber}: ${parsed.reason}`);
      }
      const line = parsed.line;
      if (!reading.started) {
        if (line.type !== 'session_start') throw new NotASessionError(`${reading.filePath} does not start with a session_start line.`, reading.filePath);
        reading.started = true;
        return { kind: 'start', line, filePath: reading.filePath };
      }
      if (line.type === 'iteration') {
        const part = this.iterationPart(reading, line, read.text, range, parsed.long);
        if (!reading.ended) return part;
        reading.pending = part;
        return warning(`line ${lineNumber}: iteration after session_end`);
      }
      if (line.type === 'session_end') {
        const part: SessionPart = { kind: 'end', line };
        const again = reading.ended;
        reading.ended = true;
        if (!again) return part;
        reading.pending = part;
        return warning(`line ${lineNumber}: a second session_end; the last one wins`);
      }
      return warning(`skipped line ${lineNumber}: a second session_start`);
    }
  }

  /**
   * A line the reader left in the file. An iteration line is scanned: its long string
   * values stay there. Any other line (a start line with a prompt of megabytes) is
   * read whole, as there is nothing to leave out of it.
   */
  private async parseLongLine(reading: PartsReading, range: LineRange): Promise<ParseResult<SessionLine> | undefined> {
    reading.sawLongLine = true;
    const scanned = await scanLongLine(reading.handle, range.start, range.end);
    if (!scanned.ok) return scanned;
    const type = (scanned.value as { type?: unknown } | null)?.type;
    if (type !== 'iteration' || scanned.long.size === 0) return parseReadLine(await readLineText(reading.handle, range.start, range.end));
    const checked = validateLine(scanned.value);
    return checked.ok ? { ...checked, long: scanned.long } : checked;
  }

  private iterationPart(
    reading: PartsReading,
    line: IterationLine,
    text: string | null,
    range: LineRange,
    long: Map<string, LongString> | undefined,
  ): SessionPart | SessionJsonPart {
    const { handle } = reading;
    if (reading.mode === 'json') {
      // Read from the file as it is written out: valid JSON, checked above.
      return { kind: 'iteration', json: text !== null ? [text] : longStringLiteral(handle, { ...range, chars: 0 }) };
    }
    if (!long) return { kind: 'iteration', line, range };
    return {
      kind: 'iteration',
      line,
      range,
      long: {
        chars: new Map([...long].map(([key, value]) => [key, value.chars])),
        text: (key) => longStringText(handle, long.get(key)!),
        json: (key) => longStringLiteral(handle, long.get(key)!),
      },
    };
  }

  /**
   * One iteration line, read alone from where an earlier reading found it, with its
   * long string values left in the file; undefined when the file no longer holds that
   * iteration there (it was rewritten since). The file stays open until `close`.
   */
  async openIterationAt(id: string, range: LineRange, iterationNumber: number): Promise<OpenedIteration | undefined> {
    const filePath = this.filePathOf(id);
    const handle = await openSessionFile(filePath, id, this.directory);
    let opened: OpenedIteration | undefined;
    try {
      const reading: PartsReading = { id, filePath, handle, lines: new LineReader(handle), mode: 'light', started: true, ended: false };
      const parsed =
        range.end - range.start > LONG_LINE_BYTES
          ? await this.parseLongLine(reading, range)
          : parseReadLine(await readLineText(handle, range.start, range.end));
      if (!parsed?.ok || parsed.line.type !== 'iteration' || parsed.line.iteration_number !== iterationNumber) return undefined;
      const part = this.iterationPart(reading, parsed.line, null, range, parsed.long) as Extract<SessionPart, { kind: 'iteration' }>;
      opened = {
        line: part.line,
        long: part.long,
        close: async () => {
          await handle.close();
          if (reading.sawLongLine) releaseMemorySoon();
        },
      };
      return opened;
    } finally {
      if (!opened) await handle.close();
    }
  }

  /** A session's `session_start` line, reading nothing after it. */
  async startLine(id: string): Promise<SessionStartLine> {
    for await (const part of this.read(id, { leaveLongStrings: true })) if (part.kind === 'start') return part.line;
    // `read` throws before this for a file without a readable start.
    throw new NotASessionError(`${this.filePathOf(id)} has no readable session_start line.`, this.filePathOf(id));
  }

  /** A session's start line and the numbers of its iterations, without holding any output or diff. */
  async outline(id: string): Promise<{ start: SessionStartLine; iterations: number[] }> {
    let start: SessionStartLine | undefined;
    const iterations: number[] = [];
    for await (const part of this.read(id, { leaveLongStrings: true })) {
      if (part.kind === 'start') start = part.line;
      else if (part.kind === 'iteration' && !iterations.includes(part.line.iteration_number)) iterations.push(part.line.iteration_number);
    }
    return { start: start!, iterations };
  }

  /** The recorded diff of one iteration, or of every iteration in order. */
  async recordedDiff(id: string, iterationNumber?: number): Promise<string> {
    let diff = '';
    for await (const part of this.recordedDiffParts(id, iterationNumber)) diff += part;
    return diff;
  }

  /** The recorded diff in pieces, one iteration at a time, as the file is read; a diff of megabytes a slice at a time. */
  async *recordedDiffParts(id: string, iterationNumber?: number): AsyncGenerator<string> {
    const seen: number[] = [];
    for await (const part of this.read(id, { leaveLongStrings: true })) {
      if (part.kind !== 'iteration') continue;
      const iteration = part.line;
      const diff: AsyncIterable<string> | Iterable<string> = part.long?.chars.has('git_diff') ? part.long.text('git_diff') : [iteration.git_diff];
      if (iterationNumber !== undefined) {
        seen.push(iteration.iteration_number);
        if (iteration.iteration_number !== iterationNumber) continue;
        yield* diff;
        return;
      }
      const scope = diffIsSinceHead(iteration) ? ' (the whole change since HEAD, as the original codeloops recorded it; not the iteration’s own)' : '';
      let header = `# iteration ${iteration.iteration_number}${scope}\n`;
      let last = '';
      for await (const piece of diff) {
        if (piece.length === 0) continue;
        yield header + piece;
        header = '';
        last = piece;
      }
      if (last.length > 0 && !last.endsWith('\n')) yield '\n';
    }
    if (iterationNumber !== undefined) {
      throw new IterationNotFoundError(`Session ${id} has no iteration ${iterationNumber} (iterations: ${seen.join(', ') || 'none'}).`);
    }
  }

  /**
   * A session's summary from its first and last lines. Problems that skip the file are
   * said at once; those within a listed file are returned, to be said again while the
   * index serves it.
   */
  private readSummary(id: string): FileSummary | undefined {
    const filePath = path.join(this.directory, `${id}.jsonl`);
    let fd: number;
    try {
      // Non-blocking, and a regular file only: a FIFO put there after the check above must not hang the reader.
      fd = openRegularFileSync(filePath, { within: this.directory });
    } catch (error) {
      // Deleted between readdir and open: not a warning, just gone.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        this.warn(`${id}: skipped, ${error instanceof NotARegularFileError ? error.message : `it cannot be read (${(error as Error).message})`}`);
      return undefined;
    }
    try {
      return this.summaryFromFile(id, fd);
    } catch (error) {
      // A file we may not read: say so, list the rest.
      this.warn(`${id}: skipped, it cannot be read (${(error as Error).message})`);
      return undefined;
    } finally {
      fsSync.closeSync(fd);
    }
  }

  private summaryFromFile(id: string, fd: number): FileSummary | undefined {
    const { size } = fsSync.fstatSync(fd);
    const firstLine = readFirstLine(fd, size);
    if (!firstLine) {
      this.warn(`${id}: empty session file skipped`);
      return undefined;
    }
    const first = parseStartLine(firstLine.text);
    if (!first.ok) {
      this.warn(`${id}: skipped, its first line is not a session_start (${first.reason})`);
      return undefined;
    }
    const warnings: string[] = [];
    let lastIteration: number | undefined;
    let end: SessionEndLine | undefined;
    if (firstLine.terminated) {
      for (const candidate of readLinesBackward(fd, size, firstLine.end + 1)) {
        // A running session can end in a multi-megabyte iteration line; the listing
        // needs only its number. A terminated line was written whole, so its start is enough.
        const peeked = candidate.terminated && candidate.length > LARGE_LINE_BYTES ? peekIterationNumber(candidate.prefix(512)) : undefined;
        if (peeked !== undefined) {
          lastIteration = peeked;
          break;
        }
        const parsed = parseLine(candidate.text);
        if (!parsed.ok) {
          warnings.push(`skipped ${candidate.terminated ? 'a bad' : 'a torn'} line at byte ${candidate.start} (${parsed.reason})`);
          continue;
        }
        if (parsed.line.type === 'session_end') end = parsed.line;
        else if (parsed.line.type === 'iteration') lastIteration = parsed.line.iteration_number;
        else continue;
        break;
      }
    }
    // Without an end, the count is the last number, unless the numbering starts at 0 (the original codeloops).
    const count =
      end === undefined && lastIteration !== undefined && peekIterationNumber(readPrefixAt(fd, firstLine.end + 1, 512)) === 0
        ? lastIteration + 1
        : lastIteration;
    return { summary: summarize(id, first.line, count, end), prompt: first.line.prompt, warnings };
  }
}

/**
 * Opens a session file for reading, never blocking and never through a link out of
 * the folder: what is not a regular file there is not a session, and says what it is.
 */
async function openSessionFile(filePath: string, id: string, directory: string): Promise<FileHandle> {
  try {
    return await openRegularFile(filePath, { within: directory });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionNotFoundError(id, directory);
    if (error instanceof NotARegularFileError)
      throw new NotASessionError(`${error.message}: only regular files in the sessions folder are read as sessions.`, filePath);
    throw error;
  }
}

function once<T>(compute: () => T): () => T {
  let value: { of: T } | undefined;
  return () => (value ??= { of: compute() }).of;
}

/** Lines longer than this are peeked at rather than parsed while listing. */
const LARGE_LINE_BYTES = 256 * 1024;

/** `{"type":"iteration","iteration_number":N,…` as this runner and the original both write it (blank lines before it skipped). */
function peekIterationNumber(prefix: string): number | undefined {
  const match = /^\s*\{\s*"type"\s*:\s*"iteration"\s*,\s*"iteration_number"\s*:\s*(\d+)\s*,/.exec(prefix);
  return match ? Number(match[1]) : undefined;
}

type ParseResult<T> = { ok: true; line: T; long?: Map<string, LongString> } | { ok: false; reason: string };

/** One line through a schema; a byte-order mark (some editors add one) is not an error. */
function parseWith<T>(
  schema: {
    safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: readonly { path: PropertyKey[]; message: string }[] } };
  },
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

const parseLine = (text: string) => parseWith(sessionLineSchema, text);

/** A line read front to back through the schema; undefined for a blank line. */
function parseReadLine(text: string): ParseResult<SessionLine> | undefined {
  return text.trim() === '' ? undefined : parseLine(text);
}

/** A value already parsed (a scanned long line), through the schema. */
function validateLine(value: unknown): ParseResult<SessionLine> {
  const result = sessionLineSchema.safeParse(value);
  return result.success ? { ok: true, line: result.data } : { ok: false, reason: describeIssues(result.error.issues) };
}
const parseStartLine = (text: string) => parseWith(sessionStartLineSchema, text);

function describeIssues(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

function newestFirst(a: ListedSession, b: ListedSession): number {
  const byTime = b.startedMs - a.startedMs;
  return byTime !== 0 ? byTime : b.id.localeCompare(a.id);
}
