import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import {
  indexLineId,
  lineEnd,
  microsecondsOf,
  SESSION_INDEX_VERSION,
  sessionIndexFileName,
  sessionIndexHeaderSchema,
  SessionIndexLine,
  type SessionIndexHeader,
} from '../sessionFormat/sessionIndex.js';
import type { SessionSummary } from '../sessionFormat/sessionSummaries.js';

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
export function listedFromFile(id: string, stamp: FileStamp, summary: SessionSummary, prompt: string, warnings: readonly string[]): ListedSession {
  return SessionIndexLine.format(
    {
      id,
      size: stamp.size,
      mtimeUs: microsecondsOf(stamp.mtimeMs),
      startedMs: Date.parse(summary.timestamp),
      summaryJson: JSON.stringify(summary),
      warningsJson: warnings.length > 0 ? JSON.stringify(warnings) : '',
      promptJson: JSON.stringify(prompt.length <= MAX_KEPT_PROMPT_CHARS ? prompt : null),
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
  /**
   * By session id: its line, or where its line starts in the index file's bytes, read
   * when asked for (each time: a listing asks for each once, and a long-lived reader
   * keeps the bytes rather than ten thousand objects).
   */
  private readonly entries = new Map<string, SessionIndexLine | number>();
  /** The index file's lines, as read. */
  private bytes: Buffer = Buffer.alloc(0);
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
    const found = this.entries.get(id);
    if (found === undefined) return undefined;
    const line = typeof found === 'number' ? SessionIndexLine.parse(id, this.bytes, found) : found;
    if (!line) {
      this.entries.delete(id); // not a line a runner wrote: read the file again
      this.dirty = true;
      return undefined;
    }
    return line.size === stamp.size && line.mtimeUs === microsecondsOf(stamp.mtimeMs) ? line : undefined;
  }

  /**
   * Reads the index file now rather than on the first `get`: a caller waiting for
   * something else (the folder's listing) can have it read meanwhile.
   */
  prepare(): void {
    this.load();
  }

  /** Remembers what was read from a file, unless the file may still be changing. */
  set(line: ListedSession, now: number = Date.now()): void {
    if (now - line.mtimeUs / 1000 < SETTLED_AFTER_MS) {
      if (this.entries.delete(line.id)) this.dirty = true;
      return;
    }
    this.entries.set(line.id, line);
    this.dirty = true;
  }

  /** Forgets sessions whose files are gone. */
  retain(ids: ReadonlySet<string>): void {
    this.load();
    for (const id of this.entries.keys()) {
      if (!ids.has(id)) {
        this.entries.delete(id);
        this.dirty = true;
      }
    }
  }

  /** Writes the index if it changed; a failure (read-only disk, no space) only means the next listing reads more. */
  save(): void {
    if (!this.dirty || !this.file) return;
    this.dirty = false;
    const temporary = `${this.file}.${process.pid}.tmp`;
    try {
      const lines: Uint8Array[] = [];
      for (const entry of this.entries.values()) {
        if (lines.length > 0) lines.push(NEWLINE_BYTES);
        lines.push(typeof entry === 'number' ? this.bytes.subarray(entry, lineEnd(this.bytes, entry)) : entry.text);
      }
      const body = Buffer.concat(lines);
      const header: SessionIndexHeader = { version: SESSION_INDEX_VERSION, sessions_dir: this.sessionsDirectory, entries_crc32: crc32(body) };
      fs.writeFileSync(temporary, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body, NEWLINE_BYTES]), { mode: 0o600 });
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
    // Kept as bytes (`SessionIndexLine`): only each line's id is decoded here.
    const newline = bytes.indexOf(NEWLINE);
    const end = bytes.length > 0 && bytes[bytes.length - 1] === NEWLINE ? bytes.length - 1 : bytes.length;
    const lines = newline < 0 ? bytes.subarray(0, 0) : bytes.subarray(newline + 1, Math.max(newline + 1, end));
    try {
      const header = sessionIndexHeaderSchema.safeParse(JSON.parse(bytes.toString('utf8', 0, Math.max(newline, 0))));
      // An older version, another folder's index, or text that is not what a runner wrote: rebuilt.
      if (!header.success || header.data.sessions_dir !== this.sessionsDirectory || header.data.entries_crc32 !== crc32(lines)) throw new Error('stale');
    } catch {
      this.dirty = true;
      return;
    }
    this.bytes = lines;
    for (let start = 0; start < lines.length;) {
      const end = lineEnd(lines, start);
      this.entries.set(indexLineId(lines, start, end), start);
      start = end + 1;
    }
  }
}

const NEWLINE = 0x0a;
const NEWLINE_BYTES = Buffer.from('\n');

/** Where a sessions folder's index lives: beside it, outside the `sessions/*.jsonl` glob. */
export function summaryIndexPath(sessionsDirectory: string): string {
  return path.join(path.dirname(sessionsDirectory), sessionIndexFileName(path.basename(sessionsDirectory)));
}
