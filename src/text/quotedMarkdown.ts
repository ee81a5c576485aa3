/** A stretch of a text, by UTF-16 offsets: `start` included, `end` excluded. */
export interface TextRange {
  start: number;
  end: number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const QUOTE_LINE = /^ {0,3}>/;
const INDENTED = /^(?: {4}|\t)/;

/**
 * The parts of a Markdown text that quote rather than say: fenced and indented code
 * blocks, code spans, HTML comments and block quotes. A tag written there is shown,
 * not used (an agent explaining the tag, pasting a log, commenting a line out). An
 * unclosed fence or comment runs to the end, as a Markdown reader shows it.
 */
export function quotedRanges(markdown: string): TextRange[] {
  const blocks = quotedBlocks(markdown);
  return [...blocks, ...quotedInline(markdown, blocks)].sort((a, b) => a.start - b.start);
}

/** Whether the offset falls in one of the ranges. */
export function isWithinRanges(offset: number, ranges: readonly TextRange[]): boolean {
  return ranges.some((range) => offset >= range.start && offset < range.end);
}

/** Fenced code (to its closing fence or the end), indented code after a blank line, and block quote lines. */
function quotedBlocks(markdown: string): TextRange[] {
  const ranges: TextRange[] = [];
  let fence: { closing: RegExp; start: number } | null = null;
  let previousBlank = true;
  let inIndented = false;
  let offset = 0;
  for (const line of markdown.split('\n')) {
    const end = offset + line.length + 1;
    const blank = line.trim() === '';
    const opening: RegExpExecArray | null = fence ? null : FENCE.exec(line);
    if (fence) {
      if (fence.closing.test(line)) {
        ranges.push({ start: fence.start, end });
        fence = null;
      }
    } else if (opening) {
      // Closed by a fence of the same character, at least as long, and nothing after it.
      fence = { closing: new RegExp(`^ {0,3}${opening[1]![0]}{${opening[1]!.length},}\\s*$`), start: offset };
    } else if (QUOTE_LINE.test(line) || (!blank && INDENTED.test(line) && (previousBlank || inIndented))) {
      inIndented = !QUOTE_LINE.test(line);
      ranges.push({ start: offset, end });
    } else if (!blank) {
      inIndented = false;
    }
    previousBlank = blank;
    offset = end;
  }
  if (fence) ranges.push({ start: fence.start, end: markdown.length });
  return ranges;
}

/**
 * Code spans (a run of backticks to the next run of the same length in the same
 * paragraph; an unmatched run is plain text) and HTML comments (to `-->` or the end),
 * outside the quoted blocks (in order): a backtick or a `<!--` inside a code block opens nothing.
 */
function quotedInline(markdown: string, blocks: readonly TextRange[]): TextRange[] {
  const ranges: TextRange[] = [];
  const opening = /<!--|`+/g;
  let next = 0;
  for (let match = opening.exec(markdown); match; match = opening.exec(markdown)) {
    while (next < blocks.length && blocks[next]!.end <= match.index) next++;
    const block = blocks[next];
    if (block && match.index >= block.start) {
      opening.lastIndex = block.end;
      continue;
    }
    const start = match.index;
    let end: number | null;
    if (match[0] === '<!--') {
      const close = markdown.indexOf('-->', start + 4);
      end = close < 0 ? markdown.length : close + 3;
    } else {
      end = closingRun(markdown, start + match[0].length, match[0].length, paragraphEnd(markdown, start, block?.start ?? markdown.length));
    }
    if (end !== null) {
      ranges.push({ start, end });
      opening.lastIndex = end;
    }
  }
  return ranges;
}

/** Where the closing run of exactly `length` backticks ends, searching up to `limit`; null when there is none. */
function closingRun(markdown: string, from: number, length: number, limit: number): number | null {
  const runs = /`+/g;
  runs.lastIndex = from;
  for (let match = runs.exec(markdown); match && match.index < limit; match = runs.exec(markdown)) {
    if (match[0].length === length) return match.index + length;
  }
  return null;
}

/** The end of the paragraph the offset is in: the next blank line, or the next quoted block. */
function paragraphEnd(markdown: string, offset: number, nextBlock: number): number {
  const blank = /\n[ \t\r]*\n/g;
  blank.lastIndex = offset;
  return Math.min(blank.exec(markdown)?.index ?? markdown.length, nextBlock);
}
