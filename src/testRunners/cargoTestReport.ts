import type { TestReport } from '../sessionFormat/testResults.js';
import { TestReportBuilder } from './testReportBuilder.js';

/** `test tests::bad ... FAILED`, `test tests::panics - should panic ... ok`, `test src/lib.rs - add (line 3) ... ignored`. */
const RESULT = /^test (.+?) \.\.\. (ok|FAILED|ignored)(?:,.*)?$/;
/** `---- tests::bad stdout ----`: a failure's output follows, up to the next one or the list of failures. */
const FAILURE_OUTPUT = /^---- (.+?) stdout ----$/;

/**
 * Reads `cargo test`'s own lines on stdout (libtest's JSON needs a nightly toolchain).
 * A test's id is its path in its crate (`tests::bad`, `integ`): cargo names the test
 * binary on stderr, whose order against stdout no pipe keeps, so a path two binaries
 * share is told apart by number, in cargo's order. `ignored` is skipped; a binary that
 * does not build is an error outside tests. Cargo stops at the first binary that
 * fails unless told `--no-fail-fast`: the tests after it are missing.
 */
export function readCargoTestOutput(text: string): TestReport {
  const report = new TestReportBuilder('cargo');
  const results: { id: string; outcome: 'passed' | 'failed' | 'skipped' }[] = [];
  const failureOutput = new Map<string, string[]>();
  let collecting: string | null = null;
  for (const line of text.split('\n')) {
    const result = RESULT.exec(line);
    const failure = FAILURE_OUTPUT.exec(line);
    if (line.startsWith('running ')) {
      collecting = null;
    } else if (result) {
      const id = result[1]!.replace(/ - should panic$/, '');
      results.push({ id, outcome: result[2] === 'ok' ? 'passed' : result[2] === 'FAILED' ? 'failed' : 'skipped' });
    } else if (failure) {
      collecting = failure[1]!;
      failureOutput.set(collecting, []);
    } else if (collecting && (line === 'failures:' || line.startsWith('test result:'))) {
      collecting = null;
    } else if (collecting) {
      failureOutput.get(collecting)!.push(line);
    } else if (/^error(\[E\d+\])?: could not compile/.test(line)) {
      report.error(line);
    }
  }
  for (const result of results) report.add(result.id, result.outcome, (failureOutput.get(result.id) ?? []).join('\n'));
  return report.build();
}
