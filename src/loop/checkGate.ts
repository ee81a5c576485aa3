import { acceptanceNote, describeChecks, outcomeOf } from '../checks/checkReport.js';
import type { CheckResult } from '../checks/runCheck.js';
import type { CriticDecision } from '../critic/criticDecision.js';
import { testFindingText, type TestFinding } from '../sessionFormat/testResults.js';
import { protectedChangeText, protectedKindText, type ProtectedChange, type RequirementStatus, type UnverifiedDone } from '../sessionFormat/verification.js';

/** What a DONE rests on besides the checks, when the run is verified. */
export interface DoneEvidence {
  /** The weakenings of protected files that stand, not accepted. */
  weakened: readonly ProtectedChange[];
  /** Why nothing but the critic's word stands behind it: nothing changed and no evidence the task needs no change, or no evidence at all (`require_evidence`); null when something does. */
  unverified: UnverifiedDone | null;
  /** The task's requirements unmet or without evidence the record confirms (none without a checklist). */
  unmetRequirements?: readonly RequirementStatus[];
  /** The start's tests the final code does not pass, as the oracle found them (none without an oracle). */
  failedTests?: readonly TestFinding[];
}

export interface GateResult {
  /** The decision that counts: the critic's, unless it said DONE while a required check failed or a weakening stood. */
  decision: CriticDecision;
  /** True when the critic's DONE was refused. */
  refused: boolean;
  failedRequired: CheckResult[];
  /** The weakenings of protected files that refused it. */
  weakened: ProtectedChange[];
  unverified: UnverifiedDone | null;
  /** The requirements that refused it. */
  unmetRequirements: RequirementStatus[];
  /** The start's tests that refused it. */
  failedTests: TestFinding[];
}

/**
 * DONE needs evidence: when a required check failed on the iteration's tree, or the
 * actor weakened what the checks rest on (a test deleted or skipped, a check's
 * command changed) and nobody accepted it, the critic's DONE does not end the loop.
 * The iteration counts as CONTINUE, with feedback that names what failed and what
 * was weakened.
 */
export function checkGate(decision: CriticDecision, checks: readonly CheckResult[], evidence: DoneEvidence = { weakened: [], unverified: null }): GateResult {
  const failedRequired = checks.filter((check) => check.required && !check.passed);
  const weakened = [...evidence.weakened];
  const unverified = decision.kind === 'DONE' ? evidence.unverified : null;
  const unmetRequirements = [...(evidence.unmetRequirements ?? [])];
  const failedTests = [...(evidence.failedTests ?? [])];
  const nothingAgainst =
    failedRequired.length === 0 && weakened.length === 0 && unverified === null && unmetRequirements.length === 0 && failedTests.length === 0;
  if (decision.kind !== 'DONE' || nothingAgainst) {
    return { decision, refused: false, failedRequired, weakened, unverified: null, unmetRequirements: [], failedTests: [] };
  }
  const parts = [
    failedRequired.length > 0 ? checksFeedback(failedRequired) : null,
    failedTests.length > 0 ? testFindingsFeedback(failedTests) : null,
    weakened.length > 0 ? weakenedFeedback(weakened) : null,
    unverified ? UNVERIFIED_FEEDBACK[unverified] : null,
    unmetRequirements.length > 0 ? unmetFeedback(unmetRequirements) : null,
  ].filter(Boolean);
  return {
    refused: true,
    failedRequired,
    weakened,
    unverified,
    unmetRequirements,
    failedTests,
    decision: {
      kind: 'CONTINUE',
      feedback: `The reviewer judged the work done, but it is not done yet.\n\n${parts.join('\n\n')}`,
      remainingIssues: [
        ...failedRequired.map((check) => `the ${check.name} check ${outcomeOf(check)}`),
        ...failedTests.map((finding) => `the start's test ${testFindingText(finding)} on the final code`),
        ...weakened.map((change) => `restore ${change.file} (${protectedKindText(change.kind)}) or justify the change`),
        ...(unverified ? [UNVERIFIED_ISSUE[unverified]] : []),
        ...unmetRequirements.map(
          (requirement) => `${requirement.id} ${requirement.met === false ? 'is not met' : 'has no evidence the record confirms'}: ${requirement.text}`,
        ),
      ],
    },
  };
}

