import { describeChecks } from '../checks/checkReport.js';
import type { CheckResult } from '../checks/runCheck.js';
import type { CriticDecision } from '../critic/criticDecision.js';
import { previewLine } from '../text/truncate.js';
import type { Stall } from './stallDetector.js';

export interface FeedbackRecord {
  iteration: number;
  decision: CriticDecision;
  /** The checks that failed on that iteration's tree, when it ran any. */
  failedChecks?: readonly CheckResult[];
}

/**
 * What the actor is told after the first iteration: the original task, the
 * critic's latest feedback and its remaining issues, the checks that fail, a line
 * for each earlier round so it does not lose the thread, and, when the loop is going
 * in circles, that it is.
 */
export function buildContinuationPrompt(task: string, history: readonly FeedbackRecord[], nextIteration: number, stall: Stall | null = null): string {
  const latest = history.at(-1);
  if (!latest && !stall) return task;
  const earlier = history.slice(0, -1);
  const parts: string[] = [
    `You are continuing work on a task in this repository (iteration ${nextIteration}). A reviewer checked your previous work; address its feedback.`,
    `## Task\n${task}`,
  ];
  if (stall) {
    parts.push(
      `## You are going in circles\nSince iteration ${stall.since}, ${stall.reason}. Doing the same again will not work: step back, find out why the previous attempts failed, and change your approach. If the loop makes no progress again, it is stopped.`,
    );
  }
  if (!latest) return parts.join('\n\n');
  const decision = latest.decision;
  if (decision.kind === 'CONTINUE') {
    parts.push(`## Reviewer feedback on iteration ${latest.iteration}\n${decision.feedback}`);
    if (decision.remainingIssues.length > 0) {
      parts.push(`## Remaining issues\n${decision.remainingIssues.map((issue) => `- ${issue}`).join('\n')}`);
    }
  } else if (decision.kind === 'ERROR') {
    parts.push(`## Problem in iteration ${latest.iteration}\n${decision.description}`);
    if (decision.recovery) parts.push(`## How to recover\n${decision.recovery}`);
  }
  const failing = latest.failedChecks ?? [];
  if (failing.length > 0) parts.push(`## Checks that fail on your work\n${describeChecks(failing)}`);
  if (earlier.length > 0) {
    const lines = earlier.map((record) => `- Iteration ${record.iteration}: ${oneLine(record.decision)}`);
    parts.push(`## Earlier feedback (already addressed, for context)\n${lines.join('\n')}`);
  }
  parts.push('When you are done, say briefly what you changed.');
  return parts.join('\n\n');
}

function oneLine(decision: CriticDecision): string {
  const text = decision.kind === 'CONTINUE' ? decision.feedback : decision.kind === 'ERROR' ? decision.description : decision.summary;
  return previewLine(text, 300);
}
