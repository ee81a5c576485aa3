/**
 * `npm run demo`: the real runner and the real Claude Code CLI, run on a scratch
 * repository, with a scripted stand-in for the Anthropic API on 127.0.0.1 so it
 * needs no account and no network. Shows a two-iteration loop as a user sees it,
 * then the recorded session. The critic runs the project's tests (`npm test`) before
 * it judges, so the DONE it ends with is verified. Nothing outside the scratch folder
 * is touched.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { anthropicMessages } from '../support/modelApi/anthropicMessages.js';
import { startModelApi } from '../support/modelApi/scripted.js';
import { cliPath } from '../support/cliProcess.js';
import { realAgentHome } from '../support/realAgents.js';
import { GREETING_TASK, scriptedGreetingModel } from '../support/scriptedClaude.js';
import { createRepo } from '../support/testEnvironment.js';

function run(args: string[], cwd: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cliPath(), ...args], { cwd, env: { ...process.env, ...env }, stdio: 'inherit' });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

/** The scratch project: a README and the test the greeting must pass, run by `npm test`. */
const DEMO_PROJECT = {
  'README.md': '# demo project\n',
  'package.json': JSON.stringify({ name: 'demo', version: '1.0.0', private: true, scripts: { test: 'node --test' } }, null, 2) + '\n',
  'test/greeting.test.js': `const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
test('greeting.txt says Hello, world', () => assert.strictEqual(fs.readFileSync('greeting.txt', 'utf8'), 'Hello, world\\n'));
`,
};

async function main(): Promise<void> {
  const repo = createRepo({ files: DEMO_PROJECT });
  const api = await startModelApi(anthropicMessages, scriptedGreetingModel(repo, { criticRuns: 'npm test' }));
  // The demo needs only Claude Code (installed by npm ci), not the OpenCode the tests add to .cache/.
  const { env, home } = realAgentHome({ anthropic: api }, ['claude']);
  process.stdout.write(`Demo repository: ${repo}\nCodeloops data:  ${home.dataHome}\n\n$ codeloops -p '${GREETING_TASK}'\n\n`);
  try {
    const code = await run(['-p', GREETING_TASK], repo, env);
    process.stdout.write(`\n(exit code ${code})\n\n$ codeloops sessions show latest\n\n`);
    await run(['sessions', 'show', 'latest'], repo, env);
    process.stdout.write(`\ngreeting.txt now says: ${fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8')}`);
    process.exitCode = code;
  } finally {
    await api.close();
    if (!process.env.KEEP_TEST_DIRS) {
      for (const dir of [repo, path.dirname(home.dataHome)]) if (dir.startsWith(os.tmpdir())) fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
