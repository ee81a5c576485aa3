import { omissionMarker, takeHead, takeTail } from './truncate.js';

/** Kept beyond each limit so a cut can move to a character boundary. */
const BOUNDARY_SLACK = 64;

/**
 * Accumulates streamed text in bounded memory: the first `headChars` and the last
 * `tailChars` are kept, the middle is counted and dropped. Agents can print
 * megabytes; the runner must stay flat. The tail is a queue of the appended
 * pieces, dropped whole from the front once the rest still covers the limit, so
 * nothing is copied until the text is asked for.
 */
export class HeadTailBuffer {
  private headPieces: string[] = [];
  private headLength = 0;
  private tail: string[] = [];
  /** Index of the first live piece in `tail` (dropping from the front without shifting). */
  private tailStart = 0;
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
    const headRoom = this.headChars + BOUNDARY_SLACK - this.headLength;
    if (headRoom > 0) {
      const piece = rest.length <= headRoom ? rest : rest.slice(0, headRoom);
      this.headPieces.push(piece);
      this.headLength += piece.length;
      rest = rest.slice(piece.length);
      if (rest.length === 0) return;
    }
    this.tail.push(rest);
    this.tailLength += rest.length;
    const keep = this.tailChars + BOUNDARY_SLACK;
    while (this.tailStart < this.tail.length - 1 && this.tailLength - this.tail[this.tailStart]!.length >= keep) {
      this.tailLength -= this.tail[this.tailStart]!.length;
      this.tail[this.tailStart] = '';
      this.tailStart += 1;
    }
    if (this.tailStart > 1024 && this.tailStart * 2 > this.tail.length) {
      this.tail = this.tail.slice(this.tailStart);
      this.tailStart = 0;
    }
  }

  /** The text, with an omission marker in the middle when anything was dropped. */
  toString(): string {
    const head = this.headPieces.join('');
    const tail = this.tail.slice(this.tailStart).join('');
    if (this.total <= this.headChars + this.tailChars) return head + tail;
    const headText = takeHead(head, this.headChars);
    const tailText = takeTail(tail, this.tailChars);
    const omitted = this.total - headText.length - tailText.length;
    return omitted > 0 ? headText + omissionMarker(omitted) + tailText : head + tail;
  }
}
