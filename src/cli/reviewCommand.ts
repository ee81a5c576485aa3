import { addComment, setResolved } from '../review/comments.js';
import { rejectHunk, stageChanges, undoRejection } from '../review/hunkReview.js';
import { assertIteration, reviewTargetOf, type SessionReviewTarget } from '../review/reviewTarget.js';
import { sessionReview } from '../review/sessionReview.js';
import type { ReviewActionOutcome, SessionReview } from '../sessionFormat/reviewRecords.js';
import { sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { fileLocation } from '../text/humanize.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { openStore } from './openStore.js';
import { colorEnabled, paint } from './terminal.js';
import { UsageError } from './usageError.js';
import { printAnswer } from './answers.js';

/**
 * Review from the command line, as in the editor: `codeloops review` lists an
 * iteration's hunks with numbers (and the findings, comments and rejections),
 * `reject` undoes one hunk with a reason for the next actor run, `comment` leaves a
 * comment for it, `resolve` closes a finding or comment, `stage` puts an
 * iteration's changes into the index. A resumed (or still running) loop picks them up.
 */

/** Exit codes of the review actions, one per result. */
const ACTION_EXIT_CODES: Readonly<Record<ReviewActionOutcome['result'], number>> = {
  rejected: 0,
  rejection_undone: 0,
  staged: 0,
  nothing_to_do: 3,
  conflict: 4,
  snapshot_missing: 5,
};

function resolveTarget(idOrPrefix: string): Promise<SessionReviewTarget> {
  const store = openStore();
  return store.resolveId(idOrPrefix).then((sessionId) => reviewTargetOf(store, (id) => sidecarDirOf(id), sessionId));
}

export async function reviewCommand(idOrPrefix: string, options: { iteration?: number; json?: boolean }): Promise<number> {
  const target = await resolveTarget(idOrPrefix);
  if (options.iteration !== undefined) assertIteration(target, options.iteration);
  const review = await sessionReview(target, options.iteration === undefined ? target.iterations : [options.iteration]);
  if (options.json) printAnswer('review', review);
  else process.stdout.write(describeReview(review, colorEnabled(process.stdout)));
  return 0;
}

function describeReview(review: SessionReview, color: boolean): string {
  const lines: string[] = [];
  const text = (value: string) => sanitizeForTerminal(value);
  for (const { iteration, hunks } of review.iterations) {
    lines.push(paint(`── Iteration ${iteration} ──`, 'heading', color));
    if (hunks === null) lines.push(paint('  its snapshots are gone: no hunks to review', 'muted', color));
    else if (hunks.length === 0) lines.push(paint('  no changes', 'muted', color));
    for (const hunk of hunks ?? []) {
      lines.push(
        paint(text(`[${hunk.number}] ${hunk.file}${hunk.binary ? ' (binary)' : ''}${hunk.status === 'modified' ? '' : ` (${hunk.status})`}`), 'info', color),
      );
      for (const line of hunk.text.replace(/\n$/, '').split('\n')) {
        const tone = line.startsWith('+') ? 'success' : line.startsWith('-') ? 'error' : line.startsWith('@@') ? 'muted' : 'info';
        lines.push(paint(`    ${text(line)}`, tone, color));
      }
    }
    for (const finding of review.findings.filter((item) => item.iteration === iteration)) {
      // A finding whose file or lines are not in the iteration's tree is a general one, as the prompts and the editor show it: where the critic pointed is said, not used.
      const location = finding.file ? fileLocation(finding.file, finding.line, finding.end_line) : null;
      const where = location && finding.anchored ? ` ${location}` : '';
      const general = location && !finding.anchored ? `, general: ${location} is not in the iteration’s files` : '';
      const line = `  ${finding.id}${where} (${finding.severity}${finding.open ? '' : ', resolved'}${general}): ${finding.message}`;
      lines.push(paint(text(line), finding.open ? 'warning' : 'muted', color));
    }
    for (const comment of review.comments.filter((item) => item.iteration === iteration)) lines.push(commentLine(comment, color));
    for (const rejection of review.rejections.filter((item) => item.iteration === iteration)) {
      const state = rejection.undone ? 'undone' : rejection.delivered ? 'told to the actor' : 'for the next actor run';
      const line = `  ${rejection.id} hunk ${rejection.hunk} of ${rejection.file} rejected (${state})${rejection.reason ? `: ${rejection.reason}` : ''}`;
      lines.push(paint(text(line), 'muted', color));
    }
  }
  const general = review.comments.filter((item) => item.iteration === null);
  if (general.length > 0) {
    lines.push(paint('── On the session ──', 'heading', color));
    for (const comment of general) lines.push(commentLine(comment, color));
  }
  return lines.join('\n') + '\n';
}

function commentLine(comment: SessionReview['comments'][number], color: boolean): string {
  const where = comment.file ? ` ${fileLocation(comment.file, comment.line, comment.end_line)}` : '';
  return paint(
    sanitizeForTerminal(`  ${comment.id}${where} (yours${comment.open ? '' : ', resolved'}): ${comment.text}`),
    comment.open ? 'info' : 'muted',
    color,
  );
}

export interface RejectOptions {
  iteration?: number;
  hunk?: number;
  reason?: string;
  undo?: boolean;
  id?: string;
  json?: boolean;
}

export async function rejectCommand(idOrPrefix: string, options: RejectOptions): Promise<number> {
  const target = await resolveTarget(idOrPrefix);
  let outcome: ReviewActionOutcome;
  if (options.undo) {
    if (options.hunk !== undefined || options.iteration !== undefined)
      throw new UsageError('--undo takes no --iteration or --hunk: it undoes a rejection (the last, or --id R…).');
    outcome = await undoRejection({ ...target, id: options.id });
  } else {
    if (options.iteration === undefined || options.hunk === undefined) {
      throw new UsageError('Say which hunk: --iteration N --hunk K (codeloops review lists them with their numbers).');
    }
    assertIteration(target, options.iteration);
    outcome = await rejectHunk({ ...target, iteration: options.iteration, hunk: options.hunk, reason: options.reason?.trim() || null });
  }
  printOutcome(outcome, options.json && 'reject');
  return ACTION_EXIT_CODES[outcome.result];
}

export interface CommentOptions {
  iteration?: number;
  file?: string;
  line?: number;
  endLine?: number;
  json?: boolean;
}

export async function commentCommand(idOrPrefix: string, text: string, options: CommentOptions): Promise<number> {
  const target = await resolveTarget(idOrPrefix);
  if (options.iteration !== undefined) assertIteration(target, options.iteration);
  const comment = await addComment(target, {
    iteration: options.iteration ?? null,
    file: options.file ?? null,
    line: options.line ?? null,
    endLine: options.endLine ?? null,
    text,
  });
  if (options.json) printAnswer('comment', comment);
  else process.stdout.write(`Comment ${comment.id} left on session ${target.sessionId}: the next actor run is told, until it is resolved.\n`);
  return 0;
}

export async function resolveCommand(idOrPrefix: string, itemId: string, options: { reopen?: boolean }): Promise<number> {
  const target = await resolveTarget(idOrPrefix);
  await setResolved(target, itemId, !options.reopen);
  process.stdout.write(`${itemId} is ${options.reopen ? 'open again' : 'resolved'}.\n`);
  return 0;
}

export async function stageCommand(idOrPrefix: string, options: { iteration?: number; json?: boolean }): Promise<number> {
  const target = await resolveTarget(idOrPrefix);
  if (options.iteration !== undefined) assertIteration(target, options.iteration);
  const outcome = await stageChanges({ ...target, iteration: options.iteration ?? null });
  printOutcome(outcome, options.json && 'stage');
  return ACTION_EXIT_CODES[outcome.result];
}

/** The outcome as the command's answer (`json`: which command), or in words. */
function printOutcome(outcome: ReviewActionOutcome, json: 'reject' | 'stage' | false | undefined): void {
  if (json) {
    printAnswer(json, outcome);
    return;
  }
  const color = colorEnabled(process.stdout);
  const ok = outcome.result === 'rejected' || outcome.result === 'rejection_undone' || outcome.result === 'staged';
  const lines = [paint(sanitizeForTerminal(outcome.message), ok ? 'success' : outcome.result === 'nothing_to_do' ? 'info' : 'error', color)];
  for (const file of outcome.result === 'conflict' ? outcome.conflicts : outcome.files) lines.push(`  ${sanitizeForTerminal(file)}`);
  if (outcome.result === 'rejected') lines.push(`Undo it with: codeloops reject --undo ${outcome.session_id} --id ${outcome.id}`);
  process.stdout.write(lines.join('\n') + '\n');
}
