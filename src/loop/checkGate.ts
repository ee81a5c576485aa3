import { acceptanceNote, describeChecks, outcomeOf } from '../checks/checkReport.js';
import type { CheckResult } from '../checks/runCheck.js';
import type { CriticDecision } from '../critic/criticDecision.js';

export interface GateResult {
  /** The decision that counts: the critic's, unless it said DONE while a required check failed. */
  decision: CriticDecision;
  /** True when the critic's DONE was refused. */
  refused: boolean;
  failedRequired: CheckResult[];
}

/**
 * DONE needs evidence: when a required check failed on the iteration's tree, the
 * critic's DONE does not end the loop. The iteration counts as CONTINUE, with
 * feedback that names the failed checks and quotes the end of their output.
 */
export function checkGate(decision: CriticDecision, checks: readonly CheckResult[]): GateResult {
  const failedRequired = checks.filter((check) => check.required && !check.passed);
  if (decision.kind !== 'DONE' || failedRequired.length === 0) return { decision, refused: false, failedRequired };
  const them = failedRequired.length === 1 ? 'it' : 'them';
  return {
    refused: true,
    failedRequired,
    decision: {
      kind: 'CONTINUE',
      feedback:
        `The reviewer judged the work done, but ${failedRequired.length === 1 ? 'a required check fails' : `${failedRequired.length} required checks fail`} ` +
        `on this tree, so it is not done yet. Make ${them} pass.\n\n${describeChecks(failedRequired)}${acceptanceNote(failedRequired)}`,
      remainingIssues: failedRequired.map((check) => `the ${check.name} check ${outcomeOf(check)}`),
    },
  };
}
