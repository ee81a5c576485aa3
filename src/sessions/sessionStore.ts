import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  diffIsSinceHead,
  normalizeSessionLine,
  sessionLineSchema,
  sessionStartLineSchema,
  type IterationLine,
  type SessionEndLine,
  type SessionStartLine,
} from '../sessionFormat/sessionLines.js';
import { CodeloopsError, type FailureDetails } from '../sessionFormat/failures.js';
import { isSessionId, timestampFromSessionId } from '../sessionFormat/sessionFiles.js';
import { readAllLines, readFirstLine, readLinesBackward, readPrefixAt } from './lineReader.js';
import { isEmptyFilter, matchesDates, matchesFilter, type SessionFilter } from './sessionFilter.js';
import type { SessionStats, SessionSummary } from '../sessionFormat/sessionSummaries.js';
import { computeStats, summarize } from './sessionSummary.js';
import { ListedSession, SummaryIndex, summaryIndexPath } from './summaryIndex.js';

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

/** One piece of a session as `SessionStore.read` streams it. */
export type SessionPart =
  | { kind: 'start'; line: SessionStartLine; filePath: string }
  | { kind: 'iteration'; line: IterationLine }
  | { kind: 'end'; line: SessionEndLine }
  | { kind: 'warning'; message: string };

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

/** Files read between two yields to the event loop while listing (an editor must stay responsive). */
const FILES_PER_SLICE = 200;
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
    return names
      .filter((name) => name.endsWith('.jsonl'))
      .map((name) => name.slice(0, -'.jsonl'.length))
      .filter(isSessionId);
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
    for (let index = 0; index < ids.length; index++) {
      if (index > 0 && index % FILES_PER_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      const id = ids[index]!;
      const found = this.summaryOf(id);
      if (!found) continue;
      // A prompt too long for the index is read again, only when a search needs it.
      if (!filtering || matchesFilter(filter, found.summary, () => found.prompt ?? this.readSummary(id)?.prompt ?? '')) listed.push(found);
    }
    this.index.retain(new Set(all));
    this.index.save();
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
      stat = fsSync.statSync(filePath, { throwIfNoEntry: false });
    } catch (error) {
      this.warn(`${id}: skipped, it cannot be read (${(error as Error).message})`);
      return undefined;
    }
    if (!stat) return undefined; // deleted since the folder was read: not a warning, just gone
    if (!stat.isFile()) {
      // A folder, a FIFO or a device named like a session: never opened (a FIFO would block).
      this.warn(`${id}: skipped, ${filePath} is not a regular file`);
      return undefined;
    }
    const cached = this.index.get(id, stat);
    if (cached) {
      for (const warning of cached.warnings) this.warn(`${id}: ${warning}`);
      return cached;
    }
    const read = this.readSummary(id);
    if (!read) return undefined;
    for (const warning of read.warnings) this.warn(`${id}: ${warning}`);
    const listed = ListedSession.read(id, stat, read.summary, read.prompt, read.warnings);
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
   * comes first; a later `end` replaces an earlier one.
   */
  async *read(id: string): AsyncGenerator<SessionPart> {
    const filePath = this.filePathOf(id);
    try {
      await fs.access(filePath);
    } catch {
      throw new SessionNotFoundError(id, this.directory);
    }
    let started = false;
    let ended = false;
    const warning = (message: string): SessionPart => {
      this.warn(`${id}: ${message}`);
      return { kind: 'warning', message };
    };
    for await (const { text, lineNumber, last } of readAllLines(filePath)) {
      if (text.trim() === '') continue;
      const parsed = parseLine(text);
      if (!parsed.ok) {
        yield warning(last ? `skipped a torn last line ${lineNumber} (${parsed.reason})` : `skipped line ${lineNumber}: ${parsed.reason}`);
        continue;
      }
      const line = parsed.line;
      if (!started) {
        if (line.type !== 'session_start') throw new NotASessionError(`${filePath} does not start with a session_start line.`, filePath);
        started = true;
        yield { kind: 'start', line, filePath };
      } else if (line.type === 'iteration') {
        if (ended) yield warning(`line ${lineNumber}: iteration after session_end`);
        yield { kind: 'iteration', line };
      } else if (line.type === 'session_end') {
        if (ended) yield warning(`line ${lineNumber}: a second session_end; the last one wins`);
        ended = true;
        yield { kind: 'end', line };
      } else {
        yield warning(`skipped line ${lineNumber}: a second session_start`);
      }
    }
    if (!started) throw new NotASessionError(`${filePath} has no readable session_start line.`, filePath);
  }

  /** The recorded diff of one iteration, or of every iteration in order. */
  async recordedDiff(id: string, iterationNumber?: number): Promise<string> {
    let diff = '';
    for await (const part of this.recordedDiffParts(id, iterationNumber)) diff += part;
    return diff;
  }

  /** The recorded diff in pieces, one iteration at a time, as the file is read. */
  async *recordedDiffParts(id: string, iterationNumber?: number): AsyncGenerator<string> {
    const seen: number[] = [];
    for await (const part of this.read(id)) {
      if (part.kind !== 'iteration') continue;
      const iteration = part.line;
      if (iterationNumber !== undefined) {
        seen.push(iteration.iteration_number);
        if (iteration.iteration_number !== iterationNumber) continue;
        yield iteration.git_diff;
        return;
      }
      if (iteration.git_diff.length > 0) {
        const scope = diffIsSinceHead(iteration) ? ' (the whole change since HEAD, as the original codeloops recorded it; not the iteration’s own)' : '';
        yield `# iteration ${iteration.iteration_number}${scope}\n${iteration.git_diff.endsWith('\n') ? iteration.git_diff : iteration.git_diff + '\n'}`;
      }
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
      // Non-blocking: a FIFO put there after the check above must not hang the reader.
      fd = fsSync.openSync(filePath, fsSync.constants.O_RDONLY | (fsSync.constants.O_NONBLOCK ?? 0));
    } catch (error) {
      // Deleted between readdir and open: not a warning, just gone.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.warn(`${id}: skipped, it cannot be read (${(error as Error).message})`);
      return undefined;
    }
    try {
      if (!fsSync.fstatSync(fd).isFile()) {
        this.warn(`${id}: skipped, ${filePath} is not a regular file`);
        return undefined;
      }
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

/** Lines longer than this are peeked at rather than parsed while listing. */
const LARGE_LINE_BYTES = 256 * 1024;

/** `{"type":"iteration","iteration_number":N,…` as this runner and the original both write it (blank lines before it skipped). */
function peekIterationNumber(prefix: string): number | undefined {
  const match = /^\s*\{\s*"type"\s*:\s*"iteration"\s*,\s*"iteration_number"\s*:\s*(\d+)\s*,/.exec(prefix);
  return match ? Number(match[1]) : undefined;
}

type ParseResult<T> = { ok: true; line: T } | { ok: false; reason: string };

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
    return { ok: false, reason: 'not valid JSON' };
  }
  // Other writers' words (the original codeloops') in the documented terms first.
  const result = schema.safeParse(normalizeSessionLine(json));
  if (!result.success) return { ok: false, reason: describeIssues(result.error.issues) };
  return { ok: true, line: result.data };
}

const parseLine = (text: string) => parseWith(sessionLineSchema, text);
const parseStartLine = (text: string) => parseWith(sessionStartLineSchema, text);

function describeIssues(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

function newestFirst(a: ListedSession, b: ListedSession): number {
  const byTime = b.entry.startedMs - a.entry.startedMs;
  return byTime !== 0 ? byTime : b.id.localeCompare(a.id);
}
