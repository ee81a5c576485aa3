import { feedbackText, type ParsedDecision } from '../critic/criticDecision.js';
import type { CriticPromptInput } from '../critic/criticPrompt.js';
import type { ReviewItems } from '../sessionFormat/reviewRecords.js';
import type { FeedbackRecord } from './actorPrompt.js';
import type { IterationWork } from './iterationWork.js';
import type { LoopRequest } from './loopRequest.js';

/** What the critic is shown of an iteration: the actor's run, its change, the checks, the protected changes, the open review items. */
export type CriticEvidence = Pick<IterationWork, 'actor' | 'change' | 'checks' | 'protection'> & { openItems: ReviewItems };

/** The critic's prompt for an iteration: the task, the evidence, the last feedback and (when the run is verified) the requirements as last judged. */
export function criticPromptInput(
  task: Pick<LoopRequest, 'prompt' | 'maxIterations'>,
  iteration: number,
  evidence: CriticEvidence,
  earlier: { previous: FeedbackRecord | undefined; requirements?: CriticPromptInput['requirements'] },
): CriticPromptInput {
  const { actor, change, checks, protection, openItems } = evidence;
  return {
    task: task.prompt,
    iteration,
    maxIterations: task.maxIterations,
    actorTranscript: actor.transcript,
    actorStderr: actor.stderr,
    actorExitCode: actor.exitCode,
    actorFailure: actor.succeeded ? null : actor.failureReason,
    diff: change.diff.diff,
    filesChanged: change.diff.filesChanged,
    insertions: change.diff.insertions,
    deletions: change.diff.deletions,
    changedSinceStart: change.sinceStart,
    nestedRepositories: change.nestedRepositories,
    previousFeedback: earlier.previous ? feedbackText(earlier.previous.decision) : null,
    checks,
    protectedChanges: protection.standing,
    reviewItems: openItems,
    // Absent when the run is not verified; null when the task lists none and the critic is to list them.
    ...(earlier.requirements !== undefined && { requirements: earlier.requirements }),
  };
}

/**
 * Whether a CONTINUE names what is left (a remaining issue, an unmet requirement, a
 * finding), keeps a review item open (the user's comment or rejection, an earlier
 * finding it did not resolve), or stands on a failing check or a protected change:
 * else the critic is asked to be specific.
 */
export function namesSomethingConcrete(continued: ParsedDecision, evidence: Pick<CriticEvidence, 'checks' | 'protection' | 'openItems'>): boolean {
  const { findings, comments, rejections } = evidence.openItems;
  const stillOpen = [...findings, ...comments, ...rejections].some((item) => !continued.resolved.includes(item.id));
  return (
    (continued.decision.kind === 'CONTINUE' && continued.decision.remainingIssues.length > 0) ||
    continued.requirements.some((requirement) => requirement.met === false) ||
    continued.findings.length > 0 ||
    stillOpen ||
    evidence.checks.some((check) => !check.passed) ||
    evidence.protection.weakened.length > 0
  );
}
