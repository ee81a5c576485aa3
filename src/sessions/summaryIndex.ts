import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import {
  figuresText,
  formatIndexFile,
  IndexLines,
  lineEnd,
  microsecondsOf,
  readIndexFile,
  sessionIndexFileName,
  SessionIndexLine,
} from '../sessionFormat/sessionIndex.js';
import type { SessionFigures, SessionSummary } from '../sessionFormat/sessionSummaries.js';

/** Files changed this recently may change again within their timestamp's granularity: not cached (git's "racy" files). */
const SETTLED_AFTER_MS = 2_000;
/** Prompts longer than this are not kept in the index; a search reads them from the file. */
const MAX_KEPT_PROMPT_CHARS = 4_000;

export interface FileStamp {
  size: number;
  mtimeMs: number;
}

/**
 * What listing knows of one session: its line of the index (for a session just read
 * from its file, the line it will have there), whose summary is parsed only when
 * something asks for a field. Listing ten thousand sessions as JSON parses none.
 */
export type ListedSession = SessionIndexLine;

/** A session just read from its file, as listing and the index keep it. */
export function listedFromFile(
  id: string,
  stamp: FileStamp,
  { summary, prompt, warnings, figures }: { summary: SessionSummary; prompt: string; warnings: readonly string[]; figures: SessionFigures },
): ListedSession {
  return SessionIndexLine.format(
    {
      id,
      size: stamp.size,
      mtimeUs: microsecondsOf(stamp.mtimeMs),
      startedMs: Date.parse(summary.timestamp),
      summaryJson: JSON.stringify(summary),
      warningsJson: warnings.length > 0 ? JSON.stringify(warnings) : '',
      promptJson: JSON.stringify(prompt.length <= MAX_KEPT_PROMPT_CHARS ? prompt : null),
      figuresJson: figuresText(figures),
    },
    summary,
  );
}

/**
 * Summaries of session files keyed by size and modification time, in memory and,
 * when given a file, on disk (`sessionFormat/sessionIndex.ts`). Never trusted over a
 * file that changed; a damaged index file is ignored and rewritten; writing it is
 * best effort (it is a cache), atomic (a temporary file renamed over it), so that
 * runners and editors listing at once never read half of one.
 */
export class SummaryIndex {
  /** The index file's lines as read, or as last written. */
  private lines = new IndexLines(Buffer.alloc(0));
  /** What changed since, by session id: its new line, or null for one no longer kept. */
  private readonly changes = new Map<string, SessionIndexLine | null>();
  private loaded = false;
  private dirty = false;

  /** `file` null: in memory only. */
  constructor(
    private readonly sessionsDirectory: string,
    private readonly file: string | null,
  ) {}

  /** The session, if the index has it for its file exactly as stamped. */
  get(id: string, stamp: FileStamp): ListedSession | undefined {
    // Called for every session of every listing, mostly before the JIT has compiled it: kept to the few steps it needs.
    if (!this.loaded) this.load();
    let line = this.changes.size > 0 ? this.changes.get(id) : undefined;
    if (line === undefined) {
      const start = this.lines.find(id);
      if (start < 0) return undefined;
      line = SessionIndexLine.parse(id, this.lines.bytes, start) ?? null;
      if (!line) {
        this.changes.set(id, null); // not a line a runner wrote: read the file again
        this.dirty = true;
        return undefined;
      }
    }
    return line && line.size === stamp.size && line.mtimeUs === microsecondsOf(stamp.mtimeMs) ? line : undefined;
  }

  /**
   * Reads the index file now rather than on the first `get`: a caller waiting for
   * something else (the folder's listing) can have it read meanwhile. A listing calls
   * it first, and then asks for its sessions in the folder's order.
   */
  prepare(): void {
    if (!this.loaded) this.load();
    this.lines.rewind();
  }

  /** Remembers what was read from a file, unless the file may still be changing (or is dated where the index cannot say). */
  set(line: ListedSession, now: number = Date.now()): void {
    if (now - line.mtimeUs / 1000 < SETTLED_AFTER_MS || !line.storable) {
      const kept = this.changes.get(line.id);
      if (kept === undefined ? this.lines.startOf(line.id) >= 0 : kept !== null) {
        this.changes.set(line.id, null);
        this.dirty = true;
      }
      return;
    }
    this.changes.set(line.id, line);
    this.dirty = true;
  }

  /**
   * Keeps the sessions of these ids, in this order (the folder's, which the next
   * listing asks in), forgets those whose files are gone, and writes the index if that
   * changed anything.
   */
  keep(ids: readonly string[]): void {
    if (!this.loaded) this.load();
    // Every line found, once each, in order, and nothing changed: the index is exactly these sessions, in this order.
    if (!this.dirty && this.lines.foundAllInOrder) return;
    const kept: (SessionIndexLine | number)[] = [];
    let lastStart = -1;
    let asRead = true; // the lines as read, all of them, in the same order
    for (const id of ids) {
      const changed = this.changes.get(id);
      if (changed === null) continue;
      const entry = changed ?? this.lines.startOf(id);
      if (entry === -1) continue;
      if (typeof entry === 'number' && entry > lastStart) lastStart = entry;
      else asRead = false;
      kept.push(entry);
    }
    if (asRead && kept.length === this.lines.size) {
      // The lines as read are these sessions', in this order: whatever changed was about files since gone.
      this.changes.clear();
      this.dirty = false;
      return;
    }
    this.write(kept);
  }

  /** Writes these lines as the index; a failure (read-only disk, no space) only means the next listing reads more. */
  private write(entries: readonly (SessionIndexLine | number)[]): void {
    this.dirty = false;
    const { file, body } = formatIndexFile(
      entries.map((entry) => (typeof entry === 'number' ? this.lines.bytes.subarray(entry, lineEnd(this.lines.bytes, entry)) : entry.text)),
      this.sessionsDirectory,
    );
    // From now on the index is what was just written, whether or not the file could be.
    this.lines = new IndexLines(body);
    this.changes.clear();
    if (!this.file) return;
    const temporary = `${this.file}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(temporary, file, { mode: 0o600 });
      fs.renameSync(temporary, this.file);
    } catch {
      fs.rmSync(temporary, { force: true });
    }
  }

  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    if (!this.file) return;
    let bytes: Buffer;
    try {
      const stat = fs.statSync(this.file, { throwIfNoEntry: false });
      if (!stat?.isFile()) return; // none yet, or something that is not ours: rebuilt on save
      bytes = fs.readFileSync(this.file);
    } catch {
      this.dirty = true; // unreadable: rewritten from what the files say
      return;
    }
    // Kept as bytes (`SessionIndexLine`): only each line's id is looked at here.
    const lines = readIndexFile(bytes, this.sessionsDirectory);
    if (lines) this.lines = new IndexLines(lines);
    else this.dirty = true; // an older version, another folder's index, or text that is not what a runner wrote: rebuilt
  }
}

/** Where a sessions folder's index lives: beside it, outside the `sessions/*.jsonl` glob. */
export function summaryIndexPath(sessionsDirectory: string): string {
  return path.join(path.dirname(sessionsDirectory), sessionIndexFileName(path.basename(sessionsDirectory)));
}
