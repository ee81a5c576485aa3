import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { SessionEndLine } from '../sessionFormat/sessionLines.js';
import type { SessionFigures, SessionSummary } from '../sessionFormat/sessionSummaries.js';
import { isSessionId, timestampFromSessionId } from '../sessionFormat/sessionFiles.js';
import { NotARegularFileError, openRegularFileSync, realFolderOf, statRegularFile } from '../files/regularFile.js';
import { readFirstLine, readLinesBackward, readPrefixAt } from './lineReader.js';
import type { WarningSink } from './sessionErrors.js';
import { isEmptyFilter, matchesDates, matchesFilter, type SessionFilter } from './sessionFilter.js';
import { figuresOfFile } from './sessionFigures.js';
import { parseLine, parseStartLine } from './sessionLineParsing.js';
import { summarize } from './sessionSummary.js';
import { listedFromFile, type ListedSession, type SummaryIndex } from './summaryIndex.js';

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
/** Lines longer than this are peeked at rather than parsed while listing. */
const LARGE_LINE_BYTES = 256 * 1024;

/** What listing learns from one file: its summary, its whole prompt, what it warned about and the figures stats need. */
interface FileSummary {
  summary: SessionSummary;
  prompt: string;
  warnings: string[];
  figures: SessionFigures;
}

/**
 * The sessions of a folder as a list: from the summary index while a file is as it
 * was (`summaryIndex.ts`), else from the file: its summary from its first and last
 * lines, and what stats need of its middle (`sessionFigures.ts`) read once, for the
 * index to keep. Complex on purpose, for ten thousand sessions with lines of megabytes: the
 * listing benchmark (`npm run bench`) holds it to a fraction of a full parse.
 */
export class SessionListing {
  /** The folder's real path, for telling links that stay in it from links that lead out. */
  private readonly realDirectory = once(() => realFolderOf(this.directory));

  constructor(
    private readonly directory: string,
    private readonly index: SummaryIndex,
    private readonly warn: WarningSink,
  ) {}

  /** The ids of the folder's session files, in the folder's order. */
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

  /**
   * The sessions matching the filter, newest first, each summary as JSON text, parsed
   * only when the filter needs a field (`ListedSession`).
   */
  async list(filter: SessionFilter): Promise<ListedSession[]> {
    const reading = this.listIds();
    this.index.prepare(); // while the folder is read
    const all = await reading;
    const ids = !filter.after && !filter.before ? all : all.filter((id) => mayMatchDates(filter, id));
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
      if (!filtering || this.matches(found, filter)) listed.push(found);
    }
    this.index.keep(all);
    return listed.sort(newestFirst);
  }

  /** Whether a listed session passes the filter; a prompt too long for the index is read again, only when a search needs it. */
  matches(found: ListedSession, filter: SessionFilter): boolean {
    return matchesFilter(filter, found.summary, () => found.prompt ?? this.readSummary(found.id)?.prompt ?? '');
  }

  /** From the index while the file is as it was, else from the file; what the file warned about is said either way. */
  summaryOf(id: string): ListedSession | undefined {
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
    const listed = listedFromFile(id, stat, read);
    this.index.set(listed);
    return listed;
  }

  /**
   * A session's summary from its first and last lines, and its figures. Problems that skip the file are
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
    const { lastIteration, end } = firstLine.terminated ? lastLines(fd, size, firstLine.end + 1, warnings) : {};
    // Without an end, the count is the last number, unless the numbering starts at 0 (the original codeloops).
    const count =
      end === undefined && lastIteration !== undefined && peekIterationNumber(readPrefixAt(fd, firstLine.end + 1, 512)) === 0
        ? lastIteration + 1
        : lastIteration;
    const figures = figuresOfFile(fd, size, firstLine.terminated ? firstLine.end + 1 : size, first.line);
    return { summary: summarize(id, first.line, count, end), prompt: first.line.prompt, warnings, figures };
  }
}

/**
 * What the last readable line after the start says: the session's end, or the number
 * of the iteration it stopped at. Lines that cannot be read are skipped, each noted in
 * `warnings`.
 */
function lastLines(fd: number, size: number, floor: number, warnings: string[]): { lastIteration?: number; end?: SessionEndLine } {
  for (const candidate of readLinesBackward(fd, size, floor)) {
    // A running session can end in a multi-megabyte iteration line; the listing
    // needs only its number. A terminated line was written whole, so its start is enough.
    const peeked = candidate.terminated && candidate.length > LARGE_LINE_BYTES ? peekIterationNumber(candidate.prefix(512)) : undefined;
    if (peeked !== undefined) return { lastIteration: peeked };
    const parsed = parseLine(candidate.text);
    if (!parsed.ok) {
      warnings.push(`skipped ${candidate.terminated ? 'a bad' : 'a torn'} line at byte ${candidate.start} (${parsed.reason})`);
      continue;
    }
    if (parsed.line.type === 'session_end') return { end: parsed.line };
    if (parsed.line.type === 'iteration') return { lastIteration: parsed.line.iteration_number };
  }
  return {};
}

/** A session whose file name dates it far outside the filter's dates is not read at all. */
function mayMatchDates(filter: SessionFilter, id: string): boolean {
  const startedAt = timestampFromSessionId(id);
  if (!startedAt) return true;
  return matchesDates(
    {
      after: filter.after && new Date(filter.after.getTime() - FILE_NAME_DATE_SLACK_MS),
      before: filter.before && new Date(filter.before.getTime() + FILE_NAME_DATE_SLACK_MS),
    },
    startedAt,
  );
}

/** `{"type":"iteration","iteration_number":N,…` as this runner and the original both write it (blank lines before it skipped). */
function peekIterationNumber(prefix: string): number | undefined {
  const match = /^\s*\{\s*"type"\s*:\s*"iteration"\s*,\s*"iteration_number"\s*:\s*(\d+)\s*,/.exec(prefix);
  return match ? Number(match[1]) : undefined;
}

function newestFirst(a: ListedSession, b: ListedSession): number {
  const byTime = b.startedMs - a.startedMs;
  return byTime !== 0 ? byTime : b.id.localeCompare(a.id);
}

function once<T>(compute: () => T): () => T {
  let value: { of: T } | undefined;
  return () => (value ??= { of: compute() }).of;
}
