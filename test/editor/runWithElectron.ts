/**
 * The same extension host suite with @vscode/test-electron: the standard way, for
 * machines that can download VS Code (this one cannot; test/run.mjs uses the VS Code
 * server from code-server instead). `npm run test:electron`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { repoRoot } from '../support/testEnvironment.js';
import { prepareSuiteWorkspace, type SuiteResults } from './extensionHostSuite.js';

async function main(): Promise<void> {
  const root = repoRoot();
  const { workspace, env, resultsFile } = prepareSuiteWorkspace();
  try {
    await runTests({
      extensionDevelopmentPath: root,
      extensionTestsPath: path.join(root, 'out', 'test', 'vscode', 'suite', 'index.js'),
      launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust'],
      extensionTestsEnv: env,
    });
  } finally {
    if (fs.existsSync(resultsFile)) {
      const results = JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as SuiteResults;
      process.stdout.write(`${results.passed} passed, ${results.failed} failed\n`);
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 1;
});
