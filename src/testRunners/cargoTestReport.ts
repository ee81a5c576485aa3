import type { TestReport } from '../sessionFormat/testResults.js';
import { TestReportBuilder } from './testReportBuilder.js';

/** `Running unittests src/lib.rs (target/debug/deps/demo-83…)`, `Running tests/it.rs (…)`, `Doc-tests demo`. */
const BINARY = /^\s*(?:Running (?:unittests )?(\S+)|Doc-tests (\S+))/;
/** `test tests::bad ... FAILED`, `test tests::panics - should panic ... ok`, `test src/lib.rs - add (line 3) ... ignored`. */
const RESULT = /^test (.+?) \.\.\. (ok|FAILED|ignored)(?:,.*)?$/;
/** `---- tests::bad stdout ----`: a failure's output follows, up to the next one or the list of failures. */
const FAILURE_OUTPUT = /^---- (.+?) stdout ----$/;

/**
 * Reads `cargo test`'s own lines (libtest's JSON needs a nightly toolchain). A test's id
 * is the source of its test binary then its path (`src/lib.rs tests::bad`,
 * `tests/it.rs integ`); `ignored` is skipped; a binary that does not build is an
 * error outside tests. Needs `--no-fail-fast` to see every binary past a failing one.
 */
export function readCargoTestOutput(text: string): TestReport {
  const report = new TestReportBuilder('cargo');
  const results: { id: string; outcome: 'passed' | 'failed' | 'skipped'; name: string; binary: string }[] = [];
  const failureOutput = new Map<string, string[]>();
  let binary = '';
  let collecting: string | null = null;
  for (const line of text.split('\n')) {
    const header = BINARY.exec(line);
    const result = RESULT.exec(line);
    const failure = FAILURE_OUTPUT.exec(line);
    if (header) {
      binary = header[1] ?? `doc ${header[2]}`;
      collecting = null;
    } else if (result) {
      const name = result[1]!.replace(/ - should panic$/, '');
      results.push({ id: `${binary} ${name}`, name, binary, outcome: result[2] === 'ok' ? 'passed' : result[2] === 'FAILED' ? 'failed' : 'skipped' });
    } else if (failure) {
      collecting = `${binary} ${failure[1]}`;
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
