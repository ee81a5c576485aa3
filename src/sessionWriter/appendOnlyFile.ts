import fs from 'node:fs';
import { NotARegularFileError, openRegularFileForAppendSync } from '../files/regularFile.js';
import { CodeloopsError } from '../sessionFormat/failures.js';

/**
 * An append-only JSONL file: every line goes out in one write() of the whole line,
 * so a crash leaves at worst one torn last line, which readers skip. Writes are
 * synchronous on purpose: an interrupt handler can always finish the current line
 * and then write its own, never interleaved.
 */
export class AppendOnlyFile {
  private closed = false;

  private constructor(
    readonly filePath: string,
    private readonly fd: number,
  ) {}

  /** Creates the file; fails with EEXIST rather than appending to someone else's. */
  static createExclusive(filePath: string): AppendOnlyFile {
    return new AppendOnlyFile(filePath, fs.openSync(filePath, 'wx', 0o600));
  }

  /**
   * Opens a file to append to. A torn last line (a crash mid-write) is cut off
   * first: the next line would otherwise be glued to it and both would be lost.
   */
  static openForAppend(filePath: string): AppendOnlyFile {
    const fd = openRecordForAppend(filePath);
    try {
      cutTornTail(filePath);
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
    return new AppendOnlyFile(filePath, fd);
  }

  appendLine(value: unknown): void {
    this.appendRaw(JSON.stringify(value) + '\n');
  }

  appendRaw(text: string): void {
    if (this.closed) throw new Error(`${this.filePath} is already closed`);
    const bytes = Buffer.from(text, 'utf8');
    const sizeBefore = fs.fstatSync(this.fd).size;
    let written = 0;
    try {
      // A regular file takes the whole buffer in one write; loop only for the
      // pathological partial write (disk nearly full, signal).
      while (written < bytes.length) {
        written += fs.writeSync(this.fd, bytes, written, bytes.length - written);
      }
    } catch (error) {
      // A half-written line would swallow the next one: cut it off before giving up.
      if (written > 0) {
        try {
          fs.ftruncateSync(this.fd, sizeBefore);
        } catch {
          // the reader skips a torn line anyway
        }
      }
      throw error;
    }
  }

  sync(): void {
    if (!this.closed) fs.fsyncSync(this.fd);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
  }
}

/**
 * Opens a record to append to: a regular file only. Anything else where a record goes
 * (a FIFO would block the writer forever, a folder fails on the first write) is
 * refused with `not_a_file` before anything is written.
 */
function openRecordForAppend(filePath: string): number {
  try {
    return openRegularFileForAppendSync(filePath);
  } catch (error) {
    if (error instanceof NotARegularFileError) {
      throw new CodeloopsError('not_a_file', `${error.message}: Codeloops appends its records only to regular files.`, { file: filePath });
    }
    throw error;
  }
}

/** How much of a file's tail is read to find its last line; a longer last line is read whole. */
const TAIL_CHUNK = 64 * 1024;

/**
 * Makes a file end with a whole line before more are appended. A last line without
 * its newline that still parses (written whole, the newline lost) gets its newline;
 * a torn one is cut off. A file whose only line is torn is left alone and refused:
 * cutting it would leave nothing a reader accepts.
 */
export function cutTornTail(filePath: string): 'whole' | 'completed' | 'cut' {
  const fd = fs.openSync(filePath, 'r+');
  try {
    const size = fs.fstatSync(fd).size;
    if (size === 0) return 'whole';
    const last = Buffer.alloc(1);
    fs.readSync(fd, last, 0, 1, size - 1);
    if (last[0] === 0x0a) return 'whole';
    let lineStart = 0;
    for (let end = size; end > 0;) {
      const start = Math.max(0, end - TAIL_CHUNK);
      const chunk = Buffer.alloc(end - start);
      fs.readSync(fd, chunk, 0, chunk.length, start);
      const newline = chunk.lastIndexOf(0x0a);
      if (newline >= 0) {
        lineStart = start + newline + 1;
        break;
      }
      end = start;
    }
    const tail = Buffer.alloc(size - lineStart);
    fs.readSync(fd, tail, 0, tail.length, lineStart);
    if (parsesAsJson(tail.toString('utf8'))) {
      fs.writeSync(fd, '\n', size);
      return 'completed';
    }
    if (lineStart === 0) throw new Error(`${filePath} holds only a torn line; it cannot be appended to.`);
    fs.ftruncateSync(fd, lineStart);
    return 'cut';
  } finally {
    fs.closeSync(fd);
  }
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
