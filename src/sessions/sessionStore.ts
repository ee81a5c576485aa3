import path from 'node:path';
import type { IterationLine, SessionEndLine, SessionStartLine } from '../sessionFormat/sessionLines.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { isSessionId } from '../sessionFormat/sessionFiles.js';
import type { Forecast } from '../sessionFormat/forecast.js';
import type { SessionStats, SessionSummary } from '../sessionFormat/sessionSummaries.js';
import { recordedDiffParts } from './recordedDiff.js';
import { AmbiguousSessionIdError, NotASessionError, SessionNotFoundError, type WarningSink } from './sessionErrors.js';
import { isEmptyFilter, type SessionFilter } from './sessionFilter.js';
import { SessionListing } from './sessionListing.js';
import {
  openIterationAt,
  readJson,
  readLight,
  readWhole,
  type LineRange,
  type OpenedIteration,
  type SessionFile,
  type SessionJsonPart,
  type SessionPart,
} from './sessionReading.js';
import { computeForecast, type ForecastPair } from './forecast.js';
import { computeStats } from './taskStats.js';
import { SummaryIndex, summaryIndexPath, type ListedSession } from './summaryIndex.js';

export interface Session {
  id: string;
  filePath: string;
  start: SessionStartLine;
  iterations: IterationLine[];
  end: SessionEndLine | null;
  /** Lines that were skipped, with the reason; empty for a clean file. */
  warnings: string[];
}

export interface SessionStoreOptions {
  /**
   * The summary index (`summaryIndex.ts`): a file, or null to keep it in memory only
   * (a server that never writes). Default: `sessions-index.json` beside the folder.
   */
  indexFile?: string | null;
}

/**
 * Reads the sessions folder: what the CLI, the server and the editor know of sessions.
 * Listing (`sessionListing.ts`) reads a file only when the summary index does not
 * have it as it is now: its first and last lines for its summary, and its lines front
 * to back, once, for the figures stats need (`sessionFigures.ts`). Reading one
 * session (`sessionReading.ts`) streams it line by line, in one of three modes:
 * - whole (`read`, `load`): every line parsed;
 * - light (`read` with `leaveLongStrings`, `startLine`, `outline`, the recorded diff):
 *   an iteration line of megabytes is scanned, its long string values left in the
 *   file, to be read a slice at a time;
 * - JSON (`readAsJson`): each iteration as its text, for a server to send as it is.
 * Bad lines are skipped with a warning (to the sink given here) and reading goes on.
 */
export class SessionStore {
  private readonly listing: SessionListing;

  constructor(
    readonly directory: string,
    private readonly warn: WarningSink = () => {},
    options: SessionStoreOptions = {},
  ) {
    const index = new SummaryIndex(directory, options.indexFile === undefined ? summaryIndexPath(directory) : options.indexFile);
    this.listing = new SessionListing(directory, index, warn);
  }

  filePathOf(id: string): string {
    if (!isSessionId(id)) throw new SessionNotFoundError(id, this.directory);
    return path.join(this.directory, `${id}.jsonl`);
  }

  async listIds(): Promise<string[]> {
    return this.listing.listIds();
  }

  /** Summaries of the sessions matching the filter, newest first. */
  async list(filter: SessionFilter = {}): Promise<SessionSummary[]> {
    return (await this.listSessions(filter)).map((listed) => listed.summary);
  }

  /**
   * The sessions matching the filter, newest first, as listing knows them: each
   * summary as JSON text, parsed only when the filter needs a field (`ListedSession`).
   * A file is read only when the summary index has nothing for it as it is now.
   */
  async listSessions(filter: SessionFilter = {}): Promise<ListedSession[]> {
    return this.listing.list(filter);
  }

  /** One session's summary (from the index, or its file), or undefined if it is not readable. */
  async summary(id: string): Promise<SessionSummary | undefined> {
    return this.listing.summaryOf(id)?.summary;
  }

  /**
   * What `sessions stats` says of the sessions matching the filter: counted per
   * session, and per task (`taskStats.ts`). Every session is listed, since a task's
   * sessions may fall outside the filter; none is read beyond what listing reads.
   */
  async stats(filter: SessionFilter = {}): Promise<SessionStats> {
    return computeStats(await this.listing.list({}), filter, (session, by) => isEmptyFilter(by) || this.listing.matches(session, by));
  }

  /** The forecast of a run with these agents in `project` (`forecast.ts`), from the tasks stats count; no session file read beyond what listing reads. */
  async forecast(pair: ForecastPair, project: string): Promise<Forecast> {
    return computeForecast(await this.listing.list({}), pair, project);
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

  /** The whole session in memory; for its start alone, `startLine`. */
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
    // `read` throws for a file without a readable start.
    return { id, filePath, start: start!, iterations, end, warnings };
  }

  /**
   * A session's lines as they are read, one at a time: what `load` collects, and what
   * a server streams without holding a multi-megabyte session in memory. The start
   * comes first; a later `end` replaces an earlier one. With `leaveLongStrings`, the
   * light mode: long string values stay in the file (`''` in `line`), measured and
   * readable through the part's `long`.
   */
  async *read(id: string, options: { leaveLongStrings?: boolean } = {}): AsyncGenerator<SessionPart> {
    yield* options.leaveLongStrings ? readLight(this.fileOf(id), this.warn) : readWhole(this.fileOf(id), this.warn);
  }

  /** As `read`, with each iteration as its JSON text, validated, to be written out as it is (never parsed whole). */
  async *readAsJson(id: string): AsyncGenerator<SessionJsonPart> {
    yield* readJson(this.fileOf(id), this.warn);
  }

  /** An iteration read alone from where an earlier reading found it; undefined when the file no longer holds it there. */
  async openIterationAt(id: string, range: LineRange, iterationNumber: number): Promise<OpenedIteration | undefined> {
    return openIterationAt(this.fileOf(id), range, iterationNumber);
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
    yield* recordedDiffParts(id, this.read(id, { leaveLongStrings: true }), iterationNumber);
  }

  private fileOf(id: string): SessionFile {
    return { id, filePath: this.filePathOf(id), directory: this.directory };
  }
}
