import type { TestReport } from '../sessionFormat/testResults.js';
import { relativePath } from './jestReport.js';
import { TestReportBuilder } from './testReportBuilder.js';

interface MochaTest {
  title?: string;
  fullTitle?: string;
  file?: string;
  err?: { message?: string; stack?: string };
}
interface MochaReport {
  tests?: MochaTest[];
  failures?: MochaTest[];
  pending?: MochaTest[];
}

/**
 * Reads mocha's JSON reporter (`--reporter json`). A test's id is its file, from the
 * folder mocha ran in, then its full title. A failure that is no test (a `before all`
 * hook, whose tests then never run) is an error outside tests.
 */
export function readMochaReport(json: string, ranIn: string): TestReport {
  const report = new TestReportBuilder('mocha');
  const document = JSON.parse(json) as MochaReport;
  const key = (test: MochaTest): string => `${test.file ?? ''}\0${test.fullTitle ?? test.title ?? ''}`;
  const failures = new Map((document.failures ?? []).map((test) => [key(test), test]));
  const pending = new Set((document.pending ?? []).map(key));
  const tests = document.tests ?? [];
  const testKeys = new Set(tests.map(key));
  for (const test of tests) {
    const id = `${test.file ? `${relativePath(ranIn, test.file)} › ` : ''}${test.fullTitle ?? test.title ?? ''}`;
    const failure = failures.get(key(test));
    if (failure) report.add(id, 'failed', failure.err?.stack ?? failure.err?.message ?? '');
    else report.add(id, pending.has(key(test)) ? 'skipped' : 'passed');
  }
  for (const [failureKey, failure] of failures) {
    if (!testKeys.has(failureKey)) report.error(`${failure.fullTitle ?? failure.title ?? 'a hook'}: ${failure.err?.message ?? ''}`);
  }
  return report.build();
}
