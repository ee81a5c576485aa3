import { describeChecks } from '../checks/checkReport.js';
import type { CheckResult } from '../checks/runCheck.js';
import type { ReviewItems } from '../sessionFormat/reviewRecords.js';
import {
  protectedChangeText,
  requirementLine,
  type ProtectedChange,
  type ProtectedChangeStatus,
  type RequirementStatus,
} from '../sessionFormat/verification.js';
import type { NestedRepository } from '../sessionFormat/runEvents.js';
import { fence } from '../text/fence.js';
import { inLocation } from '../text/humanize.js';
import { truncateMiddle } from '../text/truncate.js';

export interface CriticPromptInput {
  task: string;
  iteration: number;
  maxIterations: number | null;
  actorTranscript: string;
  actorStderr: string;
  actorExitCode: number;
  /** Why the actor's run did not succeed by its own account, if it did not. */
  actorFailure: string | null;
  diff: string;
  filesChanged: number;
  insertions: number;
  deletions: number;
  /** Paths changed since the loop started, for context beyond this iteration. */
  changedSinceStart: string[];
  /** Folders that became nested repositories since the loop started, and in which iteration (null: before this run, in the session it carries on). */
  nestedRepositories?: readonly AppearedRepository[];
  previousFeedback: string | null;
  /** The project's checks, run on the tree under review. */
  checks: readonly CheckResult[];
  /** Open findings and user comments (with whether the actor says it addressed them), and the changes the user rejected this round. */
  reviewItems?: ReviewItems;
  /** The actor's changes to what the checks rest on that stand on this tree, against the task's first tree. */
  protectedChanges?: readonly { change: ProtectedChange; status: ProtectedChangeStatus; reason?: string | null }[];
  /** The task's requirements with their latest statuses; null: the task lists none, the critic is to list them; absent: not verified. */
  requirements?: readonly RequirementStatus[] | null;
}

export type AppearedRepository = NestedRepository & { iteration: number | null };

/**
 * How much of each part the critic sees. Head and tail are kept, cut on character
 * boundaries: the end of the actor's output says how it finished.
 */
const LIMITS = { transcript: 24_000, stderr: 4_000, diff: 48_000, task: 16_000, feedback: 8_000, paths: 60 };

export const DECISION_CONTRACT = `Finish your answer with exactly one decision block, as the very last thing you write, in one of these three forms:

<decision>{"type":"done","summary":"<what was accomplished>","confidence":<0.0 to 1.0>}</decision>
<decision>{"type":"continue","feedback":"<what the actor must do next, concretely>","remaining_issues":["<issue>", "…"]}</decision>
<decision>{"type":"error","error_description":"<what went wrong>","recovery_suggestion":"<how the actor can recover>"}</decision>

- "done": every requirement of the task is met and the change works. Do not accept partial work.
- "continue": work remains or something is wrong with the change; say exactly what to fix.
- "error": the actor could not work (it crashed, timed out, was blocked) or broke the project; say how to recover.

When you cannot judge or the work cannot go on without the user (a secret or an account nobody has given, a product decision only they can make, the actor says it is stuck on one), do not guess and do not send the actor round again: ask the user, in one short question they can answer in a line, with this block instead:
<decision>{"type":"blocked","question":"<the one question for the user>"}</decision>

Any of the three may also carry, inside the same JSON object:
- "findings": problems in the code, each where it is: [{"file":"src/a.ts","line":42,"end_line":44,"severity":"error","message":"…"}] (file relative to the repository, lines in the file as it is now, severity "error", "warning" or "info").
- "resolved": ids of earlier review items (such as "F2.1" or "U3.1") that are now truly dealt with.
- "requirements": each requirement of the task, judged: [{"id":"REQ1","text":"<the requirement>","met":true,"evidence":"<a check that passed, a command you ran and its result, or a file and line>"}]. Evidence is checked against the record (the checks' results, the commands you ran, the files): evidence that cannot be checked counts as none, and "done" is refused while a requirement is unmet or has none.
A "done" when no file changed since the loop started also needs "no_change_needed": true, and evidence that the task truly needs no change: run the command that shows it (the tests, the program).
The JSON must be valid: double quotes, no trailing commas, no comments.`;

