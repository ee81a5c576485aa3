import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import readline from 'node:readline';

/**
 * Reading JSONL without reading what we do not need: the first line from the front,
 * the last lines from the back, the middle never. A listing must not pay for a
 * multi-megabyte iteration line in the middle of a file.
 */

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

export interface LocatedLine {
  text: string;
  /** Byte offset of the line's first byte. */
  start: number;
  /** Byte offset just past the line's last byte (the newline is not included). */
  end: number;
  /** False when the file ends without a newline after this line: it may be torn. */
  terminated: boolean;
}

/** The first line, or undefined for an empty file. */
export async function readFirstLine(handle: FileHandle, fileSize: number): Promise<LocatedLine | undefined> {
  if (fileSize === 0) return undefined;
  const chunks: Buffer[] = [];
  let position = 0;
  while (position < fileSize) {
    const length = Math.min(CHUNK_BYTES, fileSize - position);
    const buffer = Buffer.allocUnsafe(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    const newlineAt = chunk.indexOf(NEWLINE);
    if (newlineAt >= 0) {
      chunks.push(chunk.subarray(0, newlineAt));
      const end = position + newlineAt;
      return { text: decode(chunks), start: 0, end, terminated: true };
    }
    chunks.push(chunk);
    position += bytesRead;
  }
  return { text: decode(chunks), start: 0, end: position, terminated: false };
}

/**
 * Lines from the end of the file backwards, never reading before `floor` (the end
 * of a line already read from the front). Blank lines are skipped.
 */
export async function* readLinesBackward(
  handle: FileHandle,
  fileSize: number,
  floor: number,
): AsyncGenerator<LocatedLine> {
  let lineEnd = fileSize;
  let terminated = false;
  // Pending bytes of the line being assembled, in file order once reversed.
  let pending: Buffer[] = [];
  let position = fileSize;
  let first = true;
  while (position > floor) {
    const length = Math.min(CHUNK_BYTES, position - floor);
    position -= length;
    const buffer = Buffer.allocUnsafe(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    let chunk = buffer.subarray(0, bytesRead);
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
      pending.push(chunk.subarray(newlineAt + 1, searchEnd));
      const lineStart = position + newlineAt + 1;
      const text = decode(pending.reverse());
      pending = [];
      if (text.trim().length > 0) yield { text, start: lineStart, end: lineEnd, terminated };
      terminated = true;
      lineEnd = position + newlineAt;
      searchEnd = newlineAt;
    }
    if (searchEnd > 0) pending.push(chunk.subarray(0, searchEnd));
  }
  if (pending.length > 0) {
    const text = decode(pending.reverse());
    if (text.trim().length > 0) yield { text, start: floor, end: lineEnd, terminated };
  }
}

function decode(chunks: Buffer[]): string {
  return (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8').replace(/\r$/, '');
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
