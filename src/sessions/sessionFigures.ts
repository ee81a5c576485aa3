import fs from 'node:fs';
import { normalizeSessionLine, type CriticDecisionKind, type IterationLine, type SessionLine, type SessionStartLine } from '../sessionFormat/sessionLines.js';
import type { SessionFigures } from '../sessionFormat/sessionSummaries.js';
import { lineScanner, scanLongLineSync } from './longLine.js';
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

/** The figures of the session whose start line is `start`, reading its file (`fd`, `size` bytes) from byte `from` on, once. */
export function figuresOfFile(fd: number, size: number, from: number, start: SessionStartLine): SessionFigures {
  const fold = new FiguresFold(start);
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  const line = new LineInPieces(fd);
  line.begin(from);
  for (let position = from; position < size;) {
    const read = fs.readSync(fd, chunk, 0, Math.min(CHUNK_BYTES, size - position), position);
    if (read === 0) break;
    let at = 0;
    for (let newline = chunk.indexOf(NEWLINE, at); newline >= 0 && newline < read; newline = chunk.indexOf(NEWLINE, at)) {
      line.add(chunk.subarray(at, newline));
      fold.add(line.end(position + newline));
      at = newline + 1;
      line.begin(position + at);
    }
    line.add(chunk.subarray(at, read), true);
    position += read;
  }
  // A last line without its newline may be torn: counted only if it reads whole.
  if (line.started) fold.add(line.end(size));
  return fold.figures;
}

type ReadResult = (ParseResult<SessionLine> & { feedbackChars?: number }) | undefined;

/**
 * The line being read, in pieces: kept while short, and once too long to keep, skimmed
 * as it is read (`lineScanner`), so that the file is read once, a line of megabytes
 * included. One whose feedback is itself that long is scanned again from the file as
 * the readers scan it, which measures it.
 */
class LineInPieces {
  private pieces: Buffer[] = [];
  private kept = 0;
  private start = 0;
  private scanner: ReturnType<typeof lineScanner> | undefined;

  constructor(private readonly fd: number) {}

  get started(): boolean {
    return this.kept > 0;
  }

  begin(start: number): void {
    this.start = start;
    this.pieces = [];
    this.kept = 0;
    this.scanner = undefined;
  }

  /** The next piece; `copy` when the buffer it is in is read into again before the line ends. */
  add(piece: Buffer, copy = false): void {
    this.kept += piece.length;
    if (!this.scanner && this.kept > KEEP_LINE_BYTES) {
      this.scanner = lineScanner(this.start, true);
      for (const kept of this.pieces) this.scanner.push(kept);
      this.pieces = [];
    }
    if (this.scanner) this.scanner.push(piece);
    else this.pieces.push(copy ? Buffer.from(piece) : piece);
  }

  end(end: number): ReadResult {
    if (!this.scanner) return parseReadLine(Buffer.concat(this.pieces).toString('utf8'));
    const skimmed = this.scanner.finish();
    const scanned = skimmed.ok && skimmed.long.has('feedback') ? scanLongLineSync(this.fd, this.start, end) : skimmed;
    if (!scanned.ok) return scanned;
    const checked = validateLine(normalizeSessionLine(scanned.value));
    return checked.ok ? { ...checked, feedbackChars: scanned.long.get('feedback')?.chars } : checked;
  }
}

/** A session's figures before any iteration is counted. */
export function noFigures(
  resumedFrom: string | null,
  models: Pick<SessionFigures, 'actor_model' | 'critic_model'> = { actor_model: null, critic_model: null },
): SessionFigures {
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
    ...models,
    start_tests_passed: null,
  };
}

class FiguresFold {
  readonly figures: SessionFigures;

  constructor(start: SessionStartLine) {
    this.figures = noFigures(start.resumed_from ?? null, { actor_model: start.actor_model ?? null, critic_model: start.critic_model ?? null });
  }

  add(parsed: ReadResult): void {
    if (!parsed?.ok) return;
    const { line } = parsed;
    if (line.type === 'iteration') this.iteration(line, parsed.feedbackChars);
    // A later end replaces an earlier one, as the readers take it.
    else if (line.type === 'session_end') {
      this.figures.total_tokens = line.total_tokens ?? null;
      this.figures.start_tests_passed = line.outcome === 'success' ? (line.verified_by?.start_tests?.passed ?? null) : null;
    }
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
