import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { releaseMemoryNow } from '../process/memoryRelease.js';

/**
 * Reading JSONL without reading what we do not need: the first line from the front,
 * the last lines from the back, the middle never. A listing must not pay for a
 * multi-megabyte iteration line in the middle of a file.
 */

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

export interface LocatedLine {
  /** The whole line, decoded on first use: a listing rarely needs all of a huge one. */
  readonly text: string;
  /** Its first bytes, decoded, without decoding the rest. */
  prefix(bytes: number): string;
  /** Length in bytes. */
  readonly length: number;
  /** Byte offset of the line's first byte. */
  start: number;
  /** Byte offset just past the line's last byte (the newline is not included). */
  end: number;
  /** False when the file ends without a newline after this line: it may be torn. */
  terminated: boolean;
}

/**
 * Reads byte ranges of an open file. Listing uses synchronous reads on purpose:
 * thousands of tiny reads through the thread pool cost ten times more than the
 * reads themselves. Callers yield to the event loop between files.
 */
function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  const bytesRead = fs.readSync(fd, buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/** Up to `bytes` bytes from `position`, decoded (a character cut at the end is replaced). */
export function readPrefixAt(fd: number, position: number, bytes: number): string {
  return readAt(fd, position, bytes).toString('utf8');
}

/** The first line, or undefined for an empty file. */
export function readFirstLine(fd: number, fileSize: number): LocatedLine | undefined {
  if (fileSize === 0) return undefined;
  const chunks: Buffer[] = [];
  let position = 0;
  while (position < fileSize) {
    const chunk = readAt(fd, position, Math.min(CHUNK_BYTES, fileSize - position));
    if (chunk.length === 0) break;
    const newlineAt = chunk.indexOf(NEWLINE);
    if (newlineAt >= 0) {
      chunks.push(chunk.subarray(0, newlineAt));
      return locatedLine(chunks, 0, position + newlineAt, true);
    }
    chunks.push(chunk);
    position += chunk.length;
  }
  return locatedLine(chunks, 0, position, false);
}

/**
 * Lines from the end of the file backwards, never reading before `floor` (the end
 * of a line already read from the front). Blank lines are skipped. Of a line longer
 * than `keepBytes` only the offsets are kept while scanning; its text is read again
 * from `fd` if asked for, so a multi-megabyte line costs a scan, not a copy.
 */
export function* readLinesBackward(fd: number, fileSize: number, floor: number, keepBytes = 1024 * 1024): Generator<LocatedLine> {
  let lineEnd = fileSize;
  let terminated = false;
  // Pieces of the line being assembled, last piece first, while it is short enough to keep.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let dropped = false;
  let position = fileSize;
  let first = true;
  const take = (piece: Buffer): void => {
    if (dropped) return;
    pendingBytes += piece.length;
    if (pendingBytes > keepBytes) {
      pending = [];
      dropped = true;
    } else pending.push(piece);
  };
  const finishLine = (start: number): LocatedLine & { blank: boolean } => {
    const line = dropped ? rereadLine(fd, start, lineEnd, terminated) : locatedLine(pending.reverse(), start, lineEnd, terminated);
    pending = [];
    pendingBytes = 0;
    dropped = false;
    return line;
  };
  while (position > floor) {
    const length = Math.min(CHUNK_BYTES, position - floor);
    position -= length;
    let chunk = readAt(fd, position, length);
    if (first) {
      first = false;
      if (chunk.length > 0 && chunk[chunk.length - 1] === NEWLINE) {
        terminated = true;
        chunk = chunk.subarray(0, chunk.length - 1);
        lineEnd -= 1;
      }
    }
    let searchEnd = chunk.length;
    while (searchEnd > 0) {
      const newlineAt = chunk.lastIndexOf(NEWLINE, searchEnd - 1);
      if (newlineAt < 0) break;
      take(chunk.subarray(newlineAt + 1, searchEnd));
      const line = finishLine(position + newlineAt + 1);
      if (!line.blank) yield line;
      terminated = true;
      lineEnd = position + newlineAt;
      searchEnd = newlineAt;
    }
    if (searchEnd > 0) take(chunk.subarray(0, searchEnd));
  }
  if (pendingBytes > 0) {
    const line = finishLine(floor);
    if (!line.blank) yield line;
  }
}

/** A line known only by its offsets: bytes are read when asked for. */
function rereadLine(fd: number, start: number, end: number, terminated: boolean): LocatedLine & { blank: boolean } {
  let text: string | undefined;
  return {
    start,
    end,
    terminated,
    length: end - start,
    get text() {
      return (text ??= readAt(fd, start, end - start)
        .toString('utf8')
        .replace(/\r$/, ''));
    },
    prefix: (count) => readAt(fd, start, Math.min(count, end - start)).toString('utf8'),
    blank: false,
  };
}

function locatedLine(chunks: Buffer[], start: number, end: number, terminated: boolean): LocatedLine & { blank: boolean } {
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  let text: string | undefined;
  return {
    start,
    end,
    terminated,
    length: bytes.length,
    get text() {
      return (text ??= bytes.toString('utf8').replace(/\r$/, ''));
    },
    prefix: (count) => bytes.subarray(0, count).toString('utf8'),
    // Only whitespace (space, tab, CR); stops at the first other byte.
    blank: bytes.findIndex((byte) => byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) < 0,
  };
}

/** A line this long is given back to the system copy by copy as it is read (see memoryRelease.ts). */
const BIG_LINE_BYTES = 8 * 1024 * 1024;

/** A line longer than this is not kept in pieces while its end is looked for: it is read again whole, once. */
const KEEP_WHILE_SCANNING_BYTES = 1024 * 1024;

/** One line of a file read front to back. */
export interface ReadLine {
  /** Null for a line longer than the reader was told to decode (`leaveLongerThan`): it stays in the file. */
  text: string | null;
  /** 1-based. */
  lineNumber: number;
  /** The last line of the file as far as it has been read. */
  last: boolean;
  /** Byte offsets of its first byte and just past its last (before the newline): where to read it again alone. */
  start: number;
  end: number;
}

/**
 * Every line of an open file, read only as it is asked for: a consumer that waits (a
 * slow client) holds the reading, so memory is one line, never the file. Lines end at
 * "\n" alone (a "\r" before it is dropped), as the listing reads them. A long line is
 * not kept while its end is looked for: it is read again afterwards, decoded a slice
 * at a time, or left in the file for its reader (`leaveLongerThan`). A class rather
 * than a generator, so that nothing holds a line once it has been handed on.
 */
export class LineReader {
  private size = 0;
  private position = 0;
  private lineStart = 0;
  private lineNumber = 0;
  private pieces: Buffer[] = [];
  private keptBytes = 0;
  private dropped = false;
  /** One buffer for every chunk: what is kept of a chunk is copied out of it first. */
  private readonly buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  /** The current chunk and where in it the next line starts. */
  private chunk: Buffer = Buffer.alloc(0);
  private from = 0;
  private ended = false;

  constructor(
    private readonly handle: FileHandle,
    /** Lines longer than this (in bytes) are not decoded: their readers take them from the file themselves. */
    private readonly leaveLongerThan = Infinity,
  ) {}

  /** The next line, or undefined at the end of the file. */
  async next(): Promise<ReadLine | undefined> {
    if (this.position === 0 && this.size === 0) this.size = (await this.handle.stat()).size;
    for (;;) {
      const newlineAt = this.chunk.indexOf(NEWLINE, this.from);
      if (newlineAt >= 0) {
        this.keep(this.chunk.subarray(this.from, newlineAt));
        const start = this.lineStart;
        const end = this.position - this.chunk.length + newlineAt;
        this.from = newlineAt + 1;
        this.lineStart = end + 1;
        this.lineNumber += 1;
        return { text: await this.takeLine(start, end), lineNumber: this.lineNumber, last: this.lineStart >= this.size, start, end };
      }
      // Kept as a copy: the chunk's buffer is read into again.
      if (this.from < this.chunk.length) this.keep(this.chunk.subarray(this.from), true);
      if (this.ended) return undefined;
      this.chunk = await readInto(this.handle, this.buffer, this.position);
      this.from = 0;
      this.position += this.chunk.length;
      // A file that grows while it is read (a running loop) is read to its end as it is now.
      this.size = Math.max(this.size, this.position);
      if (this.chunk.length === 0) {
        this.ended = true;
        if (this.lineStart < this.position) {
          const start = this.lineStart;
          this.lineStart = this.position;
          return { text: await this.takeLine(start, this.position), lineNumber: ++this.lineNumber, last: true, start, end: this.position };
        }
        return undefined;
      }
    }
  }

  /** Keeps a piece of the line being read (a copy, when `copy`), until the line is too long to keep: then only its offsets count. */
  private keep(piece: Buffer, copy = false): void {
    if (this.dropped || piece.length === 0) return;
    this.keptBytes += piece.length;
    if (this.keptBytes > KEEP_WHILE_SCANNING_BYTES) {
      this.pieces = [];
      this.dropped = true;
    } else this.pieces.push(copy ? Buffer.from(piece) : piece);
  }

  private async takeLine(start: number, end: number): Promise<string | null> {
    const pieces = this.pieces;
    const dropped = this.dropped;
    this.pieces = [];
    this.keptBytes = 0;
    this.dropped = false;
    if (end - start > this.leaveLongerThan) return null;
    return dropped ? readLineText(this.handle, start, end) : stripCarriageReturn((pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)).toString('utf8'));
  }
}

