import type { CriticDecision } from '../critic/criticDecision.js';
import { previewLine } from '../text/truncate.js';

export interface FeedbackRecord {
  iteration: number;
  decision: CriticDecision;
}

/**
 * What the actor is told after the first iteration: the original task, the
 * critic's latest feedback and its remaining issues, and a line for each earlier
 * round so it does not lose the thread.
 */
export function buildContinuationPrompt(task: string, history: readonly FeedbackRecord[], nextIteration: number): string {
  const latest = history.at(-1);
  if (!latest) return task;
  const earlier = history.slice(0, -1);
  const parts: string[] = [
    `You are continuing work on a task in this repository (iteration ${nextIteration}). A reviewer checked your previous work; address its feedback.`,
    `## Task\n${task}`,
  ];
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
