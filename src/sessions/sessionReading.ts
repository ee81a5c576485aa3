import type { FileHandle } from 'node:fs/promises';
import type { IterationLine, SessionEndLine, SessionLine, SessionStartLine } from '../sessionFormat/sessionLines.js';
import { NotARegularFileError, openRegularFile } from '../files/regularFile.js';
import { releaseMemorySoon } from '../process/memoryRelease.js';
import { LineReader, readLineText } from './lineReader.js';
import { longStringLiteral, longStringText, scanLongLine, type LongString } from './longLine.js';
import { NotASessionError, SessionNotFoundError, type WarningSink } from './sessionErrors.js';
import { parseReadLine, validateLine } from './sessionLineParsing.js';

/**
 * Reading one session front to back, a part at a time, in one of three modes that
 * differ only in what they make of an iteration line (see `SessionStore`): whole,
 * light (long string values left in the file) and JSON (the line's text as written).
 * Bad lines are skipped with a warning and reading goes on; a file whose first
 * readable line is not a session_start is no session.
 */

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

/** The parts every mode reads alike: all but the iterations. */
type CommonPart = { kind: 'start'; line: SessionStartLine; filePath: string } | { kind: 'end'; line: SessionEndLine } | { kind: 'warning'; message: string };

type IterationPart = { kind: 'iteration'; line: IterationLine; range: LineRange; long?: LongFields };
type IterationJsonPart = { kind: 'iteration'; json: AsyncIterable<string | Buffer> | Iterable<string> };

/** One piece of a session as `SessionStore.read` streams it. */
export type SessionPart = CommonPart | IterationPart;

/** As SessionPart, with each iteration as its validated JSON text, in pieces (`SessionStore.readAsJson`). */
export type SessionJsonPart = CommonPart | IterationJsonPart;

/** An iteration read alone (`openIterationAt`); its long values are read from the file until `close`. */
export interface OpenedIteration {
  line: IterationLine;
  long?: LongFields;
  close(): Promise<void>;
}

/** A session file as the store names it. */
export interface SessionFile {
  id: string;
  filePath: string;
  /** The sessions folder: the file is read only if it is a regular file there. */
  directory: string;
}

/** Lines longer than this are left in the file by the readers that can do without them whole (see longLine.ts). */
const LONG_LINE_BYTES = 1024 * 1024;

/** An iteration line as the reading found it, before a mode makes it a part. */
interface FoundIteration {
  line: IterationLine;
  /** Null for a line left in the file. */
  text: string | null;
  range: LineRange;
  long?: Map<string, LongString>;
}

/** What a mode makes of an iteration line, reading the rest of it from the file if it needs to. */
type IterationPartOf<P> = (found: FoundIteration, handle: FileHandle) => P;

/** A line through the schema; of a scanned long line, the string values left in the file as well. */
type ParsedLine = { ok: true; line: SessionLine; long?: Map<string, LongString> } | { ok: false; reason: string };

/** Every line parsed whole. */
export function readWhole(file: SessionFile, warn: WarningSink): AsyncGenerator<SessionPart> {
  return readSessionFile<IterationPart>(file, warn, Infinity, ({ line, range }) => ({ kind: 'iteration', line, range }));
}

/** An iteration line of megabytes scanned, not parsed whole: its long string values stay in the file, readable through `long`. */
export function readLight(file: SessionFile, warn: WarningSink): AsyncGenerator<SessionPart> {
  return readSessionFile<IterationPart>(file, warn, LONG_LINE_BYTES, ({ line, range, long }, handle) =>
    long ? { kind: 'iteration', line, range, long: longFields(handle, long) } : { kind: 'iteration', line, range },
  );
}

/** Each iteration as its JSON text, validated, to be written out as it is: a line of megabytes goes out from the file a slice at a time. */
export function readJson(file: SessionFile, warn: WarningSink): AsyncGenerator<SessionJsonPart> {
  return readSessionFile<IterationJsonPart>(file, warn, LONG_LINE_BYTES, ({ text, range }, handle) => ({
    kind: 'iteration',
    json: text !== null ? [text] : longStringLiteral(handle, { ...range, chars: 0 }),
  }));
}

/**
 * One iteration line, read alone from where an earlier reading found it, with its
 * long string values left in the file; undefined when the file no longer holds that
 * iteration there (it was rewritten since). The file stays open until `close`.
 */
export async function openIterationAt(file: SessionFile, range: LineRange, iterationNumber: number): Promise<OpenedIteration | undefined> {
  const handle = await openSessionFile(file);
  const isLong = range.end - range.start > LONG_LINE_BYTES;
  let opened: OpenedIteration | undefined;
  try {
    const parsed: ParsedLine | undefined = isLong ? await parseLongLine(handle, range) : parseReadLine(await readLineText(handle, range.start, range.end));
    if (!parsed?.ok || parsed.line.type !== 'iteration' || parsed.line.iteration_number !== iterationNumber) return undefined;
    opened = {
      line: parsed.line,
      long: parsed.long && longFields(handle, parsed.long),
      close: async () => {
        await handle.close();
        if (isLong) releaseMemorySoon();
      },
    };
    return opened;
  } finally {
    if (!opened) await handle.close();
  }
}

