import * as z from './zod.js';

/**
 * Tests one by one, as a test runner's own machine-readable report gives them: the
 * records a check with a known runner keeps (`check_finished.tests`), the baseline a
 * loop takes on its start tree, and what the oracle found on the final code.
 */

/** The test runners whose reports Codeloops reads (`[[checks]] runner = "…"`). */
export const TEST_RUNNERS = ['pytest', 'mocha', 'jest', 'vitest', 'node', 'go', 'cargo'] as const;
export type TestRunner = (typeof TEST_RUNNERS)[number];

/**
 * One test's outcome in a report. `xfail` is a test expected to fail that did (pytest's
 * xfail, a Jest `test.failing` that failed); `skipped` covers every way a runner says
 * it did not run a collected test (skip, pending, todo, ignored).
 */
export const TEST_OUTCOMES = ['passed', 'failed', 'skipped', 'xfail'] as const;
export type TestOutcome = (typeof TEST_OUTCOMES)[number];

/**
 * One test of a report. Its id is the runner's own name for it, made independent of
 * where the tree is (a file path relative to the folder the runner ran in), so that the
 * same test has the same id in the loop's tree, the baseline's worktree and the oracle's.
 */
export interface TestCase {
  id: string;
  outcome: TestOutcome;
  /** What the runner said of a failure (its message and stack), for the feedback; '' when it said nothing. */
  message: string;
}

/** What a report holds: each test once (a second test of the same id is numbered `#2`), in the runner's order. */
export interface TestReport {
  runner: TestRunner;
  tests: TestCase[];
  /**
   * Failures outside any test that keep tests from being collected: a test file that
   * does not load, a package that does not build. Their tests are missing from `tests`.
   */
  errors: string[];
}

/** The counts `check_finished` records for a check whose runner is known. */
export const testCountsSchema = z.object({
  collected: z.number(),
  passed: z.number(),
  failed: z.number(),
  skipped: z.number(),
});
export type TestCounts = z.infer<typeof testCountsSchema>;

/** A report's counts; an xfail counts as skipped (it did not pass as a test), an error outside tests as a failure. */
export function testCountsOf(report: TestReport): TestCounts {
  const counts = { collected: report.tests.length, passed: 0, failed: report.errors.length, skipped: 0 };
  for (const test of report.tests) {
    if (test.outcome === 'passed') counts.passed += 1;
    else if (test.outcome === 'failed') counts.failed += 1;
    else counts.skipped += 1;
  }
  return counts;
}

/** `12 tests: 10 passed, 1 failed, 1 skipped`. */
export function testCountsText(counts: TestCounts): string {
  const parts = [
    `${counts.passed} passed`,
    ...(counts.failed > 0 ? [`${counts.failed} failed`] : []),
    ...(counts.skipped > 0 ? [`${counts.skipped} skipped`] : []),
  ];
  return `${counts.collected} test${counts.collected === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

/**
 * How the oracle found one of the start's tests wanting on the final code: one that
 * passed at the start fails (`test_regressed`); one that failed at the start, the task's
 * to fix, still fails (`test_failing`); either is not run at all: missing, skipped,
 * xfailed or deselected (`test_missing`).
 */
export const TEST_FINDING_KINDS = ['test_regressed', 'test_failing', 'test_missing'] as const;
export type TestFindingKind = (typeof TEST_FINDING_KINDS)[number];

export const testFindingSchema = z.object({
  /** The check whose runner ran it. */
  check: z.string(),
  id: z.string(),
  kind: z.enum(TEST_FINDING_KINDS),
  /** How it ended on the final code; `not_collected` when the runner's report does not have it. */
  outcome: z.enum([...TEST_OUTCOMES, 'not_collected']),
  /** The runner's own words of its failure. */
  message: z.string(),
});
export type TestFinding = z.infer<typeof testFindingSchema>;

/** `tests/test_total.py::test_three fails on the final code with the start's tests`. */
export function testFindingText(finding: TestFinding): string {
  if (finding.kind === 'test_regressed') return `${finding.id} fails (it passed at the start)`;
  if (finding.kind === 'test_failing') return `${finding.id} still fails`;
  return `${finding.id} ${finding.outcome === 'not_collected' ? 'did not run (not collected)' : `was ${finding.outcome === 'xfail' ? 'marked to fail' : 'skipped'}`}`;
}

/**
 * What stood behind a DONE (`verified_by`, beside `verification`): the start's tests
 * passing on the final code (the oracle), the actor's new tests, the required checks
 * that passed by their exit code alone, the commands the critic ran that succeeded.
 */
export const verifiedBySchema = z.object({
  /** The start's tests that passed on the final code (every one, or the DONE would have been refused), flaky ones left out; null: no oracle. */
  start_tests: z.nullable(z.object({ passed: z.int(), flaky: z.int() })),
  /** Tests the final checks ran that the start did not have. */
  new_tests: z.int(),
  /** Required checks whose DONE rests on their exit code alone. */
  exit_code_checks: z.array(z.string()),
  /** Commands the critic ran that succeeded on the final tree. */
  critic_commands: z.int(),
});
export type VerifiedBy = z.infer<typeof verifiedBySchema>;

/** `the start's 333 tests passing on the final code, 2 new tests; lint by its exit code only; 1 command the critic ran`. */
export function verifiedByText(by: VerifiedBy): string {
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  const parts = [
    by.start_tests
      ? `the start's ${plural(by.start_tests.passed, 'test')} passing on the final code${by.start_tests.flaky > 0 ? ` (${by.start_tests.flaky} flaky left out)` : ''}`
      : null,
    by.new_tests > 0 ? plural(by.new_tests, 'new test') : null,
    by.exit_code_checks.length > 0 ? `${by.exit_code_checks.join(', ')} by ${by.exit_code_checks.length === 1 ? 'its' : 'their'} exit code only` : null,
    by.critic_commands > 0 ? `${plural(by.critic_commands, 'command')} the critic ran` : null,
  ].filter((part): part is string => part !== null);
  return parts.length > 0 ? parts.join('; ') : "the critic's word alone";
}
