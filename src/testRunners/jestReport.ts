import path from 'node:path';
import type { TestOutcome, TestReport } from '../sessionFormat/testResults.js';
import { TestReportBuilder } from './testReportBuilder.js';

/** The parts of Jest's `--json` report read here; Vitest's `--reporter=json` has the same shape. */
interface JestReport {
  testResults?: {
    name?: string;
    status?: string;
    message?: string;
    assertionResults?: { ancestorTitles?: string[]; title?: string; status?: string; failureMessages?: string[] }[];
  }[];
}

/** Jest's and Vitest's words for a test's outcome; `pending`, `todo` and `disabled` did not run. */
const OUTCOMES: Readonly<Record<string, TestOutcome>> = {
  passed: 'passed',
  failed: 'failed',
  pending: 'skipped',
  skipped: 'skipped',
  todo: 'skipped',
  disabled: 'skipped',
  focused: 'passed',
};

/**
 * Reads Jest's `--json` report or Vitest's JSON reporter's. A test's id is its file,
 * from the folder the runner ran in, then its describe blocks and title joined by ` › `.
 * A test file that failed without results (it did not load) is an error outside tests.
 */
export function readJestReport(json: string, runner: 'jest' | 'vitest', ranIn: string): TestReport {
  const report = new TestReportBuilder(runner);
  const document = JSON.parse(json) as JestReport;
  for (const file of document.testResults ?? []) {
    const where = file.name ? relativePath(ranIn, file.name) : '';
    const results = file.assertionResults ?? [];
    if (results.length === 0 && file.status === 'failed') report.error(`${where}: ${file.message ?? 'the test file failed'}`);
    for (const result of results) {
      const id = [where, ...(result.ancestorTitles ?? []), result.title ?? ''].join(' › ');
      report.add(id, OUTCOMES[result.status ?? ''] ?? 'failed', (result.failureMessages ?? []).join('\n'));
    }
  }
  return report.build();
}

/** A report's file path from the folder the runner ran in, with `/`, so that the same test has the same id in any worktree. */
export function relativePath(ranIn: string, file: string): string {
  const relative = path.isAbsolute(file) ? path.relative(ranIn, file) : file;
  return relative.split(path.sep).join('/');
}
