import fs from 'node:fs';
import { normalizeSessionLine, type CriticDecisionKind, type IterationLine, type SessionLine, type SessionStartLine } from '../sessionFormat/sessionLines.js';
import type { SessionFigures } from '../sessionFormat/sessionSummaries.js';
import { LONG_STRING_BYTES, scanLongLineSync } from './longLine.js';
import { parseReadLine, validateLine, type ParseResult } from './sessionLineParsing.js';

/**
 * What stats need of a session's middle lines (`SessionFigures`), read front to back
 * once, when the session is indexed. Synchronous, as listing reads (see lineReader.ts),
 * and in flat memory: a line of megabytes is scanned from the file a slice at a time,
 * its long string values (an agent's output, a diff) measured and left there. Lines
 * the readers skip (not JSON, not a session line) are skipped here too, silently:
 * listing says what it warns about from the first and last lines, as it always has.
 */

const CHUNK_BYTES = 64 * 1024;
/** A line longer than this is not kept while its end is looked for: it is scanned from the file afterwards. */
const KEEP_LINE_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/** The figures of the session whose start line is `start`, reading its file (`fd`, `size` bytes) from byte `from` on. */
export function figuresOfFile(fd: number, size: number, from: number, start: SessionStartLine): SessionFigures {
  const fold = new FiguresFold(start);
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let pieces: Buffer[] = [];
  let kept = 0;
  let lineStart = from;
  for (let position = from; position < size;) {
    const read = fs.readSync(fd, chunk, 0, Math.min(CHUNK_BYTES, size - position), position);
    if (read === 0) break;
    let at = 0;
    for (let newline = chunk.indexOf(NEWLINE, at); newline >= 0 && newline < read; newline = chunk.indexOf(NEWLINE, at)) {
      if (kept <= KEEP_LINE_BYTES) pieces.push(chunk.subarray(at, newline));
      const end = position + newline;
      fold.add(kept + newline - at > KEEP_LINE_BYTES ? scannedLine(fd, lineStart, end) : parseReadLine(Buffer.concat(pieces).toString('utf8')));
      pieces = [];
      kept = 0;
      at = newline + 1;
      lineStart = end + 1;
    }
    // The rest of the chunk begins the next line: copied, as the chunk is read into again.
    if (kept + read - at <= KEEP_LINE_BYTES) pieces.push(Buffer.from(chunk.subarray(at, read)));
    else pieces = [];
    kept += read - at;
    position += read;
  }
  // A last line without its newline may be torn: counted only if it reads whole.
  if (lineStart < size) fold.add(kept > KEEP_LINE_BYTES ? scannedLine(fd, lineStart, size) : parseReadLine(Buffer.concat(pieces).toString('utf8')));
  return fold.figures;
}

/**
 * A line of megabytes, skimmed from the file (`skimLongLine`); one whose feedback is
 * itself that long is scanned again as the readers scan it, which measures it.
 */
function scannedLine(fd: number, start: number, end: number): (ParseResult<SessionLine> & { feedbackChars?: number }) | undefined {
  const skimmed = skimLongLine(fd, start, end);
  if (skimmed.ok && !skimmed.longKeys.has('feedback')) return validateLine(normalizeSessionLine(skimmed.value));
  const scanned = scanLongLineSync(fd, start, end);
  if (!scanned.ok) return scanned;
  const checked = validateLine(normalizeSessionLine(scanned.value));
  return checked.ok ? { ...checked, feedbackChars: scanned.long.get('feedback')?.chars } : checked;
}

const SLICE_BYTES = 1024 * 1024;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * A line of megabytes parsed without its long top-level string values (an agent's
 * output, a diff), which are skipped, not measured nor checked: what stats need of an
 * iteration is its short fields. Inside a string it jumps from quote to quote (a
 * native search), where the readers' scanner (longLine.ts) looks at every byte to
 * measure and check each value: indexing ten thousand sessions read 440 MB of such
 * lines in 2 s that way, a fraction of that this way.
 */
export function skimLongLine(fd: number, start: number, end: number): { ok: true; value: unknown; longKeys: Set<string> } | { ok: false; reason: string } {
  const skim = new Skim();
  const slice = Buffer.allocUnsafe(Math.min(SLICE_BYTES, end - start));
  for (let position = start; position < end;) {
    const read = fs.readSync(fd, slice, 0, Math.min(slice.length, end - position), position);
    if (read === 0) return { ok: false, reason: 'the line ended early (the file was cut while it was read)' };
    skim.push(slice.subarray(0, read));
    position += read;
  }
  return skim.finish();
}

class Skim {
  /** The line without its long values, as bytes: parsed at the end. */
  private readonly kept: Buffer[] = [];
  private depth = 0;
  private expectKey = false;
  private lastKey = '';
  private inString = false;
  /** The string read so far ends in an odd run of backslashes: its next byte is escaped. */
  private escaping = false;
  private stringParts: Buffer[] = [];
  private stringLength = 0;
  private stringIsTopKey = false;
  private stringIsTopValue = false;
  private long = false;
  readonly longKeys = new Set<string>();

