import { runCli } from './cliProcess.js';
import { configureScriptedAgent, decision } from './scriptedAgent.js';
import { createRepo } from './testEnvironment.js';

/**
 * A session with a checklist, made by the built CLI as a user's run makes one: the
 * task's prompt lists three requirements under `## Requirements`, the project has a
 * `tests` check. The actor writes two of them first; the critic meets those two with
 * evidence the record confirms (the check, a file and line), leaves the third unmet
 * and says DONE, which is refused. The actor writes the third; the critic meets all
 * three and the loop ends `success` after two iterations.
 */

export const CHECKLIST_TASK = [
  'Add product and difference beside sum in src/sum.js.',
  '',
  '## Requirements',
  '- sum(a, b) returns a + b',
  '- product(a, b) returns a * b',
  '- difference(a, b) returns a - b',
].join('\n');
/** The critic's words for the unmet requirement on the first iteration. */
export const UNMET_EVIDENCE = 'src/sum.js has no difference yet';

const SUM = 'exports.sum = (a, b) => a + b;\n';
const PRODUCT = 'exports.product = (a, b) => a * b;\n';
const DIFFERENCE = 'exports.difference = (a, b) => a - b;\n';
const SUM_TEST =
  "const { test } = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('../src/sum.js');\ntest('adds', () => assert.strictEqual(sum(2, 3), 5));\n";

const requirement = (id: string, text: string, met: boolean, evidence: string) => ({ id, text, met, evidence });
const REQ1 = requirement('REQ1', 'sum(a, b) returns a + b', true, 'the tests check passed');
const REQ2 = requirement('REQ2', 'product(a, b) returns a * b', true, 'src/sum.js:2');

export async function requirementsSession(home: { configHome: string; env: Record<string, string> }): Promise<{ repo: string; sessionId: string }> {
  const repo = checklistProject(home);
  const result = await runCli(['-p', CHECKLIST_TASK, '--trust', '--json-output', '-n', '3'], { cwd: repo, env: home.env });
  const outcome = JSON.parse(result.stdout) as { status: string; session_id: string; iterations: number };
  if (outcome.status !== 'success' || outcome.iterations !== 2) throw new Error(`the checklist session ended ${outcome.status}: ${result.stderr}`);
  return { repo, sessionId: outcome.session_id };
}

/** The checklist's project and its scripted agents, for a run of `CHECKLIST_TASK` that ends `success` (verified) after two iterations; its repository. */
export function checklistProject(home: { configHome: string }): string {
  configureScriptedAgent(home.configHome, {
    actor: [[{ write: { path: 'src/sum.js', content: SUM + PRODUCT } }], [{ write: { path: 'src/sum.js', content: SUM + PRODUCT + DIFFERENCE } }]],
    critic: [
      [
        decision({
          type: 'done',
          summary: 'sum and product are there.',
          requirements: [REQ1, REQ2, requirement('REQ3', 'difference(a, b) returns a - b', false, UNMET_EVIDENCE)],
        }),
      ],
      [
        decision({
          type: 'done',
          summary: 'All three functions are there.',
          requirements: [REQ1, REQ2, requirement('REQ3', 'difference(a, b) returns a - b', true, 'src/sum.js:3')],
        }),
      ],
    ],
  });
  return createRepo({
    files: {
      'package.json': '{ "name": "sums", "private": true }\n',
      'src/sum.js': SUM,
      'test/sum.test.js': SUM_TEST,
      'codeloops.toml': '[[checks]]\nname = "tests"\nrun = "node --test"\n',
    },
  });
}