export function buildCriticPrompt(input: CriticPromptInput): string {
  const limit = input.maxIterations === null ? 'no iteration limit' : `at most ${input.maxIterations} iterations`;
  const actorStatus = input.actorFailure
    ? `The actor's run did not succeed: ${input.actorFailure} (exit code ${input.actorExitCode}).`
    : `The actor's run finished normally (exit code ${input.actorExitCode}).`;
  const changeSummary = `${input.filesChanged} file${input.filesChanged === 1 ? '' : 's'} changed, +${input.insertions} −${input.deletions}`;
  const sinceStart =
    input.changedSinceStart.length === 0
      ? 'No files have changed since the loop started.'
      : input.changedSinceStart.slice(0, LIMITS.paths).join('\n') +
        (input.changedSinceStart.length > LIMITS.paths ? `\n… and ${input.changedSinceStart.length - LIMITS.paths} more` : '');
  return `You are the critic in an actor–critic coding loop. An actor agent was given the task below and has just finished iteration ${input.iteration} (${limit}) in this repository. Decide whether the task is now complete.

Judge from the evidence below and by inspecting the repository yourself: read the changed files, and run the tests or the build if that helps you judge. Do not modify, create or delete any file: you review, the actor fixes. Any change you make is reverted.

## Task
${truncateMiddle(input.task, LIMITS.task)}

## Your feedback from the previous iteration
${input.previousFeedback ? truncateMiddle(input.previousFeedback, LIMITS.feedback) : 'None: this is the first review.'}

## What the actor reported
${actorStatus}

${fence(truncateMiddle(input.actorTranscript.trim(), LIMITS.transcript) || '(no output)')}

## The actor's stderr
${input.actorStderr.trim() ? fence(truncateMiddle(input.actorStderr.trim(), LIMITS.stderr)) : '(empty)'}

## Changes in this iteration (${changeSummary})
${input.diff.trim() ? fence(truncateMiddle(input.diff, LIMITS.diff), 'diff') : 'The actor changed no files in this iteration.'}

## Files changed since the loop started
${sinceStart}
${input.nestedRepositories?.length ? nestedRepositoriesSection(input.nestedRepositories, input.iteration) : ''}${input.checks.length > 0 ? checksSection(input.checks) : ''}${input.protectedChanges?.length ? protectedChangesSection(input.protectedChanges) : ''}${input.requirements !== undefined ? requirementsSection(input.requirements) : ''}${input.reviewItems ? reviewItemsSection(input.reviewItems) : ''}
## Your answer
${DECISION_CONTRACT}
`;
}

/**
 * What a second request repeats for a critic whose agent keeps no session (it cannot
 * resume one, or the first run left none): it remembers nothing, so it is given the
 * whole review again (the prompt of its first run) and the end of its answer. Null:
 * the request goes to its own session, which remembers both.
 */
export interface FreshRequest {
  reviewPrompt: string;
  answerTail: string | null;
}

/** Asks once more, briefly, when the critic's answer could not be read. */
export function buildRepairPrompt(problem: string, fresh: FreshRequest | null): string {
  return secondRequest(fresh, `Your review could not be recorded: ${problem}.`, 'Reply with nothing but the decision block for your review');
}

/**
 * A second request after the first answer: in the critic's own session, the request
 * and the contract; in a fresh run, the whole review, the end of its answer, then the request.
 */
function secondRequest(fresh: FreshRequest | null, why: string, reply: string): string {
  if (!fresh) return `${why}\n\n${reply}, in exactly this format:\n\n${DECISION_CONTRACT}\n`;
  const quoted = fresh.answerTail ? `The end of your answer was:\n${fence(fresh.answerTail)}` : 'Your answer said nothing.';
  return `${fresh.reviewPrompt}
## Asked again
You were given this review once already. ${quoted}

${why}

${reply}, in the format above, as the very last thing you write.
`;
}

/**
 * The checklist to judge, each requirement with how it stood last time; or, when the
 * task lists none, the ask to list them: this first list is the checklist from then on.
 */
function requirementsSection(requirements: readonly RequirementStatus[] | null): string {
  if (requirements === null) {
    return `
## The task's requirements
The task gives no list of requirements. List them in "requirements", numbered "REQ1", "REQ2"…, each a thing the task asks for that can be checked, and judge each: this list is the checklist for the rest of the loop.
`;
  }
  return `
## The task's requirements
Judge each of these in "requirements" (by its id), with evidence: a check that passed on this tree, a command you ran and its result, or a file and line. Where each stood at the last review:
${requirements.map((requirement) => `- ${requirementLine(requirement)}`).join('\n')}
`;
}

/**
 * Asks once, briefly, for a CONTINUE that names nothing concrete: a critic that
 * rejects correct work on a vague feeling costs an iteration as surely as one that
 * accepts broken work.
 */
