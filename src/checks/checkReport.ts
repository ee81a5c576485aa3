import { fence } from '../text/fence.js';
import { takeTail } from '../text/truncate.js';
import type { CheckResult } from './runCheck.js';

/** How much of a check's output is quoted to an agent: its end, where failures are summed up. */
const QUOTED_OUTPUT_CHARS = 2_000;

/**
 * Exit 127 is the shell's "command not found". In a worktree Codeloops made (a
 * candidate's, an isolated check's) it nearly always means the dependencies installed
 * in the user's tree (node_modules, a virtual environment: files git does not track)
 * were never put there. Said once, here: appended to the check's output, it reaches the
 * user in the check's result and the agents in its quoted output, so that nobody
 * takes it for a fault of the work.
 */
export const MISSING_DEPENDENCIES_NOTE =
  '[codeloops: exit 127, a command was not found. This check ran in a worktree made from a snapshot of your tree, which holds only ' +
  'what git tracks: the dependencies installed in your tree (node_modules, a virtual environment) are likely missing there. ' +
  'Set [worktree] in codeloops.toml: copy = ["node_modules"] copies them into each worktree, or setup = "npm ci" (your install command) ' +
  'installs them. It is the worktree that lacks them, not the work that is wrong.]';

/** What an agent reads of an acceptance check that hit it: whether the worktree missed a command, never the command. */
const HIDDEN_MISSING_DEPENDENCIES =
  "it could not run: a command was not found in its worktree, whose dependencies are likely missing (the setup's fault, not the work's)";

const COMMAND_NOT_FOUND = 127;

/** A check's result run in a worktree Codeloops made: a command not found there gets the note above. */
export function noteMissingDependencies(result: CheckResult): CheckResult {
  if (result.exitCode !== COMMAND_NOT_FOUND || result.output.includes(MISSING_DEPENDENCIES_NOTE)) return result;
  const note = `\n${MISSING_DEPENDENCIES_NOTE}`;
  return { ...result, output: result.output + note, outputChars: result.outputChars + note.length };
}

/** How a check ended, in words: for an acceptance check, only whether it passed (its exit code or timing could hint at what it tests). */
export function outcomeOf(check: CheckResult): string {
  if (check.hidden) return check.passed ? 'passed' : 'failed';
  if (check.passed) return `passed in ${check.durationSecs.toFixed(1)} s`;
  if (check.timedOut) return `timed out after ${check.durationSecs.toFixed(0)} s and was stopped`;
  return check.exitCode === null ? 'stopped by a signal' : `failed with exit code ${check.exitCode}`;
}

/** A check as one line: its name, its command and how it ended. */
function checkLine(check: CheckResult): string {
  return `- ${check.passed ? '✓' : '✗'} ${check.name} (\`${check.command}\`): ${outcomeOf(check)}${check.required ? '' : ' (advisory: it does not block)'}`;
}

/** The end of a failed check's output, fenced, as an agent reads it. */
function quotedOutput(check: CheckResult): string {
  return fence(takeTail(check.output.trim(), QUOTED_OUTPUT_CHARS) || '(no output)');
}

/**
 * Check results as an agent reads them: each with its command and how it ended; a
 * failed one with the end of its output, unless `quotedIn` (text the agent reads
 * with these, such as a refused DONE's feedback) quotes that output already. An
 * acceptance check (hidden) by its name alone: its command, its output and the
 * files they name stay with the user.
 */
export function describeChecks(checks: readonly CheckResult[], quotedIn = ''): string {
  return checks
    .map((check) => {
      if (check.hidden) {
        const outcome = check.output.includes(MISSING_DEPENDENCIES_NOTE) ? `${outcomeOf(check)}; ${HIDDEN_MISSING_DEPENDENCIES}` : outcomeOf(check);
        return `- ${check.passed ? '✓' : '✗'} ${check.name} (an acceptance check: its command and output are not shown): ${outcome}`;
      }
      if (check.passed) return checkLine(check);
      const quote = quotedOutput(check);
      return quotedIn.includes(quote) ? `${checkLine(check)} (its output is quoted above)` : `${checkLine(check)}\n${quote}`;
    })
    .join('\n');
}

/** What an agent is told when an acceptance check fails, as a paragraph of its own: that it does, and how to take it; '' when none does. */
export function acceptanceNote(checks: readonly CheckResult[]): string {
  const failed = checks.filter((check) => check.hidden && !check.passed);
  if (failed.length === 0) return '';
  const names = failed.map((check) => check.name).join(', ');
  return `\n\n${failed.length === 1 ? `The acceptance check ${names} fails` : `The acceptance checks ${names} fail`}: the user's own tests of the task, kept from you on purpose. Do not look for them; make the work meet every requirement of the task as the user would test it, not only the tests you can see.`;
}