async function* readSessionFile<P>(
  file: SessionFile,
  warn: WarningSink,
  leaveLongerThan: number,
  iterationPart: IterationPartOf<P>,
): AsyncGenerator<CommonPart | P> {
  const handle = await openSessionFile(file);
  const parts = new SessionPartReader(file, handle, new LineReader(handle, leaveLongerThan), warn, iterationPart);
  try {
    // One part at a time, made outside this generator: nothing here holds a line's text while its part is out.
    for (let part = await parts.next(); part; part = await parts.next()) yield part;
    parts.checkStarted();
  } finally {
    await handle.close();
    // Reading long lines leaves megabytes of garbage behind it (slices, pieces of text): given back once done.
    if (parts.sawLongLine) releaseMemorySoon();
  }
}

/**
 * A session file's lines as parts, in the order a session has them: its start first,
 * its end last. A line out of that order is said in a warning, and read all the same
 * where it can be (an iteration after the end, a second end that wins). A class
 * rather than a generator, so that nothing holds a line once its part is handed on.
 */
class SessionPartReader<P> {
  /** A line was left in the file and read from there. */
  sawLongLine = false;
  private started = false;
  private ended = false;
  /** A part that follows the warning just handed on. */
  private pending: CommonPart | P | undefined;
  /** Why the first unreadable line before the start could not be read: what a refusal of the file says. */
  private firstProblem: string | undefined;

  constructor(
    private readonly file: SessionFile,
    private readonly handle: FileHandle,
    private readonly lines: LineReader,
    private readonly warn: WarningSink,
    private readonly iterationPart: IterationPartOf<P>,
  ) {}

  async next(): Promise<CommonPart | P | undefined> {
    if (this.pending) {
      const pending = this.pending;
      this.pending = undefined;
      return pending;
    }
    for (;;) {
      const read = await this.lines.next();
      if (!read) return undefined;
      const { lineNumber, last } = read;
      const range = { start: read.start, end: read.end };
      const parsed: ParsedLine | undefined = read.text === null ? await this.parseLeftLine(range) : parseReadLine(read.text);
      if (parsed === undefined) continue; // a blank line
      if (!parsed.ok) {
        if (!this.started) this.firstProblem ??= `line ${lineNumber} is ${parsed.reason}`;
        return this.warning(last ? `skipped a torn last line ${lineNumber} (${parsed.reason})` : `skipped line ${lineNumber}: ${parsed.reason}`);
      }
      const line = parsed.line;
      if (!this.started) {
        if (line.type !== 'session_start') throw new NotASessionError(`${this.file.filePath} does not start with a session_start line.`, this.file.filePath);
        this.started = true;
        return { kind: 'start', line, filePath: this.file.filePath };
      }
      if (line.type === 'iteration') {
        const part = this.iterationPart({ line, text: read.text, range, long: parsed.long }, this.handle);
        return this.ended ? this.warningBefore(part, `line ${lineNumber}: iteration after session_end`) : part;
      }
      if (line.type === 'session_end') {
        const again = this.ended;
        this.ended = true;
        const part: CommonPart = { kind: 'end', line };
        return again ? this.warningBefore(part, `line ${lineNumber}: a second session_end; the last one wins`) : part;
      }
      return this.warning(`skipped line ${lineNumber}: a second session_start`);
    }
  }

  /** After the last part: a file with no readable start is no session, and why its first line could not be read says what is wrong with it. */
  checkStarted(): void {
    if (this.started) return;
    const { filePath } = this.file;
    throw new NotASessionError(`${filePath} has no readable session_start line${this.firstProblem ? `: ${this.firstProblem}` : ''}.`, filePath);
  }

  private warning(message: string): CommonPart {
    this.warn(`${this.file.id}: ${message}`);
    return { kind: 'warning', message };
  }

  private warningBefore(part: CommonPart | P, message: string): CommonPart {
    this.pending = part;
    return this.warning(message);
  }

  private parseLeftLine(range: LineRange): Promise<ParsedLine | undefined> {
    this.sawLongLine = true;
    return parseLongLine(this.handle, range);
  }
}

/**
 * A line the reader left in the file. An iteration line is scanned: its long string
 * values stay there. Any other line (a start line with a prompt of megabytes) is
 * read whole, as there is nothing to leave out of it.
 */
async function parseLongLine(handle: FileHandle, range: LineRange): Promise<ParsedLine | undefined> {
  const scanned = await scanLongLine(handle, range.start, range.end);
  if (!scanned.ok) return scanned;
  const type = (scanned.value as { type?: unknown } | null)?.type;
  if (type !== 'iteration' || scanned.long.size === 0) return parseReadLine(await readLineText(handle, range.start, range.end));
  const checked = validateLine(scanned.value);
  return checked.ok ? { ...checked, long: scanned.long } : checked;
}

function longFields(handle: FileHandle, long: Map<string, LongString>): LongFields {
  return {
    chars: new Map([...long].map(([key, value]) => [key, value.chars])),
    text: (key) => longStringText(handle, long.get(key)!),
    json: (key) => longStringLiteral(handle, long.get(key)!),
  };
}

/**
 * Opens a session file for reading, never blocking and never through a link out of
 * the folder: what is not a regular file there is not a session, and says what it is.
 */
async function openSessionFile({ id, filePath, directory }: SessionFile): Promise<FileHandle> {
  try {
    return await openRegularFile(filePath, { within: directory });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionNotFoundError(id, directory);
    if (error instanceof NotARegularFileError)
      throw new NotASessionError(`${error.message}: only regular files in the sessions folder are read as sessions.`, filePath);
    throw error;
  }
}