const UNVERIFIED_FEEDBACK: Readonly<Record<UnverifiedDone, string>> = {
  no_change:
    'Nothing has changed since the loop started. Most tasks said to need no change do need one: make the change the task asks for. ' +
    'If it truly needs none, the reviewer must say so ("no_change_needed") and show it with a command that proves it, or a check must pass.',
  no_evidence: 'Nothing verified it: no required check passed on this tree and the reviewer ran no command that succeeded. Evidence is required for DONE here.',
};

const UNVERIFIED_ISSUE: Readonly<Record<UnverifiedDone, string>> = {
  no_change: 'nothing changed since the loop started',
  no_evidence: 'no evidence that the work is right (a passing check or a command the reviewer ran)',
};

/**
 * Whether a DONE rests on more than the critic's word: a required check passed on
 * the tree, the critic ran a command that succeeded on it, or the start's tests passed on it.
 */
export function isVerified(checks: readonly CheckResult[], criticRanSuccessfully: boolean, startTestsPassed = false): boolean {
  return criticRanSuccessfully || startTestsPassed || checks.some((check) => check.required && check.passed);
}

/** The refusal's words for the actor and the critic: each start test the final code does not pass, with the runner's own output. */
function testFindingsFeedback(findings: readonly TestFinding[]): string {
  const shown = findings.slice(0, 10).map((finding) => {
    const said = finding.message.trim() ? `\n${indentLines(finding.message.trim().split('\n').slice(0, 12).join('\n'))}` : '';
    return `- ${testFindingText(finding)}${said}`;
  });
  const more = findings.length > 10 ? `\n- … and ${findings.length - 10} more` : '';
  return (
    "The project's tests as they were when the loop started were run on the final code, with the start's test files and test configuration " +
    `put back and a clean environment. ${findings.length === 1 ? 'This one does' : `These ${findings.length} do`} not pass:\n${shown.join('\n')}${more}\n\n` +
    'Make the code pass them. If the task truly changes what one of them expects, say which and why in your report: the user can accept it.'
  );
}

function indentLines(text: string): string {
  return text.replace(/^/gm, '    ');
}

function checksFeedback(failedRequired: readonly CheckResult[]): string {
  const one = failedRequired.length === 1;
  return `${one ? 'A required check fails' : `${failedRequired.length} required checks fail`} on this tree. Make ${one ? 'it' : 'them'} pass.\n\n${describeChecks(failedRequired)}${acceptanceNote(failedRequired)}`;
}

/** What the actor weakened, and the two ways on: put it back, or say why the task needs it (the user can accept it). */
export function weakenedFeedback(weakened: readonly ProtectedChange[]): string {
  return (
    `These changes weaken what the checks rest on (judged against the tree the loop started from):\n${weakened.map((change) => `- ${protectedChangeText(change)}`).join('\n')}\n\n` +
    'Restore them. If the task truly needs one of them, say why in your report: the user can accept it.'
  );
}

/** The requirements that keep DONE from standing (the checklist itself is shown beside the feedback), and what counts as evidence for one. */
function unmetFeedback(unmet: readonly RequirementStatus[]): string {
  const ids = unmet.map((requirement) => requirement.id).join(', ');
  return (
    `Not every requirement of the task is met with evidence: ${ids} ${unmet.length === 1 ? 'is' : 'are'} not. Meet each. ` +
    'Evidence counts only when the record confirms it: a check that passed on this tree, a command the reviewer ran that succeeded, a file and line that exist.'
  );
}
