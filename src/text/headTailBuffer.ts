import { omissionMarker, takeHead, takeTail } from './truncate.js';

/**
 * Accumulates streamed text in bounded memory: the first `headChars` and the last
 * `tailChars` are kept, the middle is counted and dropped. Agents can print
 * megabytes; the runner must stay flat.
 */
/** Kept beyond each limit so a cut can move to a character boundary. */
const BOUNDARY_SLACK = 64;

export class HeadTailBuffer {
  private head = '';
  private tailChunks: string[] = [];
  private tailLength = 0;
  private total = 0;

  constructor(
    private readonly headChars: number,
    private readonly tailChars: number,
  ) {}

  get totalChars(): number {
    return this.total;
  }

  append(text: string): void {
    if (text.length === 0) return;
    this.total += text.length;
    let rest = text;
    if (this.head.length < this.headChars + BOUNDARY_SLACK) {
      const room = this.headChars + BOUNDARY_SLACK - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (rest.length === 0) return;
    this.tailChunks.push(rest);
    this.tailLength += rest.length;
    // Compact lazily: only when the tail holds twice what we keep.
    if (this.tailLength > this.tailChars * 2 + 4096) this.compactTail();
  }

  private compactTail(): void {
    const joined = this.tailChunks.join('');
    const kept = joined.slice(Math.max(0, joined.length - this.tailChars - BOUNDARY_SLACK));
    this.tailChunks = [kept];
    this.tailLength = kept.length;
  }

  /** The text, with an omission marker in the middle when anything was dropped. */
  toString(): string {
    const tail = this.tailChunks.join('');
    if (this.total === this.head.length + tail.length) {
      if (this.total <= this.headChars + this.tailChars) return this.head + tail;
    }
    const headText = takeHead(this.head, this.headChars);
    const tailText = takeTail(tail, this.tailChars);
    const omitted = this.total - headText.length - tailText.length;
    if (omitted <= 0) return this.head + tail;
    return headText + omissionMarker(omitted) + tailText;
  }
}
