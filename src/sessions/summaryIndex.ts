import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  SESSION_INDEX_VERSION,
  sessionIndexFileName,
  sessionIndexHeaderSchema,
  type SessionIndexEntry,
  type SessionIndexHeader,
} from '../sessionFormat/sessionIndex.js';

/** Files changed this recently may change again within their timestamp's granularity: not cached (git's "racy" files). */
const SETTLED_AFTER_MS = 2_000;
/** Prompts longer than this are not kept in the index; a search reads them from the file. */
const MAX_KEPT_PROMPT_CHARS = 4_000;

export interface FileStamp {
  size: number;
  mtimeMs: number;
}

/**
 * Summaries of session files keyed by size and modification time, in memory and,
 * when given a file, on disk (`sessionFormat/sessionIndex.ts`). Never trusted over a
 * file that changed; a damaged index file is ignored and rewritten; writing it is
 * best effort (it is a cache), atomic (a temporary file renamed over it), so that
 * runners and editors listing at once never read half of one.
 */
export class SummaryIndex {
  private readonly entries = new Map<string, SessionIndexEntry>();
  private loaded = false;
  private dirty = false;

  /** `file` null: in memory only. */
  constructor(
    private readonly sessionsDirectory: string,
    private readonly file: string | null,
  ) {}

  /** The entry for a session whose file is exactly as stamped, or undefined. */
  get(id: string, stamp: FileStamp): SessionIndexEntry | undefined {
    this.load();
    const entry = this.entries.get(id);
    return entry && entry.size === stamp.size && entry.mtime_ms === stamp.mtimeMs ? entry : undefined;
  }

  /** Remembers what was read from a file, unless the file may still be changing. */
  set(id: string, stamp: FileStamp, read: Omit<SessionIndexEntry, 'size' | 'mtime_ms'>, now: number = Date.now()): void {
    if (now - stamp.mtimeMs < SETTLED_AFTER_MS) {
      if (this.entries.delete(id)) this.dirty = true;
      return;
    }
    const prompt = read.prompt !== null && read.prompt.length <= MAX_KEPT_PROMPT_CHARS ? read.prompt : null;
    this.entries.set(id, { ...read, prompt, size: stamp.size, mtime_ms: stamp.mtimeMs });
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
      const entries = JSON.stringify(Object.fromEntries(this.entries));
      const header: SessionIndexHeader = { version: SESSION_INDEX_VERSION, sessions_dir: this.sessionsDirectory, entries_sha256: sha256(entries) };
      fs.writeFileSync(temporary, `${JSON.stringify(header)}\n${entries}\n`, { mode: 0o600 });
      fs.renameSync(temporary, this.file);
    } catch {
      fs.rmSync(temporary, { force: true });
    }
  }

  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    if (!this.file) return;
    let text: string;
    try {
      const stat = fs.statSync(this.file, { throwIfNoEntry: false });
      if (!stat?.isFile()) return; // none yet, or something that is not ours: rebuilt on save
      text = fs.readFileSync(this.file, 'utf8');
    } catch {
      this.dirty = true; // unreadable: rewritten from what the files say
      return;
    }
    const newline = text.indexOf('\n');
    const entriesText = newline < 0 ? '' : text.slice(newline + 1).trimEnd();
    let entries: Record<string, SessionIndexEntry>;
    try {
      const header = sessionIndexHeaderSchema.safeParse(JSON.parse(text.slice(0, Math.max(newline, 0))));
      // An older version, another folder's index, or text that is not what a runner wrote: rebuilt.
      if (!header.success || header.data.sessions_dir !== this.sessionsDirectory || header.data.entries_sha256 !== sha256(entriesText))
        throw new Error('stale');
      entries = JSON.parse(entriesText) as Record<string, SessionIndexEntry>;
    } catch {
      this.dirty = true;
      return;
    }
    for (const [id, entry] of Object.entries(entries)) this.entries.set(id, entry);
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Where a sessions folder's index lives: beside it, outside the `sessions/*.jsonl` glob. */
export function summaryIndexPath(sessionsDirectory: string): string {
  return path.join(path.dirname(sessionsDirectory), sessionIndexFileName(path.basename(sessionsDirectory)));
}