export function buildSpecificPrompt(fresh: FreshRequest | null): string {
  return secondRequest(
    fresh,
    'Your review asks for more work but names nothing concrete: no remaining issue, no requirement of the task that is not met, no failing check, no finding with a file and line, no protected change.\n\n' +
      'Be specific: name what is left in "remaining_issues", each requirement that is not met (in "requirements", with "met": false and why), or where the problem is (in "findings", with the file and line). If you find nothing concrete wrong, the work may be done: say so with "done".',
    'Reply with nothing but your decision block',
  );
}

/** The review items still open, the user's own word first. */
function reviewItemsSection(items: ReviewItems): string {
  const lines: string[] = [];
  const claim = (claimed: boolean) => (claimed ? ' [the actor says it addressed this]' : '');
  for (const comment of items.comments) {
    lines.push(`- ${comment.id} (from the user)${inLocation(comment.file, comment.line, comment.end_line)}: ${comment.text}${claim(comment.claimed)}`);
  }
  for (const rejection of items.rejections) {
    lines.push(
      `- ${rejection.id} (from the user): rejected a change of iteration ${rejection.iteration} in ${rejection.file}${rejection.reason ? ` because: ${rejection.reason}` : ''}; it was undone before this iteration.`,
    );
  }
  for (const finding of items.findings) {
    lines.push(
      `- ${finding.id} (your finding, ${finding.severity})${finding.anchored ? inLocation(finding.file, finding.line, finding.end_line) : ''}: ${finding.message}${claim(finding.claimed)}`,
    );
  }
  if (lines.length === 0) return '';
  return `
## Open review items
${lines.join('\n')}

Check each against the code as it is now. List in "resolved" the ids of the findings and user comments that are dealt with; the rest stay open and go back to the actor. Do not answer "done" while a comment from the user is still open.
`;
}

/**
 * Folders the diffs cannot show: a nested repository (its own `.git` folder or file) is
 * recorded as the commit it is at, whatever its files say. The critic reads them itself.
 */
function nestedRepositoriesSection(repositories: readonly AppearedRepository[], iteration: number): string {
  const lines = repositories.slice(0, LIMITS.paths).map((nested) => {
    const when = nested.iteration === iteration ? 'in this iteration' : nested.iteration === null ? 'before this run' : `in iteration ${nested.iteration}`;
    const state = nested.commit === null ? 'no commit yet: git leaves it out' : `at commit ${nested.commit.slice(0, 7)}`;
    return `- ${nested.path}/ (appeared ${when}, ${state})`;
  });
  if (repositories.length > LIMITS.paths) lines.push(`… and ${repositories.length - LIMITS.paths} more`);
  return `
## Nested repositories
Since the loop began, these folders became git repositories of their own (each has a \`.git\` folder or a \`.git\` file). git records only the commit a nested repository is at, never its files: whatever was written in them is in none of the diffs above, and a rollback leaves them as they are.
${lines.join('\n')}
Read their files yourself and judge them as part of the change.
`;
}

/**
 * Facts, not opinions: what the actor did to the tests, to what the checks run, to CI
 * or to codeloops.toml. The critic must address each; a weakening nobody accepted
 * refuses DONE whatever it decides.
 */
function protectedChangesSection(changes: NonNullable<CriticPromptInput['protectedChanges']>): string {
  const lines = changes.map(({ change, status, reason }) => {
    const standing =
      status === 'weakening'
        ? 'not accepted'
        : status === 'accepted'
          ? `accepted by the user${reason ? `: ${reason}` : ''}`
          : status === 'hint'
            ? "the start's tests will be run on the final code: a test this change hides still counts"
            : 'allowed: the task is about the tests';
    return `- ${protectedChangeText(change)} [${standing}]`;
  });
  const refusing = changes.some((each) => each.status === 'weakening');
  return `
## Changes to what the checks rest on
Since the loop began, the actor changed files the checks and tests rest on. These are facts from the tree, not the actor's account: address each one. Is it what the task asks for, or does it make the checks pass without making the work right?
${lines.join('\n')}
${refusing ? '\nA change that is not accepted keeps the loop from ending with "done" until it is restored or the user accepts it.\n' : ''}`;
}

/** The checks' results: evidence, and a limit on "done" (a required check that fails keeps the loop going, whatever the verdict). */
function checksSection(checks: readonly CheckResult[]): string {
  const failedRequired = checks.filter((check) => check.required && !check.passed).length;
  return `
## The project's checks, run on this tree
${describeChecks(checks)}
${failedRequired > 0 ? `\nA required check fails: the loop will not end with "done" until it passes, whatever you decide. Say what the actor must fix.\n` : ''}`;
}
