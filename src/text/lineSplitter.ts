/**
 * Splits streamed text into lines without holding more than one line, and never
 * more than `maxLineChars` of it: a line longer than that (an agent printing a
 * 100 MB blob without a newline) is handed on in pieces marked `partial`.
 */
export class LineSplitter {
  private pending = '';

  constructor(
    private readonly onLine: (line: string, partial: boolean) => void,
    private readonly maxLineChars = 8 * 1024 * 1024,
  ) {}

  push(chunk: string): void {
    const joined = this.pending + chunk;
    let lineStart = 0;
    for (let newlineAt = joined.indexOf('\n'); newlineAt >= 0; newlineAt = joined.indexOf('\n', lineStart)) {
      this.onLine(stripCarriageReturn(joined.slice(lineStart, newlineAt)), false);
      lineStart = newlineAt + 1;
    }
    let text = joined.slice(lineStart);
    while (text.length > this.maxLineChars) {
      this.onLine(text.slice(0, this.maxLineChars), true);
      text = text.slice(this.maxLineChars);
    }
    this.pending = text;
  }

  /** Hands on whatever is left after the stream ended. */
  flush(): void {
    if (this.pending.length > 0) this.onLine(stripCarriageReturn(this.pending), false);
    this.pending = '';
  }
}

function stripCarriageReturn(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
