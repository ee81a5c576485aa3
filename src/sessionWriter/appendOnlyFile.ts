import fs from 'node:fs';

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

  static openForAppend(filePath: string): AppendOnlyFile {
    return new AppendOnlyFile(filePath, fs.openSync(filePath, 'a', 0o600));
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
