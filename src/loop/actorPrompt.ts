import { describeChecks } from '../checks/checkReport.js';
import type { CheckResult } from '../checks/runCheck.js';
import type { CriticDecision } from '../critic/criticDecision.js';
import type { ReviewItems } from '../sessionFormat/reviewRecords.js';
import { fence } from '../text/fence.js';
import { inLocation } from '../text/humanize.js';
import { isWithinRanges, quotedRanges } from '../text/quotedMarkdown.js';
import { previewLine } from '../text/truncate.js';
import { requirementLine, type ProtectedChange, type RequirementStatus } from '../sessionFormat/verification.js';
import { weakenedFeedback } from './checkGate.js';
import type { Stall } from './stallDetector.js';

export interface FeedbackRecord {
  iteration: number;
  decision: CriticDecision;
  /** The checks that failed on that iteration's tree, when it ran any. */
  failedChecks?: readonly CheckResult[];
  /** The weakenings of protected files that stood on it, not accepted. */
  weakened?: readonly ProtectedChange[];
  /** The task's requirements as the critic judged them on it, each one's evidence checked. */
  requirements?: readonly RequirementStatus[];
  /** When its decision asked the user (`needsInput`): what they answered, given to the next actor as their words. */
  answer?: string;
}

/**
 * How the actor learns that it may ask the user. Said in every prompt after the
 * first: the first is the task exactly as the user wrote it, and an actor stuck on
 * its first run says so in its answer, which the critic reads and can ask about
 * (`blocked`). An actor that ends with the tag is heard in any iteration.
 */
const MAY_ASK =
  'If you cannot go on without the user (a secret or an account you were not given, a decision only they can make), do not guess: end your answer with `<needs_input>your one question</needs_input>`, as the last thing you write and outside any code block, and the loop asks them and gives you their answer.';

const OPEN_TAG = '<needs_input>';
const CLOSE_TAG = '</needs_input>';

/**
 * The question an actor's answer ends with (`<needs_input>…</needs_input>`), or null
 * when it asks nothing. Only the tag that ends the answer asks (an `Addressed:` line,
 * which the prompt also asks for at the end, may follow it), and only outside code,
 * HTML comments and block quotes: a tag the actor quotes (explaining it, pasting a
 * log, in the middle of its report) would stop the loop with a question nobody asked.
 */
export function actorQuestion(answer: string): string | null {
  const end = endOfLastWords(answer);
  const close = end - CLOSE_TAG.length;
  if (close < 0 || answer.slice(close, end).toLowerCase() !== CLOSE_TAG) return null;
  const open = answer.toLowerCase().lastIndexOf(OPEN_TAG, close);
  if (open < 0) return null;
  const quoted = quotedRanges(answer);
  if (isWithinRanges(open, quoted) || isWithinRanges(close, quoted)) return null;
  const question = answer.slice(open + OPEN_TAG.length, close).trim();
  return question ? question : null;
}

/** Where the answer's last words end: before trailing blanks and any trailing `Addressed:` lines (read apart, by `addressedClaims`). */
function endOfLastWords(answer: string): number {
  let end = blanksBefore(answer, answer.length);
  for (;;) {
    if (answer.slice(Math.max(0, end - CLOSE_TAG.length), end).toLowerCase() === CLOSE_TAG) return end;
    const lineStart = answer.lastIndexOf('\n', end - 1) + 1;
    if (lineStart === 0 || !/^\W*addressed\W*:/i.test(answer.slice(lineStart, end).trim())) return end;
    end = blanksBefore(answer, lineStart);
  }
}

/** Where the text before `end` stops being blank. */
function blanksBefore(text: string, end: number): number {
  let at = end;
  while (at > 0 && /\s/.test(text[at - 1]!)) at--;
  return at;
}

/**
 * What the actor is told after the first iteration: the original task, the
 * critic's latest feedback and its remaining issues, the checks that fail, a line
 * for each earlier round so it does not lose the thread, and, when the loop is going
 * in circles, that it is.
 */
