import fs from 'node:fs';
import readline from 'node:readline';

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

/** Every line of a file with its 1-based number, streamed. */
export async function* readAllLines(filePath: string): AsyncGenerator<{ text: string; lineNumber: number; last: boolean }> {
  const stream = fs.createReadStream(filePath, { encoding: 'utf8', highWaterMark: CHUNK_BYTES });
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let lineNumber = 0;
  let previous: string | undefined;
  try {
    for await (const line of lines) {
      if (previous !== undefined) yield { text: previous, lineNumber, last: false };
      previous = line;
      lineNumber += 1;
    }
    if (previous !== undefined) yield { text: previous, lineNumber, last: true };
  } finally {
    lines.close();
    stream.destroy();
  }
}
