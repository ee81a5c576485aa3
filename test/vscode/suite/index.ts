import fs from 'node:fs';
import path from 'node:path';
import Mocha from 'mocha';

/**
 * The mocha suite inside a real extension host. Started by VS Code's test runner:
 * `@vscode/test-electron` where VS Code can be downloaded, the VS Code server in
 * code-server here (test/editor/extensionHostSuite.ts). Results also go to
 * CODELOOPS_TEST_RESULTS as JSON, so the outer run can count them.
 */
export async function run(): Promise<void> {
  // `node test/run.mjs editor --grep text`: only the tests whose title matches, here too.
  const mocha = new Mocha({ ui: 'bdd', timeout: 90_000, color: false, reporter: 'spec', grep: process.env.CODELOOPS_TEST_GREP });
  mocha.addFile(path.join(__dirname, 'extension.test.js'));
  // `node test/run.mjs editor --reverse`: the tests in the opposite order, to show that none depends on another.
  if (process.env.CODELOOPS_TEST_ORDER === 'reverse') {
    await mocha.loadFilesAsync();
    reverseOrder(mocha.suite);
  }
  return new Promise((resolve, reject) => {
    const results = { passed: 0, failed: 0, passes: [] as string[], failures: [] as Array<{ title: string; error: string }> };
    const runner = mocha.run((failures) => {
      const file = process.env.CODELOOPS_TEST_RESULTS;
      if (file) fs.writeFileSync(file, JSON.stringify(results, null, 2));
      if (failures > 0) reject(new Error(`${failures} extension host test(s) failed`));
      else resolve();
    });
    runner.on('pass', (test) => {
      results.passed += 1;
      results.passes.push(test.fullTitle());
    });
    runner.on('fail', (test, error: Error) => {
      results.failed += 1;
      results.failures.push({ title: test.fullTitle(), error: error.stack ?? String(error) });
    });
  });
}

export function reverseOrder(suite: Mocha.Suite): void {
  suite.tests.reverse();
  suite.suites.reverse();
  for (const child of suite.suites) reverseOrder(child);
}