export function buildContinuationPrompt(
  task: string,
  history: readonly FeedbackRecord[],
  nextIteration: number,
  stall: Stall | null = null,
  openItems: ReviewItems | null = null,
): string {
  const latest = history.at(-1);
  const reviewParts = openItems ? reviewItemSections(openItems) : [];
  if (!latest && !stall && reviewParts.length === 0) return task;
  const earlier = history.slice(0, -1);
  const parts: string[] = [
    `You are continuing work on a task in this repository (iteration ${nextIteration}). Your previous work was reviewed; address the review.`,
    `## Task\n${task}`,
  ];
  // The user's word comes first: they are who the work is for.
  const needs = latest?.decision.kind === 'CONTINUE' ? latest.decision.needsInput : undefined;
  if (latest && needs) parts.push(answerSection(needs, latest.answer));
  parts.push(...reviewParts.filter((part) => part.from === 'user').map((part) => part.text));
  if (stall) {
    parts.push(
      `## You are going in circles\nSince iteration ${stall.since}, ${stall.reason}. Doing the same again will not work: step back, find out why the previous attempts failed, and change your approach. If the loop makes no progress again, it is stopped.`,
    );
  }
  const decision = latest?.decision;
  if (latest && decision?.kind === 'CONTINUE' && !needs) {
    parts.push(`## Reviewer feedback on iteration ${latest.iteration}\n${decision.feedback}`);
    if (decision.remainingIssues.length > 0) {
      parts.push(`## Remaining issues\n${decision.remainingIssues.map((issue) => `- ${issue}`).join('\n')}`);
    }
  } else if (latest && decision?.kind === 'ERROR') {
    parts.push(`## Problem in iteration ${latest.iteration}\n${decision.description}`);
    if (decision.recovery) parts.push(`## How to recover\n${decision.recovery}`);
  }
  const failing = latest?.failedChecks ?? [];
  // A refused DONE's feedback quotes the failed checks' output already: once is enough.
  const quotedIn = decision?.kind === 'CONTINUE' ? decision.feedback : '';
  if (failing.length > 0) parts.push(`## Checks that fail on your work\n${describeChecks(failing, quotedIn)}`);
  const weakened = latest?.weakened ?? [];
  // Said whatever the critic decided (a weakening refuses DONE until put back or accepted), once: a refused DONE's feedback already says it.
  const weakenedText = weakened.length > 0 ? weakenedFeedback(weakened) : '';
  if (weakenedText && !quotedIn.includes(weakenedText)) parts.push(`## What the checks rest on, weakened\n${weakenedText}`);
  const requirements = latest?.requirements ?? [];
  if (requirements.length > 0) parts.push(`## The task's requirements\n${requirements.map((requirement) => `- ${requirementLine(requirement)}`).join('\n')}`);
  parts.push(...reviewParts.filter((part) => part.from === 'critic').map((part) => part.text));
  if (earlier.length > 0) {
    const lines = earlier.map((record) => `- Iteration ${record.iteration}: ${oneLine(record.decision)}`);
    parts.push(`## Earlier feedback (already addressed, for context)\n${lines.join('\n')}`);
  }
  parts.push(MAY_ASK);
  if (!latest && reviewParts.length === 0) return parts.join('\n\n');
  parts.push(
    reviewParts.length > 0
      ? 'When you are done, say briefly what you changed, and end with a line naming the review items you addressed, such as `Addressed: U3.1, F2.1`.'
      : 'When you are done, say briefly what you changed.',
  );
  return parts.join('\n\n');
}

/** What was asked of the user and their answer, verbatim: their words, not a summary of them. */
function answerSection(needs: NonNullable<Extract<CriticDecision, { kind: 'CONTINUE' }>['needsInput']>, answer: string | undefined): string {
  const asked = needs.from === 'actor' ? 'You asked the user' : needs.from === 'gate' ? 'Codeloops asked the user' : 'The reviewer asked the user';
  if (answer === undefined)
    return `## From the user (the person you work for)\n${asked}: ${needs.question}\nThey went on without answering: decide as best you can, and say what you decided.`;
  return `## From the user (the person you work for)\n${asked}: ${needs.question}\nTheir answer, in their words:\n${fence(answer)}`;
}

/** The review items the actor is to address: the user's comments and rejected changes, then the critic's open findings. */
function reviewItemSections(items: ReviewItems): { from: 'user' | 'critic'; text: string }[] {
  const sections: { from: 'user' | 'critic'; text: string }[] = [];
  const disputed = (claimed: boolean) => (claimed ? ' (you said you addressed this; the reviewer did not agree)' : '');
  const user: string[] = [];
  for (const comment of items.comments) {
    const on = comment.iteration === null ? '' : ` (on iteration ${comment.iteration})`;
    user.push(`- ${comment.id}${inLocation(comment.file, comment.line, comment.end_line)}${on}: ${comment.text}${disputed(comment.claimed)}`);
  }
  for (const rejection of items.rejections) {
    user.push(
      `- ${rejection.id}: the user rejected this change of iteration ${rejection.iteration} in ${rejection.file}${rejection.reason ? ` because: ${rejection.reason}` : ''}. It was undone; do not make it again${rejection.reason ? '' : ' as it was'}.\n${fence(rejection.patch, 'diff')}`,
    );
  }
  if (user.length > 0) sections.push({ from: 'user', text: `## From the user (the person you work for): address these first\n${user.join('\n')}` });
  if (items.findings.length > 0) {
    const lines = items.findings.map(
      (finding) =>
        `- ${finding.id}${finding.anchored ? inLocation(finding.file, finding.line, finding.end_line) : ''} (${finding.severity}): ${finding.message}${disputed(finding.claimed)}`,
    );
    sections.push({ from: 'critic', text: `## Reviewer findings still open\n${lines.join('\n')}` });
  }
  return sections;
}

function oneLine(decision: CriticDecision): string {
  const text = decision.kind === 'CONTINUE' ? decision.feedback : decision.kind === 'ERROR' ? decision.description : decision.summary;
  return previewLine(text, 300);
}
