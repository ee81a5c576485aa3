import fs from 'node:fs';
import { normalizeSessionLine, type CriticDecisionKind, type IterationLine, type SessionLine, type SessionStartLine } from '../sessionFormat/sessionLines.js';
import type { SessionFigures } from '../sessionFormat/sessionSummaries.js';
import { scanLongLineSync } from './longLine.js';
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
 * A line of megabytes, skimmed from the file (`scanLongLineSync`); one whose feedback is
 * itself that long is scanned again as the readers scan it, which measures it.
 */
function scannedLine(fd: number, start: number, end: number): (ParseResult<SessionLine> & { feedbackChars?: number }) | undefined {
  const skimmed = scanLongLineSync(fd, start, end, true);
  const scanned = skimmed.ok && skimmed.long.has('feedback') ? scanLongLineSync(fd, start, end) : skimmed;
  if (!scanned.ok) return scanned;
  const checked = validateLine(normalizeSessionLine(scanned.value));
  return checked.ok ? { ...checked, feedbackChars: scanned.long.get('feedback')?.chars } : checked;
}

/** A session's figures before any iteration is counted. */
export function noFigures(resumedFrom: string | null): SessionFigures {
  return {
    resumed_from: resumedFrom,
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

class FiguresFold {
  readonly figures: SessionFigures;

  constructor(start: SessionStartLine) {
    this.figures = noFigures(start.resumed_from ?? null);
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
