import { fence } from '../text/fence.js';
import { takeTail } from '../text/truncate.js';
import type { CheckResult } from './runCheck.js';

/** How much of a check's output is quoted to an agent: its end, where failures are summed up. */
const QUOTED_OUTPUT_CHARS = 2_000;

/** How a check ended, in words. */
export function outcomeOf(check: CheckResult): string {
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
 * with these, such as a refused DONE's feedback) quotes that output already.
 */
export function describeChecks(checks: readonly CheckResult[], quotedIn = ''): string {
  return checks
    .map((check) => {
      if (check.passed) return checkLine(check);
      const quote = quotedOutput(check);
      return quotedIn.includes(quote) ? `${checkLine(check)} (its output is quoted above)` : `${checkLine(check)}\n${quote}`;
    })
    .join('\n');
}