function stripCarriageReturn(text: string): string {
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

/** A line's text, read again from the file: for a line the reader left there. */
export async function readLineText(handle: FileHandle, start: number, end: number): Promise<string> {
  const text = await readText(handle, start, end - start);
  // The pieces it was decoded from are garbage now: given back before the text is parsed into another copy.
  if (end - start >= BIG_LINE_BYTES) releaseMemoryNow();
  return stripCarriageReturn(text);
}

/**
 * A byte range as text, read and decoded a slice at a time: a big line never exists
 * as one buffer beside its text, only as pieces of text and then the whole.
 */
async function readText(handle: FileHandle, position: number, length: number): Promise<string> {
  const slice = Buffer.allocUnsafe(Math.min(length, CHUNK_BYTES * 16));
  const decoder = new StringDecoder('utf8');
  const pieces: string[] = [];
  for (let offset = 0; offset < length;) {
    const { bytesRead } = await handle.read(slice, 0, Math.min(slice.length, length - offset), position + offset);
    if (bytesRead === 0) break;
    pieces.push(decoder.write(slice.subarray(0, bytesRead)));
    offset += bytesRead;
  }
  pieces.push(decoder.end());
  return pieces.join('');
}

/** Fills a buffer from a position of an open file (less at its end); the part filled. */
async function readInto(handle: FileHandle, buffer: Buffer, position: number): Promise<Buffer> {
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}
