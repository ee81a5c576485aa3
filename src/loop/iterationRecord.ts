import { feedbackText, type CriticDecision } from '../critic/criticDecision.js';
import type { Finding } from '../sessionFormat/reviewRecords.js';
import type { RequirementStatus } from '../sessionFormat/verification.js';
import type { SessionWriter } from '../sessionWriter/sessionWriter.js';
import type { EmitEvent, IterationWork } from './iterationWork.js';

/** What of the critic's verdict is recorded: its findings anchored, the items it resolved, the requirements left unmet. */
export interface Critique {
  findings: Finding[];
  resolved: string[];
  unmetRequirements: RequirementStatus[];
}

/**
 * Records an iteration whose decision is known: the `critic_decision` event (and
 * `needs_input` when it asks the user), the session's iteration line, then
 * `iteration_finished`.
 */
export function writeIterationRecord(
  writer: SessionWriter,
  emit: EmitEvent,
  iteration: number,
  work: IterationWork,
  decision: CriticDecision,
  critique: Critique,
): void {
  const { actor, verdict, reverted } = work;
  const { diff } = work.change;
  const remainingIssues = decision.kind === 'CONTINUE' ? decision.remainingIssues : [];
  const failedChecks = work.checks.filter((check) => !check.passed).map((check) => check.name);
  const needsInput = decision.kind === 'CONTINUE' ? decision.needsInput : undefined;
  emit({
    type: 'critic_decision',
    iteration,
    decision: decision.kind,
    feedback: feedbackText(decision),
    summary: decision.kind === 'DONE' ? decision.summary : null,
    confidence: decision.kind === 'DONE' ? decision.confidence : null,
    remaining_issues: remainingIssues,
    source: verdict.source,
    critic_output: verdict.answer,
    findings: critique.findings,
    resolved: critique.resolved,
    evidence: verdict.evidence,
    ...(needsInput && { needs_input: needsInput }),
  });
  if (needsInput) emit({ type: 'needs_input', iteration, ...needsInput });
  writer.writeIteration({
    iteration_number: iteration,
    actor_output: actor.transcript,
    actor_stderr: actor.stderr,
    actor_exit_code: actor.exitCode,
    actor_duration_secs: actor.durationSecs,
    git_diff: diff.diff,
    git_files_changed: diff.filesChanged,
    critic_decision: decision.kind,
    feedback: feedbackText(decision),
    git_insertions: diff.insertions,
    git_deletions: diff.deletions,
    // Extra fields that say nothing are left out, as other writers leave them out.
    remaining_issues: remainingIssues.length > 0 ? remainingIssues : undefined,
    critic_reverted_files: reverted.length > 0 ? reverted : undefined,
    failed_checks: failedChecks.length > 0 ? failedChecks : undefined,
    critic_verdict: decision.kind === verdict.decision.kind ? undefined : verdict.decision.kind,
    protected_changes: work.protection.weakened.length > 0 ? work.protection.weakened : undefined,
    findings: critique.findings.length > 0 ? critique.findings : undefined,
    unmet_requirements: critique.unmetRequirements.length > 0 ? critique.unmetRequirements : undefined,
    needs_input: needsInput,
  });
  emit({ type: 'iteration_finished', iteration, decision: decision.kind });
}