  push(bytes: Buffer): void {
    let copyFrom = 0;
    for (let index = 0; index < bytes.length;) {
      if (this.inString) {
        const close = this.closingQuote(bytes, index);
        this.grow(bytes.subarray(index, close < 0 ? bytes.length : close + 1));
        if (close < 0) return;
        this.closeString();
        index = copyFrom = close + 1;
        continue;
      }
      const byte = bytes[index]!;
      if (byte === QUOTE) {
        this.kept.push(Buffer.from(bytes.subarray(copyFrom, index)));
        this.openString();
        this.grow(bytes.subarray(index, index + 1)); // the opening quote is the literal's first byte
        index += 1;
        continue;
      }
      if (byte === 0x7b || byte === 0x5b) {
        this.depth += 1;
        if (this.depth === 1) this.expectKey = byte === 0x7b;
      } else if (byte === 0x7d || byte === 0x5d) this.depth -= 1;
      else if (this.depth === 1 && byte === 0x2c) this.expectKey = true;
      else if (this.depth === 1 && byte === 0x3a) this.expectKey = false;
      index += 1;
    }
    if (!this.inString) this.kept.push(Buffer.from(bytes.subarray(copyFrom)));
  }

  /** Where the string being read closes in `bytes` from `from` on, or -1 (then whether the bytes end in an escape is carried on). */
  private closingQuote(bytes: Buffer, from: number): number {
    for (let search = from; ;) {
      const quote = bytes.indexOf(QUOTE, search);
      if (quote < 0) {
        this.escaping = oddBackslashesBefore(bytes, bytes.length, from, this.escaping);
        return -1;
      }
      if (!oddBackslashesBefore(bytes, quote, from, this.escaping)) return quote;
      search = quote + 1;
    }
  }

  private openString(): void {
    this.inString = true;
    this.escaping = false;
    this.stringParts = [];
    this.stringLength = 0;
    this.long = false;
    this.stringIsTopKey = this.depth === 1 && this.expectKey;
    this.stringIsTopValue = this.depth === 1 && !this.expectKey;
  }

  private grow(bytes: Buffer): void {
    this.stringLength += bytes.length;
    if (this.long) return;
    if (this.stringIsTopValue && this.stringLength > LONG_STRING_BYTES) {
      this.long = true;
      this.stringParts = [];
      return;
    }
    this.stringParts.push(Buffer.from(bytes));
  }

  private closeString(): void {
    this.inString = false;
    this.escaping = false;
    if (this.long) {
      this.longKeys.add(this.lastKey);
      this.kept.push(Buffer.from('""'));
      return;
    }
    const text = Buffer.concat(this.stringParts);
    this.kept.push(text);
    if (this.stringIsTopKey) {
      try {
        this.lastKey = JSON.parse(text.toString('utf8')) as string;
      } catch {
        this.lastKey = '';
      }
    }
  }

  finish(): { ok: true; value: unknown; longKeys: Set<string> } | { ok: false; reason: string } {
    if (this.inString) return { ok: false, reason: 'not valid JSON (a string is not closed)' };
    try {
      return {
        ok: true,
        value: JSON.parse(
          Buffer.concat(this.kept)
            .toString('utf8')
            .replace(/^\uFEFF/, ''),
        ),
        longKeys: this.longKeys,
      };
    } catch {
      return { ok: false, reason: 'not valid JSON' };
    }
  }
}

/** Whether the bytes just before `at` (back to `floor`, then `carriedOdd` for what came before) are an odd run of backslashes. */
function oddBackslashesBefore(bytes: Buffer, at: number, floor: number, carriedOdd: boolean): boolean {
  let run = 0;
  let index = at - 1;
  while (index >= floor && bytes[index] === BACKSLASH) {
    run += 1;
    index -= 1;
  }
  return index < floor ? (run % 2 === 1) !== carriedOdd : run % 2 === 1;
}

class FiguresFold {
  readonly figures: SessionFigures;

  constructor(start: SessionStartLine) {
    this.figures = {
      resumed_from: start.resumed_from ?? null,
      done: 0,
      continued: 0,
      errors: 0,
      critic_done: 0,
      done_refused: 0,
      feedback_chars: 0,
      improvements: 0,
      first_decision: null,
      last_decision: null,
      total_tokens: null,
    };
  }

  add(parsed: (ParseResult<SessionLine> & { feedbackChars?: number }) | undefined): void {
    if (!parsed?.ok) return;
    const { line } = parsed;
    if (line.type === 'iteration') this.iteration(line, parsed.feedbackChars);
    // A later end replaces an earlier one, as the readers take it.
    else if (line.type === 'session_end') this.figures.total_tokens = line.total_tokens ?? null;
  }

  private iteration(line: IterationLine, longFeedbackChars: number | undefined): void {
    const figures = this.figures;
    const decision = line.critic_decision;
    if (decision === 'DONE') figures.done += 1;
    else {
      if (decision === 'CONTINUE') figures.continued += 1;
      else figures.errors += 1;
      figures.feedback_chars += longFeedbackChars ?? line.feedback?.length ?? 0;
    }
    // The critic's own verdict is kept only when the gate overruled it.
    if ((line.critic_verdict ?? decision) === 'DONE') figures.critic_done += 1;
    if (line.critic_verdict === 'DONE' && decision !== 'DONE') figures.done_refused += 1;
    if (decision === 'DONE' && isRejection(figures.last_decision)) figures.improvements += 1;
    figures.first_decision ??= decision;
    figures.last_decision = decision;
  }
}

/** CONTINUE or ERROR: the critic did not approve. */
export function isRejection(decision: CriticDecisionKind | null): boolean {
  return decision === 'CONTINUE' || decision === 'ERROR';
}
