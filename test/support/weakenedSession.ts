import { runCli } from './cliProcess.js';
import { configureScriptedAgent, done } from './scriptedAgent.js';
import { createRepo } from './testEnvironment.js';

/**
 * A session whose only iteration stands on a weakened test, made by the built CLI as
 * a user's run makes one: an npm project, an actor that marks the failing test
 * skipped, a critic that believes it. DONE is refused and the one iteration allowed
 * ends the loop, the `protected_change` (`skip_added` in `test/sum.test.js`) standing.
 */

export const WEAKENED_TASK = 'Fix sum so that its test passes.';
export const WEAKENED_FILE = 'test/sum.test.js';
const SUM_TEST = "const { test } = require('node:test');\nconst { sum } = require('../src/sum.js');\ntest('adds two numbers', () => sum(2, 3) === 5);\n";

export async function weakenedSession(home: { configHome: string; env: Record<string, string> }): Promise<{ repo: string; sessionId: string }> {
  configureScriptedAgent(home.configHome, {
    actor: [[{ write: { path: WEAKENED_FILE, content: SUM_TEST.replace("test('adds", "test.skip('adds") } }]],
    critic: [[done('All tests pass.')]],
  });
  const repo = createRepo({
    files: { 'package.json': '{ "name": "sums", "private": true }\n', 'src/sum.js': 'exports.sum = (a, b) => a - b;\n', [WEAKENED_FILE]: SUM_TEST },
  });
  const result = await runCli(['-p', WEAKENED_TASK, '--trust', '--json-output', '-n', '1'], { cwd: repo, env: home.env });
  const outcome = JSON.parse(result.stdout) as { status: string; session_id: string };
  if (outcome.status !== 'max_iterations_reached') throw new Error(`the weakened session ended ${outcome.status}: ${result.stderr}`);
  return { repo, sessionId: outcome.session_id };
}
