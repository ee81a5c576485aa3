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
