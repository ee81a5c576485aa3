import fs from 'node:fs';
import type { SpendTotals } from '../budget/spendTracker.js';
import { isCodeloopsError, type FailureCode, type FailureDetails } from '../sessionFormat/failures.js';
import type { NeedsInput } from '../sessionFormat/needsInput.js';
import type { RunSummary } from '../sessionFormat/runEvents.js';
import type { Outcome, StopReason } from '../sessionFormat/sessionLines.js';
import type { VerifiedBy } from '../sessionFormat/testResults.js';
import { readLinesBackward } from '../sessions/lineReader.js';
import type { SessionWriter } from '../sessionWriter/sessionWriter.js';
import type { GuardStop } from './loopGuard.js';

/** How a loop ends: the outcome and its reason, and what its `session_end` line and its `RunSummary` say. */

export type EndState = {
  status: Outcome;
  summary: string | null;
  confidence: number | null;
  error: string | null;
  errorCode: FailureCode | null;
  /** The failure's facts (`CodeloopsError.details`: a usage limit's `until`); null: none. */
  errorDetails: FailureDetails | null;
  stopReason: StopReason | null;
};

/** What the end of a run tells besides how it ended: its figures, and what its last verdict rested on. */
export interface RunFigures {
  sessionId: string;
  sessionFile: string;
  iterations: number;
  durationSecs: number;
  totals: SpendTotals;
  /** Whether the last iteration's verdict rested on more than the critic's word. */
  verified: boolean;
  verifiedBy: VerifiedBy | null;
}

/** The run's summary, as `run_finished` and `runLoop`'s caller get it. */
export function runSummaryOf(end: EndState, figures: RunFigures): RunSummary {
  const { totals } = figures;
  return {
    status: end.status,
    iterations: figures.iterations,
    summary: end.summary,
    confidence: end.confidence,
    error: end.error,
    error_code: end.errorCode,
    ...(end.errorCode !== null && { error_details: end.errorDetails ?? {} }),
    stop_reason: end.stopReason,
    total_cost_usd: totals.costUsd,
    total_tokens: totals.tokens,
    cost_estimated: totals.costEstimated,
    total_duration_secs: figures.durationSecs,
    session_id: figures.sessionId,
    session_file: figures.sessionFile,
    verification: end.status === 'success' ? (figures.verified ? 'verified' : 'unverified') : null,
    ...(end.status === 'success' && figures.verifiedBy && { verified_by: figures.verifiedBy }),
  };
}

/** Writes the session's `session_end` line from the run's summary; fields that say nothing are left out. */
export function writeSessionEnd(writer: SessionWriter, end: EndState, summary: RunSummary): void {
  writer.writeEnd({
    outcome: end.status,
    iterations: summary.iterations,
    summary: end.summary,
    confidence: end.confidence,
    duration_secs: summary.total_duration_secs,
    error: end.error ?? undefined,
    error_code: end.errorCode ?? undefined,
    error_details: end.errorDetails ?? undefined,
    stop_reason: end.stopReason ?? undefined,
    total_cost_usd: summary.total_cost_usd ?? undefined,
    total_tokens: summary.total_tokens,
    cost_estimated: summary.cost_estimated || undefined,
    verification: summary.verification ?? undefined,
    verified_by: summary.verified_by,
  });
}

/** Whether a session file's last line is a `session_end` (read from the end: its lines may be huge). */
export function hasEnded(filePath: string): boolean {
  const fd = fs.openSync(filePath, 'r');
  try {
    const last = readLinesBackward(fd, fs.fstatSync(fd).size, 0).next();
    return !last.done && /^\{\s*"type"\s*:\s*"session_end"/.test(last.value.prefix(200));
  } finally {
    fs.closeSync(fd);
  }
}

export function ended(status: Outcome): EndState {
  return { status, summary: null, confidence: null, error: null, errorCode: null, errorDetails: null, stopReason: null };
}

export function interrupted(): EndState {
  return ended('interrupted');
}

/** A loop that cannot go on: an expected failure says which; anything else is a git failure or a bug. */
export function failed(error: unknown): EndState {
  const code: FailureCode = isCodeloopsError(error) ? error.code : 'internal';
  const details = isCodeloopsError(error) && Object.keys(error.details).length > 0 ? error.details : null;
  return {
    ...ended('failed'),
    error: (error as Error).message,
    errorCode: code,
    errorDetails: details,
    stopReason: code === 'usage_limit' ? 'usage_limit' : null,
  };
}

/** Nobody can answer the question (headless): the loop ends `failed`, the question as its error, to be answered on resume. */
export function needsInputEnd(needs: NeedsInput): EndState {
  return { ...ended('failed'), error: needs.question, errorCode: 'needs_input', stopReason: 'needs_input' };
}

/** A guard stopped the loop: it ends `failed`, saying why. */
export function stoppedBy(stop: GuardStop): EndState {
  return { ...ended('failed'), error: stop.message, errorCode: 'budget_exceeded', stopReason: stop.reason };
}
