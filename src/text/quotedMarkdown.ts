/** A stretch of a text, by UTF-16 offsets: `start` included, `end` excluded. */
export interface TextRange {
  start: number;
  end: number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const CLOSING_FENCE = /^ {0,3}(`{3,}|~{3,})\s*$/;
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
  let fence: { marks: string; start: number } | null = null;
  let previousBlank = true;
  let inIndented = false;
  let offset = 0;
  for (const line of markdown.split('\n')) {
    const end = offset + line.length + 1;
    const blank = line.trim() === '';
    const opening: RegExpExecArray | null = fence ? null : FENCE.exec(line);
    if (fence) {
      if (closesFence(line, fence.marks)) {
        ranges.push({ start: fence.start, end });
        fence = null;
      }
    } else if (opening) {
      fence = { marks: opening[1]!, start: offset };
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

/** A fence closes with the same character, at least as many times, and nothing after it. */
function closesFence(line: string, marks: string): boolean {
  const closing = CLOSING_FENCE.exec(line)?.[1];
  return closing !== undefined && closing[0] === marks[0] && closing.length >= marks.length;
}

/**
 * Code spans (a run of backticks to the next run of the same length in the same
 * paragraph; an unmatched run is plain text) and HTML comments (to `-->` or the end),
 * outside the quoted blocks (in order): a backtick or a `<!--` inside a code block
 * opens nothing. One pass, whatever the agent printed: every run is found once.
 */
function quotedInline(markdown: string, blocks: readonly TextRange[]): TextRange[] {
  const ranges: TextRange[] = [];
  const runs = new BacktickRuns(markdown);
  const paragraphs = new ParagraphEnds(markdown);
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
      end = runs.closing(start, match[0].length, Math.min(paragraphs.after(start), block?.start ?? markdown.length));
    }
    if (end !== null) {
      ranges.push({ start, end });
      opening.lastIndex = end;
    }
  }
  return ranges;
}

/** Every run of backticks by its length, for finding where a code span closes; asked in order of the text. */
class BacktickRuns {
  private readonly byLength = new Map<number, { starts: number[]; next: number }>();

  constructor(markdown: string) {
    for (const run of markdown.matchAll(/`+/g)) {
      const same = this.byLength.get(run[0].length) ?? { starts: [], next: 0 };
      same.starts.push(run.index);
      this.byLength.set(run[0].length, same);
    }
  }

  /** Where the first run of exactly `length` backticks after the one at `opening` ends, if it starts before `limit`; null when none does. */
  closing(opening: number, length: number, limit: number): number | null {
    const same = this.byLength.get(length);
    if (!same) return null;
    while (same.next < same.starts.length && same.starts[same.next]! <= opening) same.next++;
    const start = same.starts[same.next];
    return start !== undefined && start < limit ? start + length : null;
  }
}

/** Where paragraphs end (a blank line, or the text's end); asked in order of the text. */
class ParagraphEnds {
  private readonly blank = /\n[ \t\r]*\n/g;
  private end = -1;

  constructor(private readonly markdown: string) {}

  after(offset: number): number {
    if (offset >= this.end) {
      this.blank.lastIndex = offset;
      this.end = this.blank.exec(this.markdown)?.index ?? this.markdown.length;
    }
    return this.end;
  }
}
