/**
 * Text cutting that never splits a character: not a UTF-16 surrogate pair,
 * not an emoji sequence (ZWJ families, flags, skin tones), not a combining mark.
 * The original codeloops cut at byte offsets and panicked on the first emoji.
 */

/** Made on first use: building a segmenter loads ICU's break rules, some 15 ms that activation should not pay. */
let segmenter: Intl.Segmenter | undefined;
function graphemes(): Intl.Segmenter {
  return (segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' }));
}

/** How far around a cut point we look for a grapheme boundary; longer clusters are pathological. */
const BOUNDARY_WINDOW = 64;

/** The largest grapheme boundary <= index (0 and text.length are always boundaries). */
export function graphemeBoundaryAtOrBefore(text: string, index: number): number {
  if (index <= 0) return 0;
  if (index >= text.length) return text.length;
  const windowStart = Math.max(0, index - BOUNDARY_WINDOW);
  const windowText = text.slice(windowStart, Math.min(text.length, index + BOUNDARY_WINDOW));
  let best = windowStart;
  for (const { index: offset } of graphemes().segment(windowText)) {
    const absolute = windowStart + offset;
    if (absolute > index) break;
    best = absolute;
  }
  // A window that starts mid-cluster reports its start as a boundary; fall back to
  // at least not splitting a surrogate pair.
  if (best === windowStart && windowStart > 0 && isLowSurrogate(text.charCodeAt(best))) best -= 1;
  return best;
}

/** The smallest grapheme boundary >= index. */
export function graphemeBoundaryAtOrAfter(text: string, index: number): number {
  if (index <= 0) return 0;
  if (index >= text.length) return text.length;
  const windowStart = Math.max(0, index - BOUNDARY_WINDOW);
  const windowEnd = Math.min(text.length, index + BOUNDARY_WINDOW);
  const windowText = text.slice(windowStart, windowEnd);
  for (const { index: offset } of graphemes().segment(windowText)) {
    const absolute = windowStart + offset;
    if (absolute >= index) return absolute;
  }
  return isLowSurrogate(text.charCodeAt(windowEnd)) ? windowEnd + 1 : windowEnd;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The first `maxChars` UTF-16 units at most, ending on a character boundary. */
export function takeHead(text: string, maxChars: number): string {
  return text.slice(0, graphemeBoundaryAtOrBefore(text, maxChars));
}

/** The last `maxChars` UTF-16 units at most, starting on a character boundary. */
export function takeTail(text: string, maxChars: number): string {
  return text.slice(graphemeBoundaryAtOrAfter(text, text.length - maxChars));
}

export function omissionMarker(omittedChars: number): string {
  return `\n[… ${omittedChars.toLocaleString('en-US')} characters omitted …]\n`;
}

/**
 * Keeps the head and the tail of long text: the start says what the agent set out to
 * do, the end says how it finished. Short text comes back unchanged.
 */
export function truncateMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const half = Math.max(0, Math.floor(maxChars / 2));
  const head = takeHead(text, half);
  const tail = takeTail(text, half);
  return head + omissionMarker(text.length - head.length - tail.length) + tail;
}

/** A one-line preview: whitespace collapsed, cut on a character boundary with an ellipsis. */
export function previewLine(text: string, maxChars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= maxChars) return flat;
  return takeHead(flat, Math.max(0, maxChars - 1)).trimEnd() + '…';
}
