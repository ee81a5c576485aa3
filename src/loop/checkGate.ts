import { describeChecks, outcomeOf } from '../checks/checkReport.js';
import type { CheckResult } from '../checks/runCheck.js';
import type { CriticDecision } from '../critic/criticDecision.js';
import { protectedChangeText, type ProtectedChange } from '../sessionFormat/protectedChanges.js';

export interface GateResult {
  /** The decision that counts: the critic's, unless it said DONE while a required check failed or a weakening stood. */
  decision: CriticDecision;
  /** True when the critic's DONE was refused. */
  refused: boolean;
  failedRequired: CheckResult[];
  /** The weakenings of protected files that refused it. */
  weakened: ProtectedChange[];
}

/**
 * DONE needs evidence: when a required check failed on the iteration's tree, or the
 * actor weakened what the checks rest on (a test deleted or skipped, a check's
 * command changed) and nobody accepted it, the critic's DONE does not end the loop.
 * The iteration counts as CONTINUE, with feedback that names what failed and what
 * was weakened.
 */
export function checkGate(decision: CriticDecision, checks: readonly CheckResult[], weakenings: readonly ProtectedChange[] = []): GateResult {
  const failedRequired = checks.filter((check) => check.required && !check.passed);
  const weakened = [...weakenings];
  if (decision.kind !== 'DONE' || (failedRequired.length === 0 && weakened.length === 0)) return { decision, refused: false, failedRequired, weakened };
  const parts = [failedRequired.length > 0 ? checksFeedback(failedRequired) : null, weakened.length > 0 ? weakenedFeedback(weakened) : null].filter(Boolean);
  return {
    refused: true,
    failedRequired,
    weakened,
    decision: {
      kind: 'CONTINUE',
      feedback: `The reviewer judged the work done, but it is not done yet.\n\n${parts.join('\n\n')}`,
      remainingIssues: [
        ...failedRequired.map((check) => `the ${check.name} check ${outcomeOf(check)}`),
        ...weakened.map((change) => `restore ${change.file} or justify the change (${change.kind})`),
      ],
    },
  };
}

function checksFeedback(failedRequired: readonly CheckResult[]): string {
  const one = failedRequired.length === 1;
  return `${one ? 'A required check fails' : `${failedRequired.length} required checks fail`} on this tree. Make ${one ? 'it' : 'them'} pass.\n\n${describeChecks(failedRequired)}`;
}

/** What the actor weakened, and the two ways on: put it back, or say why the task needs it (the user can accept it). */
export function weakenedFeedback(weakened: readonly ProtectedChange[]): string {
  return (
    `These changes weaken what the checks rest on (judged against the tree the loop started from):\n${weakened.map((change) => `- ${protectedChangeText(change)}`).join('\n')}\n\n` +
    'Restore them. If the task truly needs one of them, say why in your report: the user can accept it.'
  );
}
